"""A tour of every page, as each role, at 1280×800 and 1920×1080: what a user would notice.

The site is the crawl's busy site (tests/yardstick/test_crawl.py): datasets of the four
benchmarks, model and human rows, test plans in every state, annotation and validation work,
imports that succeeded and failed, model runs. Each role logs in and opens the pages it may open,
one of each kind (a page per template, and per benchmark where the benchmark draws the page), at
both sizes. Every page answers (the error pages only where they are the point), no image is
broken, nothing is wider than the window and nothing sticks out of its card. A full-page
screenshot of each is kept as var/screenshots/tour-<role>-<page>-<width>.png, and copied to
docs/screenshots by `make screenshots`.
"""

import re
from dataclasses import dataclass
from urllib.parse import quote, urlencode

import pytest
from django.contrib.auth import get_user_model
from django.test import Client, RequestFactory
from django.views.defaults import server_error

from benchmarks.models import Dataset, ImportJob
from evaluation.models import Submission
from humantest import sessions
from humantest.models import TestPlan, TestSession
from inference.models import ModelRun
from inference.selectors import runnable_baselines
from inference.services import execute_run, start_run
from tests.e2e.conftest import for_docs, log_in
from tests.factories import PASSWORD
from tests.yardstick.test_crawl import busy_site  # noqa: F401 (the site this tour walks through)
from tests.yardstick.test_i18n import SAME_IN_BOTH
from validation.models import Plan

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

SIZES = ((1280, 800), (1920, 1080))
#: Served by the browser itself (no route on the site gives a 500 on purpose): the real 500 page.
SERVER_ERROR_URL = "/tour-server-error/"


@dataclass(frozen=True)
class Stop:
    role: str
    user: str | None  # None: not signed in
    name: str
    url: str
    status: int = 200
    #: For pages that draw themselves after loading: true once they have.
    ready: str = ""
    #: Signed in by opening this address (a study's participant, who has no password).
    via: str = ""


#: The pages' own signals that their script has drawn them (as the other browser tests wait).
AUTHORING_READY = "() => document.body.dataset.annotationReady === '1'"
VALIDATION_READY = (
    "() => window.yardstickValidation && document.querySelector('#item-label').textContent !== ''"
)
TRIAL_READY = "() => document.body.dataset.trialReady === '1'"
#: Swagger UI has fetched the schema and listed the operations.
API_DOCS_READY = "() => document.querySelectorAll('.swagger-ui .opblock').length > 0"
#: Until every image of the page has loaded or failed (lazy ones too, as a reader scrolling down
#: would see them; a full-page screenshot does not scroll), at most a few seconds.
IMAGES_SETTLED = """() => {
  const images = [...document.images];
  images.forEach((img) => { img.loading = 'eager'; });
  const settled = images.map((img) => img.complete ? null
    : new Promise((done) => { img.addEventListener('load', done); img.addEventListener('error', done); }));
  const limit = new Promise((done) => setTimeout(done, 5000));
  return Promise.race([Promise.all(settled).then(() => document.fonts.ready), limit])
    .then(() => images.filter((img) => !img.complete).map((img) => img.currentSrc || img.src));
}"""


# Run in the page: how wide the document is against the window, and if it is wider, the outermost
# elements that stick out (for the failure message); cards whose content is wider than they are;
# images that did not load.
MEASURE = """() => {
  const limit = window.innerWidth + 1;
  const describe = (el) => el.tagName.toLowerCase() + (el.id ? '#' + el.id : '')
    + (typeof el.className === 'string' && el.className.trim() ? '.' + el.className.trim().split(/\\s+/).join('.') : '');
  const wide = [];
  if (document.documentElement.scrollWidth > limit) {
    for (const el of document.body.querySelectorAll('*')) {
      const right = el.getBoundingClientRect().right;
      const parent = el.parentElement;
      if (right > limit && parent && parent.getBoundingClientRect().right <= limit) {
        wide.push(describe(parent) + ' > ' + describe(el) + ' (right edge ' + Math.round(right) + 'px)');
      }
    }
  }
  // A card (the site's box) whose content sticks out of it, where nothing in between scrolls.
  const spilling = [...document.querySelectorAll('.card')]
    .filter((card) => card.scrollWidth > card.clientWidth + 1)
    .map((card) => describe(card) + ' (' + card.scrollWidth + 'px of content in ' + card.clientWidth + 'px)');
  const broken = [...document.images]
    .filter((img) => img.complete && img.naturalWidth === 0 && img.currentSrc)
    .map((img) => img.currentSrc);
  return {
    scrollWidth: document.documentElement.scrollWidth,
    innerWidth: window.innerWidth,
    wide: wide.slice(0, 6),
    broken: broken.slice(0, 6),
    spilling: spilling.slice(0, 6),
  };
}"""


