"""Each rule the server holds a request to, the OpenAPI schema states, and the other way round:
the schema refuses the value and the server answers 400 naming the field (403 for reading every
end user without being staff), with nothing written. `make fuzz` checks the same at random."""

import json
import re
from dataclasses import dataclass
from dataclasses import field as field_default
from typing import Any
from urllib.parse import quote, urlencode

import jsonschema
import pytest
from django.conf import settings
from drf_spectacular.generators import SchemaGenerator

from evolution.models import SafetyContract, SoulVersion
from memories.models import ForgetRequest, Memory

pytestmark = pytest.mark.django_db

USER = "t:u"
DIMS = settings.EMBEDDING_DIM
VECTOR = [0.5] * DIMS


@pytest.fixture(scope="module")
def schema() -> dict:
    return SchemaGenerator().get_schema(request=None, public=True)


@pytest.fixture
def http(make_client):
    client, _ = make_client("t", ["t:"])
    return client


@pytest.fixture
def staff(make_client):
    client, _ = make_client("ops", staff=True)
    return client


FORMATS = jsonschema.FormatChecker()
# The API's own format (as scripts/fuzz.py teaches schemathesis).
FORMATS.checks("python-regex", raises=re.error)(re.compile)


def admits(schema: dict, where: dict, value: Any) -> bool:
    """Whether the schema at `where` (a component's `$ref`, or a property's schema) takes
    `value`, by a JSON Schema validator with the document's components at hand."""
    root = {**where, "components": schema["components"]}
    return jsonschema.Draft7Validator(root, format_checker=FORMATS).is_valid(value)


def operation(schema: dict, method: str, path: str) -> dict:
    return schema["paths"][path][method]


def body(schema: dict, method: str, path: str) -> dict:
    """The request body's component, as a `$ref`."""
    return operation(schema, method, path)["requestBody"]["content"]["application/json"]["schema"]


def field(schema: dict, method: str, path: str, name: str) -> dict:
    """A request body field's schema."""
    component = body(schema, method, path)["$ref"].split("/")[-1]
    return schema["components"]["schemas"][component]["properties"][name]


def parameter(schema: dict, method: str, path: str, name: str) -> dict:
    return next(p for p in operation(schema, method, path)["parameters"] if p["name"] == name)


def rows() -> tuple[int, ...]:
    return (
        Memory.objects.count(),
        SoulVersion.objects.count(),
        SafetyContract.objects.count(),
        ForgetRequest.objects.count(),
    )


def assert_refused(response, field_name: str | None, *, status: int = 400) -> dict:
    assert response.status_code == status, response.content
    error = response.json()["error"]
    code = "VALIDATION_ERROR" if status == 400 else "FORBIDDEN"
    assert (error["code"], error.get("field")) == (code, field_name), error
    return error


@dataclass(frozen=True)
class Text:
    """A string rule: the schema of `name` on `method path` (`place`: body, query or path)
    refuses `bad` and takes `good`; sending `bad` there (to `url`, when the path has other
    parameters) answers 400 on `name`."""

    method: str
    path: str
    place: str
    name: str
    bad: str
    good: str
    fields: dict[str, Any] = field_default(default_factory=dict)  # the rest of the request
    url: str | None = None

    def schema_of(self, schema: dict) -> dict:
        if self.place == "body":
            return field(schema, self.method, self.path, self.name)
        return parameter(schema, self.method, self.path, self.name)["schema"]

    def send(self, http, value: str):
        url = self.url or self.path
        if self.place == "path":
            return http.generic(self.method.upper(), url.replace("{user_id}", quote(value)))
        values = {**self.fields, self.name: value}
        if self.place == "query":
            return http.generic(self.method.upper(), f"{url}?{urlencode(values)}")
        return http.generic(
            self.method.upper(), url, json.dumps(values), content_type="application/json"
        )


