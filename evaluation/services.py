"""Writes of the evaluation engine: the one place that writes submissions, predictions and scores.

One scoring path: every Submission, whatever produced it, is scored by its benchmark's spec
(`spec.score`, the metric's single entry point) against the catalog's ground truth rebuilt as
official records, exactly as `manage.py score` does with files. Other apps (human tests, and
later annotation and inference) never write these rows themselves: they call the functions
here, naming where the answers came from (`Submission.Origin`).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson
from django.conf import settings
from django.core.files.base import ContentFile
from django.db import transaction
from django.db.models import Count, Q, TextField
from django.db.models.functions import Cast
from django.utils import timezone
from django.utils.translation import gettext as _
from django.utils.translation import gettext_noop

from accounts.inputs import text_problem
from accounts.permissions import may_change
from benchmarks.models import Dataset
from benchmarks.records import NUL_MESSAGE, FormatError, RecordError, nul_fields
from benchmarks.spec import OFFICIAL, ScoringInput
from evaluation.metrics.scored import Scored
from evaluation.models import Prediction, ScoringJob, Submission
from jobs import services as jobs
from jobs.models import ACTIVE


class SubmissionRefused(ValueError):
    """The submission cannot be made, scored, renamed or deleted; nothing was changed. `field`
    names the choice at fault ("name", "setting", "variant"), where one is."""

    def __init__(self, message: str, *, field: str | None = None) -> None:
        super().__init__(message)
        self.field = field


#: A callback told how far a long piece of work is: (stage, done, total).
Progress = Callable[[str, int, int], None]
READING_UNITS, SCORING, WRITING = "reading the dataset", "scoring", "writing per-unit scores"
PROGRESS_EVERY = 2000
WRITE_BATCH = 2000


@dataclass(frozen=True)
class UnitRow:
    """One scoring unit of a dataset: its id, where it lives (item, part) and its ground truth."""

    id: str
    item_id: int
    part: int
    record: dict[str, Any]


def scoring_units(dataset: Dataset, progress: Progress | None = None) -> list[UnitRow]:
    """The dataset's scoring units in file order (items, or their questions), as official records.

    The JSON columns are read as text and parsed by orjson: Django's JSONField decodes with the
    standard library's json, most of the time it takes to read a large dataset. `progress` is told
    the items read every PROGRESS_EVERY."""
    spec = dataset.spec
    rows = dataset.items.order_by("position").values_list(
        "pk", "external_id", Cast("payload", TextField()), Cast("ground_truth", TextField())
    )
    units = []
    for number, (pk, external_id, payload, ground_truth) in enumerate(rows.iterator(chunk_size=2000), 1):
        units.extend(
            UnitRow(unit.id, pk, unit.part, unit.record)
            for unit in spec.units(external_id, json_value(payload), json_value(ground_truth))
        )
        if progress is not None and number % PROGRESS_EVERY == 0:
            progress(READING_UNITS, number, dataset.item_count)
    return units


def json_value(text: str) -> Any:
    """A JSON column's text as Python values (the standard library's parser for what orjson
    refuses: integers beyond 64 bits, NaN)."""
    try:
        return orjson.loads(text)
    except orjson.JSONDecodeError:
        return json.loads(text)


def scenes_of(dataset: Dataset) -> list[dict[str, Any]]:
    return list(dataset.scenes.order_by("position").values_list("data", flat=True))


def check_choices(
    dataset: Dataset, *, name: str, setting: str, variant: str, origin: str = Submission.Origin.UPLOAD
) -> None:
    """SubmissionRefused unless the name is given and free (`name_problem`) and the setting and
    variant are the benchmark's."""
    spec = dataset.spec
    if problem := spec.setting_problem(setting):
        raise SubmissionRefused(problem, field="setting")
    if problem := spec.variant_problem(variant):
        raise SubmissionRefused(problem, field="variant")
    if origin in PLAN_ORIGINS:
        # A test plan's rows are named by its row label, which the plan's own checks keep free;
        # a tester starting a test must never be refused for a name.
        problem = None if name.strip() else _(NAME_NEEDED)
    else:
        problem = name_problem(dataset=dataset, name=name, setting=setting)
    if problem:
        raise SubmissionRefused(problem, field="name")


#: Origins whose submissions a test plan makes and names (its pooled row, each tester's).
PLAN_ORIGINS = (Submission.Origin.TEST_PLAN, Submission.Origin.TEST_SESSION)
NAME_NEEDED = gettext_noop("a submission needs a name (its row label in the report)")


