"""The back-office on the real views and database: the end-user pages (find, overview,
export, purge), the staff roles and what a viewer may not reach, the dashboard."""

import json
from datetime import timedelta

import pytest
from django.apps import apps as django_apps
from django.contrib import admin
from django.contrib.admin.helpers import ACTION_CHECKBOX_NAME
from django.contrib.admin.models import ADDITION, CHANGE, DELETION, LogEntry
from django.contrib.auth.models import Group, Permission, User
from django.contrib.contenttypes.models import ContentType
from django.db import connection
from django.db.models import Q
from django.test import RequestFactory
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils import timezone
from django_celery_beat.models import IntervalSchedule, PeriodicTask

from core.models import JobRun
from evolution.admin import version_url_id
from evolution.models import SoulStatus, SoulVersion
from evolution.services import (
    SoulProposal,
    agent_default,
    safety_contract_update,
    soul_bootstrap,
    soul_propose,
    soul_propose_and_apply,
)
from memories.models import (
    ConversationMessage,
    ConversationSession,
    ForgetRequest,
    Memory,
    MemoryHistory,
    MemorySource,
)
from neuromem_site.backoffice import selectors
from neuromem_site.backoffice.links import end_user_url
from neuromem_site.backoffice.roles import (
    OPERATOR,
    OPERATOR_PERMISSIONS,
    VIEWED_APPS,
    VIEWER,
    roles_create,
    roles_remove,
    roles_sync,
)
from reflection.models import ReflectionCycle
from tests.evolution.conftest import ANCHORS, CONSTRAINTS, SEED, STAFF, edited

pytestmark = pytest.mark.django_db

USERS = "/admin/end-users/"


# --- Data ------------------------------------------------------------------------------------


def memory(content, user_id="u:1", memory_type="fact", **fields):
    return Memory.objects.create(
        user_id=user_id, memory_type=memory_type, content=content, **fields
    )


def trait(content, subtype, user_id="u:1", parent=None, confidence=0.8, stage="established"):
    return memory(
        content,
        user_id=user_id,
        memory_type="trait",
        trait_subtype=subtype,
        trait_stage=stage,
        trait_confidence=confidence,
        trait_parent_id=parent.pk if parent else None,
        trait_reinforcement_count=0,
        trait_contradiction_count=0,
        trait_last_reinforced=timezone.now(),
    )


def cycle(user_id="u:1", status="completed", error=None):
    return ReflectionCycle.objects.create(
        user_id=user_id, trigger_type="manual", status=status, error_message=error
    )


@pytest.fixture
def alice():
    """u:1 with facts (one deleted), an episode, a trait tree, a dissolved trait, a session
    with a message and two reflection cycles; u:2 with one fact."""
    memory("Lives in Lisbon")
    memory("Works as a nurse", score=20.0)  # deprecated
    memory("Had a cat", expired_at=timezone.now())  # deleted
    memory("Went hiking on Sunday", memory_type="episodic")
    core = trait("Values honesty", "core", confidence=0.9)
    preference = trait("Prefers direct feedback", "preference", parent=core)
    trait("Asks for blunt code reviews", "behavior", parent=preference, confidence=0.7)
    trait("Runs every morning", "behavior", confidence=0.6)
    trait("Likes jazz", "preference", stage="dissolved")
    session = ConversationSession.objects.create(user_id="u:1")
    ConversationMessage.objects.create(session=session, user_id="u:1", role="user", content="hi")
    cycle(status="completed")
    cycle(status="failed", error="detector down")
    memory("Bob's fact", user_id="u:2")


def staff_in(django_user_model, group: str | None, username: str):
    user = django_user_model.objects.create_user(username, f"{username}@example.com", "pw")
    user.is_staff = True
    user.save()
    if group:
        user.groups.add(Group.objects.get(name=group))
    return user


@pytest.fixture
def viewer_user(django_user_model):
    return staff_in(django_user_model, VIEWER, "vera")


@pytest.fixture
def viewer(client, viewer_user):
    client.force_login(viewer_user)
    return client


@pytest.fixture
def operator_user(django_user_model):
    return staff_in(django_user_model, OPERATOR, "otto")


@pytest.fixture
def operator(client, operator_user):
    client.force_login(operator_user)
    return client


def purge_url(user_id):
    return end_user_url(user_id) + "purge/"


def export_url(user_id):
    return end_user_url(user_id) + "export/"


def messages_of(response):
    return [str(message) for message in response.context["messages"]]


