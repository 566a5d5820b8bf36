"""The admin's trait, evidence, cycle, consistency and job-run pages, on the real views."""

import pytest
from django.contrib.admin.helpers import ACTION_CHECKBOX_NAME
from django.contrib.admin.models import CHANGE, LogEntry
from django.contrib.auth.models import Permission
from django.contrib.contenttypes.models import ContentType
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils import timezone

from core.admin_base import EstimatedCountPaginator
from core.models import JobRun
from memories.models import Memory, MemoryHistory
from reflection.models import ConsistencyIssue, ReflectionCycle, Trait, TraitEvidence

pytestmark = pytest.mark.django_db

CHANGELIST = "/admin/reflection/trait/"


def make_trait(content="Runs every morning", user_id="u:1", **fields):
    values = {
        "trait_subtype": "behavior",
        "trait_stage": "emerging",
        "trait_confidence": 0.5,
        "trait_reinforcement_count": 0,
        "trait_contradiction_count": 0,
        **fields,
    }
    return Memory.objects.create(user_id=user_id, memory_type="trait", content=content, **values)


def make_fact(content="Went for a run at 6am", user_id="u:1"):
    return Memory.objects.create(user_id=user_id, memory_type="fact", content=content)


def change_url(trait):
    return reverse("admin:reflection_trait_change", args=[trait.pk])


def veto_url(trait):
    return reverse("admin:reflection_trait_veto", args=[trait.pk])


def messages_of(response):
    return [str(message) for message in response.context["messages"]]


@pytest.fixture
def viewer(client, django_user_model):
    """A staff member who may only view traits."""
    user = django_user_model.objects.create_user("viewer", "viewer@example.com", "pw")
    user.is_staff = True
    user.save()
    content_type = ContentType.objects.get_for_model(Trait, for_concrete_model=False)
    user.user_permissions.add(
        Permission.objects.get(content_type=content_type, codename="view_trait")
    )
    client.force_login(user)
    return client


def test_list_renders_with_filters_and_no_add_or_delete(admin_client):
    make_trait()
    make_trait("Prefers tea over coffee", trait_subtype="preference", trait_stage="established")
    page = admin_client.get(CHANGELIST)
    assert page.status_code == 200
    html = page.content.decode()
    assert "Runs every morning" in html and "Prefers tea over coffee" in html
    assert "decayed confidence" in html.lower()
    assert "veto_selected" in html
    assert "/admin/reflection/trait/add/" not in html
    assert "delete_selected" not in html

    filtered = admin_client.get(CHANGELIST, {"trait_subtype__exact": "preference"})
    assert filtered.status_code == 200
    assert "Prefers tea over coffee" in filtered.content.decode()
    assert "Runs every morning" not in filtered.content.decode()
    for query in (
        {"trait_stage__exact": "emerging"},
        {"trait_context__exact": "work"},
        {"trait_derived_from__exact": "reflection"},
        {"current": "yes"},
        {"current": "no"},
    ):
        assert admin_client.get(CHANGELIST, query).status_code == 200


def test_content_search_is_full_text_not_like(admin_client):
    make_trait("Runs every morning")
    make_trait("Prefers tea over coffee")
    make_trait("Runs a book club", user_id="u:2")
    with CaptureQueriesContext(connection) as queries:
        page = admin_client.get(CHANGELIST, {"q": "running"})  # stemmed: finds "Runs"
    html = page.content.decode()
    assert page.status_code == 200
    assert "Runs every morning" in html and "Runs a book club" in html
    assert "Prefers tea over coffee" not in html
    sql = [query["sql"] for query in queries.captured_queries]
    assert any("@@" in statement and "neuromem_search_text" in statement for statement in sql)
    assert not any("LIKE" in statement.upper() for statement in sql)


def test_user_id_search_exact_and_prefix(admin_client):
    make_trait("Runs every morning", user_id="u:1")
    make_trait("Runs a book club", user_id="u:2")
    make_trait("Swims on Sundays", user_id="other:1")
    exact = admin_client.get(CHANGELIST, {"q": "u:2"}).content.decode()
    assert "Runs a book club" in exact and "Runs every morning" not in exact
    only_user = admin_client.get(CHANGELIST, {"q": "user_id:u:1"}).content.decode()
    assert "Runs every morning" in only_user and "Runs a book club" not in only_user
    prefix = admin_client.get(CHANGELIST, {"q": "user_id:u:*"}).content.decode()
    assert "Runs every morning" in prefix and "Runs a book club" in prefix
    assert "Swims on Sundays" not in prefix


def test_paginator_uses_the_planners_estimate_for_big_lists():
    make_trait()

    class Estimated(EstimatedCountPaginator):
        exact_below = 0  # every estimate counts as big

    with CaptureQueriesContext(connection) as queries:
        count = Estimated(Trait.objects.all(), 10).count
    assert isinstance(count, int) and count >= 0
    sql = [query["sql"] for query in queries.captured_queries]
    assert any(statement.startswith("EXPLAIN") for statement in sql)
    assert not any("COUNT(" in statement.upper() for statement in sql)
    assert EstimatedCountPaginator(Trait.objects.all(), 10).count == 1  # small: exact


