"""The human-baseline reporting checklist, filled from what Yardstick recorded (issue 27).

Wei et al., "Recommendations and Reporting Checklist for Rigorous & Transparent Human Baselines in
Model Evaluations" (ICML 2025; ../shared/HUMAN-BASELINE-CHECKLIST.md) asks ~60 questions in six
sections. `plan_facts` reads everything a test plan recorded (its design, sessions, trials,
exclusion rules and their outcome, the study's pay rule and payments, entry links, the model rows
it is compared with); `build_report` answers each checklist item from those facts, or from the
plan's `ReportAnswers` (what a researcher is asked once on the report page: ethics review,
population, the paper...), saying "Unknown/Unreported" for a question nobody answered. Every item
says where its answer comes from: "recorded", "form" or "not asked".

`design_document` is the plan's design without any result: exported before data collection it is
a pre-registration; a recorded `Preregistration` keeps it, and the report compares what ran with
it key by key.

Renderers: `as_markdown`, `as_latex` (an appendix section, every special character escaped) and
`as_json`. The builders only read the database.
"""

from __future__ import annotations

import functools
import json
import statistics
from collections import Counter
from collections.abc import Mapping
from datetime import UTC
from decimal import Decimal
from typing import Any

from django.db.models import Count, Q
from django.utils import timezone, translation

from evaluation.comparison import CONFIDENCE, RESAMPLES, ComparisonInputError, paired_sample_size
from evaluation.models import Submission
from evaluation.sampling import wilson_interval
from humantest import exclusions
from humantest.models import (
    EntryLink,
    Participant,
    Payment,
    Preregistration,
    ReportAnswers,
    Study,
    TestPlan,
    TestSession,
    Trial,
)
from humantest.trials import trial_for

YES, PARTIAL, NO, UNKNOWN, NA = "Yes", "Partial", "No", "Unknown/Unreported", "N/A"
CHOICES = (YES, PARTIAL, NO, UNKNOWN, NA)
SOURCES = ("recorded", "form", "not asked")
#: The power and significance level the minimum detectable effect is stated for.
POWER, ALPHA = 0.8, 0.05
CHECKLIST = (
    "Wei, Paskov, Dev, Byun, Reuel, Roberts-Gaal, Calcott, Coxon, Deshpande: Recommendations and "
    "Reporting Checklist for Rigorous & Transparent Human Baselines in Model Evaluations, ICML 2025 "
    "(arXiv 2506.13776)"
)
FINISHED = (Trial.Status.ANSWERED, Trial.Status.TIMED_OUT)

# --- what the report form asks (stored in ReportAnswers.answers) ---------------------------------

#: The factors that may scope a population of interest (the checklist's list, item 2.1.1).
POPULATION_FACTORS = (
    "Expertise", "Education", "Language", "Gender/sex", "Race", "Socioeconomic status", "Age",
    "Disabilities/impairments", "Political orientation", "Digital literacy", "AI literacy",
    "Baseline experience", "Other",
)  # fmt: skip

#: name -> (label, kind, choices): kind is "line" (one line), "text" (several), "url", "year",
#: "choice" or "multi". Every one is optional.
FORM_FIELDS: dict[str, tuple[str, str, tuple[str, ...]]] = {
    "paper_title": ("Paper title", "line", ()),
    "paper_link": ("Paper link", "url", ()),
    "paper_year": ("Publication year", "year", ()),
    "paper_venue": ("Publication venue", "line", ()),
    "languages": ("Language(s) of the evaluation", "line", ()),
    "iterative_design": ("Iterative design (pilot, expert validation)", "choice", (YES, PARTIAL, NO, NA)),
    "iterative_detail": ("Iterative design: how", "line", ()),
    "power_analysis": ("Power analysis done to decide the baseline's size", "choice", (YES, PARTIAL, NO)),
    "power_detail": ("Power analysis: planned effect, power and size", "line", ()),
    "ethics_review": ("Ethics review (IRB or other)", "choice", (YES, PARTIAL, NO, NA)),
    "ethics_detail": ("Ethics review: board and number", "line", ()),
    "preregistration_link": ("Pre-registration link (OSF, AsPredicted…)", "url", ()),
    "population": ("Population of interest", "text", ()),
    "population_factors": ("Factors that scope the population", "multi", POPULATION_FACTORS),
    "recruitment_notes": ("Recruitment notes (platform filters, how people were chosen)", "text", ()),
    "authors_as_baseliners": ("Authors or research team served as baseliners", "choice", (YES, NO)),
    "exposed_excluded": (
        "People exposed to the items before were excluded",
        "choice",
        (YES, NO, UNKNOWN),
    ),
    "explanations": ("Explanations collected from baseliners", "choice", (YES, PARTIAL, NO)),
    "demographics": ("Demographics of the baseliners reported", "choice", (YES, PARTIAL, NO)),
    "data_availability": ("Human baseline data publicly available", "choice", (YES, PARTIAL, NO)),
    "data_statement": ("Data availability statement (where, or why not)", "text", ()),
    "materials_link": ("Experimental materials link", "url", ()),
    "code_link": ("Analysis code link", "url", ()),
}


def in_english(function):
    """Run `function` with English active: the report and the design document go into papers
    and onto registries in English whatever the reader's interface language (labels the models
    and trials mark for translation would otherwise come out in it)."""

    @functools.wraps(function)
    def english(*args, **kwargs):
        with translation.override("en"):
            return function(*args, **kwargs)

    return english


def answers_of(plan: TestPlan) -> tuple[dict[str, Any], ReportAnswers | None]:
    stored = ReportAnswers.objects.filter(plan=plan).select_related("updated_by").first()
    return (dict(stored.answers or {}) if stored else {}), stored


# --- small helpers ---------------------------------------------------------------------------------


def iso(moment) -> str | None:
    return moment.isoformat() if moment is not None else None


def when(moment) -> str:
    """A moment as the report's text gives it: UTC, to the second."""
    return moment.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S UTC") if moment else ""


def shown_fields(fields: list[str]) -> str:
    """What a trial's view holds, by kind: its images, its text question, the rest."""
    if not fields:
        return "a tester's trial shows the item's images"
    images = [name for name in fields if "image" in name]
    text = [name for name in fields if name == "question"]
    rest = [name for name in fields if name not in images and name not in text]
    return "a tester's trial shows " + "; ".join(
        part
        for part in (
            f"{plural(len(images), 'image')} ({', '.join(images)})" if images else "",
            "the question as text" if text else "",
            f"and these fields of the item: {', '.join(rest)}" if rest else "",
        )
        if part
    )


def rounded(value: float | None, places: int = 3) -> float | None:
    return None if value is None else round(float(value), places)


def share(part: int, whole: int) -> float | None:
    return part / whole if whole else None


def percent(value: float | None) -> str:
    return "–" if value is None else f"{value * 100:.1f}%"


def plural(count: int, noun: str, nouns: str | None = None) -> str:
    return f"{count} {noun if count == 1 else (nouns or noun + 's')}"


def spread(values: list[int | float]) -> dict[str, Any]:
    """mean, min and max of counts (None for none)."""
    if not values:
        return {"mean": None, "min": None, "max": None}
    return {"mean": round(sum(values) / len(values), 2), "min": min(values), "max": max(values)}


def spread_text(values: Mapping[str, Any]) -> str:
    if values["mean"] is None:
        return "–"
    if values["min"] == values["max"]:
        return f"{values['min']:g}"
    return f"{values['mean']:g} on average ({values['min']:g}–{values['max']:g})"


def money(currency: str, amount: Any) -> str:
    return f"{currency} {Decimal(str(amount)):.2f}"


