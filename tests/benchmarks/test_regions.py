"""Ground-truth regions drawn over an item's image on the researcher's item page."""

from benchmarks.regions import item_regions
from tests.benchmarks import builders


def test_stevqa_regions_are_the_evidence_quadrilaterals():
    ground_truth = {
        "annotation": [
            {"question": "q", "answer": "华为", "evidence": ["1", "2", "30", "2", "30", "20", "1", "20"]}
        ]
    }
    assert item_regions("stevqa", ground_truth, None) == [
        {"label": "华为", "points": [[1.0, 2.0], [30.0, 2.0], [30.0, 20.0], [1.0, 20.0]]}
    ]


def test_cric_regions_are_the_target_boxes_from_the_scene_graph():
    question, scene = builders.cric_questions()[0], builders.cric_scenes()[0]
    regions = item_regions("cric", question, scene)
    assert regions == [{"label": "knife", "points": [[10, 20], [40, 20], [40, 60], [10, 60]]}]
    assert item_regions("cric", {"target": []}, scene) == []


def test_clevrref_regions_are_the_referred_objects_boxes():
    refexp = builders.clevrref_document()["refexps"][1]
    regions = item_regions("clevrref", refexp, builders.clevrref_scene())
    assert [region["label"] for region in regions] == ["object 0", "object 2"]
    assert regions[1]["points"][0] == [280, 170]
