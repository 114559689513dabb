"""STE-VQA's prompt and parser for served chat models: the unit's question asked, the answer's
text read through the chatter around it, an empty reply counted as unparsed (answer "")."""

import pytest

from inference.plugins import ModelInput
from inference.served import Unparsed
from plugins.stevqa.served import SteVqaServed
from plugins.stevqa.spec import SPEC

FORMAT = SteVqaServed()
TEST_ITEM = ModelInput(
    "17", "", {"question_id": 17, "question": "What is the shop's name?"}, {"image": "/x/a.jpg"}
)
TRAINING_ITEM = ModelInput(
    "5",
    "",
    {"id": 2, "image": "b.jpg", "questions": ["What brand?", "多少钱?"], "question_ids": [4, 5]},
    {"image": "/x/b.jpg"},
)


def test_the_prompt_asks_the_unit_s_own_question_with_its_image():
    text, roles = FORMAT.prompt(TEST_ITEM)
    assert text.endswith("Question: What is the shop's name?") and roles == ["image"]
    text, _ = FORMAT.prompt(TRAINING_ITEM)  # an image with several questions: this unit's one
    assert text.endswith("Question: 多少钱?")


@pytest.mark.parametrize(
    ("reply", "answer"),
    [
        ("STARBUCKS", "STARBUCKS"),
        ('The answer is: "Starbucks Coffee".', "Starbucks Coffee"),
        ("Looking at the sign above the door.\nAnswer: 星巴克", "星巴克"),
        ("答案：十五元。", "十五元"),
        ("**Answer:** 7-Eleven", "7-Eleven"),
    ],
)
def test_the_parser_reads_the_answer_through_the_chatter(reply, answer):
    prediction = FORMAT.parse(reply, TEST_ITEM)
    assert prediction == {"question_id": 17, "answer": answer}
    assert SPEC.read_predictions(SPEC.write_predictions([("17", prediction)])) == {
        "17": {"answer": answer, "evidence": None}  # answer-only: scored for TC
    }


@pytest.mark.parametrize("reply", ["", "   \n ", '""', "```\n```"])
def test_an_empty_reply_is_unparsed_and_answered_with_nothing(reply):
    with pytest.raises(Unparsed):
        FORMAT.parse(reply, TEST_ITEM)
    assert FORMAT.unparsed(TEST_ITEM) == {"question_id": 17, "answer": ""}