def names(permissions) -> set[str]:
    return {f"{p.content_type.app_label}.{p.codename}" for p in permissions}


# --- The end user's page ---------------------------------------------------------------------


def test_user_page_shows_counts_trait_tree_memories_and_cycles(admin_client, alice):
    page = admin_client.get(end_user_url("u:1"))
    assert page.status_code == 200
    html = page.content.decode()
    overview = page.context["overview"]
    assert overview.counts["fact"] == {"active": 0, "cold": 1, "deprecated": 1, "deleted": 1}
    assert overview.counts["episodic"]["cold"] == 1  # the default score, 50
    assert overview.totals_by_type["trait"] == 5
    assert overview.total == 9 and overview.sessions == 1
    assert "Memories: 9" in html

    # core → preference → behavior, then the other root; the dissolved one only counted.
    order = [
        "Values honesty",
        "Prefers direct feedback",
        "Asks for blunt code reviews",
        "Runs every morning",
    ]
    positions = [html.index(content) for content in order]
    assert positions == sorted(positions)
    assert [row.depth for row in overview.traits] == [0, 1, 2, 0]
    assert "Likes jazz" not in html.split('id="end-user-memories"')[0]
    assert "1 dissolved not shown" in html
    # Decayed as of now, reinforced just now: the confidence itself.
    assert [round(row.decayed, 3) for row in overview.traits] == [0.9, 0.8, 0.7, 0.6]
    assert "0.900" in html
    honesty = Memory.objects.get(content="Values honesty")
    assert reverse("admin:reflection_trait_change", args=[honesty.pk]) in html

    # Latest memories (deleted ones too), newest first, and the cycles, linked.
    assert [m.content for m in overview.latest][:2] == ["Likes jazz", "Runs every morning"]
    assert "Bob&#x27;s fact" not in html and "Bob's fact" not in html
    failed = ReflectionCycle.objects.get(status="failed")
    assert reverse("admin:reflection_reflectioncycle_change", args=[failed.pk]) in html
    assert "detector down" in html
    assert 'id="export-link"' in html and 'id="purge-link"' in html


def test_user_page_of_an_id_with_slash_question_mark_and_accents(admin_client):
    user_id = "v1/zoë?x=1 #2"
    memory("Speaks Portuguese", user_id=user_id)
    url = end_user_url(user_id)
    assert "/" not in url.removeprefix(USERS).rstrip("/")
    page = admin_client.get(url)
    assert page.status_code == 200
    assert "Speaks Portuguese" in page.content.decode()
    assert page.context["user_id"] == user_id


def test_user_page_of_an_unknown_user_says_nothing_is_held(admin_client):
    page = admin_client.get(end_user_url("nobody"))
    assert page.status_code == 200
    assert "Nothing is held about this user" in page.content.decode()


def test_user_page_links_to_the_admin_lists_filtered_to_the_user(admin_client, alice):
    page = admin_client.get(end_user_url("u:1"))
    links = dict(page.context["links"])
    assert links["Traits"] == "/admin/reflection/trait/?q=user_id%3Au%3A1"
    assert admin_client.get(links["Traits"]).status_code == 200
    for url in links.values():
        assert admin_client.get(url).status_code == 200, url
    for _kind, cells, _total, url in page.context["counts"]:
        for _number, cell_url in [*cells, (None, url)]:
            if cell_url:  # the memory admin's list, filtered to the user (and type or state)
                assert admin_client.get(cell_url).status_code == 200, cell_url


# --- Finding an end user ---------------------------------------------------------------------


def test_search_finds_exact_ids_and_prefixes_in_byte_order(admin_client):
    for user_id in ("agent1:bob", "agent1:alice", "agent10:zed", "agent1-x", "agent1alice"):
        memory("something", user_id=user_id)
        memory("more", user_id=user_id, memory_type="episodic")
    ConversationSession.objects.create(user_id="solo:1")  # no memory, a session only

    def found(term):
        page = admin_client.get(USERS, {"q": term})
        assert page.status_code == 200
        return [user_id for user_id, _ in page.context["found"]]

    assert found("agent1:") == ["agent1:alice", "agent1:bob"]
    assert found("agent1") == [
        "agent1-x",
        "agent10:zed",
        "agent1:alice",
        "agent1:bob",
        "agent1alice",
    ]
    assert found("agent1:bob") == ["agent1:bob"]
    assert found("solo:1") == ["solo:1"]
    assert found("solo:") == []  # prefixes search memories only
    assert found("nobody") == []
    page = admin_client.get(USERS, {"q": "agent1:"})
    assert end_user_url("agent1:alice") in page.content.decode()