def overlap_url(dataset: Dataset, first: str, second: str) -> str:
    """The "who misses what" link of the comparison of two rows, as the compare page gives it."""
    client = Client()
    client.force_login(get_user_model().objects.get(username="rita"))
    page = client.get(f"/datasets/{dataset.pk}/report/compare/", {"a": first, "b": second}).content.decode()
    link = re.search(r'class="overlap-link" href="([^"]+)"', page)
    assert link, f"no overlap link comparing {first} and {second}"
    return link.group(1).replace("&amp;", "&")


def first_item(dataset: Dataset) -> str:
    return f"/datasets/{dataset.pk}/items/{dataset.items.order_by('pk').first().pk}/"


def tour(site) -> list[Stop]:
    """The pages of each role on the busy site, with a tester's session at each step."""
    users = get_user_model().objects
    trance = Dataset.objects.get(benchmark="trance")
    signs = Dataset.objects.get(benchmark="stevqa", name="signs")
    cric = Dataset.objects.get(benchmark="cric", name="cric")
    refs = site["refs"]
    model = Submission.objects.get(dataset=trance, name="model")
    view = TestPlan.objects.get(name="View")
    nobody = TestPlan.objects.get(name="Nobody yet")
    project = site["project"]
    check = Plan.objects.get(name="Check")
    run = ModelRun.objects.get(baseline="random")
    bad_import = ImportJob.objects.get(name="bad")

    # tia opens the CRIC test (its brief) and, invited to the TRANCE one too, is in its first trial.
    tia = users.get(username="tia")
    brief = sessions.start_session(nobody, tia)
    view.testers.add(tia)
    trial = sessions.begin_test(sessions.start_session(view, tia))
    finished = TestSession.objects.get(plan=view, tester__username="tess")
    paused = TestSession.objects.get(plan=view, tester__username="tom")
    # A second model answering the Event setting: two rows to compare unit by unit.
    assert (
        execute_run(start_run(dataset=trance, baseline="trancenet", setting="event", enqueue=False)).status
        == "succeeded"
    )
    rows = ("TranceNet", "Random")
    # The plan participants arrived at by its Prolific link (with hostile ids: the crawl's site).
    typed = TestPlan.objects.get(name="Typed answers")
    arrived = typed.participants.order_by("pk").first()
    join = f"/join/{arrived.link.token}/?PROLIFIC_PID={quote(arrived.external_id)}&SESSION_ID=s"

    researcher = [
        ("home", "/"),
        ("datasets", "/datasets/"),
        ("dataset", f"/datasets/{trance.pk}/"),
        ("item-trance", first_item(trance)),
        ("item-stevqa", first_item(signs)),
        ("item-cric", first_item(cric)),
        ("item-clevrref", first_item(refs)),
        ("report-trance", f"/datasets/{trance.pk}/report/"),
        ("report-stevqa", f"/datasets/{signs.pk}/report/"),
        ("report-cric", f"/datasets/{cric.pk}/report/"),
        ("report-clevrref", f"/datasets/{refs.pk}/report/"),
        ("compare", f"/datasets/{trance.pk}/report/compare/?{urlencode({'a': rows[0], 'b': rows[1]})}"),
        ("overlap", overlap_url(trance, *rows)),
        ("submission-rename", f"/datasets/{trance.pk}/report/submissions/{model.pk}/rename/"),
        ("submission-delete", f"/datasets/{trance.pk}/report/submissions/{model.pk}/delete/"),
        ("model-runs", "/models/"),
        ("model-run", f"/models/{run.pk}/"),
        ("model-run-form", "/models/new/"),
        ("test-plans", "/test/plans/"),
        ("test-plan-form", "/test/plans/new/"),
        ("test-plan-results", f"/test/plans/{view.pk}/"),
        ("test-plan-delete", f"/test/plans/{view.pk}/delete/"),
        ("study", f"/test/plans/{typed.pk}/study/"),
        ("testers", f"/test/plans/{typed.pk}/testers/"),
        ("quality", f"/test/plans/{typed.pk}/quality/"),
        ("import-form", "/datasets/import/"),
        ("import-job", f"/datasets/import/{bad_import.pk}/"),
        ("annotation-projects", "/annotate/projects/"),
        ("annotation-project-form", "/annotate/projects/new/"),
        ("annotation-project", f"/annotate/projects/{project.pk}/"),
        ("validation-plans", "/validate/plans/"),
        ("validation-plan-form", "/validate/plans/new/"),
        ("validation-plan", f"/validate/plans/{check.pk}/"),
    ]
    return [
        Stop("visitor", None, "login", "/accounts/login/"),
        Stop("visitor", None, "error-500", SERVER_ERROR_URL, 500),
        Stop("admin", "ada", "home", "/"),
        Stop("admin", "ada", "django-admin", "/admin/"),
        *(Stop("researcher", "rita", name, url) for name, url in researcher),
        Stop("researcher", "rita", "api-docs", "/api/docs/", ready=API_DOCS_READY),
        Stop("researcher", "rita", "error-404", "/datasets/999999/", 404),
        Stop("annotator", "ann", "home", "/"),
        Stop("annotator", "ann", "work", "/annotate/"),
        Stop("annotator", "ann", "validation-plans", "/validate/"),
        Stop(
            "annotator", "ann", "validation-work", f"/validate/plans/{check.pk}/work/", ready=VALIDATION_READY
        ),
        Stop("annotator", "ann", "error-403", "/datasets/", 403),
        # ann2 holds a task of the project: the authoring page with its image and pairs.
        Stop(
            "annotator",
            "ann2",
            "annotation-work",
            f"/annotate/projects/{project.pk}/work/",
            ready=AUTHORING_READY,
        ),
        Stop("reviewer", "rev", "home", "/"),
        Stop("reviewer", "rev", "work", "/annotate/"),
        Stop(
            "reviewer",
            "rev",
            "review",
            f"/annotate/review/pairs/{site['waiting'].pk}/",
            ready=AUTHORING_READY,
        ),
        Stop("reviewer", "rev", "validation-work", f"/validate/plans/{check.pk}/work/"),
        Stop("tester", "tess", "home", "/"),
        Stop("tester", "tess", "tests", "/test/"),
        Stop("tester", "tess", "history", "/test/history/"),
        Stop("tester", "tess", "finished", f"/test/sessions/{finished.pk}/"),
        Stop("tester", "tom", "paused", f"/test/sessions/{paused.pk}/"),
        Stop("tester", "tia", "brief", f"/test/sessions/{brief.pk}/"),
        Stop("tester", "tia", "trial", f"/test/sessions/{trial.pk}/", ready=TRIAL_READY),
        Stop(
            "participant", arrived.user.username, "consent", f"/test/sessions/{arrived.session_id}/", via=join
        ),
    ]


