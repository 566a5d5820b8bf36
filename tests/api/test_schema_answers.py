"""Real answers against the published schema, strictly: every status, field and type an answer
holds is documented (`make fuzz` checks the schema's own rules, under which an object may hold
fields it does not name). One scenario walks the routes, errors included."""

import re
from pathlib import Path
from typing import Any

import pytest
import yaml
from django.conf import settings
from jsonschema import Draft202012Validator

from reflection.models import TraitEvidence

pytestmark = pytest.mark.django_db

SPEC = yaml.safe_load((Path(settings.BASE_DIR) / "docs" / "openapi.yaml").read_text())
COMPONENTS = SPEC["components"]["schemas"]
USER = "a:alice"
SOUL = "# Soul\n\n## Core principles\n- be kind\n\n## Constraints\n- never lie\n"


def component(reference: str) -> dict:
    return COMPONENTS[reference.rsplit("/", 1)[1]]


def strict(schema: dict) -> dict:
    """An OpenAPI 3.0 schema as JSON Schema, where an object's undocumented field is an error
    (unless the object says it takes more): `nullable` as a null choice, `$ref` into `$defs`,
    an `allOf` of objects as the one object it describes."""
    if "$ref" in schema:
        converted: dict[str, Any] = {"$ref": "#/$defs/" + schema["$ref"].rsplit("/", 1)[1]}
    elif len(schema.get("allOf", ())) > 1:
        merged: dict[str, Any] = {"type": "object", "properties": {}, "required": []}
        for part in schema["allOf"]:
            part = component(part["$ref"]) if "$ref" in part else part
            merged["properties"] |= part.get("properties", {})
            merged["required"] += part.get("required", [])
            if "additionalProperties" in part:
                merged["additionalProperties"] = part["additionalProperties"]
        converted = strict(merged)
    else:
        converted = {}
        for key, value in schema.items():
            if key == "properties":
                converted[key] = {name: strict(item) for name, item in value.items()}
            elif key in ("items", "additionalProperties") and isinstance(value, dict):
                converted[key] = strict(value)
            elif key in ("allOf", "oneOf", "anyOf"):
                converted[key] = [strict(item) for item in value]
            elif key not in ("nullable", "example", "examples", "discriminator", "readOnly"):
                converted[key] = value
        if "properties" in converted:
            converted.setdefault("additionalProperties", False)
    return {"anyOf": [converted, {"type": "null"}]} if schema.get("nullable") else converted


DEFINITIONS = {name: strict(schema) for name, schema in COMPONENTS.items()}
# Fewest path parameters first: /api/v1/users/{user_id}/export/ before a wider template.
TEMPLATES = sorted(SPEC["paths"], key=lambda template: template.count("{"))


def operation_of(method: str, path: str) -> tuple[str, dict] | None:
    for template in TEMPLATES:
        pattern = re.sub(r"\\\{[^}]+\\\}", "[^/]+", re.escape(template))
        if re.fullmatch(pattern, path) and method in SPEC["paths"][template]:
            return template, SPEC["paths"][template][method]
    return None


def problems(method: str, url: str, response) -> list[str]:
    path = url.split("?", 1)[0]
    found = operation_of(method, path)
    if found is None:
        return [f"{method} {path}: no such operation"]
    template, operation = found
    where = f"{method} {template} -> {response.status_code}"
    documented = operation["responses"].get(str(response.status_code))
    if documented is None:
        return [f"{where}: status not documented"]
    media_type = response["Content-Type"].split(";")[0]
    content = documented.get("content", {})
    if media_type not in content:
        return [f"{where}: {media_type} not documented"] if content else []
    if media_type != "application/json":
        return []
    validator = Draft202012Validator(
        {"$defs": DEFINITIONS, **strict(content[media_type]["schema"])}
    )
    return [
        f"{where}: {'.'.join(map(str, error.absolute_path)) or '(body)'}: {error.message[:200]}"
        for error in validator.iter_errors(response.json())
    ]


class Recorder:
    """Calls as one API client, each answer checked."""

    def __init__(self, http) -> None:
        self.http = http
        self.problems: list[str] = []

    def __call__(self, method: str, url: str, body: Any = None, **headers: str):
        call = getattr(self.http, method)
        if body is None:
            response = call(url, **headers)
        else:
            response = call(url, body, format="json", **headers)
        self.problems += problems(method, url, response)
        return response

    def data(self, method: str, url: str, body: Any = None) -> Any:
        return self(method, url, body).json()["data"]


