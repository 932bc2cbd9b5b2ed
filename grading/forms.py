"""Forms of the hindsight review pages; the rules themselves live in grading.review_services.event_review."""

from __future__ import annotations

from django import forms

from common.forms import NamedErrorsMixin
from grading.models import EventReview, OutcomeImpact


class EventReviewForm(NamedErrorsMixin, forms.Form):
    event = forms.IntegerField(widget=forms.HiddenInput)
    decision = forms.ChoiceField(choices=EventReview.Decision.choices, widget=forms.RadioSelect)
    reason = forms.ChoiceField(
        choices=[("", "— reject reason —"), *EventReview.RejectReason.choices],
        required=False,
        help_text="Required when rejecting (WorldReasoner, Appendix C).",
    )
    revised_title = forms.CharField(max_length=500, required=False)
    revised_date = forms.DateField(required=False, widget=forms.DateInput(attrs={"type": "date"}))
    note = forms.CharField(required=False, widget=forms.Textarea(attrs={"rows": 2}))


class EventAddForm(NamedErrorsMixin, forms.Form):
    """Add an archive item the builder missed (rules in grading.review_services.hindsight_event_add)."""

    article = forms.IntegerField(widget=forms.HiddenInput)
    direction = forms.ChoiceField(choices=OutcomeImpact.Direction.choices)
    note = forms.CharField(required=False, max_length=1000)
    find = forms.CharField(required=False, widget=forms.HiddenInput)