MEMORY = {"user_id": USER, "memory_type": "fact", "content": "Tom keeps bees"}
SEARCH = {"user_id": USER, "q": "bees"}
PROPOSAL = {"intent": "kinder", "new_content": "# SOUL\nBe kind."}
TEXT_RULES = {
    # NUL: PostgreSQL stores none.
    "nul-in-body": Text("post", "/api/v1/memories/", "body", "content", "Tom\x00", "Tom", MEMORY),
    "nul-in-query": Text("get", "/api/v1/search/", "query", "q", "be\x00es", "bees", SEARCH),
    "nul-in-soul": Text(
        "post", "/api/v1/soul/proposals/", "body", "new_content", "#\x00", "# Be kind", PROPOSAL
    ),
    "nul-in-path-user": Text(
        "get", "/api/v1/users/{user_id}/export/", "path", "user_id", "t:\x00", USER
    ),
    "control-in-new-user": Text(
        "post", "/api/v1/memories/", "body", "user_id", "t:\x07", USER, MEMORY
    ),
    # Blank once trimmed, where blank is refused.
    "blank-path-user": Text("get", "/api/v1/users/{user_id}/export/", "path", "user_id", " ", USER),
    "blank-query": Text(
        "post", "/api/v1/recall/", "body", "query", " \t\u3000", "tea", {"user_id": USER}
    ),
    "blank-search": Text("get", "/api/v1/search/", "query", "q", "\u00a0", "bees", SEARCH),
    "blank-include": Text(
        "get", "/api/v1/memories/", "query", "include", " ", "embedding", {"user_id": USER}
    ),
    "blank-content": Text("post", "/api/v1/memories/", "body", "content", "\n ", "Tom", MEMORY),
    "blank-key": Text("post", "/api/v1/memories/", "body", "key", "  ", "k", MEMORY),
    "blank-soul-veto": Text(
        "post",
        "/api/v1/soul/versions/{version}/veto/",
        "body",
        "reason",
        " ",
        "no",
        url="/api/v1/soul/versions/1/veto/",
    ),
    "blank-trait-veto": Text(
        "post",
        "/api/v1/traits/{trait_id}/veto/",
        "body",
        "reason",
        "\r",
        "wrong",
        url="/api/v1/traits/00000000-0000-0000-0000-000000000001/veto/",
    ),
    # Lengths count what is sent, spaces around it included.
    "long-risk-notes": Text(
        "post",
        "/api/v1/soul/proposals/",
        "body",
        "risk_notes",
        "x" * 1999 + " " * 1003,
        "x" * 1999 + " ",
        PROPOSAL,
    ),
    "long-key": Text(
        "post", "/api/v1/memories/", "body", "key", " " * 10 + "k" * 250, "k" * 255, MEMORY
    ),
    # `state`: a comma list of the states, nothing else.
    "unknown-state": Text(
        "get", "/api/v1/memories/", "query", "state", "frozen", "cold", {"user_id": USER}
    ),
    "state-with-space": Text(
        "get",
        "/api/v1/memories/",
        "query",
        "state",
        "active, cold",
        "active,cold",
        {"user_id": USER},
    ),
    "state-blank-item": Text(
        "get", "/api/v1/memories/", "query", "state", "active,", "deleted", {"user_id": USER}
    ),
    "search-deleted": Text("get", "/api/v1/search/", "query", "state", "deleted", "active", SEARCH),
}


@pytest.mark.parametrize("rule", TEXT_RULES.values(), ids=TEXT_RULES.keys())
def test_a_string_rule_is_the_schemas_and_the_servers(schema, http, rule):
    where = rule.schema_of(schema)
    assert not admits(schema, where, rule.bad)
    assert admits(schema, where, rule.good)
    before = rows()
    assert_refused(rule.send(http, rule.bad), rule.name)
    assert rows() == before


@pytest.mark.parametrize(
    ("name", "value", "low", "high"),
    [("depth", 7, 1, 6), ("breadth", 0, 1, 20), ("total", 51, 1, 50)],
)
def test_bulk_limits_are_published_and_enforced(schema, http, name, value, low, high):
    memory = http.post("/api/v1/memories/", MEMORY, format="json").json()["data"]["memory"]
    for path, url in (
        ("/api/v1/memories/{memory_id}/bulk/", f"/api/v1/memories/{memory['id']}/bulk/"),
        ("/api/memories/{key}/bulk", f"/api/memories/{memory['id']}/bulk?user_id={USER}"),
    ):
        bounds = parameter(schema, "get", path, name)["schema"]
        assert (bounds["minimum"], bounds["maximum"]) == (low, high)
        separator = "&" if "?" in url else "?"
        error = assert_refused(http.get(f"{url}{separator}{name}={value}"), name)
        assert (error["minAllowed"], error["maxAllowed"], error["provided"]) == (low, high, value)


