"""Writes of the human-test app: drawing items, the server clock, answers and their scores.

The server is the clock. A trial's start (`served_at`) and deadline are written once, by a
conditional UPDATE, the first time its page is sent; reloading finds them set and sends the same
trial with the same deadline. An answer is accepted only while the trial is open (status
"served") and before its deadline plus a small network grace; a second answer to the same trial,
or one after it was closed as timed out, is refused (stale writes are refused, never merged).
"""

from __future__ import annotations

import math
import random
from collections import defaultdict
from datetime import timedelta
from typing import Any

from django.core.exceptions import PermissionDenied
from django.db import IntegrityError, transaction
from django.utils import timezone

from evaluation.models import Prediction, Submission
from humantest.kinds import KINDS, AnswerRefused, Unit
from humantest.models import TestPlan, TestSession, Trial

#: Answers that arrive this long after the deadline still count (the request was in flight).
NETWORK_GRACE = timedelta(seconds=2)
#: A browser may ask to close a trial as timed out this early (its clock may run a little fast).
EARLY_TIMEOUT = timedelta(seconds=1)
CLIENT_EVENT_TYPES = ("blur", "focus", "hidden", "visible")
MAX_CLIENT_EVENTS = 2000


class TrialClosed(Exception):
    """The trial is not open for answers any more (already answered or timed out)."""


class PlanProblem(ValueError):
    """A plan that cannot give a tester their items (nothing is created)."""


# --- plans ---------------------------------------------------------------------------------------


def plan_problems(
    *,
    dataset,
    setting: str,
    balance_by: str,
    draw: str,
    practice_items: list[str],
    fixed_items: list[str],
    row_label: str = "Human",
) -> dict[str, str]:
    """What is wrong with a plan's choices, by field (empty when it can be created)."""
    problems: dict[str, str] = {}
    kind = KINDS[dataset.benchmark]
    name = dataset.get_benchmark_display()
    if setting not in kind.settings:
        problems["setting"] = (
            f"{name} takes the setting {', '.join(value or '(none)' for value in kind.settings)}"
        )
    if balance_by and balance_by not in kind.balance_fields:
        problems["balance_by"] = f"{name} items have no field {balance_by!r}"
    elif balance_by == "camera" and setting != "view":
        problems["balance_by"] = "balancing by final camera needs the View setting"
    if not dataset.has_media:
        problems["dataset"] = "testers need the images: import the dataset with its images"
    elif dataset.benchmark == "stevqa" and dataset.meta.get("layout") != "train":
        problems["dataset"] = "STE-VQA test-layout files name no images: use a training-layout dataset"
    known = set(
        dataset.items.filter(external_id__in=[*practice_items, *fixed_items]).values_list(
            "external_id", flat=True
        )
    )
    for field, values in (("practice_items", practice_items), ("fixed_items", fixed_items)):
        missing = [value for value in values if value not in known]
        if missing:
            problems[field] = f"no item {', '.join(missing[:5])} in {dataset}"
    if draw == TestPlan.Draw.FIXED and not fixed_items:
        problems["fixed_items"] = "a fixed draw needs its list of item ids"
    if TestPlan.objects.filter(dataset=dataset, setting=setting, row_label=row_label).exists():
        problems["row_label"] = (
            f"another plan on {dataset} already reports its testers as {row_label!r}: choose another row label"
        )
    return problems


# --- drawing ---------------------------------------------------------------------------------------


def tester_rng(plan: TestPlan, tester) -> random.Random:
    # Seeded by the plan's seed and the tester, so each tester's draw is reproducible.
    return random.Random(f"{plan.seed}:{tester.username}")


def spread_evenly(groups: dict[Any, list], count: int, rng: random.Random) -> list:
    """`count` entries drawn from `groups` with the group sizes as equal as the groups allow."""
    pools = {key: rng.sample(values, len(values)) for key, values in groups.items()}
    keys = sorted(pools, key=str)
    chosen: list = []
    while len(chosen) < count and any(pools.values()):
        open_keys = [key for key in keys if pools[key]]
        rng.shuffle(open_keys)
        for key in open_keys:
            if len(chosen) == count:
                break
            chosen.append(pools[key].pop())
    return chosen