def pay_rule_text(rule: Mapping[str, Any] | None) -> str:
    """A study's pay rule in words: base pay, the bonus per correct trial, above a threshold, cap."""
    if not rule:
        return "no pay rule recorded"
    currency = rule["currency"]
    words = [f"{money(currency, rule['base_pay'])} base pay for finishing the study"]
    bonus = []
    if Decimal(str(rule["bonus_per_correct"])) > 0:
        bonus.append(f"{money(currency, rule['bonus_per_correct'])} per correct test trial")
    if rule.get("bonus_threshold") is not None and Decimal(str(rule["bonus_above"])) > 0:
        bonus.append(
            f"{money(currency, rule['bonus_above'])} at an accuracy of at least "
            f"{float(rule['bonus_threshold']) * 100:g}%"
        )
    if bonus:
        text = "bonus " + " plus ".join(bonus)
        if rule.get("bonus_cap") is not None:
            text += f", capped at {money(currency, rule['bonus_cap'])}"
        words.append(text)
    else:
        words.append("no performance bonus")
    return "; ".join(words)


def has_bonus(rule: Mapping[str, Any] | None) -> bool:
    if not rule:
        return False
    return Decimal(str(rule["bonus_per_correct"])) > 0 or (
        rule.get("bonus_threshold") is not None and Decimal(str(rule["bonus_above"])) > 0
    )


def pay_rule(study: Study | None) -> dict[str, Any] | None:
    from humantest.payments import rule_of

    return rule_of(study) if study is not None else None


def balance_label(plan: TestPlan) -> str:
    field = trial_for(plan.dataset.benchmark).balance_fields.get(plan.balance_by)
    return field.label if field else plan.balance_by


def sampling_text(plan: TestPlan) -> str:
    """How the plan draws a tester's items, in words."""
    if plan.draw == TestPlan.Draw.FIXED:
        return (
            f"fixed list of {plural(len(plan.fixed_items), 'item')}, the same for every tester, "
            "in the listed order"
        )
    kept_out = "practice and catch items never drawn as measured items"
    if plan.balance_by:
        return (
            f"stratified random sample: {plan.items_per_tester} items per tester spread as evenly as "
            f"the dataset allows over {balance_label(plan).lower()}, drawn per tester with seed "
            f"{plan.seed} and the tester's name ({kept_out})"
        )
    return (
        f"simple random sample: {plan.items_per_tester} items per tester drawn without repeats from "
        f"the items the setting can show, per tester with seed {plan.seed} and the tester's name ({kept_out})"
    )


def order_text(plan: TestPlan) -> tuple[bool, str]:
    """Whether the order is randomised, and how."""
    catches = " Catch trials sit at seeded random positions among them." if plan.catch_count else ""
    if plan.draw == TestPlan.Draw.FIXED:
        return False, "every tester answers the fixed list in its listed order." + catches
    return True, (
        "each tester's items are drawn and ordered at random, seeded by the plan's seed and the "
        "tester (reproducible, different for each tester)." + catches
    )


# --- minimum detectable effect ---------------------------------------------------------------------


def minimum_detectable_effect(
    units: int, accuracy: float | None, *, alpha: float = ALPHA, power: float = POWER
) -> dict[str, Any]:
    """The smallest accuracy gap between the human row (at `accuracy`) and a model that a two-sided
    McNemar test on `units` paired units detects with this power: `paired_sample_size` (Connor's
    formula) inverted by a search over gaps, 0.01 apart and then 0.001 apart, on either side."""
    result: dict[str, Any] = {
        "units": units,
        "accuracy": rounded(accuracy, 4),
        "alpha": alpha,
        "power": power,
        "gap": None,
        "model_accuracy": None,
        "method": "Connor's formula for McNemar's test (evaluation.comparison.paired_sample_size), inverted",
    }
    if not units or accuracy is None:
        return result

    def detects(gap: float) -> float | None:
        for model in (accuracy - gap, accuracy + gap):
            if 0 <= model <= 1:
                try:
                    needed = paired_sample_size(accuracy, model, alpha=alpha, power=power)
                except ComparisonInputError:
                    continue
                if needed is not None and needed <= units:
                    return model
        return None

    coarse = next((step / 100 for step in range(1, 101) if detects(step / 100) is not None), None)
    if coarse is None:
        return result
    fine = next(
        gap
        for gap in (round(coarse - 0.01 + step / 1000, 3) for step in range(1, 11))
        if gap > 0 and detects(gap) is not None
    )
    result.update(gap=fine, model_accuracy=rounded(detects(fine), 4))
    return result


# --- what Yardstick recorded -----------------------------------------------------------------------


def interface_facts(plan: TestPlan, trial_rows: list[tuple]) -> dict[str, Any]:
    """What a person sees of an item (the trial's view of one measured trial, by its fields) and
    what a model is given (the benchmark's official input), as the spec declares them."""
    spec = plan.dataset.spec
    trial_type = trial_for(plan.dataset.benchmark)
    shown: list[str] = []
    first = next((row for row in trial_rows if row[3] == Trial.Phase.TEST), None)
    if first is not None:
        from humantest.scoring import unit_for

        trial = Trial.objects.select_related("item__dataset", "item__scene", "session__plan").get(pk=first[0])
        try:
            shown = sorted(trial_type.view(unit_for(trial)))
        except Exception:  # noqa: BLE001 - a view that cannot be built says nothing here
            shown = []
    modes = list(getattr(spec, "modalities", ()) or ())
    if not modes:
        modes = ["Visual"] + (["Text"] if "question" in shown else [])
    return {
        "human_interface": "a web page (GUI): the item's images and text as the benchmark's trial shows "
        "them, answered with its widget, the plan's brief before the test",
        "human_sees": shown,
        "model_interface": "files or the API (no GUI): the benchmark's official input record"
        + (f" ({spec.file_description})" if spec.file_description else ""),
        "answer_format": "people's answers are turned into the benchmark's prediction format "
        f"({spec.answer_compared}) before scoring",
        "modes": modes,
        "languages": list(getattr(spec, "languages", ()) or ()),
        "eval_type": getattr(spec, "eval_type", "") or "Capabilities",
    }


