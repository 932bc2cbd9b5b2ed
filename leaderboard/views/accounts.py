"""Sign-up, the signed-in user's dashboard, and the password reset request."""

from __future__ import annotations

import logging
import smtplib
from typing import Any

from django.conf import settings
from django.contrib.auth import login
from django.contrib.auth import views as auth_views
from django.contrib.auth.decorators import login_required
from django.contrib.auth.forms import PasswordResetForm
from django.core.mail import EmailMultiAlternatives, get_connection
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.template import loader

from leaderboard.forms import SignupForm
from leaderboard.selectors.teams import agent_list_for_user, team_list_for_user

logger = logging.getLogger(__name__)


def signup(request: HttpRequest) -> HttpResponse:
    if request.user.is_authenticated:
        return redirect("leaderboard:dashboard")
    form = SignupForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        user = form.save()
        login(request, user, backend="django.contrib.auth.backends.ModelBackend")
        return redirect("leaderboard:dashboard")
    return render(request, "registration/signup.html", {"form": form})


@login_required
def dashboard(request: HttpRequest) -> HttpResponse:
    teams = team_list_for_user(user=request.user)
    agents = agent_list_for_user(user=request.user)
    return render(request, "leaderboard/dashboard.html", {"teams": teams, "agents": agents})


# ------------------------------------------------------------------------------------ password reset


def email_delivery() -> str:
    """How this site delivers e-mail: ``none`` (production without a mail server), ``console`` (the
    embedded default writes messages to the server's console) or ``mail``."""
    backend = settings.EMAIL_BACKEND
    if backend.endswith(".dummy.EmailBackend"):
        return "none"
    if backend.endswith(".console.EmailBackend"):
        return "console"
    return "mail"


class _ResetForm(PasswordResetForm):
    """Django's form, except that a message the mail server refuses is an error, not only a log line."""

    connection: Any = None

    def send_mail(
        self,
        subject_template_name: str,
        email_template_name: str,
        context: dict[str, Any],
        from_email: str | None,
        to_email: str,
        html_email_template_name: str | None = None,
    ) -> None:
        subject = "".join(loader.render_to_string(subject_template_name, context).splitlines())
        body = loader.render_to_string(email_template_name, context)
        message = EmailMultiAlternatives(subject, body, from_email, [to_email], connection=self.connection)
        if html_email_template_name is not None:
            message.attach_alternative(loader.render_to_string(html_email_template_name, context), "text/html")
        message.send()


SEND_FAILED = (
    "We could not send the e-mail: the mail server is not answering or refused the message. Nothing "
    "was changed. Try again in a few minutes, or ask the site's staff to reset your password."
)
NO_EMAIL = "This site sends no e-mail, so passwords cannot be reset here: ask the site's staff to reset yours."


class PasswordResetView(auth_views.PasswordResetView):
    """The reset request page, which tells the truth about sending.

    The mail server is reached before any account is looked up, so a server that is down answers
    the same for every address (saying nothing about which are registered).
    """

    form_class = _ResetForm

    def get_context_data(self, **kwargs: Any) -> dict[str, Any]:
        return {**super().get_context_data(**kwargs), "delivery": email_delivery()}

    def form_valid(self, form: _ResetForm) -> HttpResponse:  # type: ignore[override]
        if email_delivery() == "none":
            form.add_error(None, NO_EMAIL)
            return self.render_to_response(self.get_context_data(form=form), status=503)
        try:
            with get_connection() as connection:
                form.connection = connection
                return super().form_valid(form)
        except (smtplib.SMTPException, OSError) as exc:
            logger.warning("password reset e-mail not sent: %s: %s", type(exc).__name__, exc)
            form.add_error(None, SEND_FAILED)
            return self.render_to_response(self.get_context_data(form=form), status=503)


class PasswordResetDoneView(auth_views.PasswordResetDoneView):
    def get_context_data(self, **kwargs: Any) -> dict[str, Any]:
        return {**super().get_context_data(**kwargs), "delivery": email_delivery()}
