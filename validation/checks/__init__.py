"""Validation checks per benchmark: what is stratified on, what validators are asked, what is shown.

A benchmark whose generated items people can check names its check in its spec
(`validation = "validation.checks.<name>:<Class>"`); `check_for(benchmark)` finds it. A check
declares:

* `stratifiers`: the ways a sample can be stratified, each reading a few values per item in one
  query (database expressions, so that drawing from 500,000 items reads no whole records) and
  turning them into the item's stratum label;
* `questions`: the verdict form, as data: yes/no questions, 1-5 ratings, "which step is wrong",
  a free comment; a "no" to a yes/no question that `fails_on_no`, or a step marked wrong, makes
  the item an error;
* `view(item)`: what the page draws, in one shape for every benchmark (image, boxes, the
  question and answer as facts, the marked objects, the program's steps with the objects each
  outputs), and `steps(item)`, `step_kind`, `template_of(item)` for the report.

The generic parts (reading a verdict, deciding whether it is an error, per-criterion labels for
agreement) live on `Check`; a benchmark's module only declares.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import cache
from typing import Any

from django.db.models import Func, IntegerField, QuerySet
from django.utils.translation import gettext as _

from benchmarks import registry
from benchmarks.spec import BenchmarkSpec, plugged

#: Longest comment a validator may leave.
COMMENT_LIMIT = 2000
#: The answer to a "which step is wrong" question when every step is right.
NO_STEP = None


class NoCheck(LookupError):
    """The benchmark declares no validation check."""


class VerdictRefused(ValueError):
    """A verdict that cannot be stored; `field` names the question, the message says why."""

    def __init__(self, field_name: str, message: str) -> None:
        super().__init__(f"{field_name}: {message}")
        self.field = field_name
        self.message = message


class JSONArrayLength(Func):
    """The length of a JSON array, computed by the database (SQLite and PostgreSQL spellings)."""

    function = "JSON_ARRAY_LENGTH"
    output_field = IntegerField()

    def as_postgresql(self, compiler, connection, **extra):
        return self.as_sql(compiler, connection, function="JSONB_ARRAY_LENGTH", **extra)


@dataclass(frozen=True)
class Stratifier:
    """One way to split a dataset into strata.

    `fields`: alias -> database expression, read for every candidate item; `value(row)`: the
    stratum label of an item from those values (a row maps the aliases to what was read).
    """

    key: str
    label: str
    fields: Callable[[], Mapping[str, Any]]
    value: Callable[[Mapping[str, Any]], str]
    help: str = ""


@dataclass(frozen=True)
class Question:
    """One question of the verdict form.

    `kind`: "yesno", "scale" (1 to `scale`), "step" (which program step is wrong, or none) or
    "text". `fails_on_no`: a "no" makes the item an error.
    """

    name: str
    label: str
    kind: str
    help: str = ""
    fails_on_no: bool = False
    scale: int = 5
    required: bool = True


@dataclass(frozen=True)
class Criterion:
    """A reason an item can be an error, estimated on its own (answer wrong, grounding wrong...)."""

    name: str
    label: str


class Check:
    """The base of every benchmark's check: subclasses fill in the declarations and `view`."""

    stratifiers: tuple[Stratifier, ...] = ()
    questions: tuple[Question, ...] = ()
    #: What the validation page says the task is, above the form.
    instructions: str = ""

    def __init__(self, spec: BenchmarkSpec) -> None:
        self.spec = spec

    # --- sampling ------------------------------------------------------------------------------

    def sampleable(self, items: QuerySet) -> QuerySet:
        """The items that can be shown to a validator (by default all of them)."""
        return items

    def stratifier(self, key: str) -> Stratifier:
        for stratifier in self.stratifiers:
            if stratifier.key == key:
                return stratifier
        raise KeyError(key)

    # --- the page ------------------------------------------------------------------------------

    def view(self, item) -> dict[str, Any]:
        """What the page draws, the same shape for every benchmark::

        {"image": url, "width": w, "height": h,
         "facts": [{"label", "text", "main": bool}],     # the question, the answer...
         "objects": [{"id", "box": [x, y, w, h], "name"}],  # every candidate, drawn faintly
         "marked": [ids], "marked_label": str,           # what the item claims (grounding)
         "steps": [{"label", "output": [ids]}]}          # the program, step by step
        """
        raise NotImplementedError

    def steps(self, item) -> list[str]:
        """The item's program steps in words (empty when it has no program)."""
        return []

    def step_kind(self, item, index: int) -> str:
        """What the report counts failing steps by (by default the step as worded)."""
        steps = self.steps(item)
        return steps[index] if 0 <= index < len(steps) else "?"

    def template_of(self, item) -> str:
        """The template or family the item was generated from, for the report's failure table."""
        return ""

    # --- verdicts ------------------------------------------------------------------------------

    def read(self, raw: Any, item) -> dict[str, Any]:
        """A verdict's answers, checked against the questions; VerdictRefused names the first fault."""
        if not isinstance(raw, dict):
            raise VerdictRefused("answers", _("expected an object with one entry per question"))
        names = {question.name for question in self.questions}
        unknown = sorted(set(raw) - names)
        if unknown:
            field = unknown[0] if unknown[0].strip() else "answers"  # a key of white space names nothing
            raise VerdictRefused(field, _("is not a question of this form"))
        step_count = len(self.steps(item))
        answers: dict[str, Any] = {}
        for question in self.questions:
            value = raw.get(question.name)
            if question.kind == "yesno":
                if value is None:
                    raise VerdictRefused(
                        question.name, _("answer “%(question)s” (yes or no)") % {"question": question.label}
                    )
                if type(value) is not bool:
                    raise VerdictRefused(
                        question.name, _("expected yes or no, got %(value)r") % {"value": value}
                    )
            elif question.kind == "scale":
                if value is None:
                    raise VerdictRefused(
                        question.name,
                        _("rate “%(question)s” from 1 to %(scale)s")
                        % {"question": question.label, "scale": question.scale},
                    )
                if type(value) is not int or not 1 <= value <= question.scale:
                    raise VerdictRefused(
                        question.name,
                        _("expected 1 to %(scale)s, got %(value)r")
                        % {"scale": question.scale, "value": value},
                    )
            elif question.kind == "step":
                if value is not NO_STEP and (type(value) is not int or not 0 <= value < step_count):
                    raise VerdictRefused(
                        question.name,
                        _("expected a step from 1 to %(count)s or none, got %(value)r")
                        % {"count": step_count, "value": value},
                    )
            else:
                value = "" if value is None else value
                if not isinstance(value, str):
                    raise VerdictRefused(question.name, _("expected text"))
                if len(value) > COMMENT_LIMIT:
                    raise VerdictRefused(question.name, _("at most %(n)s characters") % {"n": COMMENT_LIMIT})
                value = value.strip()
            answers[question.name] = value
        return answers

    def criteria(self) -> list[Criterion]:
        """The separate reasons for an error: each yes/no question that fails on "no", each step question."""
        return [
            Criterion(question.name, question.label)
            for question in self.questions
            if (question.kind == "yesno" and question.fails_on_no) or question.kind == "step"
        ]

    def failures(self, answers: Mapping[str, Any]) -> dict[str, bool]:
        """Criterion name -> whether these answers fail it."""
        failed = {}
        for question in self.questions:
            if question.kind == "yesno" and question.fails_on_no:
                failed[question.name] = answers.get(question.name) is False
            elif question.kind == "step":
                failed[question.name] = answers.get(question.name) is not NO_STEP
        return failed

    def is_error(self, answers: Mapping[str, Any]) -> bool:
        return any(self.failures(answers).values())

    def agreement_questions(self) -> list[Question]:
        """The questions validators' agreement is measured on (not the comment)."""
        return [question for question in self.questions if question.kind != "text"]


def check_for(benchmark: str) -> Check:
    """The validation check of a benchmark named by its name; NoCheck when it has none."""
    spec = registry.get(benchmark)
    if not spec.validation:
        raise NoCheck(
            _("%(benchmark)s has no validation check: its items cannot be validated here")
            % {"benchmark": spec.title}
        )
    return load_check(spec)


@cache
def load_check(spec: BenchmarkSpec) -> Check:
    return plugged(spec.validation)(spec)


def validatable_benchmarks() -> list[BenchmarkSpec]:
    return [spec for spec in registry.specs() if spec.validation]
