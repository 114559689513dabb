"""Stopping for precision: a study stops taking participants once the Human row's paired interval
with a chosen model row is narrow enough, or once the planned number of kept participants finished.

Checked by the worker after the pooled row is scored (`scoring.rescore_plan`), never in a request:
the paired bootstrap is the report's own (`evaluation.selectors.compare_report_rows`, 1,000
resamples), on the units both rows answered, in the plan's setting and its benchmark's headline
metric (or the column the study names). Once a rule is met the study's entry links refuse new arrivals ("it has all the participants
it needs"); who already arrived goes on. Changing the rules opens the study again until they are met.
"""

from __future__ import annotations

from django.utils import timezone

from humantest.models import Study, TestPlan, TestSession

#: Bootstrap resamples for the width watched (the comparison page uses 2,000).
RESAMPLES = 1000


def current_width(plan: TestPlan, study: Study) -> tuple[float | None, str]:
    """The 95% interval's width of Human − model in the headline metric, or None and why."""
    from evaluation.selectors import RowNotFound, compare_report_rows
    from humantest.trials import trial_for

    pool = plan.pooled_submission
    if pool is None or not pool.scored_at:
        return None, "no answers yet"
    label = study.stop_metric or trial_for(plan.dataset.benchmark).headline[0]
    try:
        result = compare_report_rows(
            plan.dataset, pool.name, study.stop_against, metric=label, resamples=RESAMPLES
        )
    except RowNotFound as missing:
        return None, str(missing)
    for column in result["columns"]:
        if column["setting"] != plan.setting or column["label"] != label:
            continue
        if "low" in column:
            if column["low"] is None or column["high"] is None:
                return None, f"too few shared units for an interval ({column.get('n', 0)})"
            return column["high"] - column["low"], ""
        if "skipped" in column:
            return None, column["skipped"]
    return None, f"no {label} column to compare in this setting"


def kept_finished(plan: TestPlan) -> int:
    """Finished participants the plan's exclusion rules keep (every finished one without rules)."""
    from humantest.exclusions import kept_sessions

    finished = plan.sessions.filter(status=TestSession.Status.FINISHED, participant__isnull=False)
    kept = kept_sessions(plan)
    if kept is not None:
        finished = finished.filter(pk__in=kept)
    return finished.count()


def update(plan: TestPlan) -> Study | None:
    """Compute the watched width and stop the study when a rule is met (once; idempotent)."""
    study = Study.objects.filter(plan=plan).first()
    if study is None or not (study.planned_participants or (study.stop_against and study.stop_width)):
        return study
    width, note = (None, "")
    if study.stop_against and study.stop_width:
        width, note = current_width(plan, study)
    reason = ""
    if width is not None and width <= study.stop_width:
        reason = (
            f"the interval of {plan.row_label} − {study.stop_against} is {width:.3f} wide "
            f"(at most {study.stop_width:g} asked)"
        )
    elif study.planned_participants and kept_finished(plan) >= study.planned_participants:
        reason = f"{study.planned_participants} kept participants finished, as planned"
    now = timezone.now()
    fields = {"precision_width": width, "precision_note": note, "precision_at": now}
    if reason:
        fields.update(stopped_because=reason)
        Study.objects.filter(pk=study.pk, stopped_at__isnull=True).update(stopped_at=now)
    Study.objects.filter(pk=study.pk).update(**fields)
    study.refresh_from_db()
    return study
