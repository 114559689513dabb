"""Which items a tester gets: drawn once per tester, reproducibly, in the database's light rows.

A random draw is seeded by the plan's seed and the tester's name, so the same tester always
gets the same items in the same order and two testers get different ones. A plan may balance
the draw over a field the benchmark's trial offers (spread as evenly as the dataset allows),
or give every tester the same fixed list.
"""

from __future__ import annotations

import random
from collections import defaultdict
from typing import Any

from humantest.models import TestPlan
from humantest.trials import trial_for


class PlanProblem(ValueError):
    """A plan that cannot give a tester their items (nothing is created)."""


def not_measured(plan: TestPlan) -> set[str]:
    """External ids never drawn as measured items: the practice items and the catch items."""
    return set(plan.practice_items) | set(plan.catch_items)


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


def draw_rows(plan: TestPlan, items, *, position: bool = False) -> list[dict[str, Any]]:
    """Light rows of `items` for drawing: pk, external_id and the fields the benchmark reads."""
    fields = trial_for(plan.dataset.benchmark).draw_fields(plan.balance_by)
    extra = ["position"] if position else []
    paths = ["pk", "external_id", *extra, *fields.values()]
    names = ["pk", "external_id", *extra, *fields]
    return [
        dict(zip(names, values, strict=True))
        for values in items.values_list(*paths).iterator(chunk_size=5000)
    ]


#: Above this many items, a random draw without balancing picks positions and reads only those
#: rows; up to it, reading every light row is as quick and draws from the exact candidate list.
DIRECT_DRAW_MIN_ITEMS = 50_000


def sampled_units(plan: TestPlan, rng: random.Random, count: int) -> list[tuple[dict[str, Any], int]] | None:
    """`count` random units of a large dataset without reading a row per item: positions are drawn
    (seeded, without repeats), only those rows are read, and ones a tester may not get (practice
    items, items the setting cannot show, items without their images) are passed over. None when
    the dataset is small, or too few drawn positions turn out usable (then every row is read)."""
    trial = trial_for(plan.dataset.benchmark)
    items = plan.dataset.items
    size = plan.dataset.item_count
    if size <= DIRECT_DRAW_MIN_ITEMS:
        return None
    practice = not_measured(plan)
    seen: set[int] = set()
    chosen: list[tuple[dict[str, Any], int]] = []
    while len(chosen) < count:
        want = min(2 * (count - len(chosen)) + 10, size - len(seen))
        if len(seen) > size // 4 or want <= 0:
            return None  # mostly unusable items, or more asked for than there are: a full scan
        batch: list[int] = []
        while len(batch) < want:
            position = rng.randrange(size)
            if position not in seen:
                seen.add(position)
                batch.append(position)
        rows = {
            row["position"]: row
            for row in draw_rows(plan, trial.drawable(items.filter(position__in=batch)), position=True)
        }
        for position in batch:
            row = rows.get(position)
            if row is None or row["external_id"] in practice or not trial.eligible(row, plan.setting):
                continue
            parts = trial.parts(row)
            chosen.append((row, rng.randrange(parts) if parts > 1 else 0))
            if len(chosen) == count:
                break
    return chosen


#: A balanced draw from a large dataset looks at this many times the items it draws (or the whole
#: dataset) before trusting the groups it has seen: a value rarer than that may be missed.
BALANCED_SAMPLE_FACTOR = 20