def test_every_answer_is_what_the_schema_documents(make_client):
    a, staff = Recorder(make_client("a", ["a:"])[0]), Recorder(make_client("ops", staff=True)[0])
    fact = {"user_id": USER, "content": "Alice likes green tea", "memory_type": "fact"}
    tea = a.data("post", "/api/v1/memories/", fact | {"key": "tea"})["memory"]
    a("post", "/api/v1/memories/", fact | {"key": "tea"})  # NOOP
    hike = a.data("post", "/api/v1/memories/", fact | {"content": "Alice hikes on weekends"})
    hike = hike["memory"]
    trait = a.data(
        "post",
        "/api/v1/memories/",
        {"user_id": USER, "content": "Alice is curious", "memory_type": "trait"}
        | {"metadata": {"trait_stage": "established", "trait_subtype": "behavior"}},
    )["memory"]
    TraitEvidence.objects.create(
        trait_id=trait["id"], memory_id=hike["id"], evidence_type="supporting", quality="B"
    )
    a("post", "/api/v1/memories/", fact | {"content": "my password is hunter2xyz"})
    a(
        "post",
        "/api/v1/memories/batch/",
        {"items": [fact | {"content": "One"}, fact | {"user_id": "b:x"}]},
    )
    for url in (
        f"/api/v1/memories/?user_id={USER}",
        f"/api/v1/memories/?user_id={USER}&include=embedding&include_expired=true",
        f"/api/v1/memories/{tea['id']}/",
        f"/api/v1/memories/{tea['id']}/bulk/",
        f"/api/v1/memories/{tea['id']}/history/",
        f"/api/v1/memories/{tea['id']}/versions/",
        f"/api/v1/search/?user_id={USER}&q=tea",
        f"/api/v1/search/scored/?user_id={USER}&q=tea",
        f"/api/v1/users/{USER}/traits/",
        f"/api/v1/users/{USER}/prompt-context/",
        f"/api/v1/traits/{trait['id']}/",
        f"/api/v1/memories/stats/?user_id={USER}",
        f"/api/v1/memories/stats/?user_id={USER}&export_format=both",
        f"/api/memories/stats?user_id={USER}",
        f"/api/health/memory-system?user_id={USER}",
        "/api/v1/auth/whoami/",
        "/api/v1/health/",
    ):
        a("get", url)
    a("post", f"/api/v1/memories/{tea['id']}/links/", {"target_id": hike["id"], "weight": 0.4})
    a("patch", f"/api/v1/memories/{tea['id']}/", {"version": 1, "importance": 0.7})
    a("patch", f"/api/v1/memories/{tea['id']}/", {"version": 1, "importance": 0.2})  # 409
    a("post", f"/api/v1/memories/{hike['id']}/supersede/", {"content": "Alice hikes in the Alps"})
    a("delete", f"/api/v1/memories/{tea['id']}/links/?target_id={hike['id']}")
    a("delete", f"/api/v1/memories/{tea['id']}/links/?target_id={hike['id']}")  # 404
    a("post", "/api/v1/recall/", {"user_id": USER, "query": "What does Alice drink?"})
    a("post", "/api/v1/recall/", {"user_id": USER, "query": "tea", "fields": "compact"})
    session = a.data("post", "/api/v1/sessions/", {"user_id": USER, "metadata": {"x": 1}})
    messages = f"/api/v1/sessions/{session['id']}/messages/"
    a("post", messages, {"role": "assistant", "content": "Where do you live?"})
    a(
        "post",
        messages,
        {"role": "user", "content": "I live in Denver. My brother Mark is a lawyer."},
    )
    a("post", messages, {"role": "user", "content": "Please forget my address."})
    a("post", f"/api/v1/sessions/{session['id']}/end/")
    a("post", messages, {"role": "user", "content": "late"})  # 409
    a("post", f"/api/v1/traits/{trait['id']}/veto/", {"reason": "no"})  # 403: staff's
    staff("post", f"/api/v1/traits/{trait['id']}/veto/", {"reason": "no"})
    cycle = a.data("post", "/api/v1/reflection/cycles/", {"user_id": USER})
    a("get", f"/api/v1/reflection/cycles/?user_id={USER}")
    a("get", f"/api/v1/reflection/cycles/{cycle['id']}/")
    for entity in a.data("get", f"/api/v1/users/{USER}/entities/")[:3]:
        a("get", f"/api/v1/users/{USER}/entities/{entity['id']}/")
    a("post", f"/api/v1/users/{USER}/forget/", {"topic": "green tea", "dry_run": True})
    a("post", f"/api/v1/users/{USER}/forget/", {"topic": "green tea"})
    a("post", f"/api/v1/users/{USER}/forget/", {"topic": "everything"})
    a("get", f"/api/v1/users/{USER}/export/")
    # The key-addressed routes.
    a(
        "post",
        "/add_memory",
        {"user_id": USER, "key": "p:a", "value": {"text": "A", "summary": "a"}},
    )
    b = {"user_id": USER, "key": "p:b", "value": {"text": "B"}}
    a("post", "/add_memory", b | {"links": [{"key": "p:a", "weight": 0.9}]})
    a("post", "/add_memory", b | {"value": {"text": "B2"}})  # 409
    a("post", "/get_memory", {"user_id": USER, "key": "p:b"})
    a("post", "/get_memory", {"user_id": USER, "key": "nope"})  # 404
    a("post", "/update_memory", b | {"value": {"text": "B3"}})
    a("post", "/update_memory_key", {"user_id": USER, "key": "p:b", "newKey": "p:c"})
    a("get", f"/search?user_id={USER}&q=B3")
    a("get", f"/fulltext?user_id={USER}&keywords=B3")
    a("get", f"/api/memories/p:c/bulk?user_id={USER}")
    # Agents, the SOUL and the guardrail.
    default = a.data("get", "/api/v1/agents/")[0]
    helper = a.data("post", "/api/v1/agents/", {"name": "helper"})
    a("post", "/api/v1/agents/", {"name": "helper"})  # 409
    a("get", f"/api/v1/agents/{helper['id']}/")
    a("get", "/api/v1/soul/")  # 404
    a("post", "/api/v1/soul/bootstrap/", {"content": SOUL})
    a("get", "/api/v1/soul/")
    a("get", "/api/v1/soul/contract/")
    contract = {"anchors": ["kind"], "constraints": ["evil"]}
    staff("put", f"/api/v1/agents/{default['id']}/soul/contract/", contract)
    a("post", "/api/v1/soul/proposals/", {"intent": "tone", "new_content": SOUL + "- be brief\n"})
    a("post", "/api/v1/soul/proposals/", {"intent": "drop", "new_content": "# Soul\nbe evil\n"})
    a("get", "/api/v1/soul/versions/")
    a("get", "/api/v1/soul/versions/1/")
    a("post", "/api/v1/soul/rollback/", {"reason": "back"})
    a("post", "/api/v1/guard/check/", {"context": "be kind never lie"})
    a("post", "/api/v1/guard/check/", {"context": "nothing"})
    a("get", "/api/v1/guard/events/")
    a("patch", f"/api/v1/agents/{default['id']}/", {"guard_enabled": True})
    a("post", "/api/v1/guard/check/", {"context": "nothing"}, HTTP_X_NEUROMEM_SESSION="s1")
    a("post", "/api/v1/memories/", fact, HTTP_X_NEUROMEM_SESSION="s1")  # 403: the guard
    a("patch", f"/api/v1/agents/{default['id']}/", {"guard_enabled": False})
    # Errors.
    a("get", f"/api/v1/memories/?user_id={USER}&limit=500")
    a("get", "/api/v1/memories/")
    a("get", f"/api/v1/memories/?user_id={USER}", HTTP_ACCEPT="text/html")  # 406
    a("get", "/api/v1/memories/stats/?user_id=b:x")
    a("get", "/api/v1/users/b:x/export/")
    a("delete", f"/api/v1/memories/{tea['id']}/")
    a("post", f"/api/v1/memories/{tea['id']}/invalidate/", {})  # 409
    a("delete", f"/api/v1/users/{USER}/")
    assert a.problems + staff.problems == []
