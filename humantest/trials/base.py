"""What a human trial is on one benchmark: what a tester sees, what they answer, how it is scored.

Each benchmark that people can be tested on has one `BenchmarkTrial` subclass, named by its
spec (`spec.trial = "module:Class"`) and found with `humantest.trials.trial_for`. `view` is the
only method whose result reaches the browser before the trial's answer is final, so it is built
from the item's payload and scene alone and never reads `Item.ground_truth`
(tests/humantest/test_leaks.py checks every tester-facing response). Everything else runs on
the server: `read_answer` turns the browser's answer into the benchmark's prediction format
(refusing bad input with the field named), `record` rebuilds the official ground-truth record
and `score` runs the benchmark's one metric entry point (`spec.score`) on it, so a tester's
answer is scored by exactly the code that scores a model's.

Trials are scored under a synthetic id (the trial's primary key) so that the same item answered
by several testers can be scored together for the pooled human row.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from django.db.models import Func, IntegerField, QuerySet
from django.utils.translation import gettext as _

from benchmarks.records import RecordChecker, RecordError
from benchmarks.spec import BenchmarkSpec, Choice, ScoringInput, choice_text, one_of
from evaluation.metrics.scored import Scored


class JSONArrayLength(Func):
    """The length of a JSON array, computed by the database (SQLite and PostgreSQL)."""

    function = "JSON_ARRAY_LENGTH"
    output_field = IntegerField()

    def as_postgresql(self, compiler, connection, **extra):
        return super().as_sql(compiler, connection, function="JSONB_ARRAY_LENGTH", **extra)


class AnswerRefused(ValueError):
    """The answer cannot be stored; `field` names what is wrong. Nothing is stored."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}")
        self.field = field
        self.message = message


def first_problem(check, raw: Any) -> None:
    """Run a metric's prediction check (`check(raw, checker)`) and raise its first fault."""
    errors: list[RecordError] = []
    check(raw, RecordChecker(errors, "answer"))
    if errors:
        raise AnswerRefused(errors[0].field, errors[0].message)


@dataclass
class TrialUnit:
    """One trial's inputs: the item, which of its questions, what the plan chose, its score id."""

    item: Any
    part: int
    context: dict[str, Any]
    key: int


@dataclass(frozen=True)
class BalanceField:
    """A field a plan can spread its draw evenly over.

    `of_items`: balance the items drawn (by `balance_value`); otherwise it is something the plan
    chooses per trial (`contexts`), such as the camera a final state is seen from. `setting`:
    the setting it needs, if any.
    """

    label: str
    of_items: bool = True
    setting: str = ""


