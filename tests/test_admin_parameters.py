"""The admin's lists and actions answer a parameter PostgreSQL or the primary key cannot take
as a wrong parameter (Django's "?e=1" page, an error message), never a 500, and change nothing.
Django lets a list filter by any lookup on the model's own fields and posts any ids to an
action."""

import pytest
from django.contrib.admin import site
from django.contrib.admin.models import LogEntry
from django.contrib.messages import get_messages
from django_celery_beat.models import IntervalSchedule, PeriodicTask, PeriodicTasks

from core.admin_base import CheckedParameters
from evolution.models import Agent
from evolution.services import agent_create, agent_default, safety_contract_update
from memories.models import Memory
from neuromem_site.api.models import ApiClient
from neuromem_site.api.services import api_client_create
from tests.evolution.conftest import STAFF

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize(
    ("url", "query"),
    [
        ("/admin/memories/memory/", {"memory_type__exact": "\x00"}),
        ("/admin/memories/memory/", {"content__regex": "("}),
        ("/admin/memories/memory/", {"created_at__year": "99999999999"}),
        ("/admin/memories/memory/", {"created_at__year": "10000"}),
        ("/admin/evolution/soulevent/", {"created_at__year": "0"}),
        ("/admin/reflection/trait/", {"trait_confidence__gt": "1e39"}),
        ("/admin/core/jobrun/", {"status__exact": "\x00"}),
        ("/admin/api/apiclient/", {"name__regex": "("}),
        ("/admin/django_celery_beat/periodictask/", {"task": "\x00"}),
        ("/admin/django_celery_beat/intervalschedule/", {"period__regex": "("}),
        ("/admin/django_celery_beat/crontabschedule/", {"minute__regex": "("}),
        ("/admin/auth/user/", {"username__regex": "("}),
        ("/admin/auth/group/", {"name": "\x00"}),
    ],
    ids=[
        "nul",
        "bad-regex",
        "year-overflow",
        "year-past-9999",
        "year-zero",
        "past-real",
        "nul-in-a-filter",
        "api",
        "beat",
        "beat-interval",
        "beat-crontab",
        "auth-user",
        "auth-group",
    ],
)
def test_a_lookup_postgresql_refuses_is_a_wrong_parameter(admin_client, caplog, url, query):
    response = admin_client.get(url, query)
    assert response.status_code == 302, response.status_code
    assert response["Location"].endswith("?e=1")
    refused = [r for r in caplog.records if r.name == "neuromem.admin"]
    assert [r.getMessage().split(":")[0] for r in refused] == [
        f"admin list {url} refused its parameters"
    ]


@pytest.mark.parametrize(
    ("url", "action", "selected"),
    [
        ("/admin/reflection/trait/", "veto_selected", "not-a-uuid"),
        ("/admin/evolution/agent/", "guard_on", "x"),
        ("/admin/api/apiclient/", "revoke", "x"),
    ],
)
def test_an_action_on_ids_that_cannot_exist_says_so_and_changes_nothing(
    admin_client, url, action, selected
):
    client, _ = api_client_create(name="someone", user_prefixes=["s:"], is_staff=False)
    agent_create(caller=client.caller, name="helper")
    before = (
        list(Agent.objects.values_list("id", "guard_enabled")),
        list(ApiClient.objects.values_list("id", "is_active")),
        Memory.objects.count(),
    )
    response = admin_client.post(url, {"action": action, "_selected_action": [selected]})
    assert response.status_code == 302
    assert [str(m) for m in get_messages(response.wsgi_request)] == [
        "The selection names no such objects."
    ]
    after = (
        list(Agent.objects.values_list("id", "guard_enabled")),
        list(ApiClient.objects.values_list("id", "is_active")),
        Memory.objects.count(),
    )
    assert after == before


