"""The endpoint section of an agent's page: register, change, pause, rotate, remove, deliver now.

Members of the agent's team manage it; staff may read the page (the section renders through
``endpoints.templatetags.endpoint_tags``). The secret is rendered once, in the response that
created it, never stored in the clear.
"""

from __future__ import annotations

from django import forms
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied, ValidationError
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_POST

from common.forms import error_sentence, field_name
from endpoints.forms import DeliveryRequestForm, EndpointForm
from endpoints.models import AgentEndpoint
from endpoints.selectors import endpoint_for_agent
from endpoints.services.deliveries import delivery_request
from endpoints.services.registration import (
    IssuedSecret,
    endpoint_pause,
    endpoint_register,
    endpoint_remove,
    endpoint_resume,
    endpoint_rotate_secret,
    endpoint_update,
)
from endpoints.tasks import dispatch_deliveries
from leaderboard.models import Agent
from leaderboard.selectors.teams import membership_get, team_visible_to
from leaderboard.services.errors import ServiceError


def _managed_agent(request: HttpRequest, slug: str, agent_slug: str) -> Agent:
    """The agent, if the user is a member of its team (404 for teams the user cannot see)."""
    team = get_object_or_404(team_visible_to(user=request.user).distinct(), slug=slug)
    if membership_get(team=team, user=request.user) is None:
        raise PermissionDenied("Only members of this team can do that.")
    return get_object_or_404(Agent, team=team, slug=agent_slug)


def _endpoint(agent: Agent) -> AgentEndpoint:
    endpoint = endpoint_for_agent(agent=agent)
    if endpoint is None:
        raise Http404("This agent has no endpoint.")
    return endpoint


def _back(agent: Agent) -> HttpResponse:
    return redirect(reverse("leaderboard:agent_detail", args=[agent.team.slug, agent.slug]) + "#endpoint")


def _errors(request: HttpRequest, error: ValidationError | forms.Form) -> None:
    """Show a service's or a form's errors as messages on the agent page, each a sentence naming
    its field (a form's are already: ``NamedErrorsMixin``)."""
    if not isinstance(error, ValidationError):
        for errs in error.errors.values():
            for msg in errs:
                messages.error(request, str(msg))
        return
    form = EndpointForm()
    for field, msgs in error.message_dict.items():
        name = field_name(form, field) if field in form.fields else "The endpoint"
        for msg in msgs:
            messages.error(request, error_sentence(name, msg))


def _show_secret(request: HttpRequest, agent: Agent, issued: IssuedSecret, *, rotated: bool) -> HttpResponse:
    # Rendered directly (no redirect) so that the secret exists in this one response only.
    return render(
        request,
        "endpoints/secret_created.html",
        {"agent": agent, "team": agent.team, "issued": issued, "rotated": rotated},
    )


@never_cache
@login_required
@require_POST
def endpoint_register_view(request: HttpRequest, slug: str, agent_slug: str) -> HttpResponse:
    agent = _managed_agent(request, slug, agent_slug)
    form = EndpointForm(request.POST)
    if not form.is_valid():
        _errors(request, form)
        return _back(agent)
    try:
        issued = endpoint_register(agent=agent, created_by=request.user, **form.cleaned_data)  # type: ignore[arg-type]
    except ValidationError as exc:
        _errors(request, exc)
        return _back(agent)
    return _show_secret(request, agent, issued, rotated=False)


@login_required
@require_POST
def endpoint_update_view(request: HttpRequest, slug: str, agent_slug: str) -> HttpResponse:
    agent = _managed_agent(request, slug, agent_slug)
    endpoint = _endpoint(agent)
    form = EndpointForm(request.POST)
    if not form.is_valid():
        _errors(request, form)
        return _back(agent)
    try:
        endpoint_update(endpoint=endpoint, **form.cleaned_data)
    except ValidationError as exc:
        _errors(request, exc)
    else:
        messages.success(request, "Endpoint updated; the secret is unchanged.")
    return _back(agent)


@never_cache
@login_required
@require_POST
def endpoint_rotate_view(request: HttpRequest, slug: str, agent_slug: str) -> HttpResponse:
    agent = _managed_agent(request, slug, agent_slug)
    return _show_secret(request, agent, endpoint_rotate_secret(endpoint=_endpoint(agent)), rotated=True)


@login_required
@require_POST
def endpoint_pause_view(request: HttpRequest, slug: str, agent_slug: str) -> HttpResponse:
    agent = _managed_agent(request, slug, agent_slug)
    endpoint = _endpoint(agent)
    if request.POST.get("resume"):
        endpoint_resume(endpoint=endpoint)
        messages.success(request, "Endpoint resumed: new questions will be delivered again.")
    else:
        endpoint_pause(endpoint=endpoint)
        messages.success(request, "Endpoint paused: nothing is delivered; waiting deliveries were cancelled.")
    return _back(agent)


@login_required
@require_POST
def endpoint_remove_view(request: HttpRequest, slug: str, agent_slug: str) -> HttpResponse:
    agent = _managed_agent(request, slug, agent_slug)
    endpoint_remove(endpoint=_endpoint(agent))
    messages.success(request, "Endpoint removed with its secret; the delivery log stays.")
    return _back(agent)


@login_required
@require_POST
def delivery_request_view(request: HttpRequest, slug: str, agent_slug: str) -> HttpResponse:
    agent = _managed_agent(request, slug, agent_slug)
    form = DeliveryRequestForm(request.POST)
    if not form.is_valid():
        _errors(request, form)
        return _back(agent)
    try:
        delivery, created = delivery_request(
            agent=agent,
            question_id=form.cleaned_data["question"],
            requested_by=request.user,  # type: ignore[arg-type]
        )
    except ServiceError as exc:
        messages.error(request, error_sentence("The question", exc.message))
        return _back(agent)
    if created:
        dispatch_deliveries([delivery.pk])
        messages.success(request, f"Question {delivery.question_id} queued for delivery {delivery.pk}.")
    else:
        messages.info(request, f"Question {delivery.question_id} is already being delivered ({delivery.pk}).")
    return _back(agent)