def visit(page, stop: Stop, width: int, height: int) -> list[str]:
    """Open the page at this size; what a user would notice is wrong with it."""
    page.set_viewport_size({"width": width, "height": height})
    response = page.goto(stop.url)
    if stop.ready:
        page.wait_for_function(stop.ready)
    loading = page.evaluate(IMAGES_SETTLED)
    where = f"{stop.role} {stop.name} {stop.url} at {width}px"
    problems = []
    status = response.status if response else None
    if status != stop.status:
        problems.append(f"{where}: answered {status}, not {stop.status}")
    error_page = page.locator(".error-page").count() > 0
    if error_page != (stop.status >= 400):
        problems.append(f"{where}: {'an' if error_page else 'no'} error page")
    found = page.evaluate(MEASURE)
    if found["scrollWidth"] > found["innerWidth"] + 1:
        problems.append(
            f"{where}: {found['scrollWidth']}px wide in a {found['innerWidth']}px window: {found['wide']}"
        )
    if found["spilling"]:
        problems.append(f"{where}: wider than its box: {found['spilling']}")
    if loading:
        problems.append(f"{where}: images still loading after 5 s {loading}")
    if found["broken"]:
        problems.append(f"{where}: broken images {found['broken']}")
    return problems


@pytest.mark.tour
def test_every_page_of_every_role_fits_both_window_sizes(page, screenshot, busy_site):  # noqa: F811 (the fixture)
    stops = tour(busy_site)
    server_error_page = server_error(RequestFactory().get("/")).content.decode()
    page.route(
        f"**{SERVER_ERROR_URL}",
        lambda route: route.fulfill(status=500, content_type="text/html", body=server_error_page),
    )
    problems: list[str] = []
    # The Content-Security-Policy (yardstick/settings.py) refuses inline scripts and handlers: no
    # page may need one. Chromium reports each refusal on the console.
    refused: list[str] = []
    page.on(
        "console",
        lambda message: refused.append(message.text) if "Content Security Policy" in message.text else None,
    )
    signed_in: str | None = None
    for index, stop in enumerate(stops):
        if index == 0 or stop.user != signed_in:
            page.context.clear_cookies()
            if stop.via:
                page.goto(stop.via)
            elif stop.user is not None:
                log_in(page, stop.user, PASSWORD)
                page.wait_for_url(lambda url: "/accounts/login/" not in url)
            signed_in = stop.user
        for width, height in SIZES:
            problems += visit(page, stop, width, height)
            for_docs(screenshot(f"tour-{stop.role}-{stop.name}-{width}"))
        problems += [f"{stop.role} {stop.name} {stop.url}: {text}" for text in refused]
        refused.clear()
    assert problems == [], "\n".join(problems)


