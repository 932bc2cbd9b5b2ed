"""Admin for hindsight graphs.

"Rebuild hindsight graph" exists in three places: an action on the "Question hindsight" list (a
proxy of Question registered here, since ingestion/admin.py belongs to the ingestion app), a
button on each "Question hindsight" page, and, when ingestion registers a Question admin, the
same action appended to that admin's actions. A rebuild enqueues grading.tasks.build_hindsight.
"""

from __future__ import annotations

from functools import partial
from typing import Any

from django.contrib import admin, messages
from django.db import transaction
from django.db.models import QuerySet
from django.http import HttpRequest, HttpResponse, HttpResponseNotAllowed, HttpResponseRedirect
from django.shortcuts import get_object_or_404
from django.urls import URLPattern, path, reverse

from grading.models import (
    CausalLink,
    EventReview,
    GraphBuildAttempt,
    HindsightEvent,
    HindsightGraph,
    OutcomeImpact,
    QuestionHindsight,
)
from ingestion.llm.records import stages_table
from ingestion.models import Question


def _enqueue_rebuild(question_ids: list[int]) -> None:
    from grading.tasks import build_hindsight

    for question_id in question_ids:
        transaction.on_commit(partial(build_hindsight.delay, question_id))


@admin.action(description="Rebuild hindsight graph")
def rebuild_hindsight(modeladmin: admin.ModelAdmin, request: HttpRequest, queryset: QuerySet[Any]) -> None:
    resolved = list(queryset.filter(status=Question.Status.RESOLVED).values_list("pk", flat=True))
    skipped = queryset.count() - len(resolved)
    _enqueue_rebuild(resolved)
    modeladmin.message_user(request, f"Queued a hindsight graph rebuild for {len(resolved)} resolved question(s).")
    if skipped:
        modeladmin.message_user(
            request, f"Skipped {skipped} question(s) that are not resolved.", level=messages.WARNING
        )


class EventInline(admin.TabularInline):
    model = HindsightEvent
    fields = ("key", "occurred_on", "event_type", "title", "is_outcome", "review_status")
    readonly_fields = fields
    extra = 0
    can_delete = False
    show_change_link = True


class LinkInline(admin.TabularInline):
    model = CausalLink
    fk_name = "graph"
    fields = ("source", "target", "relation", "strength", "confidence")
    readonly_fields = fields
    extra = 0
    can_delete = False


@admin.register(HindsightGraph)
class HindsightGraphAdmin(admin.ModelAdmin):
    list_display = (
        "question",
        "version",
        "is_current",
        "builder",
        "is_fallback",
        "model_name",
        "graph_built",
        "created_at",
    )
    list_filter = ("builder", "graph_built", "is_current")
    search_fields = ("question__title", "question__external_id")
    readonly_fields = [f.name for f in HindsightGraph._meta.fields]
    inlines = [EventInline, LinkInline]

    @admin.display(description="fallback", boolean=True)
    def is_fallback(self, obj: HindsightGraph) -> bool:
        return bool(obj.fallback_reason)

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False


@admin.register(HindsightEvent)
class HindsightEventAdmin(admin.ModelAdmin):
    list_display = ("title", "graph", "occurred_on", "event_type", "is_outcome", "review_status")
    list_filter = ("review_status", "event_type")
    search_fields = ("title",)
    readonly_fields = [f.name for f in HindsightEvent._meta.fields]
    raw_id_fields = ("sources",)

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False


@admin.register(GraphBuildAttempt)
class GraphBuildAttemptAdmin(admin.ModelAdmin):
    list_display = (
        "question",
        "builder",
        "started_at",
        "succeeded",
        "reason",
        "graph",
        "model_name",
        "tokens",
        "seconds",
        "fallback_of",
    )
    list_filter = ("builder", "succeeded", "reason")
    readonly_fields = ["llm_stages", *(f.name for f in GraphBuildAttempt._meta.fields)]

    @admin.display(description="LLM stages (tokens, seconds, valid on first try)")
    def llm_stages(self, obj: GraphBuildAttempt) -> str:
        return stages_table(obj.stages)

    @admin.display(description="tokens")
    def tokens(self, obj: GraphBuildAttempt) -> int | str:
        return obj.token_usage.get("total_tokens", "—") if isinstance(obj.token_usage, dict) else "—"

    @admin.display(description="LLM seconds")
    def seconds(self, obj: GraphBuildAttempt) -> float | str:
        if not isinstance(obj.stages, list) or not obj.stages:
            return "—"
        return round(sum(float(s.get("seconds", 0)) for s in obj.stages if isinstance(s, dict)), 1)

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False


@admin.register(EventReview)
class EventReviewAdmin(admin.ModelAdmin):
    list_display = ("event", "reviewer", "decision", "reason", "created_at")
    list_filter = ("decision", "reason")
    readonly_fields = [f.name for f in EventReview._meta.fields]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False


admin.site.register(OutcomeImpact)


class GraphVersionInline(admin.TabularInline):
    model = HindsightGraph
    fk_name = "question"
    fields = ("version", "is_current", "builder", "model_name", "graph_built", "fallback_reason", "created_at")
    readonly_fields = fields
    extra = 0
    can_delete = False
    show_change_link = True


class BuildAttemptInline(admin.TabularInline):
    """Every build of the question with what the model cost, newest first."""

    model = GraphBuildAttempt
    fk_name = "question"
    fields = ("started_at", "builder", "reason", "model_name", "structured_output", "llm_stages", "error", "graph")
    readonly_fields = fields
    extra = 0
    can_delete = False
    show_change_link = True
    ordering = ("-started_at", "-id")

    @admin.display(description="LLM stages")
    def llm_stages(self, obj: GraphBuildAttempt) -> str:
        return stages_table(obj.stages)

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


@admin.register(QuestionHindsight)
class QuestionHindsightAdmin(admin.ModelAdmin):
    list_display = ("title", "status", "track", "close_at")
    list_filter = ("status", "track", "type")
    search_fields = ("title", "external_id")
    fields = ("title", "status", "track", "type", "open_at", "close_at")
    readonly_fields = fields
    actions = [rebuild_hindsight]
    inlines = [GraphVersionInline, BuildAttemptInline]
    change_form_template = "admin/grading/questionhindsight/change_form.html"

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def get_urls(self) -> list[URLPattern]:
        custom = [
            path(
                "<int:question_id>/rebuild/",
                self.admin_site.admin_view(self.rebuild_view),
                name="grading_questionhindsight_rebuild",
            )
        ]
        return custom + super().get_urls()

    def rebuild_view(self, request: HttpRequest, question_id: int) -> HttpResponse:
        if request.method != "POST":
            return HttpResponseNotAllowed(["POST"])
        if not self.has_change_permission(request):
            return HttpResponseRedirect(reverse("admin:index"))
        question = get_object_or_404(Question, pk=question_id)
        if question.status != Question.Status.RESOLVED:
            self.message_user(request, "Only a resolved question has a hindsight graph.", level=messages.ERROR)
        else:
            _enqueue_rebuild([question.pk])
            self.message_user(request, f"Queued a hindsight graph rebuild for “{question.title}”.")
        return HttpResponseRedirect(reverse("admin:grading_questionhindsight_change", args=[question_id]))


# ingestion's Question admin (if registered) gets the same action.
_question_admin = admin.site._registry.get(Question)
if _question_admin is not None and rebuild_hindsight not in list(_question_admin.actions or ()):
    _question_admin.actions = [*(_question_admin.actions or ()), rebuild_hindsight]
