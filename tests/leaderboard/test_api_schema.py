"""The OpenAPI schema and the browsable docs answer, and document the forecast endpoints."""

from __future__ import annotations

import re
import uuid

import httpx
import pytest

from tests.leaderboard.api_support import live_question

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


def _schema(http: httpx.Client) -> dict:
    return http.get("/api/v1/schema/", params={"format": "json"}).json()


def _resolve(schema: dict, node: dict) -> dict:
    while "$ref" in node:
        node = schema["components"]["schemas"][node["$ref"].rsplit("/", 1)[1]]
    return node


def test_lists_are_documented_as_pages(http: httpx.Client) -> None:
    schema = _schema(http)
    for path in ("/api/v1/questions/", "/api/v1/forecasts/", "/api/v1/evidence/log/"):
        ok = schema["paths"][path]["get"]["responses"]["200"]["content"]["application/json"]["schema"]
        page = _resolve(schema, ok)
        assert page["type"] == "object" and set(page["required"]) == {"count", "next", "previous", "results"}, path
        assert page["properties"]["results"]["type"] == "array"


def test_errors_bounds_and_media_types_are_documented(http: httpx.Client) -> None:
    schema = _schema(http)
    for path, operations in schema["paths"].items():
        for method, operation in operations.items():
            responses = set(operation["responses"])
            assert {"400", "401", "429", "503"} <= responses, (method, path)
            if "{" in path:
                assert "404" in responses, (method, path)
            if "requestBody" in operation:
                assert set(operation["requestBody"]["content"]) == {"application/json"}, (method, path)
                assert {"413", "415"} <= responses, (method, path)
            for parameter in operation.get("parameters", []):
                if parameter["name"] in ("question", "question_id", "article_id"):
                    assert parameter["schema"]["minimum"] == 1, (path, parameter)
                if parameter["name"] == "limit":
                    assert parameter["schema"]["minimum"] == 1 and parameter["schema"]["maximum"] <= 200, path
                if parameter["name"] == "offset":
                    assert parameter["schema"]["minimum"] == 0, path
    for path in [p for p in schema["paths"] if p.startswith("/api/v1/evidence/")]:
        assert {"400", "401", "404"} <= set(schema["paths"][path]["get"]["responses"]), path
    body = _resolve(
        schema, schema["paths"]["/api/v1/forecasts/"]["post"]["requestBody"]["content"]["application/json"]["schema"]
    )
    assert body["properties"]["question"]["minimum"] == 1
    assert body["properties"]["prediction"]["type"] == "object"
    replay = _resolve(
        schema, schema["paths"]["/api/v1/replays/"]["post"]["requestBody"]["content"]["application/json"]["schema"]
    )
    assert replay["properties"]["question"]["minimum"] == 1


def test_a_form_encoded_body_is_415(agent_http: httpx.Client) -> None:
    response = agent_http.post("/api/v1/replays/", data={"question": "1"})
    assert response.status_code == 415
    assert response.json()["code"] == "unsupported_media_type"


def test_what_the_server_refuses_the_schema_says(http: httpx.Client, agent_http: httpx.Client) -> None:
    """Limits, closed bodies and per-item batch results are in the contract, and the server keeps it."""
    schema = _schema(http)
    batch = schema["paths"]["/api/v1/forecasts/batch/"]["post"]
    body = batch["requestBody"]["content"]["application/json"]["schema"]
    assert (body["minItems"], body["maxItems"]) == (1, 1000)
    assert "an item that breaks the item schema" in batch["description"]
    item = _resolve(schema, batch["responses"]["200"]["content"]["application/json"]["schema"])
    results = _resolve(schema, item["properties"]["results"]["items"])
    status = results["properties"]["status"]
    assert _resolve(schema, status.get("allOf", [status])[0])["enum"] == [201, 200, 400, 404, 409]
    closed = {
        "/api/v1/forecasts/": "question",
        "/api/v1/replays/": "question",
        "/api/v1/deliveries/": "question",
    }
    for path, field in closed.items():
        operation = schema["paths"][path]["post"]
        request = _resolve(schema, operation["requestBody"]["content"]["application/json"]["schema"])
        assert request["additionalProperties"] is False, path
        refused = agent_http.post(path, json={field: 1, "colour": "blue"})
        assert refused.status_code == 400 and refused.json()["errors"][0]["field"] == "colour", refused.text
    assert "NUL" in schema["paths"]["/api/v1/replays/"]["post"]["responses"]["400"]["description"]
    search = schema["paths"]["/api/v1/evidence/articles/"]["get"]["responses"]
    assert "`session`" in search["400"]["description"] and "`question`" in search["400"]["description"]
    assert "agent_retired" in schema["paths"]["/api/v1/questions/"]["get"]["responses"]["403"]["description"]


def test_what_holds_for_every_request_the_schema_says_in_structure(
    http: httpx.Client, agent_http: httpx.Client
) -> None:
    """A prediction's keys, an event filter's CAMEO codes and a batch that answers each item on its
    own are structure in the schema, and the server does what it says."""
    schema = _schema(http)
    create = schema["paths"]["/api/v1/forecasts/"]["post"]
    body = _resolve(schema, create["requestBody"]["content"]["application/json"]["schema"])
    prediction = body["properties"]["prediction"]
    assert prediction["additionalProperties"] is False and prediction["minProperties"] == 1
    assert {"probability", "probabilities", "value", "interval", "quantiles", "period", "relations"} < set(
        prediction["properties"]
    )
    question = live_question()
    extra = agent_http.post(
        "/api/v1/forecasts/", json={"question": question.pk, "prediction": {"probability": 0.5, "colour": "blue"}}
    )
    assert extra.status_code == 400 and extra.json()["errors"][0]["field"] == "prediction.colour"

    events = schema["paths"]["/api/v1/evidence/events/"]["get"]
    relation = next(p for p in events["parameters"] if p["name"] == "relation")["schema"]
    assert "04" in relation["enum"] and "042" in relation["enum"] and "00" not in relation["enum"]
    refused = agent_http.get("/api/v1/evidence/events/", params={"question": question.pk, "relation": "00"})
    assert refused.status_code == 400 and "'00' is not a first-level" in refused.json()["message"]
    unknown = agent_http.get(f"/api/v1/evidence/prices/{question.pk}/", params={"session": str(uuid.uuid4())})
    assert unknown.status_code == 404  # an unknown session is not found, as everywhere

    batch = schema["paths"]["/api/v1/forecasts/batch/"]["post"]
    items = batch["requestBody"]["content"]["application/json"]["schema"]["items"]
    assert {} in items["anyOf"] and "answered in the results with status 400" in items["description"]
    answered = agent_http.post(
        "/api/v1/forecasts/batch/",
        json=[
            {"question": question.pk, "prediction": {"probability": 0.5}, "colour": "blue"},
            {"question": question.pk, "prediction": {"probability": 0.6}},
        ],
    )
    assert answered.status_code == 200
    assert [r["status"] for r in answered.json()["results"]] == [400, 201]
    assert "owner_deleted" in schema["paths"]["/api/v1/questions/"]["get"]["responses"]["403"]["description"]