def test_search_walks_the_byte_order_index_not_the_table():
    with connection.cursor() as cursor:
        cursor.execute("SET LOCAL enable_seqscan = off")
        cursor.execute(
            "EXPLAIN " + selectors.USERS_BY_PREFIX_SQL, {"prefix": "agent1:", "limit": 50}
        )
        plan = "\n".join(row[0] for row in cursor.fetchall())
    assert "Seq Scan on memories" not in plan
    for partition in ("fact", "episodic", "trait", "document"):
        assert f"idx_memories_{partition}_user_c" in plan


# --- Export ----------------------------------------------------------------------------------


def test_export_download_is_the_apis_export(admin_client, make_client, alice, monkeypatch):
    # The export decays traits' confidence to the moment it is made: one moment for both.
    moment = timezone.now()
    monkeypatch.setattr(timezone, "now", lambda: moment)
    api, _ = make_client("ops", [], staff=True)
    from_api = api.get("/api/v1/users/u:1/export/")
    assert from_api.status_code == 200

    download = admin_client.get(export_url("u:1"))
    assert download.status_code == 200
    assert download["Content-Type"] == "application/json"
    assert download["Content-Disposition"] == ('attachment; filename="neuromem-export-u_1.json"')
    assert json.loads(download.content) == from_api.json()
    assert download.content == from_api.content
    assert len(from_api.json()["data"]["memories"]) == 9


# --- Purge -----------------------------------------------------------------------------------


def test_purge_with_a_wrong_id_deletes_nothing(operator, alice):
    confirm = operator.get(purge_url("u:1"))
    assert confirm.status_code == 200
    assert 'name="confirm_user_id"' in confirm.content.decode()

    refused = operator.post(purge_url("u:1"), {"confirm_user_id": "u:2"})
    assert refused.status_code == 200
    assert "nothing was purged" in " ".join(messages_of(refused))
    assert Memory.objects.filter(user_id="u:1").count() == 9
    assert Memory.objects.filter(user_id="u:2").count() == 1
    assert not LogEntry.objects.filter(action_flag=DELETION).exists()


def test_purge_with_the_right_id_deletes_shows_counts_and_logs(operator, operator_user, alice):
    done = operator.post(purge_url("u:1"), {"confirm_user_id": "u:1"})
    assert done.status_code == 200
    deleted = dict(done.context["deleted"])
    assert deleted["memories"] == 9
    assert deleted["conversations"] == 1
    assert deleted["conversation_sessions"] == 1
    assert deleted["reflection_cycles"] == 2
    html = done.content.decode()
    assert "memory_history" in html and "reflection_cycles" in html

    assert not Memory.objects.filter(user_id="u:1").exists()
    assert not ReflectionCycle.objects.filter(user_id="u:1").exists()
    assert Memory.objects.filter(user_id="u:2").count() == 1
    entry = LogEntry.objects.get(action_flag=DELETION)
    assert entry.user == operator_user
    assert entry.object_id == "u:1"
    assert entry.content_type.model_class() is Memory
    assert "Purged end user u:1: " in entry.change_message
    assert "memories 9" in entry.change_message


# --- Roles -----------------------------------------------------------------------------------


def every_view_permission() -> set[str]:
    return {
        f"{model._meta.app_label}.view_{model._meta.model_name}"
        for label in VIEWED_APPS
        for model in django_apps.get_app_config(label).get_models()
    }


def test_groups_exist_after_migrate_with_their_permissions():
    views = every_view_permission()
    assert {
        "memories.view_memory",
        "reflection.view_trait",
        "evolution.view_soulversion",
        "api.view_apiclient",
        "django_celery_beat.view_periodictask",
        "core.view_jobrun",
    } <= views
    viewer = names(Group.objects.get(name=VIEWER).permissions.all())
    operator = names(Group.objects.get(name=OPERATOR).permissions.all())
    assert viewer == views
    assert operator == views | set(OPERATOR_PERMISSIONS)


