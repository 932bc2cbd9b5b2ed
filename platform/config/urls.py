from __future__ import annotations

from django.contrib import admin
from django.urls import include, path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerView

from leaderboard.views import accounts

urlpatterns = [
    path("admin/", admin.site.urls),
    # The reset request pages tell the truth about sending; the rest of the accounts pages are Django's.
    path("accounts/password_reset/", accounts.PasswordResetView.as_view(), name="password_reset"),
    path("accounts/password_reset/done/", accounts.PasswordResetDoneView.as_view(), name="password_reset_done"),
    path("accounts/", include("django.contrib.auth.urls")),
    path("api/v1/schema/", SpectacularAPIView.as_view(), name="api-schema"),
    path("api/docs/", SpectacularSwaggerView.as_view(url_name="api-schema"), name="api-docs"),
    path("api/v1/", include("leaderboard.api_urls")),
    path("api/v1/", include("endpoints.api_urls")),
    path("ingestion/", include("ingestion.urls")),
    path("hindsight/", include("grading.urls")),
    path("", include("endpoints.urls")),
    path("", include("leaderboard.urls")),
]

handler404 = "leaderboard.views.errors.not_found"
handler500 = "leaderboard.views.errors.server_error"
