"""The OpenAPI schema and the browsable docs answer, and document the forecast endpoints."""

from __future__ import annotations

import re

import httpx
import pytest

pytestmark = pytest.mark.django_db(transaction=True)


def test_schema_lists_agent_endpoints(http: httpx.Client) -> None:
    response = http.get("/api/v1/schema/", params={"format": "json"})
    assert response.status_code == 200
    paths = response.json()["paths"]
    for path in (
        "/api/v1/questions/",
        "/api/v1/questions/{question_id}/",
        "/api/v1/replays/",
        "/api/v1/forecasts/",
        "/api/v1/forecasts/batch/",
    ):
        assert path in paths, path
    assert set(paths["/api/v1/forecasts/"]) >= {"get", "post"}
    assert "409" in paths["/api/v1/forecasts/"]["post"]["responses"]


def test_docs_page_is_served_without_internet(http: httpx.Client) -> None:
    response = http.get("/api/docs/")
    assert response.status_code == 200
    assert "swagger" in response.text.lower()
    scripts = re.findall(r'src="([^"]+swagger-ui-bundle\.js)"', response.text)
    assert scripts and all(src.startswith("/static/") for src in scripts)  # no CDN
    assert http.get(scripts[0]).status_code == 200
