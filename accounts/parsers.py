"""The API's JSON parser: DRF's, through the input gate (accounts/inputs.py)."""

from __future__ import annotations

from rest_framework.exceptions import ParseError
from rest_framework.parsers import BaseParser

from accounts.inputs import MAX_BODY_BYTES, InputRefused, read_json


class GatedJSONParser(BaseParser):
    """DRF's JSON parser, through the gate: a deep, non-finite, out-of-range or non-Unicode body is
    a 400 naming where it is (DRF's own parser let a deep body raise RecursionError: a 500)."""

    media_type = "application/json"

    def parse(self, stream, media_type=None, parser_context=None):
        try:
            raw = stream.read() if stream is not None else b""
        except Exception as error:  # a body larger than DATA_UPLOAD_MAX_MEMORY_SIZE, a cut connection
            raise ParseError(str(error)) from None
        try:
            return read_json(raw, max_bytes=10 * MAX_BODY_BYTES, expect=None)
        except InputRefused as refused:
            raise ParseError({refused.field: [refused.message]}) from None
