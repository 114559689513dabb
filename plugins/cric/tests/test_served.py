"""CRIC's prompt and parser for served chat models: a short answer, yes or no for verify
questions, no grounding (object null); a reply that cannot be read is unparsed (answer "")."""

import pytest

from inference.plugins import ModelInput
from inference.served import Unparsed
from plugins.cric.served import CricServed
from plugins.cric.spec import SPEC

FORMAT = CricServed()


def item(question_type: str) -> ModelInput:
    payload = {
        "image_id": 3,
        "question_id": "q7",
        "question": "What is on the table?",
        "question_type": question_type,
    }
    return ModelInput("q7", "", payload, {"image": "/x/3.jpg"})


def test_the_prompt_asks_the_question_and_says_yes_or_no_for_a_verify_question():
    text, roles = FORMAT.prompt(item("QueryObjSG"))
    assert text.endswith("Question: What is on the table?") and roles == ["image"] and "yes or no" not in text
    assert "yes or no" in FORMAT.prompt(item("VerifyKG"))[0]


@pytest.mark.parametrize(
    ("question_type", "reply", "answer"),
    [
        ("QueryObjSG", "cup", "cup"),
        ("QueryObjSG", "It looks like a cup.\nAnswer: A cup.", "cup"),
        ("QueryAtt", '"Red"', "red"),
        ("VerifyKG", "Yes, the knife can be used to cut.", "yes"),
        ("VerifyAtt", "**No**", "no"),
    ],
)
def test_the_parser_reads_a_short_answer_through_the_chatter(question_type, reply, answer):
    prediction = FORMAT.parse(reply, item(question_type))
    assert prediction == {"question_id": "q7", "answer": answer, "object": None}
    read = SPEC.read_predictions(SPEC.write_predictions([("q7", prediction)]))
    assert read["q7"]["answer"] == answer and read["q7"]["object"] is None


@pytest.mark.parametrize(
    ("question_type", "reply"),
    [("QueryObjSG", ""), ("VerifyKG", "It is hard to say."), ("VerifyAtt", "maybe")],
)
def test_garbage_is_unparsed_and_answered_with_nothing(question_type, reply):
    with pytest.raises(Unparsed):
        FORMAT.parse(reply, item(question_type))
    assert FORMAT.unparsed(item(question_type)) == {"question_id": "q7", "answer": "", "object": None}
