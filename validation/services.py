"""Validation writes: drawing a plan's sample onto the queue, validators' verdicts, marking items.

`create_plan` reads one small row per candidate item (the stratifiers' database expressions),
draws the stratified sample with `evaluation.sampling`, and makes the plan, its queue project,
one task per sampled item (in a seeded random order, so validators work across strata) and the
sampled rows, in one transaction. Bad choices raise PlanRefused naming each field; nothing is
made then.
"""

from __future__ import annotations

import random
import time
from operator import itemgetter
from typing import Any

from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from accounts.inputs import text_problem
from annotation import queue
from annotation.models import Assignment, Project, Task
from benchmarks.models import Dataset, ItemMark
from evaluation.sampling import SamplingInputError, draw_stratified_sample, sample_size_for_margin
from validation.checks import NoCheck, check_for
from validation.models import Plan, Sampled, Verdict

#: The label of the one stratum of a plan without stratifiers.
ALL_ITEMS = "all items"
#: The most items a plan over chosen items takes (a list in a URL or form; a sample draws more).
CHOSEN_ITEMS_LIMIT = 5000
#: Validators per overlap item: two or three.
VALIDATORS_PER_OVERLAP = (2, 3)


class PlanRefused(ValueError):
    def __init__(self, problems: dict[str, str]) -> None:
        super().__init__("; ".join(f"{key}: {value}" for key, value in problems.items()))
        self.problems = problems


def stratum_rows(
    dataset: Dataset, strata: list[str], *, only: list[int] | None = None
) -> dict[str, list[int]]:
    """Item pks by stratum label, from one query over the sampleable items (`only`: among these).

    The per-row work is kept small (500,000 rows: perf/results/validation_draw.md): rows come
    back as tuples, each stratifier's label is worked out once per distinct value it reads (5
    question types, a few program lengths, 50,000 images), and items are grouped by the tuple
    of labels, joined into a stratum name once per stratum.
    """
    check = check_for(dataset.benchmark)
    stratifiers = [check.stratifier(key) for key in strata]
    fields: dict[str, Any] = {}
    for stratifier in stratifiers:
        fields.update(stratifier.fields())
    aliases = list(fields)
    # Per stratifier: what it reads of a row (pk first, then the aliases), and its labels so far
    # (None once a value turns out not to be hashable, such as a JSON list: no cache then).
    readers = [
        (stratifier, itemgetter(*[aliases.index(alias) + 1 for alias in stratifier.fields()]), {})
        for stratifier in stratifiers
    ]
    candidates = dataset.items.all() if only is None else dataset.items.filter(pk__in=only)
    items = check.sampleable(candidates).annotate(**fields).values_list("pk", *aliases).order_by()
    by_labels: dict[tuple[str, ...], list[int]] = {}
    for row in items.iterator(chunk_size=20000):
        labels = []
        for index, (stratifier, read, known) in enumerate(readers):
            value = read(row)
            try:
                label = known.get(value) if known is not None else None
            except TypeError:
                readers[index] = (stratifier, read, None)
                known, label = None, None
            if label is None:
                label = stratifier.value(dict(zip(aliases, row[1:], strict=True)))
                if known is not None:
                    known[value] = label
            labels.append(label)
        key = tuple(labels)
        ids = by_labels.get(key)
        if ids is None:
            ids = by_labels[key] = []
        ids.append(row[0])
    by_stratum: dict[str, list[int]] = {}
    for labels, ids in by_labels.items():
        by_stratum.setdefault(" · ".join(labels) or ALL_ITEMS, []).extend(ids)
    return by_stratum


