"""The catalog's pages as a researcher reads them: datasets named with their benchmark, a report
link per dataset, item pages in the benchmark's own terms with the stored JSON behind a toggle,
and previous/next through the items in file order."""

import html
import re

import orjson
import pytest
from django.urls import reverse

from benchmarks.services import import_dataset
from tests.benchmarks import builders
from tests.factories import make_user

pytestmark = pytest.mark.django_db


def text(response) -> str:
    assert response.status_code == 200, response.status_code
    return html.unescape(response.content.decode())


def section(page: str, element_id: str) -> str:
    """The HTML of the <section id=...> (sections on item pages do not nest)."""
    found = re.search(rf'<section id="{element_id}">(.*?)</section>', page, re.S)
    assert found, element_id
    return found.group(1)


@pytest.fixture
def researcher(client):
    client.force_login(make_user("rita", "researcher"))
    return client


def trance(name="demo"):
    data = b"\n".join(orjson.dumps(builders.trance_sample(idx)) for idx in range(3))
    return import_dataset(benchmark="trance", data=data, name=name)


def item_page(client, dataset, external_id) -> str:
    item = dataset.items.get(external_id=external_id)
    return text(client.get(reverse("benchmarks:item-detail", args=[dataset.pk, item.pk])))


def test_datasets_of_one_name_say_their_benchmark_and_link_to_their_reports(researcher):
    first = trance()
    second = import_dataset(benchmark="stevqa", data=orjson.dumps(builders.stevqa_questions()), name="demo")
    listing = text(researcher.get(reverse("benchmarks:dataset-list")))
    for dataset in (first, second):
        assert f'href="{reverse("evaluation:report", args=[dataset.pk])}"' in listing
    assert (
        'aria-label="Report on TRANCE · demo"' in listing
        and 'aria-label="Report on STE-VQA · demo"' in listing
    )

    page = text(researcher.get(reverse("benchmarks:dataset-detail", args=[first.pk])))
    assert "<title>TRANCE · demo · Yardstick</title>" in page and "<h1>TRANCE · demo <small" in page
    item = item_page(researcher, first, "1")
    assert (
        f'href="{reverse("benchmarks:dataset-detail", args=[first.pk])}" id="back-to-dataset">← TRANCE · demo</a>'
        in item
    )
    assert "<title>Item 1 · TRANCE · demo · Yardstick</title>" in item
    report = text(researcher.get(reverse("evaluation:report", args=[second.pk])))
    assert "<title>Report · STE-VQA · demo · Yardstick</title>" in report and "← STE-VQA · demo</a>" in report


def test_item_pages_go_to_the_previous_and_next_item_in_file_order(researcher):
    dataset = trance()
    ids = {item.external_id: item.pk for item in dataset.items.all()}
    first = item_page(researcher, dataset, "0")
    assert 'id="previous-item"' not in first and "item 1 of 3" in first
    assert f'href="{reverse("benchmarks:item-detail", args=[dataset.pk, ids["1"]])}" rel="next"' in first
    middle = item_page(researcher, dataset, "1")
    assert f'href="{reverse("benchmarks:item-detail", args=[dataset.pk, ids["0"]])}" rel="prev"' in middle
    assert "next (#2) →" in middle and "← previous (#0)" in middle and "item 2 of 3" in middle
    last = item_page(researcher, dataset, "2")
    assert 'id="next-item"' not in last and "item 3 of 3" in last


def test_a_trance_item_shows_the_object_table_the_steps_and_the_json_behind_a_toggle(researcher):
    page = item_page(researcher, trance(), "1")
    shown, truth = section(page, "shown"), section(page, "truth")
    assert "<th>Colour</th><th>Material</th><th>Shape</th><th>Size</th><th>Position (x, y)</th>" in shown
    assert "<td>2</td><td>blue</td><td>glass</td><td>cube</td><td>medium</td><td>(-20, 26)</td>" in shown
    assert "object 2: color → cyan" in truth and "object 2: position → behind 2 (inner)" in truth
    assert (
        "<td>2</td><td>medium blue glass cube at (-20, 26)</td><td>medium cyan glass cube at (0, 26)</td>"
        in truth
    )
    raw = re.search(r'<details id="raw-json">(.*?)</details>', page, re.S).group(1)
    assert '<pre id="payload">' in raw and '<pre id="ground-truth">' in raw and '"transformations"' in raw
    assert "transformations" not in shown


def test_an_stevqa_item_lists_its_questions_and_their_answers_with_evidence(researcher):
    dataset = import_dataset(benchmark="stevqa", data=orjson.dumps(builders.stevqa_questions()), name="gt")
    page = item_page(researcher, dataset, "1")
    shown, truth = section(page, "shown"), section(page, "truth")
    assert "<td>1</td><td>这家店的名字是什么?</td>" in shown and "華為專賣店" not in shown
    assert "<td>華為專賣店</td><td>(53, 680) (50, 727) (415, 711) (414, 661)</td>" in truth


def test_a_cric_item_names_the_answer_its_object_and_the_program(researcher):
    dataset = import_dataset(
        benchmark="cric",
        data=orjson.dumps(builders.cric_questions()),
        name="cric",
        scenes_data=orjson.dumps(builders.cric_scenes()),
    )
    page = item_page(researcher, dataset, "q1")
    shown, truth = section(page, "shown"), section(page, "truth")
    assert "<dt>Question</dt><dd>What is the object on the table used for?</dd>" in shown
    assert "<dt>Question type</dt><dd>QueryObjKG</dd>" in shown and "cutting" not in shown.replace(
        "used for", ""
    )
    assert "<dt>Answer</dt><dd>cutting</dd>" in truth and "<dt>About</dt><dd>knife 17</dd>" in truth
    assert "<li>Relate Reverse on → knife 17</li>" in truth
    assert "<li>knife 17 on thing 11</li>" in truth and "<li>knife UsedFor cutting</li>" in truth


def test_a_clevrref_item_describes_the_objects_referred_to(researcher):
    dataset = import_dataset(
        benchmark="clevrref",
        data=orjson.dumps(builders.clevrref_document()),
        name="refs",
        scenes_data=orjson.dumps(builders.clevrref_scenes()),
    )
    page = item_page(researcher, dataset, "1")
    shown, truth = section(page, "shown"), section(page, "truth")
    assert "<dt>Expression</dt><dd>the large things</dd>" in shown and "object 0" not in shown
    assert (
        "<dt>Refers to</dt><dd>object 0 (large red rubber cube), object 2 (large yellow rubber cylinder)</dd>"
        in truth
    )
    assert "<dt>Category</dt><dd>0-Relate</dd>" in truth and "<li>filter_size large → 0, 2</li>" in truth


def test_a_benchmark_that_says_nothing_more_shows_each_field(researcher):
    from benchmarks.spec import BenchmarkSpec, ItemSection, as_text, plain_facts

    facts = plain_facts({"question": "How many?", "image_id": 3, "boxes": [[1, 2], [3, 4]]})
    assert facts == (("question", "How many?"), ("image id", "3"), ("boxes", "[[1, 2], [3, 4]]"))
    assert as_text(list(range(200))).endswith("… (the whole value is in the JSON)")
    assert BenchmarkSpec().truth_sections({}, {"answer": "4"}, None) == [
        ItemSection(facts=(("answer", "4"),))
    ]