def test_roles_are_made_on_a_database_without_permissions_idempotently():
    """As the migration finds a fresh database: no permission made by post_migrate yet."""
    Group.objects.filter(name__in=[VIEWER, OPERATOR]).delete()
    Permission.objects.filter(content_type__app_label__in=VIEWED_APPS).delete()
    roles_create(django_apps)
    roles_create(django_apps)
    assert names(Group.objects.get(name=VIEWER).permissions.all()) == every_view_permission()
    operator = Group.objects.get(name=OPERATOR)
    assert names(operator.permissions.all()) == every_view_permission() | set(OPERATOR_PERMISSIONS)

    # After a migrate: what staff took from the operator's extras stays taken, a view
    # permission (a model added since, say) comes back, a missing group is made whole.
    purge = Permission.objects.get(codename="purge_end_user")
    view_memory = Permission.objects.get(codename="view_memory")
    operator.permissions.remove(purge, view_memory)
    Group.objects.filter(name=VIEWER).delete()
    roles_sync(django_apps)
    assert "memories.view_memory" in names(operator.permissions.all())
    assert "memories.purge_end_user" not in names(operator.permissions.all())
    assert names(Group.objects.get(name=VIEWER).permissions.all()) == every_view_permission()

    roles_remove(django_apps)
    assert not Group.objects.filter(name__in=[VIEWER, OPERATOR]).exists()


def test_viewer_has_no_add_change_delete_or_action_on_any_admin_page(viewer_user):
    request = RequestFactory().get("/admin/")
    request.user = viewer_user
    offenders = []
    for model, model_admin in admin.site._registry.items():
        name = model._meta.label
        if model_admin.has_add_permission(request):
            offenders.append(f"{name}: add")
        if model_admin.has_change_permission(request):
            offenders.append(f"{name}: change")
        if model_admin.has_delete_permission(request):
            offenders.append(f"{name}: delete")
        offenders += [f"{name}: action {action}" for action in model_admin.get_actions(request)]
    assert offenders == []


def test_viewer_gets_403_on_purge(viewer, alice):
    assert viewer.get(end_user_url("u:1")).status_code == 200  # may look
    assert 'id="purge-link"' not in viewer.get(end_user_url("u:1")).content.decode()
    assert viewer.get(purge_url("u:1")).status_code == 403
    assert viewer.post(purge_url("u:1"), {"confirm_user_id": "u:1"}).status_code == 403
    assert Memory.objects.filter(user_id="u:1").count() == 9


def test_viewer_cannot_veto_a_trait_operator_can_and_it_is_logged(
    client, viewer_user, operator_user, alice
):
    target = Memory.objects.get(content="Runs every morning")
    veto = reverse("admin:reflection_trait_veto", args=[target.pk])
    client.force_login(viewer_user)
    assert client.get(veto).status_code == 403
    assert client.post(veto, {"reason": "wrong"}).status_code == 403
    client.post(
        "/admin/reflection/trait/",
        {
            "action": "veto_selected",
            ACTION_CHECKBOX_NAME: [target.pk],
            "apply": "yes",
            "reason": "wrong",
        },
    )
    target.refresh_from_db()
    assert target.trait_stage == "established"

    client.force_login(operator_user)
    assert client.post(veto, {"reason": "not true"}).status_code == 302
    target.refresh_from_db()
    assert target.trait_stage == "dissolved"
    entry = LogEntry.objects.get(object_id=str(target.pk))
    assert entry.user == operator_user and entry.action_flag == CHANGE
    assert "not true" in entry.change_message


@pytest.fixture
def souls():
    """v0 (superseded by v1), v1 active, v2 a proposal not evaluated yet."""
    agent = agent_default(caller=STAFF)
    safety_contract_update(agent=agent, caller=STAFF, anchors=ANCHORS, constraints=CONSTRAINTS)
    soul_bootstrap(agent=agent, caller=STAFF, content=SEED)
    applied = soul_propose_and_apply(
        agent=agent,
        caller=STAFF,
        proposal=SoulProposal(new_content=edited("Use examples."), intent="x"),
        auto_apply=True,
    ).version
    proposed = soul_propose(
        agent=agent,
        caller=STAFF,
        proposal=SoulProposal(new_content=edited("Be brief."), intent="y"),
    )
    return SoulVersion.objects.get(agent=agent, version=0), applied, proposed


