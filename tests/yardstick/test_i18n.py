"""Every page in English and Simplified Chinese (issue 28): the checks that keep it so.

- No template shows visible text outside translation tags (data and symbols aside).
- The catalogue holds every marked string, each translated, and the compiled catalogue matches it.
- No script writes a literal English sentence onto a page (scripts use Django's gettext()).

Each check is also run on a planted English string, which it must catch.
"""

from __future__ import annotations

import gettext
import html
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
LOCALE = ROOT / "locale" / "zh_Hans" / "LC_MESSAGES"
#: Folders that are not the project's own code: installed packages, collected static files.
NOT_OURS = {".venv", "node_modules", "var", "staticfiles", ".git"}
TEMPLATE_DIRS = [
    ROOT / "templates",
    *sorted(p for p in ROOT.glob("*/templates") if p.parent.name not in NOT_OURS),
]
SCRIPT_DIRS = [ROOT / "static", *sorted(p for p in ROOT.glob("*/static") if p.parent.name not in NOT_OURS)]
#: Visible text that is data, with why: (template, text).
DATA = {
    (
        "plugins/cric/templates/humantest/widgets/cric.html",
        "yes",
    ): "CRIC's answers are English words: the button types one",
    (
        "plugins/cric/templates/humantest/widgets/cric.html",
        "no",
    ): "CRIC's answers are English words: the button types one",
}

# --- templates -------------------------------------------------------------------------------------

#: Words that are the same in both languages: names of things, formats, units and symbols.
SAME_IN_BOTH = {
    "yardstick", "api", "csv", "json", "markdown", "latex", "svg", "png", "pdf", "url", "id", "ids",
    "prolific", "mturk", "hit", "osf", "trance", "cric", "ste", "vqa", "clevr", "ref", "est",
    "acc", "ad", "and", "lacc", "eo", "objacc", "attracc", "valacc", "iou", "ocr", "utc",
    "gbp", "usd", "eur", "ms", "px", "min", "max", "n", "p", "k", "vs", "gpu", "cpu", "x", "y",
    "mcnemar", "holm", "bca", "wilson", "cohen", "fleiss", "krippendorff",
    "ctrl", "enter", "esc", "shift", "tab", "alt", "cmd", "sha", "english", "cuda",
}  # fmt: skip
#: Attributes whose values people read.
READ_ATTRIBUTES = ("placeholder", "title", "aria-label", "alt")
BLOCK = re.compile(r"{%\s*(blocktrans|blocktranslate)\b.*?{%\s*end(blocktrans|blocktranslate)\s*%}", re.S)
COMMENT = re.compile(r"{%\s*comment\s*%}.*?{%\s*endcomment\s*%}|{#.*?#}|<!--.*?-->", re.S)
CODE = re.compile(r"<(script|style)\b[^>]*>.*?</\1>", re.S | re.I)
TAG = re.compile(r"{%.*?%}|{{.*?}}", re.S)
ELEMENT = re.compile(r"<[^>]*>", re.S)
WORD = re.compile(r"[A-Za-z]{2,}")


def unmarked_text(source: str) -> list[str]:
    """The visible text of a template that no translation tag holds."""
    text = COMMENT.sub(" ", source)
    text = CODE.sub(" ", text)
    text = BLOCK.sub(" ", text)
    text = TAG.sub(" ", text)  # {% translate "…" %} inside an attribute too
    found = []
    for attribute in READ_ATTRIBUTES:
        for value in re.findall(rf'\b{attribute}="([^"]*)"', text):
            found.append(value)
    for value in re.findall(r'<input\b[^>]*\btype="(?:submit|button|reset)"[^>]*\bvalue="([^"]*)"', text):
        found.append(value)
    found += ELEMENT.split(text)
    chunks = []
    for chunk in found:
        visible = re.sub(r"https?://\S+", " ", html.unescape(chunk))  # an example address is data
        words = [word for word in WORD.findall(visible) if word.lower() not in SAME_IN_BOTH]
        if words:
            chunks.append(" ".join(chunk.split())[:80])
    return chunks


