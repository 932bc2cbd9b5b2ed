"""Request parsers for the API."""

from __future__ import annotations

from rest_framework.parsers import JSONParser


class NonFiniteTolerantJSONParser(JSONParser):
    """Reads NaN and Infinity (Python's json.dumps writes them) so that validation can name the field.

    Strict parsing would answer a bare "JSON parse error" without saying which field held the value;
    every numeric field of an API body is checked for finiteness by its validator instead.
    Responses are still rendered as strict JSON.
    """

    strict = False
