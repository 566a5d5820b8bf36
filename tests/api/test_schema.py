"""The OpenAPI schema says what the code does (`make fuzz` checks it against the running app)."""

import re

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


def test_guarded_operations_document_the_agent_header_and_its_404(schema):
    """Every route the guard gates takes X-NeuroMem-Agent (a bigint id) and may answer 404
    for an agent that is not the client's, routes without a 404 of their own too."""
    for path, operations in schema["paths"].items():
        for method, op in operations.items():
            headers = [p for p in op.get("parameters", []) if p["name"] == "X-NeuroMem-Agent"]
            if not headers:
                continue
            (header,) = headers
            assert (header["schema"]["minimum"], header["schema"]["maximum"]) == (1, 2**63 - 1)
            assert "X-NeuroMem-Agent" in op["responses"]["404"]["description"], (method, path)
    whoami = operation(schema, "get", "auth/whoami/")
    assert "X-NeuroMem-Agent" in {p["name"] for p in whoami["parameters"]}


def test_every_error_is_the_envelope(schema):
    for path, operations in schema["paths"].items():
        for method, op in operations.items():
            for code, response in op["responses"].items():
                if code >= "400" and not (path.endswith("/health/") and code == "503"):
                    body = response["content"]["application/json"]["schema"]
                    assert body == {"$ref": "#/components/schemas/ErrorEnvelope"}, (method, path)


def test_operations_are_grouped_by_area(schema):
    tags = {
        path.removeprefix("/api/v1/"): {op["tags"][0] for op in operations.values()}
        for path, operations in schema["paths"].items()
    }
    assert tags["memories/"] == tags["memories/{memory_id}/history/"] == {"memories"}
    assert tags["recall/"] == tags["search/scored/"] == {"recall & search"}
    assert tags["sessions/{session_id}/messages/"] == {"conversations"}
    assert tags["users/{user_id}/export/"] == {"users"}
    assert (tags["auth/whoami/"], tags["health/"]) == ({"auth"}, {"health"})
    assert {tag["name"] for tag in schema["tags"]} == set().union(*tags.values())


def test_each_error_example_carries_its_status_code(schema):
    codes = {
        "400": "VALIDATION_ERROR",
        "401": "UNAUTHORIZED",
        "403": "FORBIDDEN",
        "404": "NOT_FOUND",
        "409": "CONFLICT",
        "413": "PAYLOAD_TOO_LARGE",
        "415": "UNSUPPORTED_MEDIA_TYPE",
        "429": "RATE_LIMITED",
        "500": "INTERNAL",
        "503": "UNAVAILABLE",
    }
    seen = set()
    for operations in schema["paths"].values():
        for op in operations.values():
            for status, response in op["responses"].items():
                if status in codes:
                    example = response["content"]["application/json"]["example"]
                    assert example["error"]["code"] == codes[status], (op["operationId"], status)
                    seen.add(status)
    assert seen == set(codes)


def test_the_session_header_s_rule_is_what_the_server_reads(schema):
    """HTTP drops the spaces and tabs around a header's value before the server reads it: the
    schema neither counts them nor calls a tab there a control character."""
    header = next(
        p
        for p in operation(schema, "post", "recall/")["parameters"]
        if p["name"] == "X-NeuroMem-Session"
    )
    pattern = re.compile(header["schema"]["pattern"])
    for read_as_valid in ("", "garage", " m\t", "\t" + "x" * 200 + "\t ", "a b"):
        assert pattern.search(read_as_valid), read_as_valid
    for refused in ("a\tb", "x" * 201, "a\x07b", "a\x00"):
        assert not pattern.search(refused), refused
