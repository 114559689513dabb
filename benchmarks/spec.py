"""What a benchmark is, declared once (pure, no Django).

Every benchmark Yardstick serves is one `BenchmarkSpec` subclass in `benchmarks/<name>/spec.py`,
collected by `benchmarks.registry`. The apps (catalog, evaluation, human tests) ask the spec
instead of branching on the benchmark's name: how its official files are read (its format
module), what a scoring unit is, how predictions are read and scored (one entry point with one
signature for every benchmark), the report's columns and breakdown plots, what people's
answers are compared on for agreement, what a region is, what its items look like on a page,
how a human trial shows it, and how its demo data is made.

A spec holds declarations and small pure functions. Heavy modules (metrics with numpy and
shapely, generators, renderers) are imported inside the methods that need them, so that reading
the registry costs nothing.
"""

from __future__ import annotations

import importlib
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from types import ModuleType
from typing import IO, TYPE_CHECKING, Any

if TYPE_CHECKING:
    from evaluation.metrics.scored import Scored

OFFICIAL = "official"


@dataclass(frozen=True)
class Choice:
    """One allowed value of a setting or variant, with the label people see."""

    value: str
    label: str


#: The one setting of a benchmark that has no settings.
NO_SETTING = (Choice("", "–"),)
#: The one metric variant of a benchmark whose paper and released evaluator agree.
OFFICIAL_ONLY = (Choice(OFFICIAL, "official (released evaluator)"),)


@dataclass(frozen=True)
class ScoringUnit:
    """One thing a prediction answers: an item, or one question of an item that holds several.

    `id` is the id predictions name it by (the official id: a sample's idx, a question's id...),
    as a string; `part` its index inside the item (0 unless the item holds several); `record`
    its ground truth as one official record, carrying that id.
    """

    id: str
    part: int
    record: dict[str, Any]


@dataclass
class ScoringInput:
    """What every benchmark's `score` takes.

    `records`: one official ground-truth record per scoring unit, in order, each carrying its id
    (under the spec's `unit_id_field`). `answers`: unit id (a string) -> the answer as stored (the
    benchmark's prediction without its id); units without one are scored as unanswered.
    `scenes`: the scene records, for benchmarks that score against them. `options`: stored
    parameters a benchmark may read (such as the camera each answer was made from).
    """

    records: Sequence[Mapping[str, Any]]
    answers: Mapping[str, Any]
    setting: str = ""
    variant: str = OFFICIAL
    scenes: Sequence[Mapping[str, Any]] = ()
    options: Mapping[str, Any] = field(default_factory=dict)


@dataclass
class ScoringFiles:
    """What every benchmark's `score_files` takes: the raw files, as `manage.py score` reads them:
    their bytes, or, for a benchmark whose spec says `scores_streamed_files`, the files open for
    reading."""

    ground_truth: bytes | IO[bytes]
    predictions: bytes | IO[bytes]
    scenes: bytes | IO[bytes] | None = None
    setting: str = ""
    variant: str = OFFICIAL
    ground_truth_source: str = "ground truth"
    predictions_source: str = "predictions"


@dataclass(frozen=True)
class Column:
    """One column of a report table, read from each row's submission summary.

    `setting`: which submission of the row feeds it ("" = the row's only setting).
    `summary_path`: where the value sits in the summary. `item_key`: the per-item value whose
    spread gives the interval (None: the summary value alone). `item_filter`: which per-item
    rows count. Accuracies (`proportion`) get Wilson intervals; means get normal ones, clipped
    to [0, upper_bound]. `optional`: left out of a table whose rows have no value for it in
    their summaries (the figures of a metric variant no row was scored under).
    """

    group: str
    label: str
    setting: str
    summary_path: tuple[str, ...]
    item_key: str | None = None
    item_filter: Callable[[dict], bool] | None = None
    proportion: bool = True
    lower_is_better: bool = False
    upper_bound: float | None = 1.0
    optional: bool = False
    #: The value counts units (how many samples are order-sensitive): shown as a whole number,
    #: with no interval.
    count: bool = False


