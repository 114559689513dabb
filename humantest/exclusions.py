"""Exclusion rules: stated before data comes in, applied the same way to every tester.

A plan's rules (`ExclusionRules`, versioned) say who is left out of its Human row: a tester who
failed at least k catch trials, whose median seconds per trial is under t, whose page was hidden
longer than h seconds in total, who left the page more than f times, or whose session is
unfinished. The first tester to start the test fixes the newest version; changing the rules after
that makes a new version, and every version's outcome can still be computed (nothing is deleted:
the facts are the trials). The plan's pooled row counts the testers the newest version keeps.

What each tester did (`TesterFacts`) is read from their trials once; `apply` is a pure function of
those facts and a rule set, so the plan's page, its exports and its report agree by construction.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from django.db import transaction
from django.db.models import Max
from django.utils import timezone, translation
from django.utils.translation import gettext, gettext_noop, ngettext

from humantest.models import ExclusionRules, TestPlan, TestSession, Trial, tester_label
from humantest.trials import trial_for

FINISHED = (Trial.Status.ANSWERED, Trial.Status.TIMED_OUT)


@dataclass(frozen=True)
class Rule:
    """One exclusion rule: its field on `ExclusionRules`, how people read it, and its test. The label
    is English (the report and the design document, which go into papers, show it as it is); a page
    shows it in the reader's language with `gettext(rule.label)`."""

    name: str
    label: str
    breaks: Callable[[TesterFacts, Any], bool]
    unit: str = ""


@dataclass
class TesterFacts:
    """What one tester's session shows about their care: read from their trials."""

    session: int
    tester: str
    status: str
    started: bool
    finished: bool
    trials: int  # measured (test) trials finished
    correct: int
    catch_total: int
    catch_failed: int
    median_s: float | None  # over answered trials of the test's sequence (measured and catch)
    hidden_s: float
    focus_losses: int
    seconds: list[float] = field(default_factory=list, repr=False)

    @property
    def accuracy(self) -> float | None:
        return self.correct / self.trials if self.trials else None


RULES: tuple[Rule, ...] = (
    Rule("catch_failures", gettext_noop("failed catch trials"), lambda facts, k: facts.catch_failed >= k),
    Rule(
        "min_median_s",
        gettext_noop("too fast (median seconds per trial)"),
        lambda facts, t: facts.median_s is not None and facts.median_s < t,
        "s",
    ),
    Rule("max_hidden_s", gettext_noop("page hidden too long"), lambda facts, h: facts.hidden_s > h, "s"),
    Rule(
        "max_focus_losses", gettext_noop("left the page too often"), lambda facts, f: facts.focus_losses > f
    ),
    Rule(
        "exclude_unfinished",
        gettext_noop("unfinished session"),
        lambda facts, on: bool(on) and not facts.finished,
    ),
)
RULE_NAMES = tuple(rule.name for rule in RULES)
BY_NAME = {rule.name: rule for rule in RULES}
#: Bounds of the rules' numbers (a day of seconds, a thousand losses or failures).
LIMITS = {
    "catch_failures": 1000,
    "min_median_s": 86_400.0,
    "max_hidden_s": 86_400.0,
    "max_focus_losses": 1000,
}


class RulesRefused(ValueError):
    def __init__(self, field_name: str, message: str) -> None:
        super().__init__(f"{field_name}: {message}")
        self.field = field_name
        self.message = message


def rules_dict(rules: ExclusionRules | None) -> dict[str, Any]:
    """A rule set as plain values (all off for None)."""
    if rules is None:
        return {"catch_failures": None, "min_median_s": None, "max_hidden_s": None,
                "max_focus_losses": None, "exclude_unfinished": False}  # fmt: skip
    return {name: getattr(rules, name) for name in RULE_NAMES}


def describe(values: Mapping[str, Any], *, translated: bool = False) -> list[str]:
    """Each rule that is on, in words: "failed at least 2 catch trials", ... In English (the report,
    the design document and the API keep it as it is), or with `translated` in the reader's
    language (the quality page)."""
    if not translated:
        with translation.override(None):  # no catalogue: the English words
            return describe(values, translated=True)
    words = []
    if values.get("catch_failures") is not None:
        count = values["catch_failures"]
        words.append(
            ngettext("failed at least %(count)s catch trial", "failed at least %(count)s catch trials", count)
            % {"count": count}
        )
    if values.get("min_median_s") is not None:
        words.append(
            gettext("median time per trial under %(seconds)s s") % {"seconds": f"{values['min_median_s']:g}"}
        )
    if values.get("max_hidden_s") is not None:
        words.append(
            gettext("page hidden more than %(seconds)s s in total")
            % {"seconds": f"{values['max_hidden_s']:g}"}
        )
    if values.get("max_focus_losses") is not None:
        words.append(
            gettext("left the page more than %(count)s times") % {"count": values["max_focus_losses"]}
        )
    if values.get("exclude_unfinished"):
        words.append(gettext("session not finished"))
    return words