def test_viewer_cannot_act_on_soul_versions_operator_can(client, viewer_user, operator_user, souls):
    superseded, active, proposed = souls
    assert active.status == SoulStatus.ACTIVE and proposed.status == SoulStatus.PROPOSED

    def url(name, version):
        return reverse(
            f"admin:evolution_soulversion_{name}",
            args=[version_url_id(version.agent_id, version.version)],
        )

    client.force_login(viewer_user)
    assert client.get(url("change", active)).status_code == 200
    for name, version in (
        ("veto", active),
        ("veto", proposed),
        ("evaluate", proposed),
        ("apply", proposed),
        ("rollback", superseded),
    ):
        assert client.get(url(name, version)).status_code == 403, name
        assert client.post(url(name, version), {"reason": "no"}).status_code == 403, name
    assert client.get(reverse("admin:evolution_safetycontract_add")).status_code == 403
    statuses = dict(SoulVersion.objects.values_list("version", "status"))
    assert statuses == {0: "superseded", 1: "active", 2: "proposed"}
    assert SoulVersion.objects.get(pk=proposed.pk).eval_result is None

    client.force_login(operator_user)
    assert client.post(url("evaluate", proposed)).status_code == 302
    assert SoulVersion.objects.get(pk=proposed.pk).eval_result is not None
    entry = LogEntry.objects.get(object_id=str(proposed.pk))
    assert entry.user == operator_user and entry.change_message.startswith("Evaluated")


def test_beat_schedule_actions_need_the_change_permission_and_are_logged(
    client, viewer_user, admin_client, admin_user
):
    task = schedule("score-memories")
    assert task.enabled
    action = {"action": "disable_tasks", ACTION_CHECKBOX_NAME: [task.pk]}
    client.force_login(viewer_user)
    client.post("/admin/django_celery_beat/periodictask/", action)
    task.refresh_from_db()
    assert task.enabled

    admin_client.post("/admin/django_celery_beat/periodictask/", action)
    task.refresh_from_db()
    assert not task.enabled
    entry = LogEntry.objects.get(object_id=str(task.pk))
    assert entry.user == admin_user and entry.change_message == "Disabled"


# --- The dashboard ---------------------------------------------------------------------------


def schedule(name: str) -> PeriodicTask:
    """The beat schedule `name` (the migrations seed them; a flush by another test does not)."""
    every, _ = IntervalSchedule.objects.get_or_create(every=900, period="seconds")
    task, _ = PeriodicTask.objects.get_or_create(
        name=name, defaults={"task": f"tests.{name}", "interval": every}
    )
    return task


@pytest.fixture
def activity(alice):
    schedule("score-memories")
    schedule("reflection-triggers")
    Memory.objects.filter(content="Lives in Lisbon").update(embedding_status="failed")
    Memory.objects.filter(content="Went hiking on Sunday").update(embedding_status="ready")
    now = timezone.now()
    JobRun.objects.create(
        job="score-memories",
        status="done",
        started_at=now - timedelta(hours=1),
        finished_at=now - timedelta(hours=1),
        rows=12,
    )
    JobRun.objects.create(
        job="score-memories", status="failed", started_at=now, finished_at=now, error="boom"
    )
    JobRun.objects.create(job="ad-hoc-job", status="done", started_at=now, finished_at=now)
    # The planner's row counts survive a rolled-back test that filled the table: fresh ones.
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE memories")


def test_dashboard_shows_counts_jobs_and_failed_cycles_with_links(admin_client, activity):
    page = admin_client.get("/admin/")
    assert page.status_code == 200
    html = page.content.decode()
    context = page.context

    types = {kind: str(count) for kind, count, _ in context["memory_types"]}
    assert types == {"fact": "4", "episodic": "1", "trait": "5", "document": "0"}
    states = {state: str(count) for state, count, _ in context["memory_states"]}
    assert states == {"active": "0", "cold": "8", "deprecated": "1", "deleted": "1"}
    embeddings = {status: str(count) for status, count, _ in context["embeddings"]}
    assert embeddings == {"pending": "8", "failed": "1"}
    assert str(context["memory_total"]) == "10"
    for _, _, url in [*context["memory_types"], *context["memory_states"], *context["embeddings"]]:
        if url:  # the memory admin's list with that filter
            assert admin_client.get(url).status_code == 200, url

    jobs = {job["name"]: job for job in context["jobs"]}
    score = jobs["score-memories"]
    assert score["last_run"].status == "failed" and "boom" in html
    assert score["runs_url"] == "/admin/core/jobrun/?job=score-memories"
    assert score["failures_url"] == "/admin/core/jobrun/?job=score-memories&status__exact=failed"
    assert score["schedule_url"] == reverse(
        "admin:django_celery_beat_periodictask_change", args=[score["schedule"].pk]
    )
    assert jobs["ad-hoc-job"]["schedule"] is None  # runs recorded, no schedule
    assert jobs["reflection-triggers"]["last_run"] is None  # a schedule, no run yet
    for job in jobs.values():
        assert admin_client.get(job["runs_url"]).status_code == 200

    assert str(context["failed_cycles"]) == "1"
    assert context["failed_cycles_url"] == "/admin/reflection/reflectioncycle/?status__exact=failed"
    assert admin_client.get(context["failed_cycles_url"]).status_code == 200
    assert "detector down" in html and end_user_url("u:1") in html
    # "End users" heads the app list.
    assert context["app_list"][0]["name"] == "End users"
    assert reverse("admin:backoffice_end_users") in html