def name_problem(
    *, dataset: Dataset, name: str, setting: str, excluding: Submission | None = None
) -> str | None:
    """Why a submission on `dataset` in `setting` cannot be called `name` (None when it can).

    A report row is named by its submissions: two of one name in one setting would share one row,
    the one hiding the other. So a name is taken by any submission of the dataset with that name
    and setting that is a row of its own (a tester's submission, pooled into its plan's row, is not).
    """
    if problem := text_problem(name, single_line=True):
        return problem
    name = name.strip()
    if not name:
        return _(NAME_NEEDED)
    taken = Submission.objects.filter(dataset=dataset, name=name, setting=setting, pool__isnull=True).exclude(
        origin=Submission.Origin.TEST_SESSION
    )
    if excluding is not None:
        taken = taken.exclude(pk=excluding.pk)
    if not taken.exists():
        return None
    if setting:
        return _(
            "%(dataset)s already has a submission named %(name)r in the setting “%(setting)s”: choose "
            "another name, or rename or delete that one on the report page first"
        ) % {"dataset": dataset.title, "name": name, "setting": _(dataset.spec.setting_label(setting))}
    return _(
        "%(dataset)s already has a submission named %(name)r: choose another name, "
        "or rename or delete that one on the report page first"
    ) % {"dataset": dataset.title, "name": name}


def create_submission(
    *,
    dataset: Dataset,
    name: str,
    producer: str = Submission.Producer.MODEL,
    origin: str = Submission.Origin.UPLOAD,
    setting: str = "",
    variant: str = OFFICIAL,
    source: str = "",
    parameters: dict[str, Any] | None = None,
    pool: Submission | None = None,
    created_by=None,
) -> Submission:
    """A new, unscored submission; SubmissionRefused names a setting or variant the benchmark lacks,
    or a name another submission in that setting has."""
    check_choices(dataset, name=name, setting=setting, variant=variant, origin=origin)
    return Submission.objects.create(
        dataset=dataset,
        name=name,
        producer=producer,
        origin=origin,
        setting=setting,
        variant=variant,
        source=source,
        parameters=parameters or {},
        pool=pool,
        created_by=created_by,
    )


def submit_predictions(
    *,
    dataset: Dataset,
    name: str,
    data: bytes,
    producer: str = Submission.Producer.MODEL,
    origin: str = Submission.Origin.UPLOAD,
    setting: str = "",
    variant: str = OFFICIAL,
    source: str = "",
    parameters: dict | None = None,
    created_by=None,
) -> Submission:
    """Store a prediction file as a Submission on `dataset` and score it.

    A file that does not parse, or that answers units the dataset does not have, is refused
    with every bad record named (FormatError); a setting or variant the benchmark does not have
    is refused (SubmissionRefused). In both cases nothing is stored.
    """
    spec = dataset.spec
    check_choices(dataset, name=name, setting=setting, variant=variant, origin=origin)
    answers = spec.read_predictions(data, source=source)
    units = scoring_units(dataset)
    check_known(dataset, units, answers, source=source)
    check_storable(answers, source=source)
    with transaction.atomic():
        submission = create_submission(
            dataset=dataset,
            name=name,
            producer=producer,
            origin=origin,
            setting=setting,
            variant=variant,
            source=source,
            parameters=parameters,
            created_by=created_by,
        )
        store_scored(submission, units, answers)
    return submission


def check_storable(answers: dict[str, Any], *, source: str) -> None:
    """FormatError naming every answer whose text holds NUL: no database stores it (PostgreSQL
    refused the whole file at the first one, a 500; SQLite stored it). One search of the answers
    written out finds whether any does."""
    if b"\\u0000" not in orjson.dumps(answers):
        return
    errors = [
        RecordError(f"the answer for {unit}", field, NUL_MESSAGE)
        for unit, answer in answers.items()
        for field in nul_fields(answer, "")
    ]
    raise FormatError(errors or [RecordError("a unit id", "id", NUL_MESSAGE)], source=source)


def check_known(dataset: Dataset, units: list[UnitRow], answers: dict[str, Any], *, source: str) -> None:
    """FormatError naming every answer for a unit the dataset does not have."""
    spec = dataset.spec
    known = {unit.id for unit in units}
    unknown = [key for key in answers if key not in known]
    if unknown:
        raise FormatError(
            [
                RecordError(
                    f"prediction {key}", spec.unit_id_field, f"no such {spec.unit_id_field} in {dataset}"
                )
                for key in unknown
            ],
            source=source,
        )