def test_change_page_shows_evidence_history_parent_and_children(admin_client):
    parent = make_trait("Values health", trait_subtype="core", trait_stage="core")
    trait = make_trait("Likes exercise", trait_subtype="preference", trait_parent_id=parent.pk)
    child = make_trait("Runs every morning", trait_parent_id=trait.pk)
    fact = make_fact("Went for a run at 6am")
    TraitEvidence.objects.create(
        trait_id=trait.pk, memory_id=fact.pk, evidence_type="supporting", quality="B"
    )
    TraitEvidence.objects.create(
        trait_id=trait.pk, memory_id=child.pk, evidence_type="contradicting", quality="D"
    )
    Memory.objects.filter(pk=trait.pk).update(content="Likes exercise a lot")

    page = admin_client.get(change_url(trait))
    assert page.status_code == 200
    html = page.content.decode()
    assert "Evidence (2)" in html
    assert "Went for a run at 6am" in html and "supporting" in html and "contradicting" in html
    assert str(fact.pk) in html
    assert f'href="{change_url(child)}"' in html  # a cited trait and the child link
    assert f'href="{change_url(parent)}"' in html and "Values health" in html
    assert "ADD" in html and "UPDATE" in html and "Likes exercise a lot" in html
    assert f'href="{veto_url(trait)}"' in html
    assert 'name="_save"' not in html  # read-only
    assert admin_client.post(change_url(trait), {"content": "x"}).status_code == 403


def test_single_veto_dissolves_and_records_who_and_why(admin_client, admin_user):
    trait = make_trait()
    form = admin_client.get(veto_url(trait))
    assert form.status_code == 200 and 'name="reason"' in form.content.decode()
    assert "csrfmiddlewaretoken" in form.content.decode()

    response = admin_client.post(veto_url(trait), {"reason": "Wrong inference"}, follow=True)
    assert response.status_code == 200
    assert any("Vetoed 1 trait" in message for message in messages_of(response))
    trait.refresh_from_db()
    assert trait.trait_stage == "dissolved"
    assert trait.expired_at is not None and trait.invalid_at is None
    assert trait.metadata["veto"]["by"] == f"staff:{admin_user.get_username()}"
    assert trait.metadata["veto"]["reason"] == "Wrong inference"
    change = MemoryHistory.objects.get(memory_id=trait.pk, event="STAGE_CHANGE")
    assert change.actor == "user"
    entry = LogEntry.objects.get(object_id=str(trait.pk))
    assert entry.action_flag == CHANGE
    assert entry.change_message == "Vetoed: Wrong inference"
    assert entry.content_type == ContentType.objects.get_for_model(Trait, for_concrete_model=False)
    # A dissolved trait offers no veto any more.
    assert f'href="{veto_url(trait)}"' not in admin_client.get(change_url(trait)).content.decode()


def test_veto_without_reason_changes_nothing(admin_client):
    trait = make_trait()
    response = admin_client.post(veto_url(trait), {"reason": "   "})
    assert response.status_code == 200
    assert any("Nothing was vetoed" in message for message in messages_of(response))
    trait.refresh_from_db()
    assert trait.trait_stage == "emerging" and trait.invalid_at is None
    assert not MemoryHistory.objects.filter(memory_id=trait.pk, event="STAGE_CHANGE").exists()
    assert not LogEntry.objects.exists()


def test_bulk_veto_asks_for_a_reason_then_dissolves_both(admin_client):
    first, second = make_trait("Runs every morning"), make_trait("Reads at night")
    selected = {"action": "veto_selected", ACTION_CHECKBOX_NAME: [first.pk, second.pk]}
    page = admin_client.post(CHANGELIST, {**selected, "index": 0})
    assert page.status_code == 200
    html = page.content.decode()
    assert 'name="reason"' in html and 'name="apply"' in html
    assert "Runs every morning" in html and "Reads at night" in html
    first.refresh_from_db()
    assert first.trait_stage == "emerging"  # nothing yet

    done = admin_client.post(CHANGELIST, {**selected, "apply": "yes", "reason": "Duplicates"})
    assert done.status_code == 302
    for trait in (first, second):
        trait.refresh_from_db()
        assert trait.trait_stage == "dissolved" and trait.expired_at is not None
        assert trait.metadata["veto"]["reason"] == "Duplicates"
    assert LogEntry.objects.count() == 2


def test_bulk_veto_without_reason_changes_nothing(admin_client):
    trait = make_trait()
    response = admin_client.post(
        CHANGELIST,
        {"action": "veto_selected", ACTION_CHECKBOX_NAME: [trait.pk], "apply": "yes"},
        follow=True,
    )
    assert any("Nothing was vetoed" in message for message in messages_of(response))
    trait.refresh_from_db()
    assert trait.trait_stage == "emerging"