def test_dashboard_at_scale_estimates_and_never_counts_memories(
    admin_client, activity, monkeypatch
):
    monkeypatch.setattr(selectors, "EXACT_BELOW", 0)
    with CaptureQueriesContext(connection) as queries:
        page = admin_client.get("/admin/")
    assert page.status_code == 200
    assert all(count.estimated for _, count, _ in page.context["memory_types"])
    assert all(count.estimated for _, count, _ in page.context["memory_states"])
    assert "≈" in page.content.decode()
    on_memories = [
        q["sql"]
        for q in queries.captured_queries
        if '"memories"' in q["sql"] or "FROM memories" in q["sql"]
    ]
    assert on_memories
    for sql in on_memories:
        assert sql.startswith("EXPLAIN") or "LIMIT" in sql, sql


def test_dashboard_embedding_counts_read_partial_indexes():
    for status in ("pending", "failed"):
        queryset = (
            Memory.objects.exclude(embedding_status="ready")
            .filter(embedding_status=status)
            .values("pk")[: selectors.CAPPED_AT + 1]
        )
        with connection.cursor() as cursor:
            cursor.execute("SET LOCAL enable_seqscan = off")
        plan = queryset.explain()
        assert "Seq Scan" not in plan, plan


def test_capped_counts_say_at_least():
    for n in range(3):
        memory(f"pending {n}")
    assert str(selectors.count_capped(Memory.objects.all(), cap=2)) == "2+"
    assert str(selectors.count_capped(Memory.objects.all(), cap=3)) == "3"
    assert str(selectors.Count(1234, estimated=True)) == "≈ 1,234"


def test_an_export_is_on_record(operator, operator_user, alice):
    assert operator.get(export_url("u:1")).status_code == 200
    entry = LogEntry.objects.get(object_id="u:1")
    assert (entry.user, entry.content_type.model_class()) == (operator_user, Memory)
    assert entry.change_message == "Exported everything held about end user u:1."


def test_a_purge_leaves_no_content_in_the_admin_log(operator, alice):
    memory = Memory.objects.filter(user_id="u:1").first()
    LogEntry.objects.create(
        user=User.objects.create(username="earlier"),
        content_type=ContentType.objects.get_for_model(Memory),
        object_id=str(memory.pk),
        object_repr=str(memory),
        action_flag=CHANGE,
        change_message=f"Invalidated: {memory.content}",
    )
    done = operator.post(purge_url("u:1"), {"confirm_user_id": "u:1"})
    assert dict(done.context["deleted"])["django_admin_log_redacted"] == 1
    redacted = LogEntry.objects.get(object_id=str(memory.pk))
    assert (redacted.object_repr, redacted.change_message) == ("(purged)", "")


def test_a_purge_leaves_the_end_user_named_only_by_its_own_entry(operator, alice):
    """What staff did to the end user (an export, a forget) stays on record as actions, not
    naming them; the purge's entry is the record that the user was erased."""
    assert operator.get(export_url("u:1")).status_code == 200
    operator.post(forget_url("u:1"), {"topic": "Lisbon", "confirm": "Forget"})
    assert LogEntry.objects.filter(change_message__contains="u:1").count() == 2
    done = operator.post(purge_url("u:1"), {"confirm_user_id": "u:1"})
    assert dict(done.context["deleted"])["django_admin_log_redacted"] == 2
    naming = LogEntry.objects.filter(
        Q(object_id__contains="u:1")
        | Q(object_repr__contains="u:1")
        | Q(change_message__contains="u:1")
    )
    assert [entry.change_message.split(":")[0] for entry in naming] == ["Purged end user u"]


# --- Forgetting a topic ----------------------------------------------------------------------

ADDRESS = "742 Evergreen Terrace"


def forget_url(user_id):
    return end_user_url(user_id) + "forget/"


@pytest.fixture
def home():
    """u:1's home address, in a fact and in the message it came from; a fact on another topic."""
    session = ConversationSession.objects.create(user_id="u:1")
    said = ConversationMessage.objects.create(
        session=session,
        user_id="u:1",
        role="user",
        content=f"My home address is {ADDRESS}. I love jazz.",
    )
    fact = memory(f"The user's home address is {ADDRESS}")
    MemorySource.objects.create(memory_id=fact.pk, session_id=session.pk, conversation_id=said.pk)
    memory("The user loves jazz")
    return said, fact