def unit_scores(spec, items: list[dict[str, Any]]) -> dict[str, dict[str, Any] | list[dict[str, Any]]]:
    """unit id -> what its prediction row keeps of the metric's per-unit rows: the row, or the list
    of them where the metric scores a unit more than once (once per camera a sample was shown from, say);
    `per_unit_rows` reads either back."""
    rows: dict[str, Any] = {}
    for row in items:
        unit = spec.row_id(row)
        known = rows.get(unit)
        if known is None:
            rows[unit] = row
        elif isinstance(known, list):
            known.append(row)
        else:
            rows[unit] = [known, row]
    return rows


def store_scored(
    submission: Submission, units: list[UnitRow], answers: dict[str, Any], progress: Progress | None = None
) -> Submission:
    """Score a new submission's answers and write one row per unit with its answer and per-unit
    scores, then its summary. Scored before its rows are written, so that each row is written
    once, with its score (Django's bulk_update of a score per row builds a CASE per row)."""
    if progress is not None:
        progress(SCORING, 0, len(units))
    scored = score_units(submission, units, answers)
    rows = unit_scores(submission.dataset.spec, scored.items)
    for start in range(0, len(units), WRITE_BATCH):
        if progress is not None:
            progress(WRITING, start, len(units))
        Prediction.objects.bulk_create(
            [
                Prediction(
                    submission=submission,
                    item_id=unit.item_id,
                    part=unit.part,
                    answer=answers.get(unit.id),
                    score=rows.get(unit.id, {}),
                )
                for unit in units[start : start + WRITE_BATCH]
            ]
        )
    return store_summary(submission=submission, scored=scored)


#: How a submission of a given origin is scored again (`rescore`): an app whose rows are not
#: scored from their stored answers alone registers its own (the human tests score trials).
RESCORERS: dict[str, Any] = {}


def register_rescorer(origin: str, rescore_function) -> None:
    RESCORERS[origin] = rescore_function


def rescore(submission: Submission) -> Submission:
    """Score a stored submission again with the metric code as it is now (after a metric change:
    a new variant, a new summary key); the answers are not touched."""
    rescorer = RESCORERS.get(submission.origin, score_submission)
    rescorer(submission)
    submission.refresh_from_db()
    return submission


def score_submission(submission: Submission) -> Submission:
    """(Re)score a submission: per-unit rows onto its predictions, the summary onto itself.

    Units left unanswered are scored too (as the metric defines an empty answer) and get a
    prediction row with no answer, so that every unit counts in the report's intervals.
    """
    dataset = submission.dataset
    spec = dataset.spec
    units = scoring_units(dataset)
    unit_at = {(unit.item_id, unit.part): unit for unit in units}
    predictions = list(submission.predictions.all())
    answers = {
        unit_at[(prediction.item_id, prediction.part)].id: prediction.answer for prediction in predictions
    }
    scored = score_units(submission, units, answers)
    rows = unit_scores(spec, scored.items)
    for prediction in predictions:
        prediction.score = rows.get(unit_at[(prediction.item_id, prediction.part)].id, {})
    Prediction.objects.bulk_update(predictions, ["score"], batch_size=2000)
    answered = {(prediction.item_id, prediction.part) for prediction in predictions}
    Prediction.objects.bulk_create(
        [
            Prediction(
                submission=submission,
                item_id=unit.item_id,
                part=unit.part,
                answer=None,
                score=rows.get(unit.id, {}),
            )
            for unit in units
            if (unit.item_id, unit.part) not in answered
        ],
        batch_size=2000,
    )
    return store_summary(submission=submission, scored=scored)


def score_units(submission: Submission, units: list[UnitRow], answers: dict[str, Any]) -> Scored:
    """The metric's result for `answers` (unit id -> answer; None or absent: unanswered) on the
    submission's dataset, setting and variant. A ValueError (a dataset imported without the
    scenes its metric needs, say) reaches the caller."""
    dataset = submission.dataset
    spec = dataset.spec
    return spec.score(
        ScoringInput(
            records=[unit.record for unit in units],
            answers={key: answer for key, answer in answers.items() if answer is not None},
            setting=submission.setting,
            variant=submission.variant or OFFICIAL,
            scenes=scenes_of(dataset) if spec.scores_with_scenes else (),
            options=submission.parameters,
        )
    )


def store_summary(*, submission: Submission, scored: Scored) -> Submission:
    """Keep a scoring's summary, parameters and problems on the submission, stamped now."""
    submission.summary = scored.summary
    submission.parameters = {**submission.parameters, **scored.params}
    submission.problems = scored.problems
    submission.scored_at = timezone.now()
    submission.save(update_fields=["summary", "parameters", "problems", "scored_at"])
    return submission