def test_bulk_veto_with_a_dissolved_trait_changes_nothing(admin_client):
    current = make_trait("Runs every morning")
    dissolved = make_trait("Reads at night", trait_stage="dissolved")
    response = admin_client.post(
        CHANGELIST,
        {
            "action": "veto_selected",
            ACTION_CHECKBOX_NAME: [current.pk, dissolved.pk],
            "apply": "yes",
            "reason": "Cleanup",
        },
        follow=True,
    )
    assert any("Nothing was vetoed" in message for message in messages_of(response))
    current.refresh_from_db()
    assert current.trait_stage == "emerging" and current.invalid_at is None
    assert "veto" not in current.metadata
    assert not LogEntry.objects.exists()


def test_staff_without_change_permission_cannot_veto(viewer):
    trait = make_trait()
    page = viewer.get(CHANGELIST)
    assert page.status_code == 200
    assert "Runs every morning" in page.content.decode()
    assert "veto_selected" not in page.content.decode()
    detail = viewer.get(change_url(trait))
    assert detail.status_code == 200
    assert veto_url(trait) not in detail.content.decode()

    assert viewer.get(veto_url(trait)).status_code == 403
    assert viewer.post(veto_url(trait), {"reason": "No"}).status_code == 403
    viewer.post(
        CHANGELIST,
        {
            "action": "veto_selected",
            ACTION_CHECKBOX_NAME: [trait.pk],
            "apply": "yes",
            "reason": "No",
        },
    )
    trait.refresh_from_db()
    assert trait.trait_stage == "emerging" and trait.invalid_at is None
    assert not LogEntry.objects.exists()


def test_evidence_cycle_consistency_and_job_run_lists_render(admin_client):
    trait = make_trait()
    fact = make_fact()
    TraitEvidence.objects.create(
        trait_id=trait.pk, memory_id=fact.pk, evidence_type="supporting", quality="B"
    )
    ReflectionCycle.objects.create(
        user_id="u:1", trigger_type="manual", status="failed", error_message="boom"
    )
    ConsistencyIssue.objects.create(
        check_name="evidence_memory", table_name="trait_evidence", row_id="1", missing_id="2"
    )
    JobRun.objects.create(
        job="refresh_trait_view", status="done", finished_at=timezone.now(), rows=3
    )
    pages = {
        "/admin/reflection/traitevidence/": [
            {},
            {"evidence_type__exact": "supporting"},
            {"quality__exact": "B"},
            {"q": str(trait.pk)},
        ],
        "/admin/reflection/reflectioncycle/": [
            {},
            {"status__exact": "failed"},
            {"trigger_type__exact": "manual"},
            {"q": "u:1"},
        ],
        "/admin/reflection/consistencyissue/": [
            {},
            {"check_name__exact": "evidence_memory"},
            {"state": "open"},
            {"state": "resolved"},
        ],
        "/admin/core/jobrun/": [
            {},
            {"job": "refresh_trait_view"},
            {"status__exact": "done"},
        ],
    }
    for url, queries in pages.items():
        for query in queries:
            response = admin_client.get(url, query)
            assert response.status_code == 200, (url, query)
    assert str(trait.pk) in admin_client.get("/admin/reflection/traitevidence/").content.decode()
    cycles = admin_client.get("/admin/reflection/reflectioncycle/", {"q": "u:1"})
    assert "boom" in cycles.content.decode()
    jobs = admin_client.get("/admin/core/jobrun/").content.decode()
    assert "refresh_trait_view" in jobs
    for url in pages:
        assert admin_client.get(url).context["has_add_permission"] is False


def test_the_default_trait_list_reads_the_partition_by_index(admin_client):
    make_trait()
    url = reverse("admin:reflection_trait_changelist")
    with CaptureQueriesContext(connection) as queries:
        assert admin_client.get(url).status_code == 200
    (listing,) = [
        q["sql"]
        for q in queries.captured_queries
        if q["sql"].startswith('SELECT "memories"."id"') and "ORDER BY" in q["sql"]
    ]
    with connection.cursor() as cursor:
        cursor.execute("SET LOCAL enable_sort = off")  # as at scale: no sort of the partition
        cursor.execute(f"EXPLAIN {listing.split(' LIMIT ')[0]} LIMIT 100")  # a page
        plan = "\n".join(row[0] for row in cursor.fetchall())
    assert "idx_trait_recent" in plan, plan


def test_a_trait_forgotten_from_its_memory_page_opens_as_forgotten(admin_client):
    trait = make_trait()
    TraitEvidence.objects.create(
        trait_id=trait.id, memory_id=make_fact().id, evidence_type="supporting", quality="B"
    )
    forget = reverse("admin:memories_memory_forget", args=[trait.pk])
    assert admin_client.post(forget).status_code == 302
    page = admin_client.get(reverse("admin:memories_memory_change", args=[trait.pk]))
    assert page.status_code == 200
    assert "Forgotten on" in page.content.decode()
    assert admin_client.get(change_url(trait)).status_code == 200
