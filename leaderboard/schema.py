"""OpenAPI: the agent token scheme, and the errors every endpoint can answer (drf-spectacular).

Views document what is particular to them; ``add_common_errors`` (a postprocessing hook) adds to
every operation what any of them can answer, so the published contract cannot forget one:
400 (a bad query parameter, e.g. a NUL character), 401 (a token that is unknown or revoked), 406,
429 (rate limit), 503 (Redis or the database unreachable); 404 where the path names something; 413
and 415 where there is a body. Ids in paths are documented as the positive numbers they are, and an optional
query parameter's empty value as what it means here: not given. A batch body's size limits are
written into its array schema, and every request body that refuses unknown fields says so
(``additionalProperties: false``).
"""

from __future__ import annotations

from typing import Any

from drf_spectacular.extensions import OpenApiAuthenticationExtension, OpenApiSerializerExtension

# Largest id (PostgreSQL bigint).
MAX_ID = 2**63 - 1
# Forecasts in one POST /api/v1/forecasts/batch/.
MAX_BATCH_ITEMS = 1000

COMMON_ERRORS = {
    "400": "A query parameter or the body is invalid; the message names it. Besides what the schema says, text "
    "anywhere in a query or body (object keys included) may not hold a NUL character (U+0000) or a lone "
    "surrogate, which no database column can store (code `invalid_text`).",
    "401": "The Authorization header holds no active agent token (unknown or revoked), or the endpoint needs one.",
    "403": "The token is genuine but the agent's access has ended: code `agent_retired` (the agent was retired), "
    "`owner_deleted` (the account of the person who created the token was deleted), `owner_deactivated` (that "
    "account is deactivated) or `not_a_member` (that person left the agent's team); the message says which. "
    "The agent's past forecasts and grades stay.",
    "406": "The Accept header names no media type the API answers in (application/json).",
    "429": "Over the rate limit: retry after the Retry-After header's seconds.",
    "503": (
        "The cache and task queue (Redis) or the database is unreachable: retry after the Retry-After header's seconds."
    ),
}
PATH_ERRORS = {"404": "Nothing visible to you at this address."}
BODY_ERRORS = {
    "413": "The body is larger than the server's limit.",
    "415": "The body is not sent as application/json.",
}

ERROR_SCHEMA = {
    "type": "object",
    "properties": {
        "code": {"type": "string"},
        "message": {"type": "string"},
        "errors": {"type": "array", "items": {"type": "object", "additionalProperties": {}}},
    },
    "required": ["code", "message"],
}


class AgentTokenScheme(OpenApiAuthenticationExtension):
    target_class = "leaderboard.authentication.AgentTokenAuthentication"
    name = "AgentToken"

    def get_security_definition(self, auto_schema: Any) -> dict[str, str]:
        return {
            "type": "apiKey",
            "in": "header",
            "name": "Authorization",
            "description": "An agent's API key: `Authorization: Token <key>`. Keys are created on the agent's page "
            "or with `manage.py create_agent`.",
        }


class ClosedInputSerializerExtension(OpenApiSerializerExtension):
    """Request bodies that refuse unknown fields (``ClosedInputSerializer``) say so in the schema."""

    target_class = "leaderboard.apis.common.ClosedInputSerializer"
    match_subclasses = True

    def map_serializer(self, auto_schema: Any, direction: Any) -> dict[str, Any]:
        schema: dict[str, Any] = auto_schema._map_basic_serializer(self.target, direction)
        schema["additionalProperties"] = False
        return schema


def _bound_batch_body(operation: dict[str, Any]) -> None:
    """The batch takes a list of 1 to MAX_BATCH_ITEMS items of any kind: each is answered on its own
    (an item that is no valid forecast body gets its own 400 among the results, the others are stored),
    so the item schema describes what to send without making the batch refuse a list that breaks it."""
    if operation.get("operationId") != "forecasts_batch":
        return
    for media in operation.get("requestBody", {}).get("content", {}).values():
        schema = media["schema"]
        schema.update(minItems=1, maxItems=MAX_BATCH_ITEMS)
        schema["items"] = {
            "description": "A forecast body as POST /api/v1/forecasts/ takes it. An item that is not one is answered "
            "in the results with status 400 and its error; the other items are stored.",
            "anyOf": [schema["items"], {}],
        }


def add_common_errors(result: dict[str, Any], generator: Any, request: Any, public: bool) -> dict[str, Any]:
    schemas = result.setdefault("components", {}).setdefault("schemas", {})
    schemas.setdefault("Error", ERROR_SCHEMA)
    error = {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
    for operations in result.get("paths", {}).values():
        for operation in operations.values():
            parameters = operation.get("parameters", [])
            _bound_batch_body(operation)
            wanted = dict(COMMON_ERRORS)
            if any(p.get("in") == "path" for p in parameters):
                wanted.update(PATH_ERRORS)
            if "requestBody" in operation:
                wanted.update(BODY_ERRORS)
            responses = operation.setdefault("responses", {})
            for status, description in wanted.items():
                documented = responses.setdefault(status, {"content": error, "description": description})
                if not documented.get("description"):
                    # A view that lists the status without saying more gets the common sentence.
                    documented["description"] = description
            for parameter in parameters:
                schema = parameter.get("schema", {})
                if parameter.get("in") == "path" and schema.get("type") == "integer":
                    schema.setdefault("minimum", 1)
                    schema.setdefault("maximum", MAX_ID)
                if parameter.get("in") == "query" and not parameter.get("required"):
                    # DRF (and the leaderboard's own parsing) read `name=` as "not given".
                    parameter["allowEmptyValue"] = True
    return result