def record_prediction(
    *, submission: Submission, item_id: int, part: int = 0, answer: Any, score: dict[str, Any]
) -> None:
    """Store (or replace) one unit's answer and its per-unit score row."""
    # One upsert on the (submission, item, part) constraint instead of update_or_create's queries.
    Prediction.objects.bulk_create(
        [Prediction(submission=submission, item_id=item_id, part=part, answer=answer, score=score)],
        update_conflicts=True,
        unique_fields=["submission", "item", "part"],
        update_fields=["answer", "score"],
    )


def join_pool(*, pool: Submission, members: Iterable[int]) -> None:
    """Count the answers of the `members` submissions in `pool`'s row too."""
    Submission.objects.filter(pk__in=list(members)).update(pool=pool)


def set_pool(*, pool: Submission, members: Iterable[int]) -> None:
    """`pool`'s row counts exactly the answers of `members` (others that were in it leave)."""
    members = list(members)
    Submission.objects.filter(pool=pool).exclude(pk__in=members).update(pool=None)
    join_pool(pool=pool, members=members)


def rename_row(*, submission: Submission, name: str) -> None:
    """A row's label in reports, changed by the app (a test plan's row naming its rule set)."""
    if submission.name != name:
        Submission.objects.filter(pk=submission.pk).update(name=name)
        submission.name = name


def delete_submissions(*, ids: Iterable[int]) -> None:
    Submission.objects.filter(pk__in=[pk for pk in ids if pk]).delete()


# --- renaming and deleting from the report ------------------------------------------------------


def owner_problem(*, user: Any, submission: Submission) -> str | None:
    """Why `user` may not rename or delete `submission` (None when they may): everybody with the
    researcher role reads every report, but only who added a submission, or an admin, changes it."""
    if may_change(user, submission):
        return None
    if submission.created_by_id:
        return _(
            "only the researcher who added %(name)r (%(username)s), or an admin, can rename or delete it"
        ) % {"name": submission.name, "username": submission.created_by.username}
    return _("only the researcher who added %(name)r, or an admin, can rename or delete it") % {
        "name": submission.name
    }


def plan_row_problem(submission: Submission) -> str | None:
    """Why a submission is not renamed or deleted from the report (None when it is): a test plan's
    rows are its testers' results, named by the row label the plan was made with and deleted with
    the plan."""
    if submission.origin not in PLAN_ORIGINS:
        return None
    plan = submission.parameters.get("plan")
    if plan:
        return _(
            "%(name)r is the testers' results of test plan %(plan)s: it is deleted with the plan, from the "
            "plan's page, and named by the row label the plan was made with"
        ) % {"name": submission.name, "plan": plan}
    return _(
        "%(name)r is the testers' results of a test plan: it is deleted with the plan, from the "
        "plan's page, and named by the row label the plan was made with"
    ) % {"name": submission.name}


def change_problem(*, user: Any, submission: Submission) -> str | None:
    """Why `user` cannot rename or delete `submission` from the report page (None when they can)."""
    return plan_row_problem(submission) or owner_problem(user=user, submission=submission)


def rename_submission(*, submission: Submission, name: str, user: Any) -> Submission:
    """Give a submission (its report row) another name; SubmissionRefused (nothing changed) when the
    user may not, or the name is empty or taken in the submission's setting."""
    if problem := change_problem(user=user, submission=submission):
        raise SubmissionRefused(problem)
    if problem := name_problem(
        dataset=submission.dataset, name=name, setting=submission.setting, excluding=submission
    ):
        raise SubmissionRefused(problem, field="name")
    submission.name = name.strip()
    submission.save(update_fields=["name"])
    return submission


@dataclass(frozen=True)
class DeletionEffects:
    """What deleting a submission takes with it, as the confirmation page says it."""

    #: Per-unit rows (an answer, or none, and its scores), and how many of them hold an answer.
    predictions: int
    answered: int
    #: The model run that made it, which stays (with its prediction file) without a report row.
    model_run: int | None


def deletion_effects(submission: Submission) -> DeletionEffects:
    rows = submission.predictions.aggregate(
        predictions=Count("pk"), answered=Count("pk", filter=Q(answer__isnull=False))
    )
    run = submission.parameters.get("model_run") if submission.origin == Submission.Origin.MODEL_RUN else None
    return DeletionEffects(predictions=rows["predictions"], answered=rows["answered"], model_run=run)


def delete_submission(*, submission: Submission, user: Any) -> None:
    """Delete a submission with its answers and per-unit scores (its report row goes with it);
    SubmissionRefused (nothing deleted) when the user may not."""
    problem = change_problem(user=user, submission=submission)
    if problem:
        raise SubmissionRefused(problem)
    submission.delete()


