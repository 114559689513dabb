"""Making test plans: what a plan's choices must satisfy, and the one service that creates a plan.

The form, the API and the demo loader all create plans through `create_test_plan`, so the same
rules hold whichever way a plan is made. Plans are not edited once made (a copy is made
instead), so every tester of a plan answers under the same conditions.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from django.db import transaction
from django.utils.translation import gettext as _

from accounts.inputs import text_problem
from benchmarks.spec import one_of
from humantest.models import PLAN_CHOICES, TestPlan
from humantest.trials import BenchmarkTrial, NoTrial, trial_for


class PlanRefused(ValueError):
    """A plan whose choices break a rule; `problems` maps each field to what is wrong with it."""

    def __init__(self, problems: dict[str, str]) -> None:
        super().__init__("; ".join(f"{field}: {message}" for field, message in problems.items()))
        self.problems = problems


def plan_problems(
    *,
    dataset,
    setting: str,
    balance_by: str,
    draw: str,
    practice_items: list[str],
    fixed_items: list[str],
    row_label: str = "Human",
    catch_items: list[str] = (),
    catch_count: int = 0,
    catch_from_easy: bool = False,
    qualify_min_correct: int | None = None,
    qualify_rounds: int = 1,
) -> dict[str, str]:
    """What is wrong with a plan's choices, by field (empty when it can be created)."""
    try:
        trial = trial_for(dataset.benchmark)
    except NoTrial as problem:
        return {"dataset": str(problem)}
    problems: dict[str, str] = {}
    if setting_problem := trial.setting_problem(setting):
        problems["setting"] = setting_problem
    if balance_problem := balance_by_problem(trial, balance_by, setting):
        problems["balance_by"] = balance_problem
    if dataset_problem := trial.dataset_problem(dataset):
        problems["dataset"] = dataset_problem
    known = set(
        dataset.items.filter(external_id__in=[*practice_items, *fixed_items, *catch_items]).values_list(
            "external_id", flat=True
        )
    )
    for field, values in (
        ("practice_items", practice_items),
        ("fixed_items", fixed_items),
        ("catch_items", catch_items),
    ):
        missing = [value for value in values if value not in known]
        if missing:
            problems[field] = _("no item %(items)s in %(dataset)s") % {
                "items": ", ".join(missing[:5]),
                "dataset": dataset,
            }
    if draw == TestPlan.Draw.FIXED and not fixed_items:
        problems["fixed_items"] = _("a fixed draw needs its list of item ids")
    problems.update(
        quality_problems(
            practice_items=practice_items,
            fixed_items=fixed_items,
            catch_items=list(catch_items),
            catch_count=catch_count,
            catch_from_easy=catch_from_easy,
            qualify_min_correct=qualify_min_correct,
            qualify_rounds=qualify_rounds,
        )
    )
    if TestPlan.objects.filter(dataset=dataset, setting=setting, row_label=row_label).exists():
        problems["row_label"] = _(
            "another plan on %(dataset)s already reports its testers as %(label)r: choose another row label"
        ) % {"dataset": dataset, "label": row_label}
    return problems


#: The most catch trials a tester gets, and practice rounds a qualification allows.
MAX_CATCH = 50
MAX_QUALIFY_ROUNDS = 20