def everything_held():
    """What a forget could change: contents, history, forget requests, the admin log."""
    return (
        sorted(Memory.objects.values_list("id", "content", "version", "forgotten_at")),
        sorted(ConversationMessage.objects.values_list("id", "content")),
        MemoryHistory.objects.count(),
        ForgetRequest.objects.count(),
        LogEntry.objects.count(),
    )


def test_operator_sees_what_a_topic_would_forget_then_confirms(operator, operator_user, home):
    said, fact = home
    page = operator.get(end_user_url("u:1")).content.decode()
    assert 'id="end-user-forget"' in page and f'action="{forget_url("u:1")}"' in page

    before = everything_held()
    preview = operator.post(forget_url("u:1"), {"topic": "my home address"})
    assert preview.status_code == 200
    html = preview.content.decode()
    assert everything_held() == before  # a dry run
    assert "What forgetting “my home address” would erase" in html
    plan = html.split('id="forget-plan-memories"')[1]
    assert f"The user&#x27;s home address is {ADDRESS}" in plan
    assert "The user loves jazz" not in plan
    assert "[forgotten] I love jazz." in plan  # the message, after
    assert 'name="confirm"' in html and 'name="topic" value="my home address"' in html

    done = operator.post(forget_url("u:1"), {"topic": "my home address", "confirm": "Forget"})
    forget_request = ForgetRequest.objects.get()
    assert done.status_code == 302
    assert done["Location"] == reverse(
        "admin:memories_forgetrequest_change", args=[forget_request.pk]
    )
    assert (forget_request.user_id, forget_request.via) == ("u:1", "admin")
    assert forget_request.requested_by == "staff:otto"
    assert forget_request.memory_ids == [fact.pk] and forget_request.message_ids == [said.pk]
    fact.refresh_from_db()
    assert fact.forgotten_at is not None and fact.content == ""
    assert Memory.objects.get(content="The user loves jazz").forgotten_at is None
    (entry,) = LogEntry.objects.all()
    assert (entry.user, entry.action_flag, entry.object_id) == (
        operator_user,
        ADDITION,
        str(forget_request.pk),
    )
    assert entry.change_message == (
        f"Forgot a topic of end user u:1 (forget request {forget_request.pk}): "
        "1 memory forgotten whole, 0 erased in part, 1 message erased."
    )
    # Never the topic, nor what it said.
    for text in ("home address", "Evergreen"):
        assert text not in entry.change_message + entry.object_repr

    # The user's page: the record, not the content.
    after = operator.get(end_user_url("u:1")).content.decode()
    assert "(forgotten)" in after and "Evergreen" not in after


@pytest.mark.parametrize(
    ("topic", "error"),
    [
        ("", "This field is required."),
        ("   ", "This field is required."),
        ("x" * 501, "Ensure this value has at most 500 characters (it has 501)."),
        ("my a\x00ddress", "Null characters are not allowed."),
    ],
)
def test_a_bad_topic_is_refused_on_the_form_and_nothing_is_written(operator, home, topic, error):
    before = everything_held()
    for data in ({"topic": topic}, {"topic": topic, "confirm": "Forget"}):
        refused = operator.post(forget_url("u:1"), data)
        assert refused.status_code == 200
        assert refused.context["form"].errors["topic"] == [error]
        assert error in refused.content.decode()
        assert 'name="confirm"' not in refused.content.decode()
    assert everything_held() == before


def test_a_topic_that_names_nothing_is_explained_and_not_offered(operator, home):
    before = everything_held()
    html = operator.post(forget_url("u:1"), {"topic": "everything"}).content.decode()
    assert "The request names nothing specific" in html
    assert 'name="confirm"' not in html
    assert everything_held() == before


def test_viewer_sees_no_forget_form_and_gets_403(viewer, home):
    page = viewer.get(end_user_url("u:1")).content.decode()
    assert 'id="end-user-forget"' not in page and forget_url("u:1") not in page
    before = everything_held()
    assert viewer.get(forget_url("u:1")).status_code == 403
    assert viewer.post(forget_url("u:1"), {"topic": "my home address"}).status_code == 403
    data = {"topic": "my home address", "confirm": "Forget"}
    assert viewer.post(forget_url("u:1"), data).status_code == 403
    assert everything_held() == before


