"""Staff form for changing a question's resolution; every change is a new version."""

from __future__ import annotations

import json
from typing import Any

from django import forms
from django.contrib.auth.models import User
from django.core.exceptions import ValidationError

from ingestion.models import Question, Resolution
from ingestion.services.questions import question_annul, question_resolve, question_unresolve, validate_outcome


class ResolutionChangeForm(forms.Form):
    ACTIONS = (("resolve", "Resolve or amend"), ("unresolve", "Un-resolve"), ("annul", "Annul"))

    action = forms.ChoiceField(choices=ACTIONS)
    outcome = forms.CharField(
        required=False,
        help_text='JSON: binary true/false; multiple choice "Option"; quantity 12.5; timeframe "2026-Q3"; '
        'relation {"relations": {"04": ["042"]}}; open-ended ["event", ...] or "answer".',
    )
    resolved_at = forms.DateTimeField(required=False, help_text="When the outcome became known (UTC); default now.")
    provisional = forms.BooleanField(required=False)
    note = forms.CharField(required=False, widget=forms.Textarea, help_text="Required when annulling: the reason.")

    def __init__(self, *args: Any, question: Question, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.question = question

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        action = data.get("action")
        if action == "resolve":
            raw = data.get("outcome") or ""
            try:
                outcome = json.loads(raw)
            except json.JSONDecodeError:
                self.add_error("outcome", 'Give the outcome as JSON, e.g. true or "Option A".')
                return data
            try:
                data["outcome_value"] = validate_outcome(question=self.question, outcome=outcome)
            except ValidationError as exc:
                self.add_error("outcome", " ".join(exc.messages))
        if action == "annul" and not (data.get("note") or "").strip():
            self.add_error("note", "Give the reason for annulling.")
        return data

    def apply(self, *, author: User) -> Resolution | None:
        data = self.cleaned_data
        if data["action"] == "resolve":
            return question_resolve(
                question=self.question,
                outcome=data["outcome_value"],
                resolved_at=data.get("resolved_at"),
                provisional=data.get("provisional", False),
                note=data.get("note", ""),
                author=author,
                author_label="staff",
            )
        if data["action"] == "unresolve":
            return question_unresolve(
                question=self.question, note=data.get("note", ""), author=author, author_label="staff"
            )
        return question_annul(question=self.question, reason=data["note"], author=author, author_label="staff")
