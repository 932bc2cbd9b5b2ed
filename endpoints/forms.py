"""Forms of the agent page's endpoint section; every rule lives in the services."""

from __future__ import annotations

from typing import Any

from django import forms
from django.conf import settings

from common.forms import NamedErrorsMixin


class EndpointForm(NamedErrorsMixin, forms.Form):
    url = forms.CharField(
        max_length=2000,
        label="Endpoint URL",
        widget=forms.URLInput(attrs={"placeholder": "https://agent.example.org/hindsight", "size": 50}),
        help_text="The platform POSTs questions here (https; signed with the endpoint's secret).",
    )
    max_concurrency = forms.IntegerField(
        label="Deliveries at once", min_value=1, help_text="How many questions may be in flight to your agent at once."
    )
    offer_live = forms.BooleanField(
        required=False, initial=True, label="Deliver live questions when they open", help_text=""
    )

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        field = self.fields["max_concurrency"]
        assert isinstance(field, forms.IntegerField)
        field.max_value = settings.HINDSIGHT_DELIVERY_MAX_CONCURRENCY
        field.initial = settings.HINDSIGHT_DELIVERY_CONCURRENCY
        field.widget.attrs.update(min=1, max=settings.HINDSIGHT_DELIVERY_MAX_CONCURRENCY)


class DeliveryRequestForm(NamedErrorsMixin, forms.Form):
    question = forms.IntegerField(
        min_value=1, label="Question id", help_text="A replay question (or a live one taking forecasts)."
    )
