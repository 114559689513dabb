"""TRANCE's diagnostic tables and plots as the report reads them: every column finds its value in a
real summary, and its interval is taken over the units that value is a mean of."""

from __future__ import annotations

import functools
import random
import types

import orjson
import pytest

from evaluation.reports.cells import ScoredSubmission, cell_for, column_key, per_item_values, summary_value
from evaluation.reports.exports import format_value
from plugins.trance import metric
from plugins.trance.formats import EVENT, VIEW
from plugins.trance.generator import generate
from plugins.trance.spec import SPEC
from plugins.trance.tests.helpers import fake_pixel_counter


@pytest.fixture(scope="module")
def scored(tmp_path_factory):
    """60 generated samples answered a third right, a third reversed, a third empty; View with
    one answer per camera for every other sample. Scored in Event and in View, rows and summary
    as stored (through JSON: keys are strings there)."""
    folder = tmp_path_factory.mktemp("trance-diagnostics")
    generate(folder, count=60, seed=8, render_images=False, pixel_counter=fake_pixel_counter)
    samples = [orjson.loads(line) for line in (folder / "data.jsonl").read_bytes().splitlines()]
    rng = random.Random(4)
    answers = {}
    for one in samples:
        steps = [{key: step[key] for key in ("obj_idx", "attr", "val")} for step in one["transformations"]]
        answers[one["idx"]] = rng.choice([steps, steps[::-1], []])
    per_camera = {
        idx: {"Camera_Left": steps, "Camera_Center": steps[:1]} if idx % 2 else steps
        for idx, steps in answers.items()
    }
    results = {
        EVENT: metric.score_event(samples, answers),
        VIEW: metric.score_view_cameras(samples, per_camera),
    }
    return {
        setting: ScoredSubmission(
            "model",
            "m",
            setting,
            orjson.loads(orjson.dumps(result.summary)),
            orjson.loads(orjson.dumps(list(result.items))),
        )
        for setting, result in results.items()
    }


def diagnostic_columns():
    return [(table.key, column) for table in SPEC.diagnostics for column in table.columns]


def test_the_tables_are_the_papers_order_length_and_camera_tables():
    assert [table.key for table in SPEC.diagnostics] == ["order", "by-length", "by-length-view", "by-camera"]
    order = SPEC.diagnostic("order")
    assert [(column.setting, column.label) for column in order.columns][:5] == [
        (EVENT, "n"),
        (EVENT, "LAcc"),
        (EVENT, "Acc"),
        (EVENT, "EO"),
        (EVENT, "EO, random order"),
    ]
    assert {column.setting for column in order.columns} == {EVENT, VIEW}
    assert {column.setting for column in SPEC.diagnostic("by-camera").columns} == {VIEW}
    # LAcc and Acc for each of the four lengths, Event's and View's in two tables (each fits a page).
    for key, setting in (("by-length", EVENT), ("by-length-view", VIEW)):
        columns = SPEC.diagnostic(key).columns
        assert len(columns) == 2 * 4 and {column.setting for column in columns} == {setting}


def test_every_column_is_one_of_a_kind_and_its_filter_is_a_plain_function():
    keys = [column_key(column) for column in SPEC.all_columns()]
    assert len(keys) == len(set(keys))
    for _, column in diagnostic_columns():
        chosen = column.item_filter
        if chosen is not None:
            function = chosen.func if isinstance(chosen, functools.partial) else chosen
            assert isinstance(function, types.FunctionType) and function.__name__ != "<lambda>"


def test_every_column_reads_a_value_and_its_interval_from_the_units_it_is_a_mean_of(scored):
    for key, column in diagnostic_columns():
        submission = scored[column.setting]
        value = summary_value(submission.summary, column.summary_path)
        if column.summary_path[-1] == "seconds":
            assert value is None, "no trial times were given"
            continue
        assert value is not None, (key, column.setting, column.summary_path)
        cell = cell_for(column, submission)
        assert cell.value == value
        if column.item_key is None:
            continue
        values = per_item_values(column, submission.item_rows)
        if values:
            assert sum(values) / len(values) == pytest.approx(value), (key, column.summary_path)
            assert cell.low <= value <= cell.high and cell.n == len(values)


def test_the_order_columns_count_the_order_sensitive_units(scored):
    view = scored[VIEW]
    sensitive = [row for row in view.item_rows if row["order_sensitive"]]
    assert sensitive, "the generated samples hold order-sensitive ones"
    n_column = next(column for column in SPEC.diagnostic("order").columns if column.setting == VIEW)
    cell = cell_for(n_column, view)
    # Three units per order-sensitive sample in View (one per final camera); a count, shown whole
    # and without an interval.
    assert cell.value == len(sensitive) == 3 * scored[EVENT].summary["order_sensitive"]["n"]
    assert n_column.count and cell.low is None and cell.n == 0
    assert format_value(cell.value, whole=True) == str(len(sensitive))


def test_each_camera_column_reads_only_that_cameras_units(scored):
    view = scored[VIEW]
    for column in SPEC.diagnostic("by-camera").columns:
        if column.item_key is None or column.item_key == "seconds":
            continue
        camera = column.summary_path[1]
        rows = [row for row in view.item_rows if row["camera"] == camera]
        assert cell_for(column, view).n == len(rows) == view.summary["by_camera"][camera]["n"] == 60


def test_the_lacc_by_length_plot_draws_a_line_over_the_summarys_lengths(scored):
    plot = next(plot for plot in SPEC.plots if plot.metric == "LAcc")
    assert (plot.kind, plot.setting, plot.summary_path) == ("line", EVENT, ("by_length",))
    lengths = scored[EVENT].summary["by_length"]
    assert [group.value for group in plot.groups] == list(lengths) == ["1", "2", "3", "4"]
    for plot in SPEC.plots:
        groups = summary_value(scored[plot.setting].summary, plot.summary_path)
        assert all(groups[group.value][plot.metric] is not None for group in plot.groups), plot.title