# --- Scoring in a worker -------------------------------------------------------------------------


def scored_in_request(dataset: Dataset) -> bool:
    """Whether an upload to `dataset` is scored while the request waits (a worker scores larger ones)."""
    return dataset.unit_count <= settings.SCORE_IN_REQUEST_UNITS


def start_scoring_job(
    *,
    dataset: Dataset,
    name: str,
    data: bytes,
    producer: str = Submission.Producer.MODEL,
    setting: str = "",
    variant: str = OFFICIAL,
    source: str = "",
    created_by=None,
) -> ScoringJob:
    """Queue a prediction file for a worker to score; its submission is made now, unscored.

    Refused at once, as `submit_predictions` refuses it, what would fail anyway: a setting,
    variant or name the dataset cannot take (SubmissionRefused), a file that does not parse
    (FormatError naming every bad record). Answers for units the dataset lacks are found by the
    worker, which then fails the job and removes the submission.
    """
    check_choices(dataset, name=name, setting=setting, variant=variant, origin=Submission.Origin.UPLOAD)
    waiting = ScoringJob.objects.filter(created_by=created_by, status__in=ACTIVE).count()
    if created_by is not None and 0 < settings.JOBS_PER_PERSON <= waiting:
        raise SubmissionRefused(
            _(
                "you have %(waiting)s uploads being scored, the most one person may have at once "
                "(%(most)s): wait for one to finish"
            )
            % {"waiting": waiting, "most": settings.JOBS_PER_PERSON}
        )
    check_storable(dataset.spec.read_predictions(data, source=source), source=source)
    with transaction.atomic():
        submission = create_submission(
            dataset=dataset,
            name=name,
            producer=producer,
            setting=setting,
            variant=variant,
            source=source,
            created_by=created_by,
        )
        job = ScoringJob.objects.create(
            dataset=dataset, submission=submission, name=submission.name, created_by=created_by
        )
        job.upload.save(Path(source).name or "predictions.json", ContentFile(data), save=True)
        jobs.enqueue("evaluation.score_upload", job.pk)
    return job


def run_scoring_job(job: ScoringJob) -> ScoringJob:
    """Score a queued upload, telling the cache how far it is; the job row records the outcome."""

    def report(stage: str, done: int, total: int) -> None:
        jobs.report_progress(job, stage, done, total)

    if not jobs.take(job):  # a second delivery of the same job, or one already declared lost
        return job
    try:
        with jobs.beating(job):
            submission = Submission.objects.filter(pk=job.submission_id).first()
            if submission is None:
                raise SubmissionRefused("the submission was deleted before a worker took it")
            dataset = submission.dataset
            report(READING_UNITS, 0, dataset.item_count)
            with job.upload.open("rb") as upload:
                data = upload.read()
            source = submission.source or job.name
            answers = dataset.spec.read_predictions(data, source=source)
            units = scoring_units(dataset, progress=report)
            check_known(dataset, units, answers, source=source)
            with transaction.atomic():
                store_scored(submission, units, answers, progress=report)
    except FormatError as error:
        end_scoring_job(job, status=ScoringJob.Status.FAILED, errors=error.summary())
    except (SubmissionRefused, ValueError, OSError) as error:
        end_scoring_job(job, status=ScoringJob.Status.FAILED, errors=[str(error)])
    else:
        end_scoring_job(job, status=ScoringJob.Status.SUCCEEDED)
    job.refresh_from_db()
    return job


def end_scoring_job(job: ScoringJob, *, status: str, errors: list[str] | None = None) -> None:
    """Record how the job ended and remove its upload (its answers are stored now, or nowhere);
    a failed job's submission goes too, so that its name is free again."""
    if job.upload:
        job.upload.delete(save=False)
    if status == ScoringJob.Status.FAILED and job.submission_id is not None:
        Submission.objects.filter(pk=job.submission_id, scored_at__isnull=True).delete()
    ScoringJob.objects.filter(pk=job.pk).update(
        upload="", status=status, errors=errors or [], finished_at=timezone.now()
    )
    jobs.clear_progress(job)


def scoring_lost(job: ScoringJob, seconds: int) -> None:
    """End a scoring job whose worker stopped beating (the reaper's handler). The rows were written
    in one transaction, so nothing of it was stored."""
    end_scoring_job(
        job,
        status=ScoringJob.Status.FAILED,
        errors=[
            f"the worker scoring this file stopped (no sign of life for {seconds} s); "
            "nothing was stored: upload the file again"
        ],
    )