# --- the same tour in Chinese (issue 28) -----------------------------------------------------------

#: The interface's own words on a page: headings, labels, buttons, table heads, menus, messages,
#: help. Only each element's own text nodes count (a heading's <small> with a plan's name is data).
INTERFACE_TEXT = """() => {
  const chosen = 'h1, h2, h3, label, button, th, nav a, .messages li, dt, legend, summary, .helptext, '
    + 'a.button, p.muted, .card > p, caption, option';
  return [...document.querySelectorAll(chosen)]
    .filter((el) => el.offsetParent !== null || el.tagName === 'OPTION')
    .filter((el) => !el.closest('.data, [data-text], .swagger-ui, .name, code, pre'))
    .map((el) => [...el.childNodes].filter((n) => n.nodeType === Node.TEXT_NODE)
      .map((n) => n.textContent).join(' ').replace(/\\s+/g, ' ').trim())
    .filter((text) => /[A-Za-z\\u4e00-\\u9fff]/.test(text));
}"""
CJK = re.compile(r"[\u4e00-\u9fff]")


def site_data() -> list[str]:
    """What the site's people and benchmarks named, shown as it was written whatever the language:
    datasets, people, rows, plans, projects, consent texts, and what each benchmark's spec declares
    (its title, settings, variants, report groups and columns, strata). Longest first."""
    from annotation.models import Project
    from benchmarks import registry
    from humantest.models import Study

    names: set[str] = set()
    for dataset in Dataset.objects.all():
        names |= {str(dataset), dataset.name, f"{dataset.benchmark_title} · {dataset.name}"}
    names |= set(get_user_model().objects.values_list("username", flat=True))
    names |= set(Submission.objects.values_list("name", flat=True))
    names |= {value for plan in TestPlan.objects.all() for value in (plan.name, plan.row_label)}
    names |= set(Project.objects.values_list("name", flat=True)) | set(
        Plan.objects.values_list("name", flat=True)
    )
    names |= {
        line for text in Study.objects.values_list("consent_text", flat=True) for line in text.splitlines()
    }
    names |= {line.strip("# ") for line in list(names) if line.startswith("#")}
    names |= {key for run in ModelRun.objects.all() for key in (run.parameters or {})}
    # A model's title is its name, as in the papers' tables (baselines, plug-ins, the served model).
    names |= {f"{registry.get(benchmark).title}: {model.title}" for benchmark, model in runnable_baselines()}
    for spec in registry.specs():
        names.add(spec.title)
        for choice in (*spec.settings, *spec.variants, *spec.comparison_strata):
            names |= {str(choice.label), str(choice.value)}
        for column in spec.report_columns():
            names |= {column.group, column.label, f"{column.group} {column.label}".strip()}
    names = {" ".join(name.split()) for name in names}
    return sorted((name for name in names if name and re.search(r"[A-Za-z]", name)), key=len, reverse=True)


