"""The input gate's rules one by one (accounts/inputs.py): what passes, what is refused, which field."""

import pytest
from django.http import HttpResponse

from accounts import inputs
from accounts.inputs import InputRefused


def refusal(raw: bytes, **options) -> InputRefused:
    with pytest.raises(InputRefused) as refused:
        inputs.read_json(raw, **options)
    return refused.value


def test_a_json_body_passes_with_its_text_kept_as_written():
    body = '{"pairs": [{"question": "这是什么？ $x$ <b>", "evidence": [1, 2.5, -3]}], "emoji": "😀"}'
    assert inputs.read_json(body.encode()) == {
        "pairs": [{"question": "这是什么？ $x$ <b>", "evidence": [1, 2.5, -3]}],
        "emoji": "😀",
    }
    assert inputs.read_json(b"") == {}  # an empty body is an empty object


@pytest.mark.parametrize(
    ("raw", "field", "words"),
    [
        (b'{"draft": {"zoom": NaN}}', "body", "not JSON"),
        (b'{"draft": {"zoom": 1e400}}', "draft.zoom", "finite"),
        (b'{"seed": 18446744073709551616}', "seed", "out of range"),
        (b'{"seed": 9223372036854775808}', "seed", "out of range"),
        (b'{"a": [1, {"b": ' + b"1" * 400 + b"}]}", "a[1].b", "out of range"),
        (b'{"reason": "\\ud800"}', "body", "surrogate"),
        (b'{"reason": "a\\u0000b"}', "reason", "NUL"),
        (b'{"pairs": [{"answer": "bell\\u0007"}]}', "pairs[0].answer", "control character"),
        (b'{"bell\\u0007": 1}', "body (a key)", "control character"),
        (b'{"a": ' * 17 + b"1" + b"}" * 17, "a" + ".a" * 15, "nested more than 16"),
        (b"[" * 5000 + b"]" * 5000, "body", "nested more than 16"),
        (b"[1, 2]", "body", "expected a JSON object"),
        (b"\xff\xfe", "body", "not JSON"),
    ],
)
def test_what_a_body_may_not_hold_is_refused_naming_where(raw, field, words):
    refused = refusal(raw)
    assert refused.field == field and words in refused.message


def test_a_body_over_its_endpoints_limit_is_refused_before_it_is_read():
    refused = refusal(b'{"a": "' + b"x" * 300 + b'"}', max_bytes=100)
    assert refused.field == "body" and "larger than 100 bytes" in refused.message


def test_text_and_names():
    assert inputs.text("  two\nlines\ttabbed  ", "note", max_length=50) == "two\nlines\ttabbed"
    assert inputs.text(None, "note", max_length=5) == ""
    for value, words in (("x" * 6, "at most 5"), (3, "expected text"), ("a\x1bb", "control")):
        with pytest.raises(InputRefused, match=words):
            inputs.text(value, "note", max_length=5)
    with pytest.raises(InputRefused, match="cannot be empty"):
        inputs.text("   ", "reason", max_length=5, required=True)
    assert inputs.name("  مرحبا · שלום · 中文 · $x$ ") == "مرحبا · שלום · 中文 · $x$"
    for value in ("a\nb", "a\r\nb", "a\u2028b"):
        with pytest.raises(InputRefused, match="one line"):
            inputs.name(value)
    with pytest.raises(InputRefused, match="control character"):
        inputs.name("a\tb")
    with pytest.raises(InputRefused, match="text-direction"):
        inputs.name("\u202eexe.txt")


def test_integers_and_ids():
    assert inputs.integer(5, "seed", minimum=0, maximum=9) == 5
    for value in (True, 2.0, "5", 10):
        with pytest.raises(InputRefused):
            inputs.integer(value, "seed", minimum=0, maximum=9)
    assert inputs.integers([" 3", "-4 ", "+5"], "items") == [3, -4, 5]
    for parts in (["1", "x"], [str(2**64)], ["1" * 40]):
        with pytest.raises(InputRefused, match="is not an id"):
            inputs.integers(parts, "items")


def test_download_names_are_one_clean_line_whatever_the_name():
    response = inputs.attachment(HttpResponse(), 'report-cric-two\r\nlines "quoted"/x\x00.csv')
    header = response["Content-Disposition"]
    assert header == 'attachment; filename="report-cric-two lines _quoted__x.csv"'
    assert inputs.attachment(HttpResponse(), "报告.csv")["Content-Disposition"] == (
        "attachment; filename*=utf-8''%E6%8A%A5%E5%91%8A.csv"
    )
    assert (
        inputs.attachment(HttpResponse(), "\n\n.csv")["Content-Disposition"]
        == 'attachment; filename="download.csv"'
    )


def test_lone_surrogates_become_replacement_characters_and_pairs_stay():
    value = {"a\udc80": ["caf\udce9", "😀", 1, None]}
    assert inputs.without_lone_surrogates(value) == {"a\ufffd": ["caf\ufffd", "😀", 1, None]}
