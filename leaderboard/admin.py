"""Admin for teams, agents, tokens, forecasts and grades.

Forecasts, grades and cutoff changes are history: staff read them here but never edit or delete
them (a regrade adds a grade version; a forecast update adds a forecast). Tokens show their prefix
and use, never their hash; they are created on the team pages, where the key is shown once, and
revoked here or there. An agent saved here goes through the same service as the team pages, so a
cutoff change is recorded with the staff member who made it; an agent is retired here (an action)
or by a team owner, never deleted, so its forecasts and grades stay.
"""

from __future__ import annotations

from typing import Any

from django.contrib import admin, messages
from django.core.exceptions import ValidationError
from django.db.models import Count, QuerySet
from django.forms import ModelForm
from django.http import HttpRequest
from django.utils import timezone

from leaderboard.models import Agent, AgentCutoffChange, ApiToken, Forecast, Grade, Membership, Team
from leaderboard.services.teams import agent_retire, agent_update, token_revoke


class ReadOnlyAdmin(admin.ModelAdmin):
    """View-only: history is never edited or deleted from the admin."""

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


class ReadOnlyInline(admin.TabularInline):
    extra = 0
    can_delete = False
    show_change_link = True

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


class MembershipInline(admin.TabularInline):
    model = Membership
    extra = 0
    autocomplete_fields = ("user",)
    readonly_fields = ("joined_at",)


class AgentInline(ReadOnlyInline):
    model = Agent
    fields = ("name", "slug", "model_name", "knowledge_cutoff", "is_baseline")
    readonly_fields = fields


@admin.register(Team)
class TeamAdmin(admin.ModelAdmin):
    list_display = ("name", "slug", "members", "agents", "created_at")
    search_fields = ("name", "slug")
    readonly_fields = ("created_at",)
    prepopulated_fields = {"slug": ("name",)}
    inlines = (MembershipInline, AgentInline)

    def get_queryset(self, request: HttpRequest) -> QuerySet[Team]:
        return (
            super()
            .get_queryset(request)
            .annotate(n_members=Count("memberships", distinct=True), n_agents=Count("agents", distinct=True))
        )

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        # Deleting a team deletes its agents, with their forecasts and grades: retire them instead.
        # A team without agents (created by mistake) may go.
        return obj is not None and not obj.agents.exists() and super().has_delete_permission(request, obj)

    @admin.display(ordering="n_members")
    def members(self, obj: Any) -> int:
        return int(obj.n_members)

    @admin.display(ordering="n_agents")
    def agents(self, obj: Any) -> int:
        return int(obj.n_agents)


class TokenInline(ReadOnlyInline):
    model = ApiToken
    fields = ("prefix", "name", "issued_by", "created_by", "created_at", "last_used_at", "revoked_at")
    readonly_fields = fields
    show_change_link = False


class CutoffChangeInline(ReadOnlyInline):
    model = AgentCutoffChange
    fields = ("changed_at", "old_cutoff", "new_cutoff", "changed_by", "via")
    readonly_fields = fields
    show_change_link = False
    verbose_name_plural = "declared cutoff changes"


@admin.register(Agent)
class AgentAdmin(admin.ModelAdmin):
    list_display = (
        "name",
        "team",
        "model_name",
        "provider",
        "knowledge_cutoff",
        "is_baseline",
        "created_at",
        "retired_at",
    )
    list_filter = ("is_baseline", ("retired_at", admin.EmptyFieldListFilter), "team")
    search_fields = ("name", "slug", "model_name", "team__name")
    fields = (
        "team",
        "name",
        "slug",
        "model_name",
        "provider",
        "knowledge_cutoff",
        "tools_description",
        "is_baseline",
        "retired_at",
        "retired_by",
    )
    readonly_fields = ("slug", "created_at", "retired_at", "retired_by")
    autocomplete_fields = ("team",)
    inlines = (CutoffChangeInline, TokenInline)
    actions = ("retire",)

    def get_readonly_fields(self, request: HttpRequest, obj: Any = None) -> tuple[str, ...]:
        # The slug is in API URLs and the team owns the agent: neither changes after creation.
        # Retirement is an action (below), not an edit.
        fixed = ("slug", "created_at", "retired_at", "retired_by")
        return ("team", *fixed) if obj is not None else fixed

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False  # deleting would take the agent's forecasts and grades with it: retire it instead

    @admin.action(description="Retire the selected agents (their tokens, MCP and deliveries stop; grades stay)")
    def retire(self, request: HttpRequest, queryset: QuerySet[Agent]) -> None:
        now = timezone.now()
        retired = [a for a in queryset if agent_retire(agent=a, retired_by=request.user, now=now)]  # type: ignore[arg-type]
        self.message_user(request, f"Retired {len(retired)} agent(s).", messages.SUCCESS)

    def save_model(self, request: HttpRequest, obj: Agent, form: ModelForm[Agent], change: bool) -> None:
        if not change:
            super().save_model(request, obj, form, change)
            return
        stored = Agent.objects.get(pk=obj.pk)
        try:
            agent_update(
                agent=stored,
                name=obj.name,
                model_name=obj.model_name,
                provider=obj.provider,
                knowledge_cutoff=obj.knowledge_cutoff,
                tools_description=obj.tools_description,
                changed_by=request.user,  # type: ignore[arg-type]
                via=AgentCutoffChange.Via.ADMIN,
            )
        except ValidationError as exc:
            messages.error(request, "; ".join(exc.messages))
            return
        if stored.is_baseline != obj.is_baseline:
            Agent.objects.filter(pk=obj.pk).update(is_baseline=obj.is_baseline)