#: A TRANCE object as the trial lists it ("3 · large purple metal sphere"): the scene's own words.
OBJECT = re.compile(r"^\d+ · ")


def english_only(texts: list[str], data: list[str] = ()) -> list[str]:
    """Interface texts with English words and no Chinese, once the site's data is taken out."""
    found = []
    for text in texts:
        if CJK.search(text) or OBJECT.match(text):
            continue
        rest = " ".join(text.split())
        for name in data:
            rest = rest.replace(name, " ")
        if [word for word in re.findall(r"[A-Za-z]{2,}", rest) if word.lower() not in SAME_IN_BOTH]:
            found.append(text)
    return found


@pytest.mark.tour
def test_every_page_of_every_role_speaks_chinese(page, screenshot, busy_site, settings):  # noqa: F811 (the fixture)
    """The tour once more with the interface in 简体中文 for everyone: no page's interface text
    (headings, labels, buttons, menus, messages) is English."""
    from django.utils import translation

    from accounts.models import Preference

    for person in get_user_model().objects.all():
        Preference.objects.update_or_create(user=person, defaults={"language": "zh-hans"})
    stops = [
        stop
        for stop in tour(busy_site)
        if stop.name not in ("django-admin", "api-docs")  # Django's admin and Swagger UI as they ship
    ]
    with translation.override("zh-hans"):
        server_error_page = server_error(RequestFactory().get("/")).content.decode()
    page.route(
        f"**{SERVER_ERROR_URL}",
        lambda route: route.fulfill(status=500, content_type="text/html", body=server_error_page),
    )
    language_cookie = {
        "name": settings.LANGUAGE_COOKIE_NAME,
        "value": "zh-hans",
        "url": page.url or "http://localhost",
    }
    data = site_data()
    problems: list[str] = []
    signed_in: str | None = "?"
    for stop in stops:
        if stop.user != signed_in:
            page.context.clear_cookies()
            page.goto("/accounts/login/")
            page.context.add_cookies([{**language_cookie, "url": page.url}])
            if stop.via:
                page.goto(stop.via)
            elif stop.user is not None:
                log_in(page, stop.user, PASSWORD)
                page.wait_for_url(lambda url: "/accounts/login/" not in url)
            signed_in = stop.user
        page.set_viewport_size({"width": 1280, "height": 800})
        page.goto(stop.url)
        if stop.ready:
            page.wait_for_function(stop.ready)
        texts = page.evaluate(INTERFACE_TEXT)
        english = english_only(texts, data)
        if english:
            problems.append(
                f"{stop.role} {stop.name} {stop.url}: {len(english)} of {len(texts)} English: {english[:8]}"
            )
        for_docs(screenshot(f"tour-zh-{stop.role}-{stop.name}"))
    assert problems == [], "\n".join(problems)
