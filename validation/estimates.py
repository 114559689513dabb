"""What a validation plan's verdicts say about the dataset (pure, no Django).

From the plan's recorded draw (population and sample size of each stratum) and the verdicts:

* **error rates**: the item error rate, and one per criterion (answer wrong, grounding wrong, a
  program step wrong...), each overall and per stratum (Wilson intervals) -- `evaluation.sampling`.
  Overall: the stratified estimate `sum_h W_h p_h` with its finite-population-corrected standard
  error; its interval is Wilson's on the effective sample size `p (1 - p) / se^2`
  (`effective_interval`), with the normal interval `p ± z se` kept beside it; and the pooled
  rate with a Wilson interval. Each item counts
  once, by its first validator's verdict (round 1): every sampled item has one, so the estimate
  is the sample's; the other validators' verdicts on overlap items measure agreement. Strata
  not judged yet are left out of the estimate and listed, and the population it speaks for is
  stated (`covered_population`).
* **agreement** between validators on the overlap items, per question: percent agreement,
  Krippendorff's alpha (nominal; ordinal for ratings), Fleiss' kappa when every overlap item has
  the same number of verdicts, Cohen's kappa when the same two validators judged every overlap
  item; bootstrap intervals over items (`evaluation.agreement`).
* the most frequent **failing program steps** and the **templates** with most errors, and the
  items **every validator rejected**.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from statsmodels.stats.proportion import proportion_confint

from evaluation import agreement
from evaluation.sampling import SamplingInputError, stratified_error_rate, wilson_interval

#: How many failing steps and templates the report lists.
TOP = 10


@dataclass(frozen=True)
class VerdictRow:
    """One submitted verdict, with what the report needs of its item."""

    item: str
    stratum: str
    round: int
    validator: str
    answers: Mapping[str, Any]
    error: bool
    failures: Mapping[str, bool]
    failing_step: str | None = None
    template: str = ""
    item_pk: int | None = None


@dataclass(frozen=True)
class AgreementQuestion:
    name: str
    label: str
    level: str = "nominal"


@dataclass
class Report:
    population_size: int
    sample_size: int
    judged: int
    confidence: float
    error: dict[str, Any] | None
    criteria: dict[str, dict[str, Any] | None]
    strata: list[dict[str, Any]]
    not_judged: list[str]
    agreement: list[dict[str, Any]]
    failing_steps: list[dict[str, Any]]
    templates: list[dict[str, Any]]
    rejected_by_all: list[dict[str, Any]]
    ratings: dict[str, dict[str, Any]] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        return {
            "population_size": self.population_size,
            "sample_size": self.sample_size,
            "judged": self.judged,
            "confidence": self.confidence,
            "error": self.error,
            "criteria": self.criteria,
            "strata": self.strata,
            "not_judged": self.not_judged,
            "agreement": self.agreement,
            "ratings": self.ratings,
            "failing_steps": self.failing_steps,
            "templates": self.templates,
            "rejected_by_all": self.rejected_by_all,
        }


def effective_interval(estimate) -> tuple[float, float, float]:
    """A Wilson interval for the stratified estimate on its effective sample size (Kish):
    ``n_eff = p (1 - p) / se^2``, or the number judged when that is undefined (p at 0 or 1, or
    every stratum at 0 or 1 so that se = 0). Unlike the normal interval it does not collapse to a
    point when the strata found no errors, or only errors."""
    value, se = estimate.value, estimate.standard_error
    defined = se > 0 and 0 < value < 1
    effective = value * (1 - value) / se**2 if defined else float(estimate.sampled)
    low, high = proportion_confint(
        value * effective, effective, alpha=1 - estimate.confidence, method="wilson"
    )
    return max(0.0, float(low)), min(1.0, float(high)), effective


def estimate_dict(estimate) -> dict[str, Any]:
    low, high, effective = effective_interval(estimate)
    return {
        "value": estimate.value,
        "low": low,
        "high": high,
        "effective_sample_size": effective,
        # With a standard error of 0 (every stratum's sample all right or all wrong) the normal
        # interval is the point itself: it is not given, the Wilson interval stands alone.
        "normal_low": estimate.low if estimate.standard_error > 0 else None,
        "normal_high": estimate.high if estimate.standard_error > 0 else None,
        "standard_error": estimate.standard_error,
        "method": estimate.method,
        "covered_population": estimate.population_size,
        "judged": estimate.sampled,
        "errors": estimate.errors,
        "pooled_value": estimate.pooled_value,
        "pooled_low": estimate.pooled_low,
        "pooled_high": estimate.pooled_high,
    }


def error_estimate(
    draw_strata: Mapping[str, Mapping[str, int]],
    first: Sequence[VerdictRow],
    failed,
    confidence: float,
):
    """The stratified estimate over the strata judged so far (None when nothing is judged)."""
    judged: Counter[str] = Counter(row.stratum for row in first)
    errors: Counter[str] = Counter(row.stratum for row in first if failed(row))
    counts = {
        stratum: (int(info["population_size"]), judged[stratum], errors[stratum])
        for stratum, info in draw_strata.items()
        if judged[stratum]
    }
    if not counts:
        return None
    try:
        return stratified_error_rate(counts, confidence=confidence)
    except SamplingInputError:
        return None


def build_report(
    *,
    draw: Mapping[str, Any],
    rows: Sequence[VerdictRow],
    criteria: Sequence[tuple[str, str]],
    questions: Sequence[AgreementQuestion],
    confidence: float = 0.95,
    resamples: int = 1000,
    seed: int = 0,
) -> Report:
    draw_strata: Mapping[str, Mapping[str, int]] = draw.get("strata", {})
    first = [row for row in rows if row.round == 1]
    overall = error_estimate(draw_strata, first, lambda row: row.error, confidence)
    by_criterion = {
        name: error_estimate(
            draw_strata, first, lambda row, name=name: row.failures.get(name, False), confidence
        )
        for name, _label in criteria
    }
    judged_by_stratum: Counter[str] = Counter(row.stratum for row in first)
    errors_by_stratum: Counter[str] = Counter(row.stratum for row in first if row.error)
    strata = []
    for stratum, info in sorted(draw_strata.items()):
        judged = judged_by_stratum[stratum]
        errors = errors_by_stratum[stratum]
        low, high = wilson_interval(errors, judged, confidence=confidence) if judged else (None, None)
        strata.append(
            {
                "stratum": stratum,
                "population_size": int(info["population_size"]),
                "sample_size": int(info["sample_size"]),
                "judged": judged,
                "errors": errors,
                "error_rate": errors / judged if judged else None,
                "low": low,
                "high": high,
                "criteria": {
                    name: sum(1 for row in first if row.stratum == stratum and row.failures.get(name))
                    for name, _label in criteria
                },
            }
        )
    return Report(
        population_size=int(draw.get("population_size", 0)),
        sample_size=int(draw.get("sample_size", 0)),
        judged=len(first),
        confidence=confidence,
        error=estimate_dict(overall) if overall else None,
        criteria={name: estimate_dict(value) if value else None for name, value in by_criterion.items()},
        strata=strata,
        not_judged=[stratum for stratum in sorted(draw_strata) if not judged_by_stratum[stratum]],
        agreement=agreement_between(rows, questions, resamples=resamples, confidence=confidence, seed=seed),
        ratings=rating_means(rows, [question for question in questions if question.level == "ordinal"]),
        failing_steps=failing_steps(rows),
        templates=template_errors(first),
        rejected_by_all=rejected_by_all(rows),
    )


def label_of(value: Any, level: str) -> Any:
    """A verdict answer as an agreement category: ratings stay numbers, the rest become words."""
    if level == "ordinal":
        return value if isinstance(value, int) else None
    if value is None:
        return "none"
    if isinstance(value, bool):
        return "yes" if value else "no"
    return str(value)


def agreement_between(
    rows: Sequence[VerdictRow],
    questions: Sequence[AgreementQuestion],
    *,
    resamples: int,
    confidence: float,
    seed: int,
) -> list[dict[str, Any]]:
    """Per question, the statistics that the overlap items support (empty: no overlap judged yet)."""
    by_item: dict[str, dict[str, VerdictRow]] = defaultdict(dict)
    for row in rows:
        by_item[row.item][row.validator] = row
    overlap = {item: verdicts for item, verdicts in by_item.items() if len(verdicts) > 1}
    if not overlap:
        return []
    counts = {len(verdicts) for verdicts in overlap.values()}
    raters = {frozenset(verdicts) for verdicts in overlap.values()}
    results = []
    options = {"resamples": resamples, "confidence": confidence, "seed": seed}
    for question in questions:
        ratings = {
            item: {
                validator: label_of(row.answers.get(question.name), question.level)
                for validator, row in verdicts.items()
            }
            for item, verdicts in overlap.items()
        }
        statistics: list[agreement.Agreement] = [agreement.percent_agreement(ratings, **options)]
        statistics.append(
            agreement.krippendorff_alpha(
                ratings,
                level="ordinal" if question.level == "ordinal" else "nominal",
                value_order=list(range(1, 6)) if question.level == "ordinal" else None,
                **options,
            )
        )
        if len(counts) == 1:
            statistics.append(agreement.fleiss_kappa(ratings, **options))
        if len(raters) == 1 and counts == {2}:
            first_rater, second_rater = sorted(next(iter(raters)))
            statistics.append(
                agreement.cohens_kappa(
                    {item: labels[first_rater] for item, labels in ratings.items()},
                    {item: labels[second_rater] for item, labels in ratings.items()},
                    **options,
                )
            )
        for statistic in statistics:
            results.append(
                {
                    "question": question.name,
                    "label": question.label,
                    "statistic": statistic.statistic,
                    "value": statistic.value,
                    "low": statistic.low,
                    "high": statistic.high,
                    "items": statistic.items,
                    "raters": statistic.raters,
                    "undefined_reason": statistic.params.get("undefined_reason", ""),
                }
            )
    return results


def rating_means(
    rows: Sequence[VerdictRow], questions: Sequence[AgreementQuestion]
) -> dict[str, dict[str, Any]]:
    means = {}
    for question in questions:
        values = [row.answers.get(question.name) for row in rows]
        values = [value for value in values if isinstance(value, int)]
        means[question.name] = {
            "label": question.label,
            "mean": sum(values) / len(values) if values else None,
            "count": len(values),
            "distribution": {str(score): values.count(score) for score in range(1, 6)},
        }
    return means


def failing_steps(rows: Sequence[VerdictRow]) -> list[dict[str, Any]]:
    counts = Counter(row.failing_step for row in rows if row.failing_step)
    total = sum(counts.values())
    return [
        {"step": step, "count": count, "share": count / total}
        for step, count in sorted(counts.items(), key=lambda entry: (-entry[1], entry[0]))[:TOP]
    ]


def template_errors(first: Sequence[VerdictRow]) -> list[dict[str, Any]]:
    judged: Counter[str] = Counter(row.template for row in first if row.template)
    errors: Counter[str] = Counter(row.template for row in first if row.template and row.error)
    ranked = sorted(
        errors, key=lambda template: (-errors[template], -errors[template] / judged[template], template)
    )
    return [
        {
            "template": template,
            "errors": errors[template],
            "judged": judged[template],
            "error_rate": errors[template] / judged[template],
        }
        for template in ranked[:TOP]
    ]


def rejected_by_all(rows: Sequence[VerdictRow]) -> list[dict[str, Any]]:
    by_item: dict[str, list[VerdictRow]] = defaultdict(list)
    for row in rows:
        by_item[row.item].append(row)
    rejected = []
    for item, verdicts in sorted(by_item.items()):
        if all(verdict.error for verdict in verdicts):
            rejected.append(
                {
                    "item": item,
                    "item_pk": verdicts[0].item_pk,
                    "stratum": verdicts[0].stratum,
                    "validators": len(verdicts),
                    "failed": sorted(
                        {name for verdict in verdicts for name, bad in verdict.failures.items() if bad}
                    ),
                    "comments": [
                        str(verdict.answers.get("comment", ""))
                        for verdict in verdicts
                        if verdict.answers.get("comment")
                    ],
                }
            )
    return rejected