def draw_rows(plan: TestPlan, items) -> list[dict[str, Any]]:
    """Light rows of `items` for drawing: pk, external_id and the fields the benchmark reads."""
    kind = KINDS[plan.dataset.benchmark]
    fields = kind.draw_fields(plan.balance_by)
    paths = ["pk", "external_id", *fields.values()]
    names = ["pk", "external_id", *fields]
    return [
        dict(zip(names, values, strict=True))
        for values in items.values_list(*paths).iterator(chunk_size=5000)
    ]


def candidate_units(plan: TestPlan, rng: random.Random) -> list[tuple[dict[str, Any], int]]:
    """The (row, question) pairs a tester may be given, in the plan's order (file order if random)."""
    kind = KINDS[plan.dataset.benchmark]
    items = plan.dataset.items.order_by("position")
    if plan.draw == TestPlan.Draw.FIXED:
        by_id = {
            row["external_id"]: row for row in draw_rows(plan, items.filter(external_id__in=plan.fixed_items))
        }
        missing = [value for value in plan.fixed_items if value not in by_id]
        if missing:
            raise PlanProblem(f"fixed_items: no item {', '.join(map(str, missing[:5]))} in {plan.dataset}")
        chosen = [by_id[value] for value in plan.fixed_items]
    else:
        practice = set(plan.practice_items)
        chosen = [
            row
            for row in draw_rows(plan, kind.drawable(items))
            if row["external_id"] not in practice and kind.eligible(row, plan.setting)
        ]
    # One question per item (STE-VQA images hold several): a tester never sees an image twice.
    return [(row, rng.randrange(kind.parts(row)) if kind.parts(row) > 1 else 0) for row in chosen]


def draw_units(plan: TestPlan, tester) -> list[tuple[int, int, dict[str, Any]]]:
    """The tester's test items in order: (item pk, part, context), reproducible for plan and tester."""
    kind = KINDS[plan.dataset.benchmark]
    rng = tester_rng(plan, tester)
    candidates = candidate_units(plan, rng)
    if plan.draw == TestPlan.Draw.FIXED:
        units = candidates
    elif plan.balance_by and plan.balance_by in kind.balance_fields and plan.balance_by != "camera":
        groups: dict[Any, list] = defaultdict(list)
        for row, part in candidates:
            groups[kind.balance_value(row, plan.balance_by, part)].append((row, part))
        units = spread_evenly(groups, plan.items_per_tester, rng)
        rng.shuffle(units)
    else:
        units = rng.sample(candidates, min(plan.items_per_tester, len(candidates)))
    if not units:
        raise PlanProblem(f"{plan.dataset} has no items this plan can show")
    contexts = kind.contexts(plan.setting, len(units), plan.balance_by, rng)
    return [(row["pk"], part, context) for (row, part), context in zip(units, contexts, strict=True)]


def practice_units(plan: TestPlan) -> list[tuple[int, int, dict[str, Any]]]:
    kind = KINDS[plan.dataset.benchmark]
    by_id = dict(
        plan.dataset.items.filter(external_id__in=plan.practice_items).values_list("external_id", "pk")
    )
    pks = [by_id[value] for value in plan.practice_items if value in by_id]
    contexts = kind.contexts(plan.setting, len(pks), "", random.Random(plan.seed))
    return [(pk, 0, context) for pk, context in zip(pks, contexts, strict=True)]


# --- sessions --------------------------------------------------------------------------------------


def start_session(plan: TestPlan, tester) -> TestSession:
    """The tester's session on `plan`, created with its drawn trials on the first call."""
    existing = TestSession.objects.filter(plan=plan, tester=tester).first()
    if existing:
        return existing
    units = draw_units(plan, tester)
    try:
        return create_session(plan, tester, units)
    except IntegrityError:
        # The same tester opened the test twice at once: the other request made the session.
        return TestSession.objects.get(plan=plan, tester=tester)


def create_session(plan: TestPlan, tester, units) -> TestSession:
    with transaction.atomic():
        submission = Submission.objects.create(
            dataset=plan.dataset,
            kind=Submission.Kind.HUMAN,
            name=f"{plan.row_label} · {tester.username}",
            setting=plan.setting,
            variant="official",
            source=f"test plan {plan.pk}",
            parameters={"plan": plan.pk, "tester": tester.username},
            created_by=tester,
        )
        session = TestSession.objects.create(plan=plan, tester=tester, submission=submission)
        Trial.objects.bulk_create(
            [
                Trial(session=session, item_id=item_pk, part=part, context=context, position=index)
                for index, (item_pk, part, context) in enumerate(units)
            ]
        )
    return session