def quality_problems(
    *,
    practice_items: list[str],
    fixed_items: list[str],
    catch_items: list[str],
    catch_count: int,
    catch_from_easy: bool,
    qualify_min_correct: int | None,
    qualify_rounds: int,
) -> dict[str, str]:
    """What is wrong with a plan's qualification and catch trials, by field."""
    problems: dict[str, str] = {}
    if qualify_min_correct is not None:
        if not practice_items:
            problems["qualify_min_correct"] = _(
                "a qualification is scored on practice items: list some first"
            )
        elif not 1 <= qualify_min_correct <= len(practice_items):
            problems["qualify_min_correct"] = _(
                "expected 1 to %(count)s (the practice items), got %(value)s"
            ) % {"count": len(practice_items), "value": qualify_min_correct}
        if not 1 <= qualify_rounds <= MAX_QUALIFY_ROUNDS:
            problems["qualify_rounds"] = _("expected 1 to %(limit)s rounds, got %(value)s") % {
                "limit": MAX_QUALIFY_ROUNDS,
                "value": qualify_rounds,
            }
    if not 0 <= catch_count <= MAX_CATCH:
        problems["catch_count"] = _("expected 0 to %(limit)s catch trials, got %(value)s") % {
            "limit": MAX_CATCH,
            "value": catch_count,
        }
    elif catch_count and len(set(catch_items)) < catch_count and not catch_from_easy:
        problems["catch_count"] = _(
            "%(count)s catch trials need at least %(count)s catch items (listed: %(listed)s), "
            "or drawing them from items everyone answered right"
        ) % {"count": catch_count, "listed": len(set(catch_items))}
    measured = set(fixed_items) | set(practice_items)
    if overlap := sorted(set(catch_items) & measured):
        problems["catch_items"] = _(
            "a catch item is never a measured or practice item: %(items)s is listed as both"
        ) % {"items": ", ".join(overlap[:5])}
    if len(catch_items) != len(set(catch_items)):
        problems.setdefault("catch_items", _("an item is listed twice"))
    return problems


def balance_by_problem(trial: BenchmarkTrial, balance_by: str, setting: str) -> str | None:
    """Why a plan of this benchmark in `setting` cannot balance by `balance_by`, saying what to
    choose instead (None when it can). Fields are named as the form shows them, with the value
    the API takes beside each."""
    if not balance_by:
        return None
    title = trial.spec.title
    balance = trial.balance_fields.get(balance_by)
    if balance is None:
        usable = [
            f"“{field.label}” ({name!r})"
            for name, field in trial.balance_fields.items()
            if not field.setting or field.setting == setting
        ]
        if not usable:
            return _("%(benchmark)s items cannot be balanced here: choose “No balancing”, not %(value)r") % {
                "benchmark": title,
                "value": balance_by,
            }
        return _(
            "%(benchmark)s items can be balanced by %(choices)s: choose one of them or “No balancing”, not %(value)r"
        ) % {"benchmark": title, "choices": one_of(usable), "value": balance_by}
    if balance.setting and setting != balance.setting:
        needed = _(trial.spec.setting_label(balance.setting))
        return _(
            "balancing by “%(field)s” needs the setting “%(setting)s” (%(value)r): "
            "choose that setting, or another balancing"
        ) % {"field": balance.label, "setting": needed, "value": balance.setting}
    return None


def create_test_plan(*, created_by, testers: Iterable[Any] = (), **choices: Any) -> TestPlan:
    """A new test plan inviting `testers`; PlanRefused (nothing created) when a choice breaks a rule.

    `choices` are the plan's fields a researcher chooses (`PLAN_CHOICES`, testers aside).
    """
    unknown = set(choices) - set(PLAN_CHOICES)
    if unknown:
        raise TypeError(f"not a plan choice: {', '.join(sorted(unknown))}")
    plan = TestPlan(created_by=created_by, **choices)
    problems = plan_problems(
        dataset=plan.dataset,
        setting=plan.setting,
        balance_by=plan.balance_by,
        draw=plan.draw,
        practice_items=plan.practice_items,
        fixed_items=plan.fixed_items,
        row_label=plan.row_label,
        catch_items=plan.catch_items,
        catch_count=plan.catch_count,
        catch_from_easy=plan.catch_from_easy,
        qualify_min_correct=plan.qualify_min_correct,
        qualify_rounds=plan.qualify_rounds,
    )
    for field, single_line in (("name", True), ("row_label", True), ("brief", False), ("guidance", False)):
        value = getattr(plan, field)
        if isinstance(value, str) and (problem := text_problem(value, single_line=single_line)):
            problems.setdefault(field, problem)
    if problems:
        raise PlanRefused(problems)
    with transaction.atomic():
        plan.save()
        plan.testers.set(testers)
    return plan


def delete_test_plan(plan: TestPlan) -> None:
    """Delete a plan with everything made for it: its testers' sessions and trials (cascaded) and
    their rows in the evaluation report, each tester's and the pooled one (humantest/signals.py).
    All or nothing."""
    with transaction.atomic():
        plan.delete()
