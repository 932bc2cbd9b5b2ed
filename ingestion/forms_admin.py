"""Staff forms of the admin: a source's settings, checked as the poller will read them; a
question's resolution change, every change a new version."""

from __future__ import annotations

import json
from typing import Any

from django import forms
from django.contrib.auth.models import User
from django.core.exceptions import ValidationError

from ingestion.models import Question, Resolution, Source
from ingestion.question_data import validate_outcome
from ingestion.services.questions import question_annul, question_resolve, question_unresolve
from ingestion.services.sources import source_validate


class SourceAdminForm(forms.ModelForm):
    """The admin's source form, refusing what ``add_source`` refuses (an unknown or badly typed
    option, a URL that is not http(s), a non-positive interval) on the field it concerns."""

    # A URL typed without a scheme is taken as https (Django 6's default), never plain http.
    url = forms.URLField(assume_scheme="https", max_length=Source._meta.get_field("url").max_length)

    class Meta:
        model = Source
        fields = ("name", "kind", "url", "options", "poll_interval", "enabled", "next_attempt_at")

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        checked = ("kind", "url", "options", "poll_interval")
        if any(name in self.errors for name in checked):
            # A field Django already refused is reported once, by Django.
            return data
        if self.instance.pk is not None and self.instance.kind == data.get("kind") == Source.Kind.ARCHIVE:
            # An imported archive is never polled: its name and options (attribution) are free to edit.
            return data
        try:
            source_validate(
                kind=data.get("kind") or "",
                url=data.get("url") or "",
                options=data.get("options"),
                poll_interval=data.get("poll_interval"),
            )
        except ValidationError as exc:
            for name, messages in exc.message_dict.items():
                self.add_error(name if name in self.fields else None, messages)
        return data


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