def start_practice(session: TestSession) -> TestSession:
    """A new practice round over the plan's practice items (as many rounds as the tester wants)."""
    if session.status not in (TestSession.Status.BRIEF, TestSession.Status.PRACTICE):
        raise TrialClosed("practice is over once the test has started")
    units = practice_units(session.plan)
    if not units:
        raise TrialClosed("this plan has no practice items")
    with transaction.atomic():
        session.practice_round += 1
        session.status = TestSession.Status.PRACTICE
        session.save(update_fields=["practice_round", "status"])
        Trial.objects.bulk_create(
            [
                Trial(
                    session=session,
                    item_id=item_pk,
                    part=part,
                    context=context,
                    position=index,
                    kind=Trial.Kind.PRACTICE,
                    round=session.practice_round,
                )
                for index, (item_pk, part, context) in enumerate(units)
            ]
        )
    return session


def begin_test(session: TestSession) -> TestSession:
    if session.status in (TestSession.Status.BRIEF, TestSession.Status.PRACTICE):
        session.status = TestSession.Status.RUNNING
        session.started_at = timezone.now()
        session.save(update_fields=["status", "started_at"])
    return session


def pause(session: TestSession) -> TestSession:
    if session.status == TestSession.Status.RUNNING:
        session.status = TestSession.Status.PAUSED
        session.save(update_fields=["status"])
    return session


def resume(session: TestSession) -> TestSession:
    if session.status == TestSession.Status.PAUSED:
        session.status = TestSession.Status.RUNNING
        session.save(update_fields=["status"])
    return session


def open_trials(session: TestSession):
    if session.status == TestSession.Status.PRACTICE:
        trials = session.trials.filter(kind=Trial.Kind.PRACTICE, round=session.practice_round)
    else:
        trials = session.trials.filter(kind=Trial.Kind.TEST)
    return trials.filter(status__in=(Trial.Status.WAITING, Trial.Status.SERVED)).order_by("position")


def current_trial(session: TestSession) -> tuple[Trial | None, list[Trial]]:
    """The trial to show now, served (clock started) if it was not yet; and trials that expired.

    Trials whose deadline passed while the tester was away are closed as timed out on the way.
    Returns (None, expired) when the round or the test has no open trial left; a finished test
    marks the session finished.
    """
    expired: list[Trial] = []
    if session.status not in (TestSession.Status.PRACTICE, TestSession.Status.RUNNING):
        return None, expired
    while True:
        trial = open_trials(session).select_related("item__dataset", "item__scene").first()
        if trial is None:
            if session.status == TestSession.Status.RUNNING:
                finish_session(session)
            return None, expired
        now = timezone.now()
        if trial.status == Trial.Status.WAITING:
            limit = session.plan.time_limit_s
            deadline = now + timedelta(seconds=limit) if limit else None
            updated = Trial.objects.filter(pk=trial.pk, status=Trial.Status.WAITING).update(
                status=Trial.Status.SERVED, served_at=now, deadline=deadline
            )
            if updated:
                trial.status, trial.served_at, trial.deadline = Trial.Status.SERVED, now, deadline
            else:  # another request served it a moment ago: its times are the ones that count
                trial.refresh_from_db(fields=["status", "served_at", "deadline"])
        if trial.deadline is not None and now > trial.deadline + NETWORK_GRACE:
            close_timed_out(trial)
            expired.append(trial)
            continue
        return trial, expired


def finish_session(session: TestSession) -> None:
    TestSession.objects.filter(pk=session.pk).exclude(status=TestSession.Status.FINISHED).update(
        status=TestSession.Status.FINISHED, finished_at=timezone.now()
    )
    session.refresh_from_db(fields=["status", "finished_at"])


def remaining_ms(trial: Trial) -> int | None:
    if trial.deadline is None:
        return None
    return max(0, math.floor((trial.deadline - timezone.now()).total_seconds() * 1000))


# --- answers ---------------------------------------------------------------------------------------