@in_english
def plan_facts(plan: TestPlan) -> dict[str, Any]:
    """Everything Yardstick recorded about a plan that the checklist asks, as JSON-ready values."""
    dataset = plan.dataset
    spec = dataset.spec
    quality = exclusions.plan_quality(plan)
    current = quality["current"]
    outcomes = current["outcomes"]
    kept_sessions = {outcome.facts.session for outcome in outcomes if outcome.status == "kept"}
    measured_facts = [outcome.facts for outcome in outcomes if outcome.status != "screened out"]
    kept_facts = [outcome.facts for outcome in outcomes if outcome.status == "kept"]
    current_version = quality["versions"][0] if quality["versions"] else None

    sessions = list(plan.sessions.select_related("tester__participant"))
    participants = list(Participant.objects.filter(plan=plan))
    participant_sessions = {person.session_id for person in participants if person.session_id}
    first_start = (
        plan.sessions.exclude(started_at=None)
        .order_by("started_at")
        .values_list("started_at", flat=True)
        .first()
    )

    trial_rows = list(
        Trial.objects.filter(session__plan=plan, phase__in=Trial.SEQUENCE)
        .order_by("pk")
        .values_list(
            "pk", "session_id", "item_id", "phase", "part", "status", "served_at", "answered_at", "deadline"
        )
    )
    measured = [row for row in trial_rows if row[3] == Trial.Phase.TEST and row[5] in FINISHED]
    kept_trials = [row for row in measured if row[1] in kept_sessions]
    per_unit = Counter((row[2], row[4]) for row in kept_trials)
    per_session_sequence = Counter(row[1] for row in trial_rows)
    seconds = sorted(
        (row[7] - row[6]).total_seconds()
        for row in kept_trials
        if row[5] == Trial.Status.ANSWERED and row[6] and row[7]
    )
    test_minutes = sorted(
        (session.finished_at - session.started_at).total_seconds() / 60
        for session in sessions
        if session.pk in kept_sessions and session.started_at and session.finished_at
    )
    study_minutes = sorted(
        (person.finished_at - person.arrived_at).total_seconds() / 60
        for person in participants
        if person.finished_at and person.status == Participant.Status.FINISHED
    )

    def accuracy(facts) -> dict[str, Any]:
        correct = sum(tester.correct for tester in facts)
        trials = sum(tester.trials for tester in facts)
        low, high = wilson_interval(correct, trials) if trials else (None, None)
        return {
            "correct": correct,
            "trials": trials,
            "accuracy": rounded(share(correct, trials), 4),
            "low": rounded(low, 4),
            "high": rounded(high, 4),
        }

    kept_accuracy = accuracy(kept_facts)
    units = len(per_unit)

    study = Study.objects.filter(plan=plan).first()
    rule = pay_rule(study)
    payments = list(Payment.objects.filter(participant__plan=plan))
    paid = [payment.base + payment.bonus for payment in payments]
    paid_seconds = sorted(payment.seconds for payment in payments if payment.seconds)
    batch_rules = [batch.rule for batch in plan.payment_batches.all()]
    mean_paid = sum(paid) / len(paid) if paid else None
    hourly = None
    if mean_paid is not None and paid_seconds:
        hourly = float(mean_paid) / (statistics.median(paid_seconds) / 3600)
    elif rule and Decimal(rule["base_pay"]) > 0 and study_minutes:
        hourly = float(Decimal(rule["base_pay"])) / (statistics.median(study_minutes) / 60)

    links = list(plan.entry_links.all())
    platforms = sorted({link.platform for link in links})
    counts = Counter(person.status for person in participants)
    random_order, order_words = order_text(plan)
    planned_items = len(plan.fixed_items) if plan.draw == TestPlan.Draw.FIXED else plan.items_per_tester
    models = (
        dataset.submissions.filter(
            producer=Submission.Producer.MODEL,
            scored_at__isnull=False,
            setting=plan.setting,
            pool__isnull=True,
        )
        .annotate(answered=Count("predictions", filter=Q(predictions__answer__isnull=False)))
        .order_by("name")
    )
    model_rows = [{"name": model.name, "variant": model.variant, "units": model.answered} for model in models]
    catch_trials = sum(tester.catch_total for tester in measured_facts)
    catch_failed = sum(tester.catch_failed for tester in measured_facts)

    return {
        "plan": {
            "id": plan.pk,
            "name": plan.name,
            "row_label": plan.row_label,
            "created_at": iso(plan.created_at),
        },
        "dataset": {
            "id": dataset.pk,
            "name": dataset.name,
            "split": dataset.split,
            "version": dataset.version,
            "benchmark": dataset.benchmark,
            "benchmark_title": spec.title,
            "items": dataset.item_count,
            "units": dataset.unit_count,
        },
        "setting": {"value": plan.setting, "label": plan.setting_label},
        "first_start": iso(first_start),
        "baseliners": {
            "invited": plan.testers.count(),
            "arrived_by_link": len(participants),
            "sessions": len(sessions),
            "measured": len(measured_facts),
            "kept": len(kept_facts),
            "excluded": current["excluded"],
            "screened_out": current["screened_out"],
            "finished": sum(1 for session in sessions if session.status == TestSession.Status.FINISHED),
            "from_links": sum(1 for facts in measured_facts if facts.session in participant_sessions),
        },
        "test_set": {
            "units": units,
            "units_all_measured": len({(row[2], row[4]) for row in measured}),
            "dataset_items": dataset.item_count,
            "share_of_dataset": rounded(share(units, dataset.item_count), 4),
        },
        "sampling": {
            "draw": plan.draw,
            "seed": plan.seed,
            "balance_by": plan.balance_by,
            "balance_label": balance_label(plan) if plan.balance_by else "",
            "fixed_items": len(plan.fixed_items),
            "text": sampling_text(plan),
        },
        "samples_per_unit": spread(list(per_unit.values())),
        "items_per_baseliner": {
            "planned": planned_items,
            **spread([tester.trials for tester in kept_facts]),
        },
        "practice": {
            "items": len(plan.practice_items),
            "qualification": plan.qualify_min_correct is not None,
            "min_correct": plan.qualify_min_correct,
            "rounds": plan.qualify_rounds if plan.qualify_min_correct is not None else None,
            "guidance": bool(plan.guidance.strip()),
        },
        "catch": {
            "count": plan.catch_count,
            "listed_items": len(plan.catch_items),
            "from_easy": plan.catch_from_easy,
            "trials": catch_trials,
            "failed": catch_failed,
        },
        "exclusions": {
            "has_rules": quality["has_rules"],
            "version": current_version["version"] if current_version else None,
            "versions": len(quality["versions"]),
            "rules": current["rules"],
            "described": current["described"],
            "before_data": current_version["before_data"] if current_version else None,
            "fixed_at": iso(current_version["fixed_at"]) if current_version else None,
            "measured": current["measured"],
            "kept": current["kept"],
            "excluded": current["excluded"],
            "rate": rounded(current["exclusion_rate"], 4),
            "by_rule": {name: count for name, count in current["by_rule"].items() if count},
        },
        "accuracy": {"kept": kept_accuracy, "all_measured": accuracy(measured_facts)},
        "time": {
            "time_limit_s": plan.time_limit_s,
            "median_trial_s": rounded(statistics.median(seconds), 1) if seconds else None,
            "median_test_minutes": rounded(statistics.median(test_minutes), 1) if test_minutes else None,
            "median_study_minutes": rounded(statistics.median(study_minutes), 1) if study_minutes else None,
            "timed_out": sum(1 for row in kept_trials if row[5] == Trial.Status.TIMED_OUT),
        },
        "instrument": {
            "planned": planned_items + plan.catch_count,
            **spread([per_session_sequence[facts.session] for facts in kept_facts]),
        },
        "randomisation": {"random_order": random_order, "text": order_words},
        "compensation": {
            "study": study is not None,
            "rule": rule,
            "rule_text": pay_rule_text(rule) if rule else "",
            "bonus": has_bonus(rule),
            "payments": len(payments),
            "paid_total": str(sum(paid, Decimal("0.00"))) if payments else None,
            "mean_paid": f"{mean_paid:.2f}" if mean_paid is not None else None,
            "hourly": rounded(hourly, 2),
            "batch_rules": len({json.dumps(rule_, sort_keys=True) for rule_ in batch_rules}),
            "same_rule_in_batches": all(rule_ == rule for rule_ in batch_rules) if rule else None,
        },
        "recruitment": {
            "platforms": platforms,
            "platform_labels": [str(EntryLink.Platform(value).label) for value in platforms],
            "invited_testers": plan.testers.count(),
            "arrived": len(participants),
            "consented": sum(1 for session in sessions if session.consented_at),
            "declined": counts.get(Participant.Status.DECLINED, 0),
            "returned": counts.get(Participant.Status.RETURNED, 0),
            "screened_out": counts.get(Participant.Status.SCREENED_OUT, 0),
        },
        "consent": {
            "version": study.consent_version if study else None,
            "has_text": bool(study and study.consent_text.strip()),
        },
        "models": model_rows,
        "interface": interface_facts(plan, trial_rows),
        "significance": {
            "test": "McNemar's exact test on the units both rows answered (a unit several testers "
            "answered counts as right when at least half of them were right)",
            "correction": "Holm over every test of a comparison table",
            "interval": f"paired bootstrap ({RESAMPLES} resamples, BCa; percentile above 5,000 units) "
            f"{CONFIDENCE:.0%} interval of the accuracy difference",
            "alpha": ALPHA,
        },
        "uncertainty": {
            "per_tester": "Wilson 95% interval of each tester's accuracy",
            "pooled": "Wilson 95% interval of the pooled accuracy; paired bootstrap intervals of "
            "differences from each model",
            "estimate": "point and interval estimates",
        },
        "metric": {
            "same_code": True,
            "text": f"every test trial is scored by {spec.title}'s own metric entry point "
            "(the benchmark spec's score), the code that scores model predictions; the pooled "
            "Human row is a submission scored like a model's",
        },
        "mde": minimum_detectable_effect(units, kept_accuracy["accuracy"]),
        "brief": {"characters": len(plan.brief), "guidance_characters": len(plan.guidance)},
    }