@dataclass(frozen=True)
class BreakdownPlot:
    """A bar chart of one summary value over groups, one series per submission.

    `summary_path` leads to a mapping group key -> group summary; `metric` is read from each.
    `groups`: the keys to plot, in order, with their axis labels; empty: every key found,
    sorted. `setting`: plot only submissions of this setting (None: all of them).
    """

    title: str
    summary_path: tuple[str, ...]
    metric: str
    groups: tuple[Choice, ...] = ()
    setting: str | None = None
    ylabel: str = ""
    #: "bars" (one bar per group and submission) or "line" (a curve per submission over the
    #: groups in order: a threshold swept, say); `xlabel` names the groups' axis.
    kind: str = "bars"
    xlabel: str = ""


@dataclass(frozen=True)
class DiagnosticTable:
    """One of a paper's diagnostic tables: the report's rows (models, Human last) with its own
    columns, read from each row's summary and per-unit rows as the main table's are.

    `key`: a slug naming it in exports and anchors (``order``, ``by-length``). `columns`: as the
    main table's, each with the setting it reads; a column no row has a value for is left out, and
    a table with no column left is not shown. `note`: one or two sentences under it (what the
    numbers are, the paper's table it mirrors). `caption`: the LaTeX table's caption, in English.
    """

    key: str
    title: str
    columns: tuple[Column, ...]
    note: str = ""
    caption: str = ""


@dataclass(frozen=True)
class Region:
    """A ground-truth region to draw over an item's image: a label and its outline in pixels."""

    label: str
    points: tuple[tuple[float, float], ...]

    def as_dict(self) -> dict[str, Any]:
        return {"label": self.label, "points": [list(point) for point in self.points]}


@dataclass(frozen=True)
class ItemTable:
    """A small table on an item's page: column headings and rows of text."""

    columns: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]


@dataclass(frozen=True)
class ItemSection:
    """One block of an item's page as its benchmark shows it, in plain text (the page escapes it):
    facts as (label, text) pairs, numbered lines (steps, a program), a table, a note under it."""

    title: str = ""
    facts: tuple[tuple[str, str], ...] = ()
    lines: tuple[str, ...] = ()
    table: ItemTable | None = None
    note: str = ""
    #: Whether the lines are in an order that matters (steps, a program) and are numbered.
    numbered: bool = True


#: How much of a nested value a fact shows before it says to look at the JSON.
FACT_LENGTH = 240


def as_text(value: Any) -> str:
    """A value as a fact shows it: text as it is, numbers and nested values as compact JSON."""
    if isinstance(value, str):
        return value
    text = json.dumps(value, ensure_ascii=False, separators=(", ", ": "))
    return text if len(text) <= FACT_LENGTH else f"{text[:FACT_LENGTH]}… (the whole value is in the JSON)"


def plain_facts(record: Mapping[str, Any]) -> tuple[tuple[str, str], ...]:
    """Every field of a record as a (label, text) fact, for a benchmark that says no more."""
    return tuple((str(key).replace("_", " "), as_text(value)) for key, value in record.items())


@dataclass
class DemoData:
    """Demo files a spec generated, ready to import."""

    data: Path
    split: str
    source: str
    images: Path | None = None
    scenes: Path | None = None


@dataclass(frozen=True)
class DemoPlan:
    """The demo test plan's choices on the demo dataset, and the settings the demo's model runs
    are made in (`model_settings`; none given: the plan's setting alone)."""

    setting: str = ""
    balance_by: str = ""
    model_settings: tuple[str, ...] = ()


def one_of(values) -> str:
    """'a', 'a or b', 'a, b or c'."""
    values = list(values)
    return values[0] if len(values) == 1 else f"{', '.join(values[:-1])} or {values[-1]}"