def unit_for(trial: Trial) -> Unit:
    return Unit(
        item=trial.item,
        part=trial.part,
        context={**trial.context, "setting": trial.session.plan.setting},
        key=trial.pk,
    )


def clean_client(raw: Any) -> dict[str, Any]:
    """The browser's timings and focus events, checked; AnswerRefused names a bad field."""
    if raw is None:
        return {}
    if not isinstance(raw, dict):
        raise AnswerRefused("client", "expected an object of timings")
    clean: dict[str, Any] = {}
    for key in ("shown_ms", "first_input_ms", "submit_ms"):
        value = raw.get(key)
        if value is None:
            continue
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
            raise AnswerRefused(f"client.{key}", f"expected milliseconds (a number), got {value!r}")
        clean[key] = round(float(value), 1)
    events = raw.get("events", [])
    if not isinstance(events, list) or len(events) > MAX_CLIENT_EVENTS:
        raise AnswerRefused("client.events", f"expected a list of at most {MAX_CLIENT_EVENTS} events")
    clean_events = []
    for index, event in enumerate(events):
        kind = event.get("type") if isinstance(event, dict) else None
        moment = event.get("t") if isinstance(event, dict) else None
        if kind not in CLIENT_EVENT_TYPES:
            raise AnswerRefused(
                f"client.events[{index}].type", f"expected one of {', '.join(CLIENT_EVENT_TYPES)}"
            )
        if isinstance(moment, bool) or not isinstance(moment, (int, float)) or not math.isfinite(moment):
            raise AnswerRefused(f"client.events[{index}].t", "expected milliseconds (a number)")
        clean_events.append({"type": kind, "t": round(float(moment), 1)})
    clean["events"] = clean_events
    return clean


def focus_losses(client: dict[str, Any]) -> int:
    return sum(1 for event in client.get("events", ()) if event["type"] in ("blur", "hidden"))


def score_one(trial: Trial, answer: Any) -> dict[str, Any]:
    kind = KINDS[trial.item.dataset.benchmark]
    unit = unit_for(trial)
    scored = kind.score(trial.session.plan.setting, [unit], {} if answer is None else {unit.key: answer})
    return scored.items[0]


def lock_open_trial(trial_pk: int, tester, raw_client: Any) -> tuple[Trial, dict[str, Any]]:
    """The tester's open trial, locked until the transaction ends, and the checked client data.

    Only the trial's row is locked (PostgreSQL cannot lock the nullable side of the outer join to
    the item's scene). PermissionDenied for another tester's trial, TrialClosed for a closed one.
    """
    trial = (
        Trial.objects.select_for_update(of=("self",))
        .select_related("session__plan", "item__dataset", "item__scene")
        .get(pk=trial_pk)
    )
    if trial.session.tester_id != tester.pk:
        raise PermissionDenied("this is another tester's trial")
    client = clean_client(raw_client)
    if trial.status != Trial.Status.SERVED:
        raise TrialClosed(f"trial {trial.position + 1} is already {trial.get_status_display().lower()}")
    return trial, client


def record_answer(trial_pk: int, tester, raw_answer: Any, raw_client: Any) -> Trial:
    """Store and score the tester's answer to an open trial; TrialClosed if it is not open.

    PermissionDenied when the trial is another tester's; Trial.DoesNotExist when there is none.

    AnswerRefused (bad answer or client data) changes nothing. An answer that arrives after the
    deadline (plus NETWORK_GRACE) closes the trial as timed out instead.
    """
    with transaction.atomic():
        trial, client = lock_open_trial(trial_pk, tester, raw_client)
        now = timezone.now()
        if trial.deadline is not None and now > trial.deadline + NETWORK_GRACE:
            close_timed_out(trial, client={**client, "late_answer": True})
            return trial
        kind = KINDS[trial.item.dataset.benchmark]
        answer = kind.read_answer(unit_for(trial), raw_answer)
        trial.status = Trial.Status.ANSWERED
        trial.answered_at = now
        trial.answer = answer
        trial.client = client
        trial.focus_losses = focus_losses(client)
        trial.result = score_one(trial, answer)
        trial.save(update_fields=["status", "answered_at", "answer", "client", "focus_losses", "result"])
        store_prediction(trial)
    return trial


