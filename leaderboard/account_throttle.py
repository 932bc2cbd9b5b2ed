"""Log-in lockout and limits on the account forms, counted in the cache like the API's rate limit.

- Log-in (the site's and the admin's): after ``HINDSIGHT_LOGIN_FAILURES_PER_USER`` failed attempts
  for one username, or ``HINDSIGHT_LOGIN_FAILURES_PER_ADDRESS`` from one client address, within a
  window of ``HINDSIGHT_LOGIN_LOCKOUT_SECONDS``, further attempts are refused until the window ends,
  even with the right password. A successful log-in clears its username's count.
- Sign-up and password reset: ``HINDSIGHT_ACCOUNT_FORMS_PER_HOUR`` submissions per client address
  (password reset: also per e-mail address, so that nobody's inbox can be flooded).

A refused request gets a 429 page saying what was limited and for how long, with Retry-After.
"""

from __future__ import annotations

import hashlib
import logging
import math
from collections.abc import Callable
from typing import Any

from django.conf import settings
from django.contrib.auth.signals import user_logged_in, user_login_failed
from django.dispatch import receiver
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from leaderboard.throttling import (
    CACHE_DOWN_ERRORS,
    UNAVAILABLE_RETRY_AFTER_SECONDS,
    Window,
    cache_down,
    client_address,
    retry_after,
)

logger = logging.getLogger(__name__)

LOGIN_VIEWS = frozenset({"login", "admin:login"})
SIGNUP_VIEWS = frozenset({"leaderboard:signup"})
RESET_VIEWS = frozenset({"password_reset"})


def _login_windows() -> tuple[Window, Window]:
    seconds = max(1, int(settings.HINDSIGHT_LOGIN_LOCKOUT_SECONDS))
    return (
        Window("login-user", int(settings.HINDSIGHT_LOGIN_FAILURES_PER_USER), seconds),
        Window("login-address", int(settings.HINDSIGHT_LOGIN_FAILURES_PER_ADDRESS), seconds),
    )


def _form_window(name: str) -> Window:
    return Window(name, int(settings.HINDSIGHT_ACCOUNT_FORMS_PER_HOUR), 3600)


def _digest(value: str) -> str:
    """A fixed-length cache key part for a username or e-mail (any characters, any length)."""
    return hashlib.sha256(value.strip().casefold().encode("utf-8", "surrogatepass")).hexdigest()[:32]


def _in_words(seconds: float) -> str:
    minutes = math.ceil(seconds / 60)
    if seconds < 60:
        return f"{retry_after(seconds)} seconds"
    return "1 minute" if minutes == 1 else f"{minutes} minutes"


def _refusal(request: HttpRequest, *, status: int, wait: float, title: str, message: str) -> HttpResponse:
    context = {"title": title, "message": message, "wait": _in_words(wait)}
    response = render(request, "registration/throttled.html", context, status=status)
    response["Retry-After"] = str(retry_after(wait))
    return response


def _login_check(request: HttpRequest) -> tuple[float, str] | None:
    by_user, by_address = _login_windows()
    username = str(request.POST.get("username", ""))
    wait = by_user.exceeded(_digest(username))
    if wait is not None:
        return wait, f"Too many failed log-ins for the username “{username}”."
    wait = by_address.exceeded(client_address(request))
    if wait is not None:
        return wait, "Too many failed log-ins from your network address."
    return None


def _form_check(request: HttpRequest, view_name: str) -> tuple[float, str] | None:
    address = client_address(request)
    if view_name in SIGNUP_VIEWS:
        wait = _form_window("signup-address").hit(address)
        return None if wait is None else (wait, "Too many sign-ups from your network address.")
    wait = _form_window("reset-address").hit(address)
    if wait is not None:
        return wait, "Too many password-reset requests from your network address."
    email = str(request.POST.get("email", ""))
    wait = _form_window("reset-email").hit(_digest(email)) if email else None
    return None if wait is None else (wait, "Too many password-reset requests for this e-mail address.")


class AccountThrottleMiddleware:
    """Refuses log-in, sign-up and password-reset submissions over their limits (see the module)."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        return self.get_response(request)

    def process_view(self, request: HttpRequest, view: Any, args: Any, kwargs: Any) -> HttpResponse | None:
        match = request.resolver_match
        name = match.view_name if match is not None else ""
        if request.method != "POST" or name not in LOGIN_VIEWS | SIGNUP_VIEWS | RESET_VIEWS:
            return None
        try:
            refused = _login_check(request) if name in LOGIN_VIEWS else _form_check(request, name)
        except CACHE_DOWN_ERRORS:
            if cache_down("checking an account form's limit"):
                return None
            return _refusal(
                request,
                status=503,
                wait=UNAVAILABLE_RETRY_AFTER_SECONDS,
                title="Temporarily unavailable",
                message="The server cannot check this form's limits right now.",
            )
        if refused is None:
            return None
        wait, reason = refused
        return _refusal(request, status=429, wait=wait, title="Too many attempts", message=reason)


@receiver(user_login_failed, dispatch_uid="leaderboard.account_throttle.login_failed")
def _count_login_failure(
    sender: Any, credentials: dict[str, Any], request: HttpRequest | None = None, **_: Any
) -> None:
    if request is None:
        return
    by_user, by_address = _login_windows()
    try:
        by_user.hit(_digest(str(credentials.get("username", ""))))
        by_address.hit(client_address(request))
    except CACHE_DOWN_ERRORS:
        logger.warning("cache unreachable: a failed log-in was not counted")


@receiver(user_logged_in, dispatch_uid="leaderboard.account_throttle.logged_in")
def _clear_login_failures(sender: Any, request: HttpRequest | None, user: Any, **_: Any) -> None:
    if request is None or request.method != "POST":
        return
    try:
        _login_windows()[0].forget(_digest(str(user.get_username())))
    except CACHE_DOWN_ERRORS:
        logger.warning("cache unreachable: a successful log-in did not clear its failure count")