# --- The dashboard's privacy panel -----------------------------------------------------------


@pytest.fixture
def privacy(home):
    """Redactions in memories and messages, now and two days ago; forget requests by three
    paths this week, and one older."""
    now = timezone.now()
    memory("pw [redacted: password]", redactions={"password": 1})
    memory("k [redacted: api_key] [redacted: api_key]", redactions={"api_key": 2})
    memory(
        "old [redacted: password]",
        redactions={"password": 1, "card_number": 1},
        created_at=now - timedelta(days=2),
    )
    session = ConversationSession.objects.create(user_id="u:2")
    for created_at, redactions in ((now, {"password": 2}), (now - timedelta(days=2), {"iban": 1})):
        ConversationMessage.objects.create(
            session=session,
            user_id="u:2",
            role="user",
            content="[redacted]",
            redactions=redactions,
            created_at=created_at,
        )
    requests = []
    for days, via in ((10, "api"), (3, "conversation"), (2, "admin"), (1, "admin"), (0, "mcp")):
        requests.append(
            ForgetRequest.objects.create(
                user_id="u:1",
                requested_by="agent",
                via=via,
                created_at=now - timedelta(days=days, minutes=1),
            )
        )
    return requests


def test_dashboard_privacy_panel_counts_redactions_and_forget_requests(admin_client, privacy):
    page = admin_client.get("/admin/")
    assert page.status_code == 200
    context = page.context
    redactions = {
        row.kind: tuple(
            str(count)
            for count in (row.memories, row.memories_recent, row.messages, row.messages_recent)
        )
        for row in context["redactions"]
    }
    assert redactions == {
        "password": ("2", "1", "2", "2"),
        "card_number": ("1", "0", "0", "0"),
        "iban": ("0", "0", "1", "0"),
        "api_key": ("2", "2", "0", "0"),
    }
    # In the redaction module's order of kinds.
    assert [row.kind for row in context["redactions"]] == [
        "password",
        "card_number",
        "iban",
        "api_key",
    ]
    by_via = {via: number for via, number, _ in context["forget_requests_by_via"]}
    assert by_via == {"conversation": 1, "api": 0, "mcp": 1, "admin": 2}
    for _, _, url in context["forget_requests_by_via"]:
        assert admin_client.get(url).status_code == 200, url
    latest = [forget_request for forget_request, _, _ in context["forget_requests_latest"]]
    assert latest == privacy[::-1]  # newest first
    html = page.content.decode()
    assert 'id="dashboard-privacy"' in html
    for forget_request, url, _ in context["forget_requests_latest"]:
        assert url == reverse("admin:memories_forgetrequest_change", args=[forget_request.pk])
        assert f'href="{url}"' in html


def test_viewer_sees_the_privacy_panel(viewer, privacy):
    page = viewer.get("/admin/")
    assert 'id="dashboard-privacy"' in page.content.decode()
    assert page.context["redactions"] and page.context["forget_requests_latest"]


def test_redaction_counts_stop_at_the_cap_and_say_at_least():
    for n in range(3):
        memory(f"pw {n}", redactions={"password": 1})
    counts = selectors.redactions_capped(Memory.objects.all(), cap=2)
    assert {kind: str(count) for kind, count in counts.items()} == {"password": "2+"}
    exact = selectors.redactions_capped(Memory.objects.all(), cap=3)
    assert {kind: str(count) for kind, count in exact.items()} == {"password": "3"}


def test_privacy_counts_read_the_partial_indexes(admin_client):
    with CaptureQueriesContext(connection) as queries:
        assert admin_client.get("/admin/").status_code == 200
    reads = [q["sql"] for q in queries.captured_queries if '"redactions" IS NOT NULL' in q["sql"]]
    assert len(reads) == 4  # memories and messages, all time and the last day
    plans = []
    with connection.cursor() as cursor:
        cursor.execute("SET LOCAL enable_seqscan = off")  # the tables are empty: which index?
        for sql in reads:
            assert "LIMIT" in sql, sql
            cursor.execute(f"EXPLAIN {sql}")
            plans.append("\n".join(row[0] for row in cursor.fetchall()))
    for plan in plans:
        assert "Seq Scan" not in plan, plan
    on_memories, on_messages = plans[:2], plans[2:]
    for plan in on_memories:
        for partition in ("fact", "episodic", "trait", "document"):
            assert f"idx_memories_{partition}_redacted" in plan, plan
    for plan in on_messages:
        assert "idx_conversations_redacted" in plan, plan