def plan_problems(
    *,
    dataset: Dataset,
    name: str,
    strata: list[str],
    allocation: str,
    sample_size: int | None,
    margin: float | None,
    confidence: float,
    overlap: float,
    validators_per_overlap: int,
    lease_seconds: int,
    validators: list,
    items: list[int] | None = None,
) -> dict[str, str]:
    problems: dict[str, str] = {}
    if not isinstance(name, str) or not name.strip():
        problems["name"] = _("a plan needs a name")
    elif problem := text_problem(name, single_line=True):
        problems["name"] = problem
    try:
        check = check_for(dataset.benchmark)
    except NoCheck as error:
        return {**problems, "dataset": str(error)}
    known = {stratifier.key for stratifier in check.stratifiers}
    unknown = [key for key in strata if key not in known]
    if unknown:
        problems["strata"] = _("%(key)s is not a stratifier of %(benchmark)s (choose from %(known)s)") % {
            "key": unknown[0],
            "benchmark": dataset.spec.title,
            "known": ", ".join(sorted(known)),
        }
    if allocation not in Plan.Allocation.values:
        problems["allocation"] = _("choose proportional or equal allocation")
    if items is not None:
        if not items:
            problems["items"] = _("the list of items to check is empty")
        elif len(items) > CHOSEN_ITEMS_LIMIT:
            problems["items"] = _("a plan over chosen items takes at most %(n)s of them") % {
                "n": CHOSEN_ITEMS_LIMIT
            }
        elif margin is not None:
            problems["margin"] = _("a plan over chosen items checks all of them (or a sample size of them)")
        else:
            foreign = set(items) - set(dataset.items.filter(pk__in=items).values_list("pk", flat=True))
            if foreign:
                problems["items"] = _("item %(pk)s is not an item of %(dataset)s") % {
                    "pk": min(foreign),
                    "dataset": dataset,
                }
        if sample_size is not None and sample_size < 1:
            problems["sample_size"] = _("a sample needs at least one item")
    elif (sample_size is None) == (margin is None):
        problems["sample_size"] = _("give either a sample size or a target margin of error, not both")
    elif sample_size is not None and sample_size < 1:
        problems["sample_size"] = _("a sample needs at least one item")
    elif margin is not None and not 0 < margin <= 0.5:
        problems["margin"] = _("the margin of error is a share between 0 and 0.5, such as 0.01 for ±1 point")
    if not 0.5 <= confidence < 1:
        problems["confidence"] = _("the confidence level is a share such as 0.95")
    if not 0 <= overlap <= 1:
        problems["overlap"] = _("the overlap is a share of the sample, between 0 and 1")
    if validators_per_overlap not in VALIDATORS_PER_OVERLAP:
        problems["validators_per_overlap"] = _("overlap items are judged by 2 or 3 validators")
    elif overlap > 0 and len(validators) < validators_per_overlap:
        problems["validators"] = _(
            "overlap items need %(count)s different validators: choose at least %(count)s"
        ) % {"count": validators_per_overlap}
    if not validators:
        problems.setdefault("validators", _("choose at least one validator"))
    if not 30 <= lease_seconds <= 24 * 3600:
        problems["lease_seconds"] = _("a lease lasts between 30 seconds and a day")
    return problems


