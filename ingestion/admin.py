"""Admin for the ingestion app (append-only; several engineers add their models here)."""

from __future__ import annotations

from typing import Any

from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied
from django.db import models
from django.db.models import QuerySet
from django.http import HttpRequest, HttpResponse

from ingestion.forms_admin import SourceAdminForm
from ingestion.llm.records import stages_table
from ingestion.models import Article, Market, NewsCluster, PricePoint, Question, Resolution, Source, StructuredEvent
from ingestion.tasks import import_archives_again, poll_sources_now


class HttpsURLModelAdmin(admin.ModelAdmin):
    # A URL typed without a scheme is taken as https (Django 6's default), never plain http.
    formfield_overrides = {models.URLField: {"assume_scheme": "https"}}


# --- Sources and articles ---------------------------------------------------------------------


@admin.register(Source)
class SourceAdmin(HttpsURLModelAdmin):
    form = SourceAdminForm
    list_display = (
        "name",
        "kind",
        "url",
        "enabled",
        "last_attempt_at",
        "last_success_at",
        "consecutive_failures",
        "next_attempt_at",
        "short_error",
    )
    list_filter = ("kind", "enabled")
    search_fields = ("name", "url", "last_error")
    readonly_fields = (
        "last_attempt_at",
        "last_success_at",
        "consecutive_failures",
        "last_error",
        "last_warning",
        "etag",
        "last_modified",
        "claimed_at",
        "created_at",
    )
    fieldsets = (
        (None, {"fields": ("name", "kind", "url", "options", "poll_interval", "enabled", "next_attempt_at")}),
        (
            "Health",
            {
                "fields": (
                    "last_attempt_at",
                    "last_success_at",
                    "consecutive_failures",
                    "last_error",
                    "last_warning",
                    "etag",
                    "last_modified",
                    "claimed_at",
                    "created_at",
                )
            },
        ),
    )
    actions = ("poll_now", "import_again")

    @admin.display(description="Last error")
    def short_error(self, obj: Source) -> str:
        return obj.last_error[:120]

    @admin.action(description="Poll the selected sources now")
    def poll_now(self, request: HttpRequest, queryset: QuerySet[Source]) -> None:
        names = poll_sources_now(queryset)
        self.message_user(
            request,
            f"Poll queued for {', '.join(names)}: the workers poll now (disabled sources too, due or "
            "not); the result appears in each source's health and on the sources status page.",
            level=messages.SUCCESS,
        )

    @admin.action(description="Import the selected archives again from their files")
    def import_again(self, request: HttpRequest, queryset: QuerySet[Source]) -> None:
        names = import_archives_again(queryset)
        if not names:
            self.message_user(
                request,
                "None of the selected sources is an imported archive (manage.py import_archive PATH creates them).",
                level=messages.WARNING,
            )
            return
        self.message_user(
            request,
            f"Re-import queued for {', '.join(names)}: the workers read each archive's file again with the "
            "settings of its last import; changed items are updated in place, the rest left alone.",
            level=messages.SUCCESS,
        )


@admin.register(Article)
class ArticleAdmin(HttpsURLModelAdmin):
    list_display = ("title", "source", "published_at", "fetched_at", "language", "license", "url")
    list_filter = ("source", "language")
    search_fields = ("title", "url", "external_id")
    date_hierarchy = "fetched_at"
    list_select_related = ("source",)
    readonly_fields = ("content_hash", "fetched_at")
    raw_id_fields = ("source",)


@admin.register(StructuredEvent)
class StructuredEventAdmin(HttpsURLModelAdmin):
    list_display = ("date", "subject", "relation", "object", "mentions")
    list_filter = ("relation_root",)
    search_fields = ("subject", "object", "relation")
    date_hierarchy = "date"
    raw_id_fields = ("articles",)