def request_timeout(trial_pk: int, tester, raw_client: Any) -> Trial:
    """The browser's countdown reached zero: close the trial if the server's clock agrees."""
    with transaction.atomic():
        trial, client = lock_open_trial(trial_pk, tester, raw_client)
        if trial.deadline is None or timezone.now() < trial.deadline - EARLY_TIMEOUT:
            raise TrialClosed("this trial's time is not up on the server's clock")
        close_timed_out(trial, client=client)
    return trial


def close_timed_out(trial: Trial, client: dict[str, Any] | None = None) -> None:
    updated = Trial.objects.filter(pk=trial.pk, status=Trial.Status.SERVED).update(
        status=Trial.Status.TIMED_OUT
    )
    if not updated:
        trial.refresh_from_db()
        return
    trial.status = Trial.Status.TIMED_OUT
    trial.result = score_one(trial, None)
    fields = ["result"]
    if client is not None:
        trial.client = client
        trial.focus_losses = focus_losses(client)
        fields += ["client", "focus_losses"]
    trial.save(update_fields=fields)
    store_prediction(trial)


def store_prediction(trial: Trial) -> None:
    """A finished test trial becomes its Prediction; the summaries are refreshed after commit."""
    if trial.kind != Trial.Kind.TEST:
        return
    session = trial.session
    kind = KINDS[trial.item.dataset.benchmark]
    answer = None if trial.answer is None else kind.stored_answer(unit_for(trial), trial.answer)
    # One upsert on the (submission, item) constraint instead of update_or_create's six queries.
    Prediction.objects.bulk_create(
        [
            Prediction(
                submission_id=session.submission_id, item_id=trial.item_id, answer=answer, score=trial.result
            )
        ],
        update_conflicts=True,
        unique_fields=["submission", "item"],
        update_fields=["answer", "score"],
    )
    from humantest.tasks import schedule_pooled, summarize_session

    plan_pk, session_pk = session.plan_id, session.pk
    transaction.on_commit(lambda: summarize_session.delay(session_pk))
    transaction.on_commit(lambda: schedule_pooled(plan_pk))


# --- summaries -------------------------------------------------------------------------------------


def finished_test_trials(**filters):
    return (
        Trial.objects.filter(kind=Trial.Kind.TEST, status__in=(Trial.Status.ANSWERED, Trial.Status.TIMED_OUT))
        .filter(**filters)
        .select_related("session__plan", "item__dataset", "item__scene")
        .order_by("session_id", "position")
    )


def score_trials(plan: TestPlan, trials: list[Trial]):
    kind = KINDS[plan.dataset.benchmark]
    units = [unit_for(trial) for trial in trials]
    answers = {trial.pk: trial.answer for trial in trials if trial.answer is not None}
    return kind.score(plan.setting, units, answers)


def summarize_session(session: TestSession) -> None:
    trials = list(finished_test_trials(session=session))
    submission = session.submission
    if not trials or submission is None:
        return
    scored = score_trials(session.plan, trials)
    submission.summary = scored.summary
    submission.parameters = {**submission.parameters, **scored.params}
    submission.problems = []
    submission.scored_at = timezone.now()
    submission.save(update_fields=["summary", "parameters", "problems", "scored_at"])


def summarize_plan(plan: TestPlan) -> Submission | None:
    """The pooled human row: every finished test trial of every tester, scored together."""
    trials = list(finished_test_trials(session__plan=plan))
    if not trials:
        return None
    scored = score_trials(plan, trials)
    members = sorted({trial.session.submission_id for trial in trials if trial.session.submission_id})
    with transaction.atomic():
        plan = TestPlan.objects.select_for_update().get(pk=plan.pk)
        submission = plan.pooled_submission
        if submission is None:
            submission = Submission.objects.create(
                dataset=plan.dataset,
                kind=Submission.Kind.HUMAN,
                name=plan.row_label,
                setting=plan.setting,
                variant="official",
                source=f"test plan {plan.pk} (pooled)",
                created_by=plan.created_by,
            )
            TestPlan.objects.filter(pk=plan.pk).update(pooled_submission=submission)
        submission.summary = scored.summary
        submission.parameters = {"plan": plan.pk, "pooled_from": members, **scored.params}
        submission.scored_at = timezone.now()
        submission.save(update_fields=["summary", "parameters", "scored_at"])
    return submission
