"""Admin for the ingestion app (append-only; several engineers add their models here)."""

from __future__ import annotations

from django.contrib import admin, messages
from django.db.models import QuerySet
from django.http import HttpRequest

from ingestion.models import Article, NewsCluster, Source, StructuredEvent

# --- Sources and articles ---------------------------------------------------------------------


@admin.register(Source)
class SourceAdmin(admin.ModelAdmin):
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
                    "etag",
                    "last_modified",
                    "claimed_at",
                    "created_at",
                )
            },
        ),
    )
    actions = ("poll_now",)

    @admin.display(description="Last error")
    def short_error(self, obj: Source) -> str:
        return obj.last_error[:120]

    @admin.action(description="Poll the selected sources now")
    def poll_now(self, request: HttpRequest, queryset: QuerySet[Source]) -> None:
        from ingestion.services.sources import source_poll

        for source in queryset:
            report = source_poll(source_id=source.pk, include_disabled=True)
            level = messages.ERROR if report.error else messages.SUCCESS
            self.message_user(request, f"{source.name}: {report.summary()}", level=level)


@admin.register(Article)
class ArticleAdmin(admin.ModelAdmin):
    list_display = ("title", "source", "published_at", "fetched_at", "language", "url")
    list_filter = ("source", "language")
    search_fields = ("title", "url")
    date_hierarchy = "fetched_at"
    list_select_related = ("source",)
    readonly_fields = ("content_hash", "fetched_at")
    raw_id_fields = ("source",)


@admin.register(StructuredEvent)
class StructuredEventAdmin(admin.ModelAdmin):
    list_display = ("date", "subject", "relation", "object", "mentions")
    list_filter = ("relation_root",)
    search_fields = ("subject", "object", "relation")
    date_hierarchy = "date"
    raw_id_fields = ("articles",)


@admin.register(NewsCluster)
class NewsClusterAdmin(admin.ModelAdmin):
    """Question-generation clusters: what the model was asked about and what went wrong."""

    list_display = ("key_prefix", "created_at", "attempts", "finished_at", "model_name", "questions_created")
    readonly_fields = ("key", "article_ids", "terms", "claimed_at", "finished_at", "attempts", "problems")

    @admin.display(description="key")
    def key_prefix(self, obj: NewsCluster) -> str:
        return obj.key[:12]
