"""{% question_generation_status %}: one line saying whether LLM question generation is on."""

from __future__ import annotations

from typing import Any

from django import template

from ingestion.services.question_generation import generation_status

register = template.Library()


@register.inclusion_tag("ingestion/_generation_status.html", takes_context=True)
def question_generation_status(context: template.Context) -> dict[str, Any]:
    return {"generation": generation_status(), "user": context.get("user")}