def templates() -> list[Path]:
    return sorted(path for folder in TEMPLATE_DIRS for path in folder.rglob("*.html"))


def test_no_template_shows_text_outside_translation_tags():
    problems = [
        f"{path.relative_to(ROOT)}: {chunk!r}"
        for path in templates()
        for chunk in unmarked_text(path.read_text(encoding="utf-8"))
        if (str(path.relative_to(ROOT)), chunk) not in DATA
    ]
    assert problems == [], f"{len(problems)} unmarked texts:\n" + "\n".join(problems[:60])


def test_the_template_check_catches_a_planted_english_string():
    page = '{% load i18n %}<h1>{% translate "Datasets" %}</h1><p class="x">Import a dataset</p>'
    assert unmarked_text(page) == ["Import a dataset"]
    assert unmarked_text('<input placeholder="Search items">') == ["Search items"]
    assert unmarked_text('<input type="submit" value="Save">') == ["Save"]
    assert unmarked_text('<button type="submit" name="do" value="mark">{% translate "Mark" %}</button>') == []
    assert unmarked_text("{% blocktranslate trimmed with n=3 %}{{ n }} items{% endblocktranslate %}") == []
    assert unmarked_text("<td>{{ row.name }}</td><td>CSV · JSON · Acc</td>") == []


# --- the catalogue ---------------------------------------------------------------------------------


def po_entries(path: Path) -> dict[str, dict]:
    """msgid -> {"msgstr": [...], "fuzzy": bool} of a .po file (enough of the format for a check)."""
    entries: dict[str, dict] = {}
    current: dict = {}
    field = None

    def finish():
        if current.get("msgid") is not None and current["msgid"] != "" and not current.get("obsolete"):
            # A string with a context is known by both, as gettext keys it ("context\x04msgid").
            key = f"{current['msgctxt']}\x04{current['msgid']}" if "msgctxt" in current else current["msgid"]
            entries[key] = current

    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.strip():
            finish()
            current, field = {}, None
            continue
        if line.startswith("#~"):
            current["obsolete"] = True
            continue
        if line.startswith("#,"):
            current["fuzzy"] = "fuzzy" in line
            continue
        if line.startswith("#"):
            continue
        match = re.match(r'(msgid|msgid_plural|msgctxt|msgstr(?:\[\d+\])?) "(.*)"$', line)
        if match:
            field = match.group(1)
            value = bytes(match.group(2), "utf-8").decode("unicode_escape").encode("latin-1").decode("utf-8")
            if field.startswith("msgstr"):
                current.setdefault("msgstr", []).append(value)
            else:
                current[field] = value
            continue
        if line.startswith('"') and field:
            value = bytes(line[1:-1], "utf-8").decode("unicode_escape").encode("latin-1").decode("utf-8")
            if field.startswith("msgstr"):
                current["msgstr"][-1] += value
            else:
                current[field] += value
    finish()
    return entries


def catalogue_problems(po: Path) -> list[str]:
    problems = []
    for msgid, entry in po_entries(po).items():
        if entry.get("fuzzy"):
            problems.append(f"fuzzy: {msgid!r}")
        elif not all(entry.get("msgstr", [""])):
            problems.append(f"untranslated: {msgid!r}")
    compiled = po.with_suffix(".mo")
    if not compiled.exists():
        return [*problems, f"{compiled.name} is missing: run make messages"]
    with compiled.open("rb") as file:
        catalog = gettext.GNUTranslations(file)._catalog  # noqa: SLF001 (the compiled entries)
    for msgid, entry in po_entries(po).items():
        key = (msgid, 0) if "msgid_plural" in entry else msgid
        translated = entry.get("msgstr", [""])[0]
        if translated and not entry.get("fuzzy") and catalog.get(key) != translated:
            problems.append(f"not compiled: {msgid!r} (run make messages)")
    return problems