def described_answer(spec: BenchmarkSpec, answer: Any) -> list[str]:
    """`spec.answer_lines(answer)`, or the answer's JSON when the benchmark cannot read it (an
    answer stored under an older format, say): a page that lists answers never fails on one."""
    try:
        lines = spec.answer_lines(answer)
    except (KeyError, IndexError, TypeError, ValueError, AttributeError):
        lines = None
    if not lines or not all(isinstance(line, str) for line in lines):
        return [json.dumps(answer, ensure_ascii=False, default=str)]
    return lines


def plugged(path: str) -> Any:
    """What a spec names as "module:name" (its trial, validation check, authoring workflow or a
    baseline), imported: the one way the apps reach into a benchmark's folder."""
    module_name, _, name = path.partition(":")
    return getattr(importlib.import_module(module_name), name)


def choice_text(choice: Choice, *, empty: str = "empty") -> str:
    """A choice as a refusal names it: its label as forms show it, then the value to type
    (“View” ('view'); “–” (no setting) for the empty value)."""
    return f"“{choice.label}” ({choice.value!r})" if choice.value else f"“{choice.label}” ({empty})"


def rectangle(x: float, y: float, width: float, height: float, *, label: str) -> Region:
    return Region(label, ((x, y), (x + width, y), (x + width, y + height), (x, y + height)))