def clean_rules(raw: Mapping[str, Any]) -> dict[str, Any]:
    """A rule set's values from a form or the API: numbers or empty (off); RulesRefused names the
    field otherwise. Unknown fields are refused too (a typo would otherwise switch a rule off)."""
    unknown = sorted(set(raw) - set(RULE_NAMES))
    if unknown:
        raise RulesRefused(
            unknown[0],
            gettext("not an exclusion rule; the rules are %(rules)s") % {"rules": ", ".join(RULE_NAMES)},
        )
    values: dict[str, Any] = {}
    for name in RULE_NAMES:
        value = raw.get(name)
        if name == "exclude_unfinished":
            if value in (None, "", False, "false", "off", "0"):
                values[name] = False
            elif value in (True, "true", "on", "1"):
                values[name] = True
            else:
                raise RulesRefused(name, gettext("expected true or false, got %(value)r") % {"value": value})
            continue
        if value is None or (isinstance(value, str) and value.strip() == ""):
            values[name] = None
            continue
        whole = name in ("catch_failures", "max_focus_losses")
        if isinstance(value, bool):
            raise RulesRefused(name, gettext("expected a number, got %(value)r") % {"value": value})
        if isinstance(value, str):
            text = value.strip()
            try:
                value = int(text) if whole and text.isascii() and text.isdigit() else float(text)
            except ValueError:
                raise RulesRefused(
                    name, gettext("expected a number, got %(value)r") % {"value": value}
                ) from None
        if not isinstance(value, (int, float)) or not math.isfinite(value):
            raise RulesRefused(name, gettext("expected a number, got %(value)r") % {"value": value})
        if whole and (not float(value).is_integer()):
            raise RulesRefused(name, gettext("expected a whole number, got %(value)r") % {"value": value})
        low = 1 if name == "catch_failures" else 0
        if not low <= value <= LIMITS[name]:
            raise RulesRefused(
                name,
                gettext("expected %(low)s to %(high)s, got %(value)r")
                % {"low": low, "high": f"{LIMITS[name]:g}", "value": value},
            )
        values[name] = int(value) if whole else float(value)
    return values


def current_rules(plan: TestPlan) -> ExclusionRules | None:
    return plan.exclusion_rules.order_by("-version").first()


def save_rules(plan: TestPlan, raw: Mapping[str, Any], *, user=None) -> ExclusionRules:
    """The plan's rules set to `raw`: the newest version changed in place while no tester has
    started, a new version otherwise (none when nothing changed). RulesRefused changes nothing."""
    values = clean_rules(raw)
    with transaction.atomic():
        TestPlan.objects.select_for_update().filter(pk=plan.pk).first()  # one change at a time
        latest = current_rules(plan)
        if latest is not None and rules_dict(latest) == values:
            return latest
        if latest is not None and latest.fixed_at is None:
            for name, value in values.items():
                setattr(latest, name, value)
            latest.created_by = user
            latest.save()
            return latest
        version = (plan.exclusion_rules.aggregate(last=Max("version"))["last"] or 0) + 1
        fixed = timezone.now() if plan.sessions.exclude(started_at=None).exists() else None
        return ExclusionRules.objects.create(
            plan=plan, version=version, created_by=user, fixed_at=fixed, **values
        )


def fix_rules(plan: TestPlan) -> None:
    """The first start of a test fixes the plan's newest rule set (later changes make a new one)."""
    ExclusionRules.objects.filter(plan=plan, fixed_at=None).update(fixed_at=timezone.now())


def stated_before_data(plan: TestPlan, rules: ExclusionRules) -> bool:
    """Whether this rule set was stated before the plan's first tester started the test."""
    first = plan.sessions.exclude(started_at=None).order_by("started_at").values_list("started_at", flat=True)
    first_start = first.first()
    return first_start is None or rules.created_at <= first_start


# --- facts and outcomes ----------------------------------------------------------------------------