def create_plan(
    *,
    dataset: Dataset,
    name: str,
    strata: list[str] | tuple[str, ...] = (),
    allocation: str = Plan.Allocation.PROPORTIONAL,
    sample_size: int | None = None,
    margin: float | None = None,
    confidence: float = 0.95,
    seed: int = 0,
    overlap: float = 0.1,
    validators_per_overlap: int = 2,
    lease_seconds: int = 600,
    validators=(),
    instructions: str = "",
    created_by=None,
    items: list[int] | None = None,
    source: str = "",
) -> Plan:
    """Draw the sample and put it on the queue; PlanRefused names each bad choice.

    `items`: the plan is over these items of the dataset only (such as the items every tester
    failed, `source` saying where the list came from): all of them are checked unless a
    sample size is given, and the estimate is of the error rate among them, not the dataset's.
    """
    strata, validators = list(dict.fromkeys(strata)), list(validators)
    items = None if items is None else list(dict.fromkeys(items))
    problems = plan_problems(
        dataset=dataset,
        name=name,
        strata=strata,
        allocation=allocation,
        sample_size=sample_size,
        margin=margin,
        confidence=confidence,
        overlap=overlap,
        validators_per_overlap=validators_per_overlap,
        lease_seconds=lease_seconds,
        validators=validators,
        items=items,
    )
    if problems:
        raise PlanRefused(problems)
    started = time.perf_counter()
    by_stratum = stratum_rows(dataset, strata, only=items)
    population = sum(len(ids) for ids in by_stratum.values())
    if not population:
        if items is None:
            raise PlanRefused({"dataset": _("none of this dataset's items can be shown to a validator")})
        raise PlanRefused({"items": _("none of these items can be shown to a validator")})
    try:
        if sample_size is not None:
            size = sample_size
        elif items is not None:
            size = population  # every chosen item
        else:
            size = sample_size_for_margin(population, margin, confidence=confidence)
        if size > population:
            raise PlanRefused(
                {"sample_size": _("the dataset has only %(n)s items to sample from") % {"n": population}}
            )
        draw = draw_stratified_sample(by_stratum, sample_size=size, allocation=allocation, seed=seed)
    except SamplingInputError as error:
        raise PlanRefused({"sample_size": str(error)}) from None
    drawn_in = time.perf_counter() - started

    stratum_of = {item: label for label, info in draw["strata"].items() for item in info["ids"]}
    order = sorted(stratum_of)
    random.Random(seed).shuffle(order)
    overlapping = set(random.Random(seed + 1).sample(order, round(overlap * len(order))))
    record = {
        "population_size": draw["population_size"],
        "sample_size": draw["sample_size"],
        "allocation": allocation,
        "requested_size": size,
        "seed": seed,
        "strata": {
            label: {"population_size": info["population_size"], "sample_size": info["sample_size"]}
            for label, info in draw["strata"].items()
        },
        "overlap_items": len(overlapping),
        "draw_seconds": round(drawn_in, 3),
    }
    if items is not None:
        record["chosen_items"] = {"count": len(items), "source": source.strip()[:300]}
    with transaction.atomic():
        project = Project.objects.create(
            kind=Project.Kind.VALIDATION,
            name=name.strip(),
            dataset=dataset,
            pairs_per_item=0,
            overlap=overlap,
            lease_seconds=lease_seconds,
            seed=seed,
            instructions=instructions,
            created_by=created_by,
        )
        project.annotators.set(validators)
        plan = Plan.objects.create(
            name=name.strip(),
            dataset=dataset,
            project=project,
            strata=strata,
            allocation=allocation,
            requested_size=sample_size,
            margin=margin,
            confidence=confidence,
            seed=seed,
            overlap=overlap,
            validators_per_overlap=validators_per_overlap,
            draw=record,
            created_by=created_by,
        )
        tasks = Task.objects.bulk_create(
            [
                Task(
                    project=project,
                    item_id=item_id,
                    position=position,
                    opinions=validators_per_overlap if item_id in overlapping else 1,
                )
                for position, item_id in enumerate(order)
            ],
            batch_size=2000,
        )
        Sampled.objects.bulk_create(
            [
                Sampled(plan=plan, item_id=task.item_id, task=task, stratum=stratum_of[task.item_id])
                for task in tasks
            ],
            batch_size=2000,
        )
    plan.draw["total_seconds"] = round(time.perf_counter() - started, 3)
    Plan.objects.filter(pk=plan.pk).update(draw=plan.draw)
    return plan


# --- verdicts -----------------------------------------------------------------------------------


def submit_verdict(assignment: Assignment, user, *, version: int, answers: Any) -> Verdict:
    """Store a validator's verdict and free the task's next round (VerdictRefused, Stale, LeaseLost)."""
    item = assignment.task.item
    check = check_for(item.dataset.benchmark)
    read = check.read(answers, item)
    now = timezone.now()
    with transaction.atomic():
        first_time = assignment.submitted_at is None
        queue.close(
            assignment,
            user,
            version,
            status=Assignment.Status.SUBMITTED,
            submitted_at=now,
            draft={"answers": read},
        )
        verdict, _created = Verdict.objects.update_or_create(
            assignment=assignment,
            defaults={
                "sampled": assignment.task.sampled,
                "validator": user,
                "round": assignment.round,
                "answers": read,
                "error": check.is_error(read),
                "submitted_at": now,
            },
        )
        queue.submitted(assignment, first_time)
    return verdict


# --- marks on the dataset -----------------------------------------------------------------------


def mark_rejected(plan: Plan, item_ids: list[int], *, marked_by=None) -> int:
    """Mark items every validator rejected as faulty on the plan's dataset; returns how many are new."""
    already = set(ItemMark.objects.filter(item_id__in=item_ids).values_list("item_id", flat=True))
    new = [
        ItemMark(
            dataset=plan.dataset,
            item_id=item_id,
            reason=_("every validator of plan “%(plan)s” rejected it") % {"plan": plan.name},
            source=f"validation plan {plan.pk}",
            marked_by=marked_by,
        )
        for item_id in item_ids
        if item_id not in already
    ]
    ItemMark.objects.bulk_create(new)
    return len(new)


def unmark(plan: Plan) -> int:
    """Remove the marks this plan made."""
    deleted, _ = ItemMark.objects.filter(dataset=plan.dataset, source=f"validation plan {plan.pk}").delete()
    return deleted