@pytest.mark.parametrize("domain", ["django", "djangojs"])
def test_every_marked_string_is_translated_and_compiled(domain):
    po = LOCALE / f"{domain}.po"
    assert po.exists(), f"{po.relative_to(ROOT)} is missing: run make messages"
    problems = catalogue_problems(po)
    assert problems == [], f"{len(problems)} problems:\n" + "\n".join(problems[:40])


def test_the_catalogue_check_catches_a_planted_untranslated_string(tmp_path):
    shutil.copy(LOCALE / "django.po", tmp_path / "django.po")
    shutil.copy(LOCALE / "django.mo", tmp_path / "django.mo")
    with (tmp_path / "django.po").open("a", encoding="utf-8") as file:
        file.write('\n#: planted.html:1\nmsgid "Import a dataset now"\nmsgstr ""\n')
    assert catalogue_problems(tmp_path / "django.po") == ["untranslated: 'Import a dataset now'"]


@pytest.mark.skipif(shutil.which("xgettext") is None, reason="needs GNU gettext (make test installs it)")
def test_the_catalogue_holds_every_string_the_code_marks(tmp_path):
    """makemessages over a copy of the code finds no marked string the committed catalogue lacks."""
    copy = tmp_path / "code"
    shutil.copytree(
        ROOT,
        copy,
        ignore=shutil.ignore_patterns(
            ".venv", "node_modules", "var", ".git", "tests", "perf", "*.mo", "__pycache__"
        ),
    )
    for domain in ("django", "djangojs"):
        subprocess.run(
            [sys.executable, "manage.py", "makemessages", "-d", domain, "-l", "zh_Hans", "--no-obsolete",
             "-i", "staticfiles/*", "-i", "static/vendor/*"],
            cwd=copy, check=True, capture_output=True,
        )  # fmt: skip
        fresh = set(po_entries(copy / "locale/zh_Hans/LC_MESSAGES" / f"{domain}.po"))
        committed = set(po_entries(LOCALE / f"{domain}.po"))
        assert sorted(fresh - committed) == [], (
            f"{domain}: marked but not in the catalogue (run make messages)"
        )


# --- scripts ---------------------------------------------------------------------------------------

LITERAL = r"""(?:"[^"\n]*"|'[^'\n]*'|`[^`]*`)"""
SHOWN = re.compile(
    rf"""(?:\.(?:textContent|innerText|title|placeholder|ariaLabel)\s*[+]?=\s*|\b(?:alert|confirm|createTextNode)\(\s*|\.setAttribute\(\s*["'](?:title|aria-label|placeholder|alt)["']\s*,\s*)({LITERAL})"""
)


def shown_literals(script: str) -> list[str]:
    """English words a script writes onto the page as literals (not through gettext)."""
    found = []
    for literal in SHOWN.findall(script):
        text = re.sub(r"\$\{[^}]*\}", " ", literal[1:-1])
        if [word for word in WORD.findall(text) if word.lower() not in SAME_IN_BOTH]:
            found.append(literal[:80])
    return found


def scripts() -> list[Path]:
    return sorted(
        path
        for folder in SCRIPT_DIRS
        for path in folder.rglob("*.js")
        if "vendor" not in path.parts and not path.name.endswith(".min.js")
    )


def test_no_script_writes_a_literal_english_sentence():
    problems = [
        f"{path.relative_to(ROOT)}: {literal}"
        for path in scripts()
        for literal in shown_literals(path.read_text())
    ]
    assert problems == [], f"{len(problems)} literals:\n" + "\n".join(problems[:60])


