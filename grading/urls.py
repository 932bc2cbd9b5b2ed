"""Hindsight graph pages: public views and the staff review flow."""

from __future__ import annotations

from django.urls import URLPattern, URLResolver, path

from grading import views

app_name = "grading"

urlpatterns: list[URLPattern | URLResolver] = [
    path("review/", views.review_list, name="review_list"),
    path("review/<int:question_id>/", views.review_detail, name="review_detail"),
    path("review/<int:question_id>/add/", views.review_add_item, name="review_add_item"),
    path("questions/<int:question_id>/", views.hindsight_page, name="hindsight"),
]