def tester_facts(plan: TestPlan) -> list[TesterFacts]:
    """Every session of the plan that reached the test or was screened out, with its facts."""
    trial_type = trial_for(plan.dataset.benchmark)
    sessions = {
        session.pk: session
        for session in plan.sessions.select_related("tester__participant").order_by("tester__username")
    }
    rows = Trial.objects.filter(session__plan=plan, phase__in=Trial.SEQUENCE).values_list(
        "session_id", "phase", "status", "result", "served_at", "answered_at", "deadline",
        "hidden_ms", "focus_losses",
    )  # fmt: skip
    by_session: dict[int, list[tuple]] = {}
    for row in rows.iterator(chunk_size=5000):
        by_session.setdefault(row[0], []).append(row)
    facts = []
    for pk, session in sessions.items():
        trials = by_session.get(pk, [])
        started = session.started_at is not None
        if not started and session.status != TestSession.Status.SCREENED_OUT:
            continue  # not in the measurement: never started the test
        measured = [row for row in trials if row[1] == Trial.Phase.TEST and row[2] in FINISHED]
        catches = [row for row in trials if row[1] == Trial.Phase.CATCH and row[2] in FINISHED]
        seconds = sorted(
            (row[5] - row[4]).total_seconds()
            for row in trials
            if row[2] == Trial.Status.ANSWERED and row[4] and row[5]
        )
        facts.append(
            TesterFacts(
                session=pk,
                tester=tester_label(session.tester),
                status=session.status,
                started=started,
                finished=session.status == TestSession.Status.FINISHED,
                trials=len(measured),
                correct=sum(1 for row in measured if trial_type.correct(row[3] or {})),
                catch_total=len(catches),
                catch_failed=sum(1 for row in catches if not trial_type.correct(row[3] or {})),
                median_s=statistics.median(seconds) if seconds else None,
                hidden_s=sum(row[7] or 0 for row in trials) / 1000,
                focus_losses=sum(row[8] or 0 for row in trials),
                seconds=seconds,
            )
        )
    return facts


@dataclass
class Outcome:
    facts: TesterFacts
    status: str  # "kept", "excluded" or "screened out"
    reasons: list[str]  # the rules (names) that exclude this tester


def apply(facts: list[TesterFacts], values: Mapping[str, Any]) -> list[Outcome]:
    """Each tester kept or excluded by the rules `values` (a pure function of the facts)."""
    outcomes = []
    for tester in facts:
        if tester.status == TestSession.Status.SCREENED_OUT:
            outcomes.append(Outcome(tester, "screened out", []))
            continue
        reasons = [
            rule.name
            for rule in RULES
            if values.get(rule.name) not in (None, False) and rule.breaks(tester, values[rule.name])
        ]
        outcomes.append(Outcome(tester, "excluded" if reasons else "kept", reasons))
    return outcomes


def kept_sessions(plan: TestPlan, facts: list[TesterFacts] | None = None) -> set[int] | None:
    """The sessions the plan's newest rules keep; None when the plan has no rules (all count)."""
    rules = current_rules(plan)
    if rules is None:
        return None
    facts = tester_facts(plan) if facts is None else facts
    return {outcome.facts.session for outcome in apply(facts, rules_dict(rules)) if outcome.status == "kept"}


def version_summary(facts: list[TesterFacts], values: Mapping[str, Any]) -> dict[str, Any]:
    """Counts under one rule set: testers measured, kept, excluded (and by which rule), the rate."""
    outcomes = apply(facts, values)
    measured = [outcome for outcome in outcomes if outcome.status != "screened out"]
    excluded = [outcome for outcome in measured if outcome.status == "excluded"]
    return {
        "rules": dict(values),
        "described": describe(values),
        "screened_out": len(outcomes) - len(measured),
        "measured": len(measured),
        "kept": len(measured) - len(excluded),
        "excluded": len(excluded),
        "exclusion_rate": len(excluded) / len(measured) if measured else None,
        "by_rule": {
            rule.name: sum(1 for outcome in excluded if rule.name in outcome.reasons) for rule in RULES
        },
        "outcomes": outcomes,
    }


def plan_quality(plan: TestPlan) -> dict[str, Any]:
    """Everything the plan's page, exports and report show of its quality control: the testers'
    facts, each rule version's outcome (newest first), and the current one's."""
    facts = tester_facts(plan)
    versions = []
    for rules in plan.exclusion_rules.order_by("-version"):
        summary = version_summary(facts, rules_dict(rules))
        versions.append(
            {
                "version": rules.version,
                "created_at": rules.created_at,
                "fixed_at": rules.fixed_at,
                "before_data": stated_before_data(plan, rules),
                **summary,
            }
        )
    current = versions[0] if versions else version_summary(facts, rules_dict(None))
    return {"facts": facts, "versions": versions, "current": current, "has_rules": bool(versions)}