def test_the_script_check_catches_a_planted_english_sentence():
    assert shown_literals('clock.textContent = "Time is up";') == ['"Time is up"']
    assert shown_literals("button.setAttribute('aria-label', 'Drag to reorder');") == ["'Drag to reorder'"]
    assert shown_literals('clock.textContent = gettext("Time is up");') == []
    assert shown_literals("cell.textContent = `${value} s`;") == []


# --- the words the benchmarks declare ---------------------------------------------------------


def declared_words(spec) -> dict[str, str]:
    """What a spec declares for people to read, by where it is shown: settings, variants,
    comparison strata, report column groups and word labels, plots' titles, axes and groups."""
    words = {}
    for kind, choices in (
        ("setting", spec.settings),
        ("variant", spec.variants),
        ("stratum", spec.comparison_strata),
    ):
        for choice in choices:
            if choice.label not in ("–", ""):
                words[f"{spec.name} {kind} {choice.value!r}"] = choice.label
    for column in spec.report_columns():
        words[f"{spec.name} column group"] = column.group
        if " " in column.label:  # a label in words ("cumulative IoU"), not a metric's name ("Acc")
            words[f"{spec.name} column {column.label!r}"] = column.label
    for plot in spec.plots:
        words[f"{spec.name} plot title"] = plot.title
        for group in plot.groups:
            if group.label != group.value:  # CRIC's question types are the data's own names
                words[f"{spec.name} plot group {group.value!r}"] = group.label
        if plot.ylabel and " " in plot.ylabel:
            words[f"{spec.name} plot axis"] = plot.ylabel
    return words


def test_every_word_a_benchmark_declares_has_its_chinese():
    """Settings ("Event"), variants, strata, report groups and plot words come from the pure specs,
    marked there with a no-op; the pages translate them. A new one without a translation fails."""
    from django.utils import translation

    from benchmarks import registry

    untranslated = []
    with translation.override("zh-hans"):
        for spec in registry.specs():
            for where, word in declared_words(spec).items():
                if translation.gettext(word) == word:
                    untranslated.append(f"{where}: {word!r}")
    assert not untranslated, "no Chinese for:\n" + "\n".join(untranslated)


@pytest.mark.django_db
def test_the_trance_report_and_its_plots_speak_chinese(client, trance_dataset):
    """A Chinese reader sees TRANCE's settings as report groups and plot titles in Chinese; the
    LaTeX export stays English (papers)."""
    import json

    from accounts.models import Preference
    from evaluation.services import submit_predictions
    from tests.factories import make_user

    answers = {str(item.payload["idx"]): [] for item in trance_dataset.items.all()}
    submit_predictions(
        dataset=trance_dataset, name="Nothing", setting="event", data=json.dumps(answers).encode()
    )
    researcher = make_user("rita", "researcher")
    Preference.objects.update_or_create(user=researcher, defaults={"language": "zh-hans"})
    client.force_login(researcher)
    page = client.get(f"/datasets/{trance_dataset.pk}/report/").content.decode()
    assert 'class="group">事件（Event）</th>' in page and 'class="group">基础（Basic）</th>' in page
    assert 'class="group">Event</th>' not in page
    assert ">事件（Event）</option>" in page  # the setting of a new submission
    latex = client.get(f"/datasets/{trance_dataset.pk}/report.tex").content.decode()
    assert "Event" in latex and "事件" not in latex


def test_a_breakdown_plot_draws_the_words_it_is_given():
    """The plot module is pure: the page hands it gettext, and the words drawn are the translated
    ones (the title, the groups on the axis)."""
    from benchmarks.spec import BreakdownPlot, Choice
    from evaluation.plots import draw

    class Row:
        name, setting = "Model", "event"
        summary = {"by_length": {"1": {"Acc": 0.5}}}

    plot = BreakdownPlot("Accuracy by length", ("by_length",), "Acc", (Choice("1", "1 step"),), "event")
    seen = []
    assert draw(plot, [Row()], lambda word: seen.append(word) or word.upper()) is not None
    assert {"Accuracy by length", "1 step"} <= set(seen)
