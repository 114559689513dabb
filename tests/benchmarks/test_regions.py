"""Ground-truth regions drawn over an item's image on the researcher's item page."""

from benchmarks import registry
from tests.benchmarks import builders


def regions(benchmark, ground_truth, scene):
    return [region.as_dict() for region in registry.get(benchmark).regions(ground_truth, scene)]


def test_stevqa_regions_are_the_evidence_quadrilaterals():
    ground_truth = {
        "annotation": [
            {"question": "q", "answer": "华为", "evidence": ["1", "2", "30", "2", "30", "20", "1", "20"]}
        ]
    }
    assert regions("stevqa", ground_truth, None) == [
        {"label": "华为", "points": [[1.0, 2.0], [30.0, 2.0], [30.0, 20.0], [1.0, 20.0]]}
    ]
    assert registry.get("stevqa").region_kind == "quadrilateral"


def test_cric_regions_are_the_target_boxes_from_the_scene_graph():
    question, scene = builders.cric_questions()[0], builders.cric_scenes()[0]
    assert regions("cric", question, scene) == [
        {"label": "knife", "points": [[10, 20], [40, 20], [40, 60], [10, 60]]}
    ]
    assert regions("cric", {"target": []}, scene) == []
    assert regions("cric", question, None) == []


def test_clevrref_regions_are_the_referred_objects_boxes():
    refexp = builders.clevrref_document()["refexps"][1]
    found = regions("clevrref", refexp, builders.clevrref_scene())
    assert [region["label"] for region in found] == ["object 0", "object 2"]
    assert found[1]["points"][0] == [280, 170]


def test_trance_items_have_no_regions():
    assert regions("trance", builders.trance_sample(), None) == []
