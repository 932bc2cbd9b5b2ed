"""Staff pages of the ingestion app."""

from __future__ import annotations

from collections.abc import Callable
from functools import wraps
from typing import Any

from django.contrib.auth.views import redirect_to_login
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.utils import timezone

from ingestion.selectors.sources import source_status_list


def staff_only(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
    """Anonymous visitors go to the login page; signed-in non-staff get 403 rather than a login
    loop they cannot get out of."""

    @wraps(view)
    def wrapped(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        if not request.user.is_authenticated:
            return redirect_to_login(request.get_full_path())
        if not request.user.is_staff:
            raise PermissionDenied("Staff only.")
        return view(request, *args, **kwargs)

    return wrapped


@staff_only
def sources_status(request: HttpRequest) -> HttpResponse:
    sources = list(source_status_list())
    now = timezone.now()
    return render(
        request,
        "ingestion/sources_status.html",
        {
            "sources": sources,
            "now": now,
            "failing_count": sum(1 for s in sources if s.consecutive_failures),
            "disabled_count": sum(1 for s in sources if not s.enabled),
        },
    )