@admin.register(NewsCluster)
class NewsClusterAdmin(HttpsURLModelAdmin):
    """Question-generation clusters: what the model was asked about and what went wrong."""

    list_display = ("key_prefix", "created_at", "attempts", "finished_at", "model_name", "questions_created")
    readonly_fields = (
        "key",
        "article_ids",
        "terms",
        "claimed_at",
        "finished_at",
        "attempts",
        "problems",
        "llm_stages",
        "llm_usage",
    )

    @admin.display(description="key")
    def key_prefix(self, obj: NewsCluster) -> str:
        return obj.key[:12]

    @admin.display(description="LLM stages (tokens, seconds, valid on first try)")
    def llm_stages(self, obj: NewsCluster) -> str:
        return stages_table(obj.llm_usage)


# --- Questions and their versioned resolutions ------------------------------------------------


class ResolutionInline(admin.TabularInline):
    """Resolution history: read-only here; every change goes through the resolution form."""

    model = Resolution
    extra = 0
    can_delete = False
    fields = (
        "version",
        "kind",
        "outcome",
        "resolved_at",
        "provisional",
        "note",
        "author",
        "author_label",
        "created_at",
    )
    readonly_fields = fields

    def has_add_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return False


@admin.register(Question)
class QuestionAdmin(HttpsURLModelAdmin):
    list_display = ("title", "type", "track", "status", "domain", "origin", "open_at", "close_at")
    list_filter = ("status", "track", "type", "origin", "domain")
    search_fields = ("title", "external_id", "resolution_criteria")
    date_hierarchy = "close_at"
    raw_id_fields = ("market", "provenance_articles")
    readonly_fields = ("created_at", "updated_at", "outcome_published_at")
    inlines = (ResolutionInline,)
    actions = ("publish_outcomes",)
    change_form_template = "admin/ingestion/question/change_form.html"

    def get_urls(self) -> list[Any]:
        from django.urls import path

        return [
            path(
                "<int:question_id>/resolution/",
                self.admin_site.admin_view(self.resolution_view),
                name="ingestion_question_resolution",
            ),
            *super().get_urls(),
        ]

    def resolution_view(self, request: HttpRequest, question_id: int) -> HttpResponse:
        from django.shortcuts import get_object_or_404, redirect
        from django.template.response import TemplateResponse

        from ingestion.forms_admin import ResolutionChangeForm

        question = get_object_or_404(Question, pk=question_id)
        if not self.has_change_permission(request, question):
            raise PermissionDenied
        form = ResolutionChangeForm(request.POST or None, question=question)
        if request.method == "POST" and form.is_valid():
            resolution = form.apply(author=request.user)  # type: ignore[arg-type]
            if resolution is None:
                self.message_user(request, "Nothing changed: the question already has that resolution.")
            else:
                self.message_user(request, f"Added resolution v{resolution.version} ({resolution.kind}).")
            return redirect("admin:ingestion_question_change", question.pk)
        context = {
            **self.admin_site.each_context(request),
            "title": f"Change the resolution of: {question.title}",
            "question": question,
            "form": form,
            "opts": self.model._meta,
            "history": question.resolutions.order_by("version"),
        }
        return TemplateResponse(request, "admin/ingestion/question/resolution.html", context)

    @admin.action(description="Publish the outcome of the selected replay questions")
    def publish_outcomes(self, request: HttpRequest, queryset: QuerySet[Question]) -> None:
        from django.core.exceptions import ValidationError

        from ingestion.services.questions import question_publish_outcome

        published = 0
        for question in queryset:
            try:
                question_publish_outcome(question=question)
                published += 1
            except ValidationError as exc:
                self.message_user(request, f"{question.title}: {' '.join(exc.messages)}", level=messages.ERROR)
        if published:
            self.message_user(request, f"Published the outcome of {published} question(s).")


class PricePointInline(admin.TabularInline):
    model = PricePoint
    extra = 0
    fields = ("outcome", "time", "probability")
    readonly_fields = fields
    can_delete = False
    ordering = ("-time",)
    max_num = 0


@admin.register(Market)
class MarketAdmin(HttpsURLModelAdmin):
    list_display = ("title", "platform", "external_id", "status", "hold_reason", "close_at", "volume", "liquidity")
    list_filter = ("platform", "status")
    search_fields = ("title", "external_id")
    readonly_fields = ("raw", "hold_reason", "updated_at")
    raw_id_fields = ("source",)
    inlines = (PricePointInline,)