@pytest.mark.parametrize(
    "embedding",
    [[], [0.0] * DIMS, [1e-8] * DIMS, [70000.0] + [0.5] * (DIMS - 1)],
    ids=["empty", "zero", "rounds-to-zero", "beyond-halfvec"],
)
def test_embedding_rules_are_the_schemas(schema, http, embedding):
    where = field(schema, "post", "/api/v1/memories/", "embedding")
    assert not admits(schema, where, embedding)
    assert admits(schema, where, VECTOR)
    before = rows()
    assert_refused(
        http.post("/api/v1/memories/", {**MEMORY, "embedding": embedding}, format="json"),
        "embedding",
    )
    assert rows() == before


@pytest.mark.parametrize(
    ("path", "url"),
    [
        ("/api/v1/memories/", "/api/v1/memories/"),
        ("/api/v1/memories/stats/", "/api/v1/memories/stats/"),
        ("/api/memories/stats", "/api/memories/stats"),
        ("/api/v1/reflection/cycles/", "/api/v1/reflection/cycles/"),
    ],
)
def test_reading_every_user_without_user_id_is_forbidden_to_all_but_staff(
    schema, http, staff, path, url
):
    op = operation(schema, "get", path)
    assert not parameter(schema, "get", path, "user_id").get("required", False)
    assert "403" in op["responses"]
    assert_refused(http.get(url), "user_id", status=403)
    assert staff.get(url).status_code == 200


def test_forget_takes_a_topic_or_memory_ids_not_both(schema, http):
    where = body(schema, "post", "/api/v1/users/{user_id}/forget/")
    topic, ids = {"topic": "my address"}, {"memory_ids": ["00000000-0000-0000-0000-000000000001"]}
    assert admits(schema, where, topic) and admits(schema, where, ids)
    assert not admits(schema, where, topic | ids)
    assert not admits(schema, where, {"dry_run": True})
    before = rows()
    for sent in (topic | ids, {"dry_run": True}):
        response = http.post(f"/api/v1/users/{USER}/forget/", sent, format="json")
        assert_refused(response, "topic")
    assert rows() == before


@pytest.mark.parametrize(
    ("contract", "field_name"),
    [
        ({"anchors": [], "constraints": []}, "anchors"),
        ({"anchors": ["kind"], "constraints": ["("]}, "constraints[0]"),
        ({"anchors": [" "], "constraints": []}, "anchors[0]"),
    ],
    ids=["empty", "not-a-regex", "blank-anchor"],
)
def test_the_safety_contract_rules_are_the_schemas(schema, staff, contract, field_name):
    where = body(schema, "put", "/api/v1/soul/contract/")
    assert not admits(schema, where, contract)
    assert admits(schema, where, {"anchors": ["kind"], "constraints": ["cruel(ty)?"]})
    before = rows()
    assert_refused(staff.put("/api/v1/soul/contract/", contract, format="json"), field_name)
    assert rows() == before


def test_every_query_parameter_is_single_valued(schema, http):
    for path, operations in schema["paths"].items():
        for method, op in operations.items():
            for param in op.get("parameters", []):
                assert param["schema"].get("type") != "array", (method, path, param["name"])
    error = assert_refused(http.get(f"/api/v1/memories/?user_id={USER}&user_id=t:other"), "user_id")
    assert error["message"] == "'user_id' is given more than once; give it once."
    stats = http.get(
        f"/api/v1/memories/stats/?user_id={USER}&histogram_bin_size=5&histogram_bin_size=6"
    )
    assert_refused(stats, "histogram_bin_size")


@pytest.mark.parametrize(
    ("raw", "field_name", "constant"),
    [
        ('"importance": NaN', "importance", "NaN"),
        ('"embedding": [0.5, 0.5, 0.5, Infinity]', "embedding[3]", "Infinity"),
        ('"metadata": {"a": {"b": -Infinity}}', "metadata.a.b", "-Infinity"),
    ],
)
def test_nan_and_infinity_are_refused_on_their_field(http, raw, field_name, constant):
    sent = json.dumps(MEMORY)[:-1] + ", " + raw + "}"
    before = rows()
    response = http.generic("POST", "/api/v1/memories/", sent, content_type="application/json")
    error = assert_refused(response, field_name)
    assert error["message"] == f"{constant} is not a number JSON allows."
    assert rows() == before


def test_nan_in_a_batch_item_names_the_item(http):
    bad = json.dumps(MEMORY)[:-1] + ', "importance": NaN}'
    sent = f'{{"items": [{json.dumps(MEMORY)}, {bad}]}}'
    response = http.generic(
        "POST", "/api/v1/memories/batch/", sent, content_type="application/json"
    )
    assert_refused(response, "items[1].importance")
    assert not Memory.objects.exists()
