"""The per-stage record of an LLM job as staff see it in the admin."""

from __future__ import annotations

from typing import Any

from django.utils.html import format_html, format_html_join
from django.utils.safestring import SafeString

_COLUMNS = (
    "Stage",
    "Calls",
    "Prompt tokens",
    "Answer tokens",
    "Seconds",
    "Limits",
    "JSON via",
    "Valid 1st try",
    "Outcome",
)


def _valid(value: Any) -> str:
    return "—" if value is None else ("yes" if value else "no")


def stages_table(stages: Any) -> SafeString:
    """An HTML table of stage records (``LLMClient.stages()``), or a dash when there are none."""
    if not isinstance(stages, list) or not stages:
        return format_html("{}", "—")
    rows = format_html_join(
        "",
        "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{} tokens / {} s</td>"
        "<td>{}</td><td>{}</td><td>{}</td></tr>",
        (
            (
                s.get("stage", ""),
                s.get("calls", 0),
                s.get("prompt_tokens", 0),
                s.get("completion_tokens", 0),
                s.get("seconds", 0),
                s.get("max_output_tokens", ""),
                s.get("budget_seconds", ""),
                s.get("structured_output") or "—",
                _valid(s.get("valid_first_try")),
                s.get("outcome", ""),
            )
            for s in stages
            if isinstance(s, dict)
        ),
    )
    head = format_html_join("", "<th>{}</th>", ((c,) for c in _COLUMNS))
    return format_html('<table class="llm-stages"><thead><tr>{}</tr></thead><tbody>{}</tbody></table>', head, rows)
