"""Reading the JSON object out of a model's answer, as every structured-output method returns it."""

from __future__ import annotations

from ingestion.llm.jsontext import parse_json_object


def test_plain_json_object() -> None:
    assert parse_json_object('{"ok": true}') == ({"ok": True}, "")


def test_code_fence_and_prose_around_the_object_are_tolerated() -> None:
    fenced = 'Here is the graph:\n```json\n{"events": [], "links": []}\n```\nHope it helps.'
    assert parse_json_object(fenced)[0] == {"events": [], "links": []}
    prose = 'Sure! {"questions": [{"title": "Will it rain?"}]} Let me know.'
    assert parse_json_object(prose)[0] == {"questions": [{"title": "Will it rain?"}]}


def test_problems_name_what_is_wrong() -> None:
    assert parse_json_object("{not json") == (None, parse_json_object("{not json")[1])
    assert "not valid JSON" in parse_json_object("{not json")[1]
    assert "JSON object, not list" in parse_json_object("[1, 2]")[1]
    assert parse_json_object("   ")[1] == "The answer is empty."
    assert parse_json_object(None)[1] == "The answer is empty."
    # A cut-off answer (the token limit hit mid-object) is not JSON.
    assert "not valid JSON" in parse_json_object('{"events": [{"id": "e1", "title": "Par')[1]