@admin.register(ApiToken)
class ApiTokenAdmin(admin.ModelAdmin):
    """Prefix, owner and use of each token; the hash is never shown. Revoking is the only change."""

    list_display = ("prefix", "agent", "name", "issued_by", "created_by", "created_at", "last_used_at", "revoked_at")
    list_filter = ("issued_by", "revoked_at")
    search_fields = ("prefix", "name", "agent__name", "agent__team__name")
    fields = ("prefix", "agent", "name", "issued_by", "created_by", "created_at", "last_used_at", "revoked_at")
    readonly_fields = fields
    actions = ("revoke",)

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False  # a key is shown once, on the agent's team page, where it is created

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    @admin.action(description="Revoke the selected tokens (requests using them get 401)")
    def revoke(self, request: HttpRequest, queryset: QuerySet[ApiToken]) -> None:
        now = timezone.now()
        active = list(queryset.filter(revoked_at__isnull=True))
        for token in active:
            token_revoke(token=token, now=now)
        self.message_user(request, f"Revoked {len(active)} token(s).", messages.SUCCESS)


@admin.register(Forecast)
class ForecastAdmin(ReadOnlyAdmin):
    list_display = ("id", "agent", "question", "received_at", "channel", "session")
    list_filter = ("channel", "question__track", "question__type")
    search_fields = ("agent__name", "question__title", "idempotency_key")
    list_select_related = ("agent", "question")
    date_hierarchy = "received_at"
    fields = (
        "agent",
        "question",
        "session",
        "received_at",
        "channel",
        "submitted_by",
        "prediction",
        "sources",
        "rationale",
        "graph",
        "idempotency_key",
    )
    readonly_fields = fields


@admin.register(Grade)
class GradeAdmin(ReadOnlyAdmin):
    list_display = (
        "forecast_number", "agent_name", "question_title", "version", "is_current", "counts", "void", "correct",
        "brier_rounded", "created_at",
    )  # fmt: skip
    list_filter = ("is_current", "counts", "void", "contaminated", "judge", "forecast__question__type")
    search_fields = ("forecast__agent__name", "forecast__question__title")
    list_select_related = ("forecast", "forecast__agent", "forecast__question")
    date_hierarchy = "created_at"

    @admin.display(description="Forecast", ordering="forecast_id")
    def forecast_number(self, obj: Grade) -> str:
        return f"#{obj.forecast_id}"

    @admin.display(description="Agent", ordering="forecast__agent__name")
    def agent_name(self, obj: Grade) -> str:
        return obj.forecast.agent.name

    @admin.display(description="Question", ordering="forecast__question__title")
    def question_title(self, obj: Grade) -> str:
        title = obj.forecast.question.title
        return title if len(title) <= 70 else f"{title[:69]}…"

    @admin.display(description="Brier", ordering="brier")
    def brier_rounded(self, obj: Grade) -> str:
        return _rounded(obj.brier)

    def get_fields(self, request: HttpRequest, obj: Any = None) -> Any:
        # Scores to four decimals (the stored floats carry up to 17 digits), every other field as is.
        return [f"{f.name}_shown" if f.name in _FLOAT_FIELDS else f.name for f in Grade._meta.fields]

    def get_readonly_fields(self, request: HttpRequest, obj: Any = None) -> Any:
        return self.get_fields(request, obj)


def _rounded(value: float | None) -> str:
    return "—" if value is None else f"{value:.4f}"


_FLOAT_FIELDS = {f.name: str(f.verbose_name) for f in Grade._meta.fields if f.get_internal_type() == "FloatField"}


def _rounded_field(name: str, label: str) -> Any:
    def show(self: GradeAdmin, obj: Grade) -> str:
        return _rounded(getattr(obj, name))

    return admin.display(description=label)(show)


for _name, _label in _FLOAT_FIELDS.items():
    setattr(GradeAdmin, f"{_name}_shown", _rounded_field(_name, _label))


@admin.register(AgentCutoffChange)
class AgentCutoffChangeAdmin(ReadOnlyAdmin):
    list_display = ("agent", "old_cutoff", "new_cutoff", "changed_by", "via", "changed_at")
    list_filter = ("via",)
    search_fields = ("agent__name",)
    readonly_fields = ("agent", "old_cutoff", "new_cutoff", "changed_by", "via", "changed_at")