def sampled_balanced_units(
    plan: TestPlan, rng: random.Random, count: int
) -> list[tuple[dict[str, Any], int]] | None:
    """`count` units of a large dataset spread evenly over the values of the plan's balance field,
    without reading a row per item: rows are read at random positions (seeded, without repeats)
    until at least BALANCED_SAMPLE_FACTOR x `count` were looked at and every value seen has its
    share (`count` / values seen), then spread as `spread_evenly` does. None when the dataset is
    small, or a quarter of it was read without that (a value too rare to fill its share by
    sampling): then every row is read."""
    trial = trial_for(plan.dataset.benchmark)
    items = plan.dataset.items
    size = plan.dataset.item_count
    if size <= DIRECT_DRAW_MIN_ITEMS:
        return None
    practice = not_measured(plan)
    seen: set[int] = set()
    groups: dict[Any, list[tuple[dict[str, Any], int]]] = defaultdict(list)
    least = min(size, BALANCED_SAMPLE_FACTOR * count)
    while not (
        len(seen) >= least
        and groups
        and all(len(group) >= -(-count // len(groups)) for group in groups.values())
    ):
        want = min(max(2 * count, 100), size - len(seen))
        if len(seen) > size // 4 or want <= 0:
            return None
        batch: list[int] = []
        while len(batch) < want:
            position = rng.randrange(size)
            if position not in seen:
                seen.add(position)
                batch.append(position)
        rows = {
            row["position"]: row
            for row in draw_rows(plan, trial.drawable(items.filter(position__in=batch)), position=True)
        }
        for position in batch:
            row = rows.get(position)
            if row is None or row["external_id"] in practice or not trial.eligible(row, plan.setting):
                continue
            parts = trial.parts(row)
            part = rng.randrange(parts) if parts > 1 else 0
            group = groups[trial.balance_value(row, plan.balance_by, part)]
            if len(group) < count:  # spread_evenly never takes more than `count` of one value
                group.append((row, part))
    units = spread_evenly(groups, count, rng)
    rng.shuffle(units)
    return units


def candidate_units(plan: TestPlan, rng: random.Random) -> list[tuple[dict[str, Any], int]]:
    """The (row, question) pairs a tester may be given, in the plan's order (file order if random)."""
    trial = trial_for(plan.dataset.benchmark)
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
        practice = not_measured(plan)
        chosen = [
            row
            for row in draw_rows(plan, trial.drawable(items))
            if row["external_id"] not in practice and trial.eligible(row, plan.setting)
        ]
    # One question per item (an image may hold several): a tester never sees an item twice.
    return [(row, rng.randrange(trial.parts(row)) if trial.parts(row) > 1 else 0) for row in chosen]


def draw_units(plan: TestPlan, tester, *, turn: int = 0) -> list[tuple[int, int, dict[str, Any]]]:
    """The tester's test items in order: (item pk, part, context), reproducible for plan, tester
    and `turn` (how many testers started the plan before: what a rotation across testers reads)."""
    trial = trial_for(plan.dataset.benchmark)
    rng = tester_rng(plan, tester)
    balance = trial.balance_fields.get(plan.balance_by)
    by_items = balance is not None and balance.of_items
    units = None
    if plan.draw != TestPlan.Draw.FIXED:
        sample = sampled_balanced_units if by_items else sampled_units
        units = sample(plan, rng, plan.items_per_tester)
        if units is None:
            rng = tester_rng(plan, tester)  # the full scan draws from the start of the stream
    if units is None:  # a small dataset, a fixed list, or a sample that could not decide
        candidates = candidate_units(plan, rng)
        if plan.draw == TestPlan.Draw.FIXED:
            units = candidates
        elif by_items:
            groups: dict[Any, list] = defaultdict(list)
            for row, part in candidates:
                groups[trial.balance_value(row, plan.balance_by, part)].append((row, part))
            units = spread_evenly(groups, plan.items_per_tester, rng)
            rng.shuffle(units)
        else:
            units = rng.sample(candidates, min(plan.items_per_tester, len(candidates)))
    if not units:
        raise PlanProblem(f"{plan.dataset} has no items this plan can show")
    contexts = trial.contexts(
        plan.setting, len(units), plan.balance_by, rng, items=[row["pk"] for row, _ in units], turn=turn
    )
    return [(row["pk"], part, context) for (row, part), context in zip(units, contexts, strict=True)]


def practice_units(plan: TestPlan) -> list[tuple[int, int, dict[str, Any]]]:
    trial = trial_for(plan.dataset.benchmark)
    by_id = dict(
        plan.dataset.items.filter(external_id__in=plan.practice_items).values_list("external_id", "pk")
    )
    pks = [by_id[value] for value in plan.practice_items if value in by_id]
    contexts = trial.contexts(plan.setting, len(pks), "", random.Random(plan.seed))
    return [(pk, 0, context) for pk, context in zip(pks, contexts, strict=True)]


# --- catch trials ----------------------------------------------------------------------------------


def easy_units(plan: TestPlan) -> list[tuple[int, int]]:
    """(item pk, part) of the measured questions every tester so far answered right, two or more
    testers each: obvious enough to check attention with. Timed-out answers count as wrong."""
    from humantest.models import Trial

    trial = trial_for(plan.dataset.benchmark)
    seen: dict[tuple[int, int], list[bool]] = defaultdict(list)
    finished = Trial.objects.filter(
        session__plan=plan,
        phase=Trial.Phase.TEST,
        status__in=(Trial.Status.ANSWERED, Trial.Status.TIMED_OUT),
    ).values_list("item_id", "part", "result")
    for item_pk, part, result in finished.iterator(chunk_size=5000):
        seen[(item_pk, part)].append(bool(trial.correct(result)))
    return sorted(unit for unit, right in seen.items() if len(right) >= 2 and all(right))


def catch_units(
    plan: TestPlan, tester, measured: list[tuple[int, int, dict[str, Any]]]
) -> list[tuple[int, int, int, dict[str, Any]]]:
    """The tester's catch trials: (position in the test's sequence, item pk, part, context).

    Drawn (seeded by the plan and the tester) from the plan's catch items, and, where the plan says
    so, from questions every tester so far answered right; never an item the tester is measured on.
    Fewer than the plan's count when there are not enough such items yet. Positions are drawn among
    the whole sequence's, so catch trials fall anywhere between and around the measured ones.
    """
    if not plan.catch_count:
        return []
    rng = random.Random(f"{plan.seed}:{tester.username}:catch")
    mine = {item_pk for item_pk, _part, _context in measured}
    by_id = dict(plan.dataset.items.filter(external_id__in=plan.catch_items).values_list("external_id", "pk"))
    pool = [(by_id[value], 0) for value in plan.catch_items if value in by_id]
    if plan.catch_from_easy:
        listed = {pk for pk, _ in pool}
        pool += [unit for unit in easy_units(plan) if unit[0] not in listed]
    pool = [unit for unit in pool if unit[0] not in mine]
    chosen = rng.sample(pool, min(plan.catch_count, len(pool)))
    if not chosen:
        return []
    positions = sorted(rng.sample(range(len(measured) + len(chosen)), len(chosen)))
    contexts = trial_for(plan.dataset.benchmark).contexts(plan.setting, len(chosen), "", rng)
    return [
        (position, item_pk, part, context)
        for position, (item_pk, part), context in zip(positions, chosen, contexts, strict=True)
    ]
