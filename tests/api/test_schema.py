"""The OpenAPI schema says what the code does (`make fuzz` checks it against the running app)."""

import pytest
from django.conf import settings
from drf_spectacular.generators import SchemaGenerator


@pytest.fixture(scope="module")
def schema() -> dict:
    return SchemaGenerator().get_schema(request=None, public=True)


def operation(schema: dict, method: str, path: str) -> dict:
    return schema["paths"][f"/api/v1/{path}"][method]


def test_strict_request_bodies_forbid_unknown_fields(schema):
    components = schema["components"]["schemas"]
    for name in ["MemoryCreateInputRequest", "MemoryUpdateInputRequest", "RecallInputRequest"]:
        assert components[name]["additionalProperties"] is False, name


def test_limits_are_published(schema):
    recall = schema["components"]["schemas"]["RecallInputRequest"]["properties"]["limit"]
    assert (recall["minimum"], recall["maximum"]) == (1, settings.RECALL_LIMIT_MAX)
    search = {p["name"]: p for p in operation(schema, "get", "search/")["parameters"]}
    assert (search["limit"]["schema"]["minimum"], search["limit"]["schema"]["maximum"]) == (
        1,
        settings.RECALL_LIMIT_MAX,
    )
    listing = {p["name"]: p for p in operation(schema, "get", "memories/")["parameters"]}
    assert (listing["limit"]["schema"]["minimum"], listing["limit"]["schema"]["maximum"]) == (
        1,
        settings.API_MAX_PAGE_SIZE,
    )
    assert "cursor" in listing


def test_the_memory_list_is_a_page(schema):
    ok = operation(schema, "get", "memories/")["responses"]["200"]
    ref = ok["content"]["application/json"]["schema"]["$ref"]
    page = schema["components"]["schemas"][ref.split("/")[-1]]
    assert page["required"] == ["ok", "data", "page"]


@pytest.mark.parametrize(
    ("method", "path", "statuses"),
    [
        ("delete", "memories/{memory_id}/", {"200", "404"}),
        ("patch", "memories/{memory_id}/", {"200", "400", "404", "409", "413", "415"}),
        ("post", "memories/{memory_id}/supersede/", {"201", "409"}),
        ("post", "memories/", {"200", "201", "403", "413"}),
        ("post", "sessions/{session_id}/messages/", {"201", "409"}),
        ("delete", "users/{user_id}/", {"200", "403"}),
        ("get", "health/", {"200", "503"}),
    ],
)
def test_operations_document_the_statuses_they_answer(schema, method, path, statuses):
    responses = operation(schema, method, path)["responses"]
    assert statuses <= set(responses)
    assert "204" not in responses


def test_every_error_is_the_envelope(schema):
    for path, operations in schema["paths"].items():
        for method, op in operations.items():
            for code, response in op["responses"].items():
                if code >= "400" and not (path.endswith("/health/") and code == "503"):
                    body = response["content"]["application/json"]["schema"]
                    assert body == {"$ref": "#/components/schemas/ErrorEnvelope"}, (method, path)