class BenchmarkSpec:
    """The declaration of one benchmark. Subclass it, fill in the names, override the methods.

    Required: `name`, `title`, `formats_module`, `unit_id_field`, `read_predictions`, `score`,
    `score_files` and `report_columns`. Everything else has a default that suits a benchmark
    without that feature.
    """

    #: The benchmark's key: lower case, stored on every dataset.
    name: str = ""
    title: str = ""
    #: Other spellings accepted wherever a benchmark is named ("ste-vqa", "clevr-ref+").
    aliases: tuple[str, ...] = ()
    #: Extensions of the official file, the first one used for exports.
    extensions: tuple[str, ...] = ("json",)
    #: Dotted path of the module that reads and writes the official files.
    formats_module: str = ""
    #: The field of a prediction (and of a ground-truth record) naming its scoring unit, and the
    #: type of its values there (unit ids are strings everywhere else).
    unit_id_field: str = "id"
    unit_id_type: type = str
    settings: tuple[Choice, ...] = NO_SETTING
    variants: tuple[Choice, ...] = OFFICIAL_ONLY
    #: What a region of this benchmark is: "box", "quadrilateral", "mask" or "" (none).
    region_kind: str = ""
    #: Whether scoring needs the dataset's scenes (when the masks scored live in the scenes file).
    scenes_needed_to_score: bool = False
    #: Whether scoring reads the dataset's scenes where it has them, without needing them
    #: (object sizes read from scene graphs, say): the app passes them; a file scored without them
    #: has those figures left out.
    scenes_read_to_score: bool = False
    #: Whether `score_files` takes files open for reading and scores as it reads them (bounded
    #: memory on a full split); otherwise it is given the files' bytes.
    scores_streamed_files: bool = False
    #: Dotted path "module:Class" of its human-test trial, or "" when it cannot be tested on people.
    trial: str = ""
    #: Dotted path "module:Class" of its annotation workflow (annotation/workflows/), or "" when
    #: its items cannot be annotated in Yardstick.
    authoring: str = ""
    #: Dotted path "module:Class" of its validation check (validation/checks/), or "" when its
    #: generated items cannot be validated by people in Yardstick.
    validation: str = ""
    #: Dotted paths "module:Class" of its baselines (`inference.baselines.Baseline` subclasses in
    #: inference/baselines/<name>): what `manage.py run_baseline` and the inference pages can run on its datasets.
    baselines: tuple[str, ...] = ()
    #: Dotted path "module:Class" of its prompt and parser for served models (an
    #: `inference.served.ServedFormat` subclass in `plugins/<name>/served.py`), or "" when no served
    #: model can answer its items: where there is one, the inference pages offer the model `served`.
    served: str = ""
    #: Per-unit fields of the metric's rows that two report rows can be compared within (a
    #: transformation length, a question type...): value = the field, label = its name.
    comparison_strata: tuple[Choice, ...] = ()
    #: Breakdown plots on the report page.
    plots: tuple[BreakdownPlot, ...] = ()
    #: The papers' diagnostic tables on the report page, below the main table, each with its own
    #: CSV, JSON and LaTeX export.
    diagnostics: tuple[DiagnosticTable, ...] = ()

    @property
    def scores_with_scenes(self) -> bool:
        """Whether the app passes the dataset's scenes to `score`."""
        return self.scenes_needed_to_score or self.scenes_read_to_score

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name}>"

    # --- files ---------------------------------------------------------------------------------

    @cached_property
    def formats(self) -> ModuleType:
        return importlib.import_module(self.formats_module)

    @property
    def has_scenes(self) -> bool:
        """Whether the benchmark has a separate scenes file (scene graphs, CLEVR scenes)."""
        return hasattr(self.formats, "parse_scenes")

    @property
    def file_description(self) -> str:
        return getattr(self.formats, "FILE_DESCRIPTION", "")

    def export_name(self, stem: str) -> str:
        return f"{stem}.{self.extensions[0]}"

    # --- settings and variants -----------------------------------------------------------------

    def setting_problem(self, setting: str) -> str | None:
        """Why `setting` is not one of this benchmark's (None when it is), saying what to choose:
        each setting as forms show it, with the value files, commands and the API take beside it."""
        allowed = [choice.value for choice in self.settings]
        if setting in allowed:
            return None
        choices = one_of(choice_text(choice, empty="no setting") for choice in self.settings)
        if allowed == [""]:
            return f"{self.title} has no settings: choose {choices}, not {setting!r}"
        if not setting:
            return f"{self.title} needs a setting: choose {choices}"
        return f"{self.title} takes the setting {choices}: choose one of them, not {setting!r}"

    def setting_label(self, setting: str) -> str:
        return next((choice.label for choice in self.settings if choice.value == setting), setting)

    def variant_problem(self, variant: str) -> str | None:
        """Why `variant` is not one of this benchmark's metric variants, saying what to choose."""
        allowed = [choice.value for choice in self.variants]
        if variant in allowed:
            return None
        choices = one_of(choice_text(choice) for choice in self.variants)
        if len(allowed) == 1:
            return f"{self.title} has the one metric variant {choices}: choose it, not {variant!r}"
        return f"{self.title} has the metric variants {choices}: choose one of them, not {variant!r}"

    # --- the catalog ---------------------------------------------------------------------------

    def units(
        self, external_id: str, payload: dict[str, Any], ground_truth: dict[str, Any]
    ) -> list[ScoringUnit]:
        """The item's scoring units; by default one, named by the item's own id."""
        return [ScoringUnit(external_id, 0, self.formats.to_official(payload, ground_truth))]

    def unit_id(self, external_id: str, payload: dict[str, Any], part: int) -> str:
        """The id of one of an item's units, from what people are shown (no ground truth)."""
        return external_id

    def unit_count(self, payload: dict[str, Any]) -> int:
        """How many scoring units an item holds, from what people are shown (no ground truth)."""
        return 1

    def summary(self, payload: dict[str, Any], ground_truth: dict[str, Any]) -> str:
        """A one-line description of an item for lists."""
        return ""

    def regions(self, ground_truth: dict[str, Any], scene: dict[str, Any] | None) -> list[Region]:
        """The ground-truth regions to outline on the item's image."""
        return []

    #: What the item figure shows, said under it on the item's page.
    item_figure_caption: str = ""

    def item_figure(self, payload: dict[str, Any], translate: Callable[[str], str] = str) -> str:
        """An SVG drawing of the item for its page ("" for none), built only from validated values;
        `translate` puts its words in the reader's language (the page passes gettext)."""
        return ""

    def truth_lines(self, ground_truth: dict[str, Any]) -> list[str]:
        """The ground truth in sentences, for the item's page (empty: its fields are listed)."""
        return []

    def media_roles(self, media: Mapping[str, str]) -> list[str]:
        """An item's image roles in the order pages show them (by default sorted: a JSON column
        keeps no key order on PostgreSQL)."""
        return sorted(media)

    def answer_lines(self, answer: Any) -> list[str]:
        """An answer as stored (a person's or a model's) in words, for the pages that list answers
        (who misses what); by default its JSON. `described_answer` shows the JSON of an answer this
        cannot read."""
        return [json.dumps(answer, ensure_ascii=False)]

    def shown_sections(self, payload: dict[str, Any], scene: dict[str, Any] | None) -> list[ItemSection]:
        """What people are shown of an item, as its page says it (never the ground truth): by
        default every field of the payload."""
        return [ItemSection(facts=plain_facts(payload))]

    def truth_sections(
        self, payload: dict[str, Any], ground_truth: dict[str, Any], scene: dict[str, Any] | None
    ) -> list[ItemSection]:
        """The right answer as the item's page shows it: by default the `truth_lines`, or else
        every field of the ground truth."""
        lines = self.truth_lines(ground_truth)
        if lines:
            return [ItemSection(lines=tuple(lines))]
        return [ItemSection(facts=plain_facts(ground_truth))]

    # --- scoring -------------------------------------------------------------------------------

    def read_predictions(self, data: bytes, *, source: str = "") -> dict[str, Any]:
        """A prediction file as unit id -> answer; a FormatError names every bad record."""
        raise NotImplementedError

    def score(self, given: ScoringInput) -> Scored:
        """Score the answers given (ScoringInput): the one metric entry point of the benchmark."""
        raise NotImplementedError

    def score_files(self, files: ScoringFiles) -> Scored:
        """Score a prediction file against the official ground-truth file (and scenes)."""
        raise NotImplementedError

    def write_predictions(self, answers: Sequence[tuple[str, Any]]) -> bytes:
        """A prediction file in the official format from (unit id, prediction) pairs.

        By default the file is a JSON list of the predictions, each a record that carries its unit id
        (most benchmarks' files are such lists).
        """
        return json.dumps([prediction for _, prediction in answers], ensure_ascii=False).encode()

    def row_id(self, row: Mapping[str, Any]) -> str:
        """The unit id a per-item row of `score` belongs to."""
        return str(row[self.unit_id_field])

    # --- reports -------------------------------------------------------------------------------

    def report_columns(self) -> list[Column]:
        raise NotImplementedError

    def diagnostic(self, key: str) -> DiagnosticTable | None:
        """The diagnostic table called `key`; None when there is none."""
        return next((table for table in self.diagnostics if table.key == key), None)

    def all_columns(self) -> list[Column]:
        """The main table's columns, then every diagnostic table's: what a row's cells are kept for."""
        return self.report_columns() + [column for table in self.diagnostics for column in table.columns]

    # --- agreement -----------------------------------------------------------------------------

    #: What `answer_label` compares, in words for the pages.
    answer_compared: str = "the answer as a whole"

    def answer_label(self, answer: Any) -> str:
        """The part of an answer people agree or disagree on, as one comparable category."""
        return json.dumps(answer, sort_keys=True, ensure_ascii=False)

    def answer_text(self, answer: Any) -> str | None:
        """Free text in an answer, compared by edit-distance similarity (None: no text)."""
        return None

    def answer_region(self, answer: Any) -> list[tuple[float, float]] | None:
        """A polygon in an answer, compared by polygon IoU (None: no region)."""
        return None

    # --- demo data -----------------------------------------------------------------------------

    demo_plan: DemoPlan = DemoPlan()

    def demo(self, folder: Path, seed: int) -> DemoData | None:
        """Generate a small demo dataset into `folder` (None: the benchmark has no demo)."""
        return None