def test_the_contract_page_starts_from_the_contract_named_by_an_id_a_bigint_holds(admin_client):
    client, _ = api_client_create(name="someone", user_prefixes=["s:"], is_staff=False)
    agent = agent_default(caller=client.caller)
    first = safety_contract_update(agent=agent, caller=STAFF, anchors=["Stay kind"], constraints=[])
    safety_contract_update(agent=agent, caller=STAFF, anchors=["Be brief"], constraints=[])
    url = "/admin/evolution/safetycontract/add/"
    assert "Stay kind" not in admin_client.get(url).content.decode()  # the current one's
    assert "Stay kind" in admin_client.get(url, {"from": str(first.pk)}).content.decode()
    for start in ("²", "9" * 5000, str(2**63 - 1), str(2**63)):
        assert admin_client.get(url, {"from": start}).status_code == 200, start


def test_every_admin_list_holds_its_lookups_to_the_check():
    registered = {model._meta.label: admin for model, admin in site._registry.items()}
    unchecked = [
        label for label, admin in registered.items() if not isinstance(admin, CheckedParameters)
    ]
    assert "auth.User" in registered and unchecked == []


@pytest.mark.parametrize("action", ["enable_tasks", "disable_tasks", "toggle_tasks", "run_tasks"])
def test_a_beat_action_on_tasks_that_do_not_exist_leaves_the_schedule_unchanged(
    admin_client, action
):
    changed = PeriodicTasks.last_change()
    response = admin_client.post(
        "/admin/django_celery_beat/periodictask/",
        {"action": action, "_selected_action": [str(2**62)]},
    )
    assert response.status_code == 302
    assert [str(m) for m in get_messages(response.wsgi_request)] == [
        "The selection names no such objects."
    ]
    assert PeriodicTasks.last_change() == changed
    assert not LogEntry.objects.exists()


@pytest.mark.parametrize(
    ("field", "value", "error"),
    [
        ("args", "[NaN]", "[0]: Numbers must be finite."),
        ("args", "[1e400]", "[0]: Numbers must be finite."),
        ("args", "[" * 5000 + "]" * 5000, "Nested deeper than 32 levels."),
        ("args", "[" * 33 + "1" + "]" * 33, "Nested deeper than 32 levels."),
        ("args", '{"a": 1}', "Must be a JSON array."),
        ("kwargs", "[1]", "Must be a JSON object."),
        ("kwargs", '{"a": "\\u0000"}', "a: NUL characters (\\u0000) are not allowed."),
        ("headers", "[]", "Must be a JSON object."),
        ("headers", '{"x": NaN}', "x: Numbers must be finite."),
        ("headers", "not json", "Unable to parse JSON: Expecting value: line 1 column 1 (char 0)"),
        ("args", '[1, "x", {"deep": [2]}]', None),
    ],
)
def test_a_beat_task_saves_only_arguments_celery_can_send(admin_client, field, value, error):
    every = IntervalSchedule.objects.create(every=60, period="seconds")
    form = {
        "name": "probe",
        "regtask": "",
        "task": "tests.probe",
        "interval": every.pk,
        "enabled": "on",
        "args": "[]",
        "kwargs": "{}",
        "priority": "",
        "expire_seconds": "",
        "queue": "",
        "exchange": "",
        "routing_key": "",
        "headers": "{}",
        "description": "",
        field: value,
    }
    response = admin_client.post("/admin/django_celery_beat/periodictask/add/", form)
    if error is None:
        assert response.status_code == 302
        assert PeriodicTask.objects.get(name="probe").args == value
        return
    assert response.status_code == 200  # the form again, with the field's error
    assert response.context["adminform"].form.errors[field] == [error]
    assert not PeriodicTask.objects.filter(name="probe").exists()


@pytest.mark.parametrize(
    "address", ["a1-v{}/change", "a{}-v1/change", "a1-v{}/history", "a1-v{}/veto"]
)
def test_a_soul_version_address_with_a_number_no_bigint_holds_is_not_found(admin_client, address):
    response = admin_client.get(f"/admin/evolution/soulversion/{address.format('9' * 5000)}/")
    assert response.status_code in (302, 404)