class BenchmarkTrial:
    #: The benchmark's settings people can be tested in (None: all of them).
    settings: tuple[str, ...] | None = None
    #: Fields a plan can balance its draw over: name -> BalanceField.
    balance_fields: dict[str, BalanceField] = {}
    #: The per-trial score shown beside accuracy: (label, key of the metric's per-item row).
    headline: tuple[str, str] = ("", "")

    def __init__(self, spec: BenchmarkSpec) -> None:
        self.spec = spec

    # --- what the pages include -----------------------------------------------------------------

    @property
    def widget_template(self) -> str:
        """The trial's controls, included in the trial page."""
        return f"humantest/widgets/{self.spec.name}.html"

    @property
    def brief_template(self) -> str:
        """How to answer, included in the brief before the test."""
        return f"humantest/widgets/{self.spec.name}_brief.html"

    @property
    def widget_script(self) -> str:
        """The static path of the ES module that builds the answer (see humantest/trial.js)."""
        return f"humantest/widgets/{self.spec.name}.js"

    # --- plans and drawing ----------------------------------------------------------------------

    def offers(self, setting: str) -> bool:
        return self.settings is None or setting in self.settings

    def offered_settings(self) -> list[Choice]:
        """The benchmark's settings people can be tested in, as (value, label) choices."""
        return [choice for choice in self.spec.settings if self.offers(choice.value)]

    def setting_problem(self, setting: str) -> str | None:
        """Why a plan cannot use `setting` (None when it can), saying what to choose instead: the
        benchmark's own refusal when people are tested in all of its settings, else the settings
        they are tested in (as the plan form shows them, with the value the API takes)."""
        offered = self.offered_settings()
        if setting in [choice.value for choice in offered]:
            return None
        if len(offered) == len(self.spec.settings):
            return self.spec.setting_problem(setting)
        label = _(self.spec.setting_label(setting))
        asked = f"“{label}” ({setting!r})" if label != setting else repr(setting)
        if [choice.value for choice in offered] == [""]:
            return _(
                "people are tested on %(benchmark)s without a setting: choose “–” (no setting), not %(asked)s"
            ) % {"benchmark": self.spec.title, "asked": asked}
        names = one_of(choice_text(choice, empty=_("no setting")) for choice in offered)
        return _(
            "people are tested on %(benchmark)s in the setting %(names)s: choose one of them, not %(asked)s"
        ) % {"benchmark": self.spec.title, "names": names, "asked": asked}

    def dataset_problem(self, dataset: Any) -> str | None:
        """Why testers cannot be shown this dataset at all (None when they can)."""
        if not dataset.has_media:
            return _("testers need the images: import the dataset with its images")
        return None

    # Drawing works on light rows, not items: {"pk", "external_id", and the `draw_fields`}, so that
    # opening a plan on a dataset of 100,000 items reads a few fields of each, not its whole record.

    def drawable(self, items: QuerySet) -> QuerySet:
        """The items a tester can be shown at all (their images are there), filtered in the database."""
        return items

    def draw_fields(self, balance_by: str) -> dict[str, Any]:
        """What `eligible`, `parts` and `balance_value` read: row key -> ORM path or expression."""
        return {}

    def eligible(self, row: dict[str, Any], setting: str) -> bool:
        return True

    def parts(self, row: dict[str, Any]) -> int:
        """How many trials one item holds (questions of an image); 1 for most benchmarks."""
        return 1

    def balance_value(self, row: dict[str, Any], field: str, part: int) -> Any:
        raise KeyError(field)

    def contexts(
        self,
        setting: str,
        count: int,
        balance_by: str,
        rng: random.Random,
        *,
        items: Sequence[int] = (),
        turn: int = 0,
    ) -> list[dict[str, Any]]:
        """What the plan chooses per trial besides the item (a camera, say); one dict per trial.
        `items`: the trials' item ids, in order, where known; `turn`: how many testers started the
        plan before this one (so that a choice can rotate across testers: each item under every
        camera in turn)."""
        return [{} for _ in range(count)]

    # --- a trial --------------------------------------------------------------------------------

    def view(self, unit: TrialUnit) -> dict[str, Any]:
        raise NotImplementedError

    def read_answer(self, unit: TrialUnit, raw: Any) -> Any:
        raise NotImplementedError

    def record(self, unit: TrialUnit) -> dict[str, Any]:
        """The unit's official ground-truth record, under the trial's id."""
        record = self.spec.units(unit.item.external_id, unit.item.payload, unit.item.ground_truth)[
            unit.part
        ].record
        return {**record, self.spec.unit_id_field: self.spec.unit_id_type(unit.key)}

    def prediction(self, unit: TrialUnit, answer: Any) -> Any:
        """The answer in the benchmark's prediction format, as `spec.score` takes it."""
        return answer

    def stored_answer(self, unit: TrialUnit, answer: Any) -> Any:
        """The answer as the tester's Prediction keeps it: the prediction format, without the id."""
        return answer

    def scenes(self, units: Sequence[TrialUnit]) -> list[dict[str, Any]]:
        """The scenes scoring needs, for benchmarks scored against them."""
        return []

    def options(self, units: Sequence[TrialUnit]) -> dict[str, Any]:
        """What scoring needs of the plan's per-trial choices (`ScoringInput.options`)."""
        return {}

    def score(self, setting: str, units: Sequence[TrialUnit], answers: dict[int, Any]) -> Scored:
        by_key = {unit.key: unit for unit in units}
        return self.spec.score(
            ScoringInput(
                records=[self.record(unit) for unit in units],
                answers={str(key): self.prediction(by_key[key], answer) for key, answer in answers.items()},
                setting=setting,
                scenes=self.scenes(units),
                options=self.options(units),
            )
        )

    def row_key(self, row: dict[str, Any]) -> int:
        return int(self.spec.row_id(row))

    def truth(self, unit: TrialUnit) -> dict[str, Any]:
        """The right answer as the result page shows it (only after the answer is final)."""
        raise NotImplementedError

    def correct(self, row: dict[str, Any]) -> bool | None:
        raise NotImplementedError

    def explain(self, unit: TrialUnit, answer: Any) -> list[str]:
        """Why the answer scored as it did, in sentences for the result panel (after the answer)."""
        return []

    def suggested_practice(self, items: QuerySet, count: int) -> list[str]:
        """External ids of `count` items that make good practice (the demo plan takes them): by
        default the first ones; a benchmark whose task has a trap puts an item that teaches it first."""
        return list(items.order_by("position").values_list("external_id", flat=True)[:count])


def media(item: Any, role: str) -> str:
    name = item.media.get(role)
    return item.dataset.media_url(name) if name else ""