# --- the design, and a pre-registration of it ------------------------------------------------------

#: How the design document names its keys for people.
DESIGN_LABELS = {
    "dataset": "Dataset",
    "dataset_id": "Dataset id",
    "benchmark": "Benchmark",
    "dataset_items": "Items in the dataset",
    "setting": "Setting",
    "row_label": "Row in the report",
    "draw": "Draw",
    "seed": "Seed",
    "balance_by": "Balanced by",
    "items_per_tester": "Items per tester",
    "fixed_items": "Fixed items",
    "practice_items": "Practice items",
    "qualify_min_correct": "Qualification: practice answers right",
    "qualify_rounds": "Qualification: rounds allowed",
    "catch_items": "Catch items",
    "catch_count": "Catch trials per tester",
    "catch_from_easy": "Catch items also from items everyone got right",
    "time_limit_s": "Time limit per trial (s)",
    "exclusion_rules": "Exclusion rules",
    "pay_rule": "Pay rule",
    "consent_version": "Consent text version",
    "brief": "Brief shown to testers",
    "guidance": "Guidance with practice answers",
    "analysis": "Analysis",
}
#: Keys of the design document that describe rather than choose (never compared).
NOT_COMPARED = {"analysis"}


@in_english
def design_document(plan: TestPlan) -> dict[str, Any]:
    """The plan's design as it stands, without any result: what a pre-registration states."""
    study = Study.objects.filter(plan=plan).first()
    rules = exclusions.current_rules(plan)
    design = {
        "dataset": plan.dataset.name,
        "dataset_id": plan.dataset.pk,
        "benchmark": plan.dataset.benchmark,
        "dataset_items": plan.dataset.item_count,
        "setting": plan.setting,
        "row_label": plan.row_label,
        "draw": plan.draw,
        "seed": plan.seed,
        "balance_by": plan.balance_by,
        "items_per_tester": plan.items_per_tester,
        "fixed_items": list(plan.fixed_items),
        "practice_items": list(plan.practice_items),
        "qualify_min_correct": plan.qualify_min_correct,
        "qualify_rounds": plan.qualify_rounds,
        "catch_items": list(plan.catch_items),
        "catch_count": plan.catch_count,
        "catch_from_easy": plan.catch_from_easy,
        "time_limit_s": plan.time_limit_s,
        "exclusion_rules": exclusions.rules_dict(rules) if rules else None,
        "pay_rule": pay_rule(study),
        "consent_version": study.consent_version if study else None,
        "brief": plan.brief,
        "guidance": plan.guidance,
        "analysis": {
            "metric": f"{plan.dataset.spec.title}'s own metric, the one that scores models",
            "comparison": "McNemar's exact test against each model row, Holm-corrected; paired "
            f"bootstrap {CONFIDENCE:.0%} intervals of the accuracy difference",
            "intervals": "Wilson 95% per tester and pooled",
            "alpha": ALPHA,
        },
    }
    return {
        "kind": "pre-registration",
        "title": f"Pre-registration: {plan.name}",
        "plan": {"id": plan.pk, "name": plan.name},
        "exported_at": timezone.now().isoformat(),
        "sampling": sampling_text(plan),
        "exclusion_rules_described": exclusions.describe(design["exclusion_rules"] or {}),
        "pay_rule_described": pay_rule_text(design["pay_rule"]) if design["pay_rule"] else "",
        "design": design,
    }


@in_english
def record_preregistration(plan: TestPlan, *, user=None) -> Preregistration:
    return Preregistration.objects.create(plan=plan, design=design_document(plan)["design"], created_by=user)


def flat(design: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    values: dict[str, Any] = {}
    for key, value in design.items():
        if not prefix and key in NOT_COMPARED:
            continue
        if isinstance(value, Mapping):
            values.update(flat(value, f"{prefix}{key}."))
        else:
            values[f"{prefix}{key}"] = value
    return values


def shown(value: Any) -> str:
    if value is None:
        return "none"
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False) if (not value or len(value) > 60) else value
    return json.dumps(value, ensure_ascii=False)


def design_differences(registered: Mapping[str, Any], current: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Each key whose value differs between a registered design and the current one ("items_per_tester
    20 → 25"); a rule set or pay rule that appeared or went away counts as one key."""
    before, after = flat(registered), flat(current)
    keys = list(dict.fromkeys([*after, *before]))
    differences = []
    for key in keys:
        old, new = before.get(key), after.get(key)
        if old == new:
            continue
        if len(str(old)) > 60 or len(str(new)) > 60:
            text = f"{key} changed"
        else:
            text = f"{key} {shown(old)} → {shown(new)}"
        differences.append({"key": key, "registered": old, "current": new, "text": text})
    return differences


def preregistration_facts(plan: TestPlan, first_start) -> dict[str, Any]:
    """The plan's recorded pre-registrations and how what ran compares with the one that counts:
    the latest recorded before the first tester started, or else the earliest recorded."""
    recorded = list(plan.preregistrations.select_related("created_by").order_by("created_at", "pk"))

    def before(registration) -> bool:
        return first_start is None or registration.created_at <= first_start

    entries = [
        {
            "id": registration.pk,
            "created_at": iso(registration.created_at),
            "created_at_text": when(registration.created_at),
            "created_by": registration.created_by.username if registration.created_by else "",
            "before_data": before(registration),
        }
        for registration in recorded
    ]
    if not recorded:
        return {
            "recorded": [],
            "compared_with": None,
            "before_data": None,
            "matched": None,
            "differences": [],
            "summary": "no pre-registration recorded in Yardstick",
        }
    earlier = [registration for registration in recorded if before(registration)]
    chosen = earlier[-1] if earlier else recorded[0]
    differences = design_differences(chosen.design, design_document(plan)["design"])
    summary = "matched" if not differences else "differs: " + "; ".join(d["text"] for d in differences)
    return {
        "recorded": entries,
        "compared_with": chosen.pk,
        "compared_at": iso(chosen.created_at),
        "compared_at_text": when(chosen.created_at),
        "before_data": before(chosen),
        "matched": not differences,
        "differences": differences,
        "summary": summary,
    }


# --- the checklist ---------------------------------------------------------------------------------

SECTIONS = (
    ("0", "Paper information"),
    ("1", "Baseline design and implementation"),
    ("2", "Baseliner recruitment"),
    ("3", "Baseline execution"),
    ("4", "Baseline analysis"),
    ("5", "Baseline documentation"),
)
#: Every item of the checklist, in its order: number -> (its name, the question in our words).
ITEMS: dict[str, tuple[str, str]] = {
    "0.1": ("Paper title", "The paper's title."),
    "0.2": ("Paper link", "Where the paper is."),
    "0.3": ("Publication year", "The year it was published."),
    "0.4": ("Publication venue", "Where it was published."),
    "0.5": ("Type of eval", "Knowledge, capabilities, propensity or agent?"),
    "0.6": ("Mode of eval", "Text, visual, audio or other?"),
    "0.7": ("Language of eval", "The evaluation's language(s)."),
    "0.8": ("Evaluation dataset size", "Items in the evaluation dataset."),
    "0.9": ("AI test set size", "Items the AI evaluation is run on."),
    "0.10": ("AI samples per item", "AI responses collected per item."),
    "1.1": ("Number of baseliners", "How many baseliners were there in total?"),
    "1.2": ("Baseline test set size", "How many items do the baseliners answer collectively?"),
    "1.2.1": ("Baseline test set sampling strategy", "How were the baseline's items selected?"),
    "1.3": ("Baseline samples per item", "Human responses collected per item."),
    "1.4": ("Items per baseliner", "Items each baseliner responded to."),
    "1.5": ("Explicit human/AI adjustment", "Are the items and instructions designed for people and models?"),
    "1.6": ("Iterative design", "Was the setup designed iteratively (pilot, expert validation)?"),
    "1.7": ("Amount of effort", "Is the effort of people and models controlled (time, cost)?"),
    "1.8": ("Power analysis", "Was a power analysis done to decide the baseline's size?"),
    "1.8.1": ("Minimum detectable effect size", "The minimum detectable effect, and its power."),
    "1.9": ("Ethics review", "Was the study approved or exempted by an IRB or another ethics review?"),
    "1.10": ("Pre-registration", "Was the design registered before the experiment ran?"),
    "2.1": ("Population of interest", "Is the population the results hold for identified?"),
    "2.1.1": ("Population criteria", "Which factors scope that population?"),
    "2.2": ("Baseliner sampling strategy", "How were the baseliners recruited?"),
    "2.3": ("Quality control in recruitment", "Were baseliners pre-qualified or excluded when recruited?"),
    "2.3.1": ("Quality control criteria", "The inclusion and exclusion criteria."),
    "2.3.2": ("Recruitment exclusion rate", "How many were excluded by these criteria?"),
    "2.4": ("Author baseliners", "Did the authors or research team serve as baseliners?"),
    "2.5": ("Train/test contamination", "Were people exposed to the items before excluded?"),
    "2.6": ("Baseliner training", "Did the baseliners receive training?"),
    "2.6.1": ("Training type", "What kind of training?"),
    "2.6.2": ("Training compensation", "Were the baseliners paid for the training?"),
    "2.7": ("Testing compensation", "Were the baseliners paid for the baseline?"),
    "2.7.1": ("Testing compensation amount", "How much?"),
    "2.7.2": ("Performance bonus", "Was a performance bonus offered, and by what rule?"),
    "2.7.3": ("Compensation structure", "Was every baseliner paid by the same rule?"),
    "3.1": ("Instrument length", "Items per sitting (one session)."),
    "3.1.1": ("Item randomisation", "Was the order of the items randomised?"),
    "3.2": ("Quality control in execution", "Were quality checks or exclusions applied during collection?"),
    "3.2.1": ("Quality control criteria", "Which factors decided exclusion?"),
    "3.2.2": ("Execution exclusion rate", "How many were excluded by these criteria?"),
    "3.3": ("UI equivalence", "Did people and models have the same interface for each item?"),
    "3.3.1": ("GUI vs. API", "People had a graphical interface, models API inputs only."),
    "3.3.2": ("UI equivalence adjustment", "Does the evaluation adjust for the difference?"),
    "3.4": ("Instruction equivalence", "Did people and models get the same instructions for each item?"),
    "3.4.1": ("Instruction equivalence adjustment", "Does the evaluation adjust for the difference?"),
    "3.5": ("Tool access equivalence", "Did people and models have the same tools?"),
    "3.5.1": ("Tool access enforcement", "Was people's use of tools overseen?"),
    "3.6": ("Explanations", "Were explanations collected from the baseliners?"),
    "4.1": ("Statistical significance", "Were differences between people and models tested?"),
    "4.1.1": ("Statistical significance test", "Which test?"),
    "4.2": ("Uncertainty estimate", "Is uncertainty given for people's and models' results?"),
    "4.2.1": ("Estimate type", "Point, interval or distribution?"),
    "4.3": ("Evaluation metric equivalence", "Was the same metric used for people and models?"),
    "4.4": ("Scoring criteria equivalence", "Was the same scoring rubric used?"),
    "4.5": ("Scoring method equivalence", "Was the same scoring method used?"),
    "4.6": ("Quality control robustness", "Are the results robust to the exclusion choices?"),
    "5.1.1": ("Sample demographics", "Were the baseliners' demographics reported?"),
    "5.1.2": ("Baseline instructions", "Were the instructions given to baseliners reported?"),
    "5.1.3": ("Time to completion", "Was the time to completion reported?"),
    "5.1.4": ("AI tool versions", "AI tools and versions, where baseliners had AI access."),
    "5.1.5": ("Completion rate", "How many who were recruited did not complete?"),
    "5.2": ("Baseline data availability", "Is the (anonymised) human baseline data public?"),
    "5.2.1": ("Individual data availability", "Is it at the level of individual baseliners?"),
    "5.2.2": ("Non-availability justification", "If it is not public: why not?"),
    "5.3": ("Experimental materials availability", "Are the experimental materials public?"),
    "5.4": ("Analysis code availability", "Is the analysis code public?"),
}
NOT_ANSWERED = "not answered on the report form"


def form_choice(answers: Mapping[str, Any], name: str, detail_name: str | None = None) -> tuple[str, str]:
    """A choice asked on the form, and its detail: Unknown/Unreported when not answered."""
    answer = answers.get(name) or ""
    detail = (answers.get(detail_name) or "") if detail_name else ""
    if answer not in CHOICES:
        return UNKNOWN, detail or NOT_ANSWERED
    return answer, detail


def joined(*parts: str, separator: str = "; ") -> str:
    return separator.join(part for part in parts if part)


class Filled:
    """The checklist being filled: `put` answers one item; `sections` lists them in order."""

    def __init__(self) -> None:
        self.entries: dict[str, dict[str, Any]] = {}

    def put(self, number: str, answer: str, detail: str = "", source: str = "recorded", value: Any = None):
        assert number in ITEMS and number not in self.entries, number
        assert answer in CHOICES and source in SOURCES, (answer, source)
        title, question = ITEMS[number]
        self.entries[number] = {
            "id": number,
            "title": title,
            "question": question,
            "answer": answer,
            "value": value,
            "detail": detail,
            "source": source,
        }

    def asked(self, number: str, answers: Mapping[str, Any], name: str) -> None:
        """An item whose answer is a value typed on the form."""
        value = answers.get(name)
        if value in (None, "", []):
            self.put(number, UNKNOWN, NOT_ANSWERED, "form")
        else:
            self.put(number, YES, "", "form", value)

    def sections(self) -> list[dict[str, Any]]:
        missing = [number for number in ITEMS if number not in self.entries]
        assert not missing, f"checklist items left unanswered: {missing}"
        return [
            {
                "id": key,
                "title": title,
                "items": [entry for number, entry in self.entries.items() if number.split(".")[0] == key],
            }
            for key, title in SECTIONS
        ]


@in_english
def build_report(plan: TestPlan) -> dict[str, Any]:
    """The checklist's sections in its order, each item answered from the facts or the form."""
    facts = plan_facts(plan)
    answers, stored = answers_of(plan)
    prereg = preregistration_facts(plan, parse_moment(facts["first_start"]))
    spec = plan.dataset.spec
    people, test_set, rec = facts["baseliners"], facts["test_set"], facts["recruitment"]
    excl, comp, practice = facts["exclusions"], facts["compensation"], facts["practice"]
    catch, time, interface, mde = facts["catch"], facts["time"], facts["interface"], facts["mde"]
    no_data = people["measured"] == 0
    models = facts["models"]
    filled = Filled()
    put = filled.put

    # 0. Paper information
    for number, name in (
        ("0.1", "paper_title"),
        ("0.2", "paper_link"),
        ("0.3", "paper_year"),
        ("0.4", "paper_venue"),
    ):
        filled.asked(number, answers, name)
    put("0.5", YES, f"{spec.title} scores answers against a ground truth", value=interface["eval_type"])
    put("0.6", YES, shown_fields(interface["human_sees"]), value=", ".join(interface["modes"]))
    if interface["languages"]:
        put("0.7", YES, f"as {spec.title}'s spec declares them", value=", ".join(interface["languages"]))
    else:
        filled.asked("0.7", answers, "languages")
    put(
        "0.8",
        YES,
        f"dataset “{plan.dataset.name}” ({plan.dataset.split or 'no split'}), "
        f"{plural(plan.dataset.unit_count, 'scoring unit')}",
        value=plan.dataset.item_count,
    )
    if models:
        listing = "; ".join(f"{row['name']}: {row['units']}" for row in models[:8])
        put(
            "0.9",
            YES,
            f"units answered by each model row in this setting: {listing}",
            value=max(row["units"] for row in models),
        )
        put("0.10", YES, f"one answer per unit in each of {plural(len(models), 'model row')}", value=1)
    else:
        put("0.9", UNKNOWN, "no scored model row on this dataset in this setting yet")
        put("0.10", UNKNOWN, "no scored model row on this dataset in this setting yet")

    # 1. Baseline design and implementation
    put(
        "1.1",
        UNKNOWN if no_data else YES,
        f"{people['measured']} measured (started the test): {people['kept']} kept in the “{plan.row_label}” "
        f"row, {people['excluded']} excluded by the exclusion rules; {people['screened_out']} screened out "
        "in practice (never measured)",
        value=people["measured"],
    )
    put(
        "1.2",
        UNKNOWN if no_data else YES,
        f"distinct scoring units the kept baseliners answered, of the dataset's {test_set['dataset_items']} "
        f"items ({percent(test_set['share_of_dataset'])}); {test_set['units_all_measured']} counting the "
        "excluded baseliners too",
        value=test_set["units"],
    )
    kind = (
        "fixed list"
        if plan.draw == TestPlan.Draw.FIXED
        else "stratified random"
        if plan.balance_by
        else ("simple random")
    )
    put("1.2.1", YES, facts["sampling"]["text"], value=kind)
    samples = facts["samples_per_unit"]
    put(
        "1.3",
        UNKNOWN if samples["mean"] is None else YES,
        "answers of the kept baseliners per scoring unit"
        + (
            f": mean {samples['mean']:g}, min {samples['min']}, max {samples['max']}"
            if samples["mean"]
            else ""
        ),
        value=samples["mean"],
    )
    per = facts["items_per_baseliner"]
    put(
        "1.4",
        YES,
        joined(
            f"planned: {per['planned']} measured items per tester",
            f"answered by the kept baseliners: {spread_text(per)}" if per["mean"] is not None else "",
            f"and {plural(plan.catch_count, 'catch trial')} each (not measured)" if plan.catch_count else "",
        ),
        value=per["planned"],
    )
    put(
        "1.5",
        PARTIAL,
        "people answer the same items as models, in the benchmark's own answer format "
        f"({spec.answer_compared}), on a page made for people, with the plan's brief as instructions; "
        "whether the benchmark itself was designed for both is its authors' statement",
    )
    put("1.6", *form_choice(answers, "iterative_design", "iterative_detail"), "form")
    limit = time["time_limit_s"]
    put(
        "1.7",
        PARTIAL if limit else NO,
        joined(
            f"people have {limit} s per trial (the server's clock); models' time is not limited"
            if limit
            else "no time limit per trial, and none on models' compute",
            f"median {time['median_trial_s']:g} s per answered trial"
            if time["median_trial_s"] is not None
            else "",
        ),
    )
    put("1.8", *form_choice(answers, "power_analysis", "power_detail"), "form")
    planned = f"planned: {answers['power_detail']}" if answers.get("power_detail") else ""
    if mde["gap"] is not None:
        put(
            "1.8.1",
            YES,
            joined(
                f"with {mde['units']} measured units and the pooled human accuracy {mde['accuracy']:.3f}, a "
                f"two-sided McNemar test (alpha {mde['alpha']}, power {mde['power']}) detects an accuracy gap "
                f"of {mde['gap']:.3f} or more (a model at {mde['model_accuracy']:.3f}): Connor's formula with "
                "the discordance of independent raters, which errs on the safe side",
                planned,
            ),
            value=f"{mde['gap']:.3f} (power {mde['power']}, alpha {mde['alpha']})",
        )
    elif mde["units"] and mde["accuracy"] is not None:
        put(
            "1.8.1",
            YES,
            joined(
                f"{mde['units']} measured units are too few to detect any gap with power {mde['power']}",
                planned,
            ),
            value="none",
        )
    else:
        put("1.8.1", UNKNOWN, joined("no measured unit yet", planned))
    put("1.9", *form_choice(answers, "ethics_review", "ethics_detail"), "form")
    link = answers.get("preregistration_link") or ""
    if prereg["recorded"]:
        order = "before" if prereg["before_data"] else "after"
        put(
            "1.10",
            YES if prereg["before_data"] else PARTIAL,
            joined(
                f"design recorded in Yardstick at {prereg['compared_at_text']}, {order} the first tester started; "
                f"what ran {prereg['summary']}",
                f"public registration: {link}" if link else "",
            ),
            value=link or None,
        )
    elif link:
        put("1.10", YES, "public registration (not recorded in Yardstick)", "form", link)
    else:
        put(
            "1.10", UNKNOWN, "no pre-registration recorded in Yardstick and no link given on the form", "form"
        )

    # 2. Baseliner recruitment
    population = answers.get("population") or ""
    put("2.1", YES if population else UNKNOWN, population or NOT_ANSWERED, "form")
    factors = answers.get("population_factors") or []
    put(
        "2.1.1",
        YES if factors else UNKNOWN,
        "" if factors else NOT_ANSWERED,
        "form",
        ", ".join(factors) or None,
    )
    ways = []
    if rec["platform_labels"]:
        ways.append("entry links on " + ", ".join(rec["platform_labels"]))
    if rec["invited_testers"]:
        ways.append(f"{plural(rec['invited_testers'], 'tester')} invited by account")
    strategy = "Crowdsource" if {"prolific", "mturk"} & set(rec["platforms"]) else "Convenience sample"
    notes = answers.get("recruitment_notes") or ""
    put(
        "2.2",
        YES if ways else UNKNOWN,
        joined("; ".join(ways) or "no entry link and no invited tester", notes),
        value=strategy if ways else None,
    )
    screened, tried = people["screened_out"], people["screened_out"] + people["measured"]
    if practice["qualification"]:
        criteria = (
            f"a practice round with at least {practice['min_correct']} of {practice['items']} answers right, "
            f"in at most {plural(practice['rounds'], 'round')}"
        )
        put("2.3", YES, criteria)
        put("2.3.1", YES, joined(criteria, notes))
        put(
            "2.3.2",
            YES,
            f"{screened} of {tried} who practised were screened out ({percent(share(screened, tried))})",
            value=screened,
        )
    else:
        put("2.3", PARTIAL if notes else NO, joined("the plan asks for no practice qualification", notes))
        put("2.3.1", NA, "no qualification")
        put("2.3.2", NA, "no qualification: nobody is screened out", value=0)
    put("2.4", *form_choice(answers, "authors_as_baseliners"), "form")
    put("2.5", *form_choice(answers, "exposed_excluded"), "form")
    if practice["items"]:
        training = joined(
            f"a practice round of {plural(practice['items'], 'item')} before the test, each answer followed by "
            "the right one" + (" and the plan's guidance" if practice["guidance"] else ""),
            f"up to {plural(practice['rounds'], 'round')} to qualify"
            if practice["qualification"]
            else "repeatable as often as the tester wants",
        )
        put("2.6", YES, training)
        put("2.6.1", YES, training, value="practice items with feedback")
        if comp["rule"] and Decimal(comp["rule"]["base_pay"]) > 0:
            put(
                "2.6.2",
                PARTIAL if practice["qualification"] else YES,
                joined(
                    "practice is part of the session the base pay covers",
                    "people screened out in practice are not paid by the rule (only those who finish)"
                    if practice["qualification"]
                    else "",
                ),
            )
        elif comp["study"]:
            put("2.6.2", NO, "the study's base pay is zero")
        else:
            put("2.6.2", UNKNOWN, "no study: pay is not recorded for invited testers")
    else:
        put("2.6", NO, "the plan has no practice items")
        put("2.6.1", NA, "no training")
        put("2.6.2", NA, "no training")
    if comp["rule"]:
        rule = comp["rule"]
        paid = Decimal(rule["base_pay"]) > 0 or comp["bonus"]
        pay = joined(
            comp["rule_text"],
            f"{plural(comp['payments'], 'payment')} made, {rule['currency']} {comp['mean_paid']} on average"
            if comp["payments"]
            else "no payment made yet",
            f"about {rule['currency']} {comp['hourly']:.2f} per hour at the median time"
            if comp["hourly"]
            else "",
        )
        put("2.7", YES if paid else NO, pay)
        put("2.7.1", YES if paid else NA, pay, value=money(rule["currency"], rule["base_pay"]))
        bonus_text = comp["rule_text"].split("; ", 1)[1]
        put(
            "2.7.2",
            YES if comp["bonus"] else NO,
            comp["rule_text"],
            value=bonus_text if comp["bonus"] else None,
        )
        if comp["same_rule_in_batches"] is False:
            put("2.7.3", NO, f"the rule changed between payment batches ({comp['batch_rules']} rules)")
        else:
            put("2.7.3", YES, "one rule for every participant, kept with each payment batch")
    else:
        for number in ("2.7", "2.7.1", "2.7.2", "2.7.3"):
            put(
                number,
                UNKNOWN,
                "no study: the plan's testers were invited by account and pay is not recorded",
            )

    # 3. Baseline execution
    instrument = facts["instrument"]
    put(
        "3.1",
        YES,
        joined(
            f"{per['planned']} measured items"
            + (f" and {plural(plan.catch_count, 'catch trial')}" if plan.catch_count else "")
            + " in one session (a tester may pause between trials)",
            f"served per kept baseliner: {spread_text(instrument)}" if instrument["mean"] is not None else "",
        ),
        value=instrument["planned"],
    )
    put("3.1.1", YES if facts["randomisation"]["random_order"] else NO, facts["randomisation"]["text"])
    criteria_list = list(excl["described"])
    if catch["count"]:
        criteria_list.insert(
            0, f"{plural(catch['count'], 'catch trial')} per tester (obvious items, never measured)"
        )
    if excl["has_rules"]:
        stated = (
            "stated before the first tester started" if excl["before_data"] else "stated after data came in"
        )
        others = (
            f"; {excl['versions']} versions in all, each one's outcome kept" if excl["versions"] > 1 else ""
        )
        rules_text = (
            f"exclusion rules version {excl['version']} ({stated}{others}): exclude a tester on any of: "
            + ("; ".join(excl["described"]) if excl["described"] else "nothing (every rule off)")
        )
    else:
        rules_text = "no exclusion rules: every measured tester counts"
    qc_on = bool(excl["described"]) or bool(catch["count"])
    put(
        "3.2",
        YES if qc_on else NO,
        joined(rules_text, f"{plural(catch['count'], 'catch trial')} per tester" if catch["count"] else ""),
    )
    put(
        "3.2.1",
        YES if qc_on else NA,
        joined(
            "; ".join(criteria_list) or "none",
            f"{catch['failed']} of {catch['trials']} catch trials failed" if catch["trials"] else "",
            "recorded for every trial: time on the server's clock, focus losses, time hidden",
        ),
    )
    if excl["has_rules"]:
        by_rule = ", ".join(
            f"{exclusions.BY_NAME[name].label}: {count}" for name, count in excl["by_rule"].items()
        )
        put(
            "3.2.2",
            YES if excl["measured"] else UNKNOWN,
            joined(
                f"{excl['excluded']} of {excl['measured']} measured testers excluded ({percent(excl['rate'])})",
                f"by rule: {by_rule}" if by_rule else "",
            ),
            value=excl["rate"],
        )
    else:
        put("3.2.2", NA, "no exclusion rules")
    put("3.3", NO, f"people: {interface['human_interface']}; models: {interface['model_interface']}")
    put(
        "3.3.1",
        YES,
        "people answer on a web page; models' predictions arrive as files or through the API",
        value=True,
    )
    put("3.3.2", PARTIAL, interface["answer_format"] + ", and scored by the same metric")
    put(
        "3.4",
        PARTIAL,
        "the same item (its question or images) for both; people also read the plan's brief "
        f"({plural(facts['brief']['characters'], 'character')}) and the benchmark's how-to-answer text "
        "before the test; the prompt a model gets is its runner's",
    )
    put("3.4.1", NO, "not adjusted beyond the common answer format")
    put(
        "3.5",
        YES,
        "neither is given tools: the test page offers none, and models answer from the "
        "benchmark's input alone",
    )
    watched = [name for name in ("max_hidden_s", "max_focus_losses") if excl["rules"].get(name) is not None]
    put(
        "3.5.1",
        PARTIAL if watched else NO,
        "leaving the page is recorded for every trial (focus losses, time "
        "hidden)" + ("; the plan's rules exclude on it" if watched else "; no rule excludes on it"),
    )
    put("3.6", *form_choice(answers, "explanations"), "form")

    # 4. Baseline analysis
    sig, acc = facts["significance"], facts["accuracy"]["kept"]
    put(
        "4.1",
        YES if models else PARTIAL,
        "on the dataset's comparison pages, the Human row against each model row"
        if models
        else "on the comparison pages, once a model row is scored",
    )
    put(
        "4.1.1",
        YES,
        f"{sig['test']}; {sig['correction']}; {sig['interval']}",
        value="McNemar exact, Holm-corrected; paired bootstrap intervals",
    )
    pooled = (
        f"pooled accuracy {acc['accuracy']:.3f} [{acc['low']:.3f}, {acc['high']:.3f}] over {acc['trials']} trials"
        if acc["accuracy"] is not None
        else ""
    )
    put("4.2", YES, joined(facts["uncertainty"]["per_tester"], facts["uncertainty"]["pooled"], pooled))
    put(
        "4.2.1",
        YES,
        "the pooled accuracy with its interval; the testers' accuracies give the distribution",
        value="point and interval estimates",
    )
    for number in ("4.3", "4.4", "4.5"):
        put(number, YES, facts["metric"]["text"])
    everyone = facts["accuracy"]["all_measured"]
    if (
        excl["has_rules"]
        and excl["excluded"]
        and acc["accuracy"] is not None
        and everyone["accuracy"] is not None
    ):
        put(
            "4.6",
            YES,
            f"accuracy with the exclusions {acc['accuracy']:.3f} ({acc['trials']} trials), without them "
            f"{everyone['accuracy']:.3f} ({everyone['trials']} trials): a difference of "
            f"{acc['accuracy'] - everyone['accuracy']:+.3f}; the plan's page shows every measured tester's "
            "row beside the kept",
        )
    elif excl["has_rules"]:
        put("4.6", NA, "nobody was excluded: the results with and without exclusions are the same")
    else:
        put("4.6", NA, "no exclusion rules")

    # 5. Baseline documentation
    answer, detail = form_choice(answers, "demographics")
    put(
        "5.1.1",
        answer,
        joined(detail, "Yardstick records no demographics" if answer == UNKNOWN else ""),
        "form",
    )
    put(
        "5.1.2",
        YES,
        "the plan's brief and practice guidance are in its design document (pre-registration export)",
    )
    timing = joined(
        f"median {time['median_trial_s']:g} s per answered trial"
        if time["median_trial_s"] is not None
        else "",
        f"median {time['median_test_minutes']:g} min from the first test trial to the last"
        if time["median_test_minutes"] is not None
        else "",
        f"median {time['median_study_minutes']:g} min from arrival to finish"
        if time["median_study_minutes"] is not None
        else "",
        f"{plural(time['timed_out'], 'trial')} timed out" if limit else "",
    )
    put(
        "5.1.3",
        YES if time["median_trial_s"] is not None else UNKNOWN,
        timing or "no finished trial yet",
        value=time["median_trial_s"],
    )
    put("5.1.4", NA, "the test page gives people no AI tool")
    put(
        "5.1.5",
        YES if people["measured"] or rec["arrived"] else UNKNOWN,
        joined(
            f"{people['finished']} of {people['measured']} who started the test finished",
            f"by link: {rec['arrived']} arrived, {rec['consented']} consented, {rec['declined']} declined, "
            f"{rec['screened_out']} screened out, {rec['returned']} returned (abandoned)"
            if rec["arrived"]
            else "",
        ),
        value=people["measured"] - people["finished"],
    )
    answer, detail = form_choice(answers, "data_availability")
    statement = answers.get("data_statement") or ""
    put("5.2", answer, statement or detail, "form")
    individual = YES if answer in (YES, PARTIAL) else NA if answer == NO else UNKNOWN
    put(
        "5.2.1",
        individual,
        "the plan's trial export has one row per trial, naming each baseliner by their id",
    )
    if answer == NO:
        put("5.2.2", YES if statement else UNKNOWN, statement or NOT_ANSWERED, "form")
    else:
        put("5.2.2", NA, "", "form")
    filled.asked("5.3", answers, "materials_link")
    filled.asked("5.4", answers, "code_link")

    return {
        "title": f"Human baseline report: {plan.name}",
        "checklist": CHECKLIST,
        "generated_at": timezone.now().isoformat(),
        "plan": facts["plan"],
        "dataset": facts["dataset"],
        "setting": facts["setting"],
        "answers": answers,
        "answers_updated_at": iso(stored.updated_at) if stored else None,
        "answers_updated_at_text": when(stored.updated_at) if stored else "",
        "preregistration": prereg,
        "facts": facts,
        "sections": filled.sections(),
    }


def parse_moment(text: str | None):
    from django.utils.dateparse import parse_datetime

    return parse_datetime(text) if text else None


# --- renderers ---------------------------------------------------------------------------------------


def cell(entry: Mapping[str, Any]) -> str:
    """What the Answer column shows: the value of an item that has one, else the answer."""
    value = entry.get("value")
    if value is None or value == "" or isinstance(value, bool):
        return entry["answer"]
    if isinstance(value, float):
        value = f"{value:g}"
    return f"{value}" if entry["answer"] == YES else f"{entry['answer']}: {value}"


def md_cell(text: Any) -> str:
    return str(text).replace("\\", "\\\\").replace("|", "\\|").replace("\r\n", "\n").replace("\n", "<br>")


@in_english
def as_markdown(report: Mapping[str, Any]) -> str:
    lines = [
        f"# {md_cell(report['title'])}",
        "",
        f"Plan {report['plan']['id']} on {md_cell(report['dataset']['name'])} "
        f"({md_cell(report['dataset']['benchmark_title'])}"
        + (f", setting {md_cell(report['setting']['label'])}" if report["setting"]["value"] else "")
        + f"). Generated {report['generated_at']}.",
        "",
        f"Checklist: {report['checklist']}. Answers are Yes, Partial, No, Unknown/Unreported or N/A; "
        "where an item has a value it is shown instead of Yes. Source: *recorded* by Yardstick, asked "
        "on the report *form*, or *not asked*.",
        "",
        f"Pre-registration: {md_cell(report['preregistration']['summary'])}.",
    ]
    for section in report["sections"]:
        lines += [
            "",
            f"## {section['id']}. {section['title']}",
            "",
            "| # | Item | Answer | Detail | Source |",
            "|---|---|---|---|---|",
        ]
        for entry in section["items"]:
            lines.append(
                f"| {entry['id']} | {md_cell(entry['title'])} | {md_cell(cell(entry))} | "
                f"{md_cell(entry['detail'])} | {entry['source']} |"
            )
    return "\n".join(lines) + "\n"


LATEX_SPECIAL = {
    "\\": r"\textbackslash{}",
    "&": r"\&",
    "%": r"\%",
    "$": r"\$",
    "#": r"\#",
    "_": r"\_",
    "{": r"\{",
    "}": r"\}",
    "~": r"\textasciitilde{}",
    "^": r"\textasciicircum{}",
    "<": r"\textless{}",
    ">": r"\textgreater{}",
    "|": r"\textbar{}",
    "→": r"$\rightarrow$",
    "≥": r"$\geq$",
    "≤": r"$\leq$",
    "≈": r"$\approx$",
    "×": r"$\times$",
    "–": "--",
    "—": "---",
    "“": "``",
    "”": "''",
    "‘": "`",
    "’": "'",
    "…": r"\ldots{}",
    "\u00a0": "~",
}


def latex_escape(text: Any) -> str:
    """`text` as LaTeX typesets it literally: every special character escaped, line breaks as
    \\newline, the few typographic characters pdfLaTeX lacks as commands."""
    value = str(text).replace("\r\n", "\n").replace("\r", "\n")
    escaped = "".join(LATEX_SPECIAL.get(character, character) for character in value)
    return r" \newline ".join(part for part in escaped.split("\n"))


@in_english
def as_latex(report: Mapping[str, Any]) -> str:
    """An appendix section: `\\input` it into a paper whose preamble loads longtable and array."""
    lines = [
        "% Human baseline report, made by Yardstick. Needs in the preamble:",
        "%   \\usepackage{longtable}\\usepackage{array}",
        "% Text in other scripts than Latin needs XeLaTeX or LuaLaTeX.",
        f"\\section*{{{latex_escape(report['title'])}}}",
        "\\label{sec:human-baseline-report}",
        "",
        f"Plan {report['plan']['id']} on {latex_escape(report['dataset']['name'])} "
        f"({latex_escape(report['dataset']['benchmark_title'])}"
        + (f", setting {latex_escape(report['setting']['label'])}" if report["setting"]["value"] else "")
        + f"). Checklist: {latex_escape(report['checklist'])}. "
        f"Pre-registration: {latex_escape(report['preregistration']['summary'])}.",
    ]
    for section in report["sections"]:
        lines += [
            "",
            f"\\subsection*{{{latex_escape(section['id'])}. {latex_escape(section['title'])}}}",
            "\\begin{longtable}{@{}p{0.05\\linewidth}p{0.17\\linewidth}p{0.15\\linewidth}p{0.36\\linewidth}p{0.07\\linewidth}@{}}",
            "\\textbf{\\#} & \\textbf{Item} & \\textbf{Answer} & \\textbf{Detail} & \\textbf{Source} \\\\",
            "\\hline",
            "\\endhead",
        ]
        for entry in section["items"]:
            lines.append(
                " & ".join(
                    latex_escape(value)
                    for value in (entry["id"], entry["title"], cell(entry), entry["detail"], entry["source"])
                )
                + " \\\\"
            )
        lines.append("\\end{longtable}")
    return "\n".join(lines) + "\n"


@in_english
def as_json(report: Mapping[str, Any]) -> str:
    return json.dumps(report, ensure_ascii=False, indent=2, default=str, allow_nan=False) + "\n"


# --- the design document's exports -------------------------------------------------------------------


def design_value(key: str, value: Any, document: Mapping[str, Any]) -> str:
    if key == "exclusion_rules":
        return "; ".join(document["exclusion_rules_described"]) or ("none" if value is None else "all off")
    if key == "pay_rule":
        return document["pay_rule_described"] or "no study"
    if key == "draw":
        return f"{TestPlan.Draw(value).label}: {document['sampling']}"
    if key == "analysis":
        return "; ".join(f"{name}: {text}" for name, text in value.items())
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, list):
        return ", ".join(map(str, value)) or "none"
    if value is None or value == "":
        return "none"
    return str(value)


@in_english
def design_markdown(document: Mapping[str, Any]) -> str:
    design = document["design"]
    lines = [
        f"# {md_cell(document['title'])}",
        "",
        f"Plan {document['plan']['id']}, exported {document['exported_at']} by Yardstick, before any "
        "result is read: the design the test plan runs. A pre-registration recorded in Yardstick "
        "keeps these values; the plan's human baseline report says whether what ran matched them.",
        "",
        "| Field | Value |",
        "|---|---|",
    ]
    for key, value in design.items():
        lines.append(
            f"| {md_cell(DESIGN_LABELS.get(key, key))} | {md_cell(design_value(key, value, document))} |"
        )
    return "\n".join(lines) + "\n"


@in_english
def design_json(document: Mapping[str, Any]) -> str:
    return json.dumps(document, ensure_ascii=False, indent=2, default=str) + "\n"
