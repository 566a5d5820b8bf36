"""The admin's memory, session and message pages and the staff actions on memories, on the
real views; and the plans of the memory list on enough rows for the planner to choose."""

import importlib

import psycopg
import pytest
from django.contrib.admin.models import ADDITION, CHANGE, LogEntry
from django.contrib.auth.models import Permission
from django.contrib.contenttypes.models import ContentType
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils import timezone

from core.access import SYSTEM, Caller
from core.admin_base import EstimatedCountPaginator
from memories.models import (
    ConversationMessage,
    ConversationSession,
    ForgetRequest,
    Memory,
    MemoryHistory,
    MemoryLink,
    MemorySource,
)
from memories.predicates import states_q
from memories.services import memory_supersede
from memories.services.forgetting import user_forget
from neuromem_site.backoffice.links import end_user_url
from reflection.models import TraitEvidence
from tests.memories.scratch import catalog, migrated, scratch_database

pytestmark = pytest.mark.django_db

MEMORIES = "/admin/memories/memory/"
SESSIONS = "/admin/memories/conversationsession/"
MESSAGES = "/admin/memories/conversationmessage/"
ACTIONS = ("supersede", "invalidate", "soft_delete")


def make_memory(content="Lives in Berlin", user_id="u:1", memory_type="fact", **fields):
    return Memory.objects.create(
        user_id=user_id, memory_type=memory_type, content=content, **fields
    )


def make_trait(content="Drinks coffee every morning", user_id="u:1", **fields):
    values = {
        "trait_subtype": "behavior",
        "trait_stage": "emerging",
        "trait_confidence": 0.5,
        "trait_reinforcement_count": 0,
        "trait_contradiction_count": 0,
        **fields,
    }
    return make_memory(content, user_id, "trait", **values)


def page_url(memory):
    return reverse("admin:memories_memory_change", args=[memory.pk])


def action_url(name, memory):
    return reverse(f"admin:memories_memory_{name}", args=[memory.pk])


def html_of(response):
    assert response.status_code == 200, response.status_code
    return response.content.decode()


def conversation(user_id="u:1"):
    """A session with a user message and the assistant's answer; a fact written from the
    user's message."""
    session = ConversationSession.objects.create(user_id=user_id)
    said = ConversationMessage.objects.create(
        session=session,
        user_id=user_id,
        role="user",
        content="I moved to Berlin last week",
        extraction_status="done",
    )
    answer = ConversationMessage.objects.create(
        session=session,
        user_id=user_id,
        role="assistant",
        content="How do you like it?",
        extraction_status="skipped",
    )
    fact = make_memory("Lives in Berlin", user_id)
    MemorySource.objects.create(memory_id=fact.pk, session_id=session.pk, conversation_id=said.pk)
    return session, said, answer, fact


@pytest.fixture
def viewer(client, django_user_model):
    """A staff member who may only view memories and conversations."""
    user = django_user_model.objects.create_user("viewer", "viewer@example.com", "pw")
    user.is_staff = True
    user.save()
    for model in (Memory, ConversationSession, ConversationMessage):
        content_type = ContentType.objects.get_for_model(model)
        user.user_permissions.add(
            Permission.objects.get(
                content_type=content_type, codename=f"view_{model._meta.model_name}"
            )
        )
    client.force_login(user)
    return client


# --- The list ------------------------------------------------------------------------------


def test_list_renders_newest_first_with_every_filter_and_no_add_or_delete(admin_client):
    old = make_memory("Lived in Paris", created_at=timezone.now() - timezone.timedelta(days=400))
    make_memory("Lives in Berlin")
    make_trait()
    html = html_of(admin_client.get(MEMORIES))
    assert html.index("Lives in Berlin") < html.index("Lived in Paris")  # newest first
    assert "Drinks coffee every morning" in html
    assert 'name="user_id"' in html  # typed in, not a list of users
    assert 'name="created_from"' in html and 'name="created_to"' in html
    assert "/admin/memories/memory/add/" not in html
    assert "delete_selected" not in html
    assert "_facets" not in html  # no facet counts offered

    for query in (
        {"user_id": "u:1"},
        {"memory_type__exact": "trait"},
        {"current": "current"},
        {"current": "expired"},
        {"current": "invalidated"},
        *({"state": state} for state in ("active", "cold", "deprecated", "deleted")),
        {"trait_stage": "emerging"},
        {"embedding_status__exact": "pending"},
        {"embedding_status__exact": "failed"},
        {"created_from": "2000-01-01", "created_to": "2100-01-01"},
        {"user_id": "u:1", "memory_type__exact": "fact", "q": "Berlin"},
    ):
        assert admin_client.get(MEMORIES, query).status_code == 200, query

    only_traits = html_of(admin_client.get(MEMORIES, {"trait_stage": "emerging"}))
    assert "Drinks coffee every morning" in only_traits and "Lives in Berlin" not in only_traits
    last_year = timezone.now() - timezone.timedelta(days=400)
    day = last_year.date().isoformat()
    ranged = html_of(admin_client.get(MEMORIES, {"created_from": day, "created_to": day}))
    assert "Lived in Paris" in ranged and "Lives in Berlin" not in ranged
    assert str(old.pk) in ranged
    assert admin_client.get(MEMORIES, {"created_from": "yesterday"}).status_code == 302  # ?e=1


def test_user_filter_matches_the_exact_user_and_keeps_other_filters(admin_client):
    make_memory("Lives in Berlin", "u:1")
    make_memory("Lives in Rome", "u:10")
    make_trait("Likes tea", "u:1")
    html = html_of(admin_client.get(MEMORIES, {"user_id": "u:1", "memory_type__exact": "fact"}))
    assert "Lives in Berlin" in html
    assert "Lives in Rome" not in html and "Likes tea" not in html
    # The filter's form carries the other filter along.
    assert '<input type="hidden" name="memory_type__exact" value="fact">' in html


def test_current_state_and_embedding_filters_pick_the_right_rows(admin_client):
    make_memory("Current one", score=80)
    make_memory("Superseded one", expired_at=timezone.now())
    make_memory("Invalid one", expired_at=timezone.now(), invalid_at=timezone.now())
    make_memory("Cold one", score=50, embedding_status="failed")
    make_memory("Ready one", score=10, embedding_status="ready")

    def shown(query):
        html = html_of(admin_client.get(MEMORIES, query))
        names = ("Current", "Superseded", "Invalid", "Cold", "Ready")
        return {name for name in names if f"{name} one" in html}

    assert shown({"current": "current"}) == {"Current", "Cold", "Ready"}
    assert shown({"current": "expired"}) == {"Superseded"}
    assert shown({"current": "invalidated"}) == {"Invalid"}
    assert shown({"state": "active"}) == {"Current"}
    assert shown({"state": "cold"}) == {"Cold"}
    assert shown({"state": "deprecated"}) == {"Ready"}
    assert shown({"state": "deleted"}) == {"Superseded", "Invalid"}
    assert shown({"embedding_status__exact": "failed"}) == {"Cold"}
    assert shown({"embedding_status__exact": "ready"}) == {"Ready"}


def test_search_is_recalls_full_text_query_never_like(admin_client):
    make_memory("Runs every morning")
    make_memory("Prefers tea over coffee")
    make_memory("我喜欢喝咖啡", "u:2")
    with CaptureQueriesContext(connection) as queries:
        html = html_of(admin_client.get(MEMORIES, {"q": "running"}))  # stemmed: finds "Runs"
    assert "Runs every morning" in html and "Prefers tea" not in html
    sql = [query["sql"] for query in queries.captured_queries]
    assert any("@@" in s and "neuromem_search_query" in s for s in sql)
    assert not any("LIKE" in s.upper() for s in sql)

    assert "我喜欢喝咖啡" in html_of(admin_client.get(MEMORIES, {"q": "咖啡"}))  # inside a word
    either = html_of(admin_client.get(MEMORIES, {"q": "tea running"}))  # any of the words
    assert "Runs every morning" in either and "Prefers tea over coffee" in either


def test_search_by_memory_id_or_user_id(admin_client):
    berlin = make_memory("Lives in Berlin", "u:1")
    make_memory("Lives in Rome", "u:2")
    make_memory("Works with alice", "u:3")
    make_memory("Plays chess", "alice")
    by_id = html_of(admin_client.get(MEMORIES, {"q": str(berlin.pk)}))
    assert "Lives in Berlin" in by_id and "Lives in Rome" not in by_id
    by_user = html_of(admin_client.get(MEMORIES, {"q": "u:2"}))
    assert "Lives in Rome" in by_user and "Lives in Berlin" not in by_user
    explicit = html_of(admin_client.get(MEMORIES, {"q": "user_id:u:1"}))
    assert "Lives in Berlin" in explicit and "Lives in Rome" not in explicit
    # A user's id is that user, not every memory that mentions the word.
    alice = html_of(admin_client.get(MEMORIES, {"q": "alice"}))
    assert "Plays chess" in alice and "Works with alice" not in alice
    words = html_of(admin_client.get(MEMORIES, {"q": "chess"}))
    assert "Plays chess" in words and "Works with alice" not in words


def test_the_count_is_the_rows_a_search_or_filter_found(admin_client):
    """On a small table the planner guesses (every search read "4 results"): a searched or
    filtered list counts what it found."""
    for day in range(5):
        make_memory(f"Drinks coffee on day {day}")
    make_memory("Lives in Berlin")
    make_memory("Took the train to Berlin", "u:2", "episodic")
    for query, found in (
        ({"q": "coffee"}, 5),
        ({"q": "Berlin"}, 2),
        ({"q": "zebra"}, 0),
        ({"q": "u:2"}, 1),
        ({"memory_type__exact": "episodic"}, 1),
        ({"user_id": "u:1"}, 6),
        ({"q": "Berlin", "user_id": "u:1"}, 1),
        ({}, 7),
    ):
        page = admin_client.get(MEMORIES, query)
        changelist = page.context["cl"]
        assert (changelist.result_count, len(changelist.result_list)) == (found, found), query
        assert changelist.paginator.count_label == "", query
        assert f'id="result-count">{found} result' in html_of(page), query


def test_a_count_not_made_exactly_says_what_it_is():
    for _ in range(3):
        ConversationSession.objects.create(user_id="u:1")

    class CountsToTwo(EstimatedCountPaginator):
        exact_below = 2

    class EstimatesAll(EstimatedCountPaginator):
        exact_below = 0

    # Sessions: no `memories` partition is read, whatever plan the tiny table gets.
    sessions = ConversationSession.objects.all()
    filtered = CountsToTwo(sessions.filter(user_id="u:1"), 10, whole=sessions)
    assert filtered.count >= 3 and filtered.count_label == "more than 2"
    assert CountsToTwo(sessions.filter(user_id="u:2"), 10, whole=sessions).size == (0, "")
    everything = EstimatesAll(sessions, 10, whole=sessions)
    assert everything.count_label == f"an estimated {everything.count:,}"


# --- A memory's page -----------------------------------------------------------------------


def test_fact_page_shows_content_metadata_history_sources_and_links(admin_client):
    session, said, _, fact = conversation()
    Memory.objects.filter(pk=fact.pk).update(metadata={"source": "chat", "tags": ["home"]})
    strong = make_memory("Works at a bakery", score=90)
    weak = make_memory("Has a cat", score=20)
    MemoryLink.objects.create(user_id="u:1", source_id=fact.pk, target_id=weak.pk, weight=0.9)
    MemoryLink.objects.create(user_id="u:1", source_id=fact.pk, target_id=strong.pk, weight=0.5)
    MemoryLink.objects.create(user_id="u:1", source_id=weak.pk, target_id=fact.pk, weight=0.3)

    html = html_of(admin_client.get(page_url(fact)))
    assert "Lives in Berlin" in html
    assert "&quot;tags&quot;: [\n    &quot;home&quot;\n  ]" in html  # pretty JSON
    assert "ADD" in html and "UPDATE" in html and "system" in html  # history, with actor
    assert reverse("admin:memories_conversationsession_change", args=[session.pk]) in html
    assert reverse("admin:memories_conversationmessage_change", args=[said.pk]) in html
    assert "I moved to Berlin last week" in html
    # Links in link order: weight × score, 0.5 × 90 before 0.9 × 20; and the incoming one.
    assert html.index("Works at a bakery") < html.index("Has a cat")
    assert f'href="{page_url(strong)}"' in html and f'href="{page_url(weak)}"' in html
    assert "Linked from (1)" in html
    assert 'name="_save"' not in html  # read-only
    for name in ACTIONS:
        assert action_url(name, fact) in html
    assert admin_client.post(page_url(fact), {"content": "x"}).status_code == 403


def test_superseded_memory_links_its_versions_both_ways(admin_client):
    first = make_memory("Lives in Paris")
    second = memory_supersede(memory=first, content="Lives in Berlin", caller=SYSTEM)
    third = memory_supersede(memory=second, content="Lives in Rome", caller=SYSTEM)

    html = html_of(admin_client.get(page_url(second)))
    assert "Versions (3, oldest first)" in html
    assert f'href="{page_url(first)}"' in html and f'href="{page_url(third)}"' in html
    assert "v2 (this one)" in html
    assert "SUPERSEDE" in html
    for name in ACTIONS:  # no longer current: nothing to act on
        assert action_url(name, second) not in html
    assert f'href="{page_url(third)}">{third.pk}</a>' in html  # superseded by


def test_trait_page_shows_its_evidence_and_links_the_trait_admin(admin_client):
    trait = make_trait()
    fact = make_memory("Had an espresso at 7am")
    TraitEvidence.objects.create(
        trait_id=trait.pk, memory_id=fact.pk, evidence_type="supporting", quality="B"
    )
    html = html_of(admin_client.get(page_url(trait)))
    trait_page = reverse("admin:reflection_trait_change", args=[trait.pk])
    assert f'href="{trait_page}"' in html
    assert "Evidence (1)" in html and "supporting" in html
    assert f'href="{page_url(fact)}"' in html and "Had an espresso at 7am" in html
    assert "trait_stage" in html or "Trait stage" in html

    cited = html_of(admin_client.get(page_url(fact)))
    assert "Evidence for traits (1)" in cited and f'href="{trait_page}"' in cited


def test_the_history_button_shows_the_memorys_audit_log_and_the_staff_actions(admin_client):
    memory = make_memory("Lives in Paris")
    history_url = reverse("admin:memories_memory_history", args=[memory.pk])
    assert f'href="{history_url}"' in html_of(admin_client.get(page_url(memory)))
    untouched = html_of(admin_client.get(history_url))
    assert 'id="audit-trail"' in untouched and "<td>ADD</td>" in untouched
    assert "No staff action on this memory is recorded" in untouched
    assert "doesn’t have a change history" not in untouched

    admin_client.post(
        action_url("supersede", memory),
        {"content": "Lives in Rome", "reason": "Moved in May", "version": 1},
    )
    html = html_of(admin_client.get(history_url))
    # The memory's own audit log, with the staff member as its actor ...
    assert "<td>SUPERSEDE</td>" in html and "<td>staff:admin</td>" in html
    # ... and the admin's log of the action, with the reason.
    assert "Superseded by v2" in html and "Moved in May" in html


def test_a_traits_history_is_its_memory_history(admin_client):
    trait = make_trait()
    Memory.objects.filter(pk=trait.pk).update(trait_stage="established")
    html = html_of(admin_client.get(reverse("admin:reflection_trait_history", args=[trait.pk])))
    assert 'id="audit-trail"' in html
    assert "<td>ADD</td>" in html and "<td>STAGE_CHANGE</td>" in html


def test_objects_without_an_audit_trail_say_so_and_lead_back(admin_client):
    session, _, _, _ = conversation()
    history_url = reverse("admin:memories_conversationsession_history", args=[session.pk])
    html = html_of(admin_client.get(history_url))
    assert "No staff action on this conversation session is recorded" in html
    change_url = reverse("admin:memories_conversationsession_change", args=[session.pk])
    assert f'href="{change_url}"' in html
    assert "doesn’t have a change history" not in html and 'id="audit-trail"' not in html


def test_a_trait_is_not_superseded_invalidated_or_deleted_here(admin_client):
    """Its veto (on the trait page) is the way: memory_supersede would rebuild the trait's
    columns from its metadata alone, losing its stage and confidence."""
    trait = make_trait()
    html = html_of(admin_client.get(page_url(trait)))
    trait_page = reverse("admin:reflection_trait_change", args=[trait.pk])
    before = state_of(trait)
    for name in ACTIONS:
        assert action_url(name, trait) not in html
        data = {"content": "Drinks tea", "reason": "why", "version": 1}
        response = admin_client.post(action_url(name, trait), data)
        assert (response.status_code, response["Location"]) == (302, trait_page)
    assert state_of(trait) == before


# --- Actions -------------------------------------------------------------------------------


def test_supersede_goes_through_the_service_as_staff(admin_client):
    memory = make_memory("Lives in Paris")
    form = html_of(admin_client.get(action_url("supersede", memory)))
    assert 'name="content"' in form and 'name="reason"' in form and "csrfmiddlewaretoken" in form

    response = admin_client.post(
        action_url("supersede", memory),
        {"content": "Lives in Berlin", "reason": "User corrected it", "version": 1},
    )
    assert response.status_code == 302
    memory.refresh_from_db()
    successor = Memory.objects.get(pk=memory.superseded_by)
    assert response["Location"] == page_url(successor)
    assert (successor.content, successor.version, memory.expired_at is not None) == (
        "Lives in Berlin",
        2,
        True,
    )
    events = {
        (row.memory_id, row.event, row.actor)
        for row in MemoryHistory.objects.filter(actor__startswith="staff:")
    }
    assert events == {
        (memory.pk, "SUPERSEDE", "staff:admin"),
        (successor.pk, "ADD", "staff:admin"),
    }
    entries = {
        (entry.object_id, entry.action_flag, entry.change_message)
        for entry in LogEntry.objects.all()
    }
    assert entries == {
        (str(memory.pk), CHANGE, f"Superseded by v2 ({successor.pk}): User corrected it"),
        (str(successor.pk), ADDITION, f"New version of {memory.pk}: User corrected it"),
    }


@pytest.mark.parametrize(
    ("name", "event", "message"),
    [
        ("invalidate", "DELETE", "Invalidated: No longer true"),
        ("soft_delete", "DELETE", "Deleted (soft): No longer true"),
    ],
)
def test_invalidate_and_soft_delete_go_through_the_services_as_staff(
    admin_client, name, event, message
):
    memory = make_memory()
    assert 'name="reason"' in html_of(admin_client.get(action_url(name, memory)))
    response = admin_client.post(
        action_url(name, memory), {"reason": "No longer true", "version": 1}
    )
    assert response.status_code == 302 and response["Location"] == page_url(memory)
    memory.refresh_from_db()
    assert memory.expired_at is not None and memory.version == 2
    assert (memory.invalid_at is not None) == (name == "invalidate")
    (row,) = MemoryHistory.objects.filter(memory_id=memory.pk).exclude(event="ADD")
    assert (row.event, row.actor) == (event, "staff:admin")
    (entry,) = LogEntry.objects.all()
    assert (entry.object_id, entry.action_flag, entry.change_message) == (
        str(memory.pk),
        CHANGE,
        message,
    )


def state_of(memory):
    """What an action could change: rows, history, admin log, the memory itself."""
    memory.refresh_from_db()
    return (
        Memory.objects.count(),
        MemoryHistory.objects.count(),
        LogEntry.objects.count(),
        memory.version,
        memory.expired_at,
        memory.invalid_at,
        memory.content,
    )


@pytest.mark.parametrize(
    ("name", "data", "error"),
    [
        ("supersede", {"content": "  ", "reason": "why", "version": 1}, "This field is required"),
        (
            "supersede",
            {"content": "Lives in Berlin", "reason": "why", "version": 1},
            "same content",
        ),
        ("supersede", {"content": "Lives in Rome", "reason": " ", "version": 1}, "required"),
        ("supersede", {"content": "Lives in Rome", "reason": "why", "version": 7}, "changed since"),
        ("invalidate", {"reason": "", "version": 1}, "This field is required"),
        ("invalidate", {"reason": "why", "version": 7}, "changed since"),
        ("soft_delete", {"reason": "", "version": 1}, "This field is required"),
        ("soft_delete", {"reason": "why", "version": 7}, "changed since"),
        ("soft_delete", {"reason": "why"}, "page was incomplete"),
    ],
)
def test_bad_input_shows_an_error_and_writes_nothing(admin_client, name, data, error):
    memory = make_memory("Lives in Berlin")
    before = state_of(memory)
    response = admin_client.post(action_url(name, memory), data)
    assert error in html_of(response)
    assert state_of(memory) == before


def test_acting_on_a_memory_deleted_meanwhile_writes_nothing(admin_client):
    memory = make_memory("Lives in Berlin")
    Memory.objects.filter(pk=memory.pk).update(expired_at=timezone.now())  # version stays 1
    before = state_of(memory)
    for name, data in (
        ("supersede", {"content": "Lives in Rome", "reason": "why", "version": 1}),
        ("invalidate", {"reason": "why", "version": 1}),
        ("soft_delete", {"reason": "why", "version": 1}),
    ):
        html = html_of(admin_client.post(action_url(name, memory), data))
        assert "no longer current" in html, name
    assert state_of(memory) == before
    # Opening an action on it leads back to its page.
    assert admin_client.get(action_url("invalidate", memory))["Location"] == page_url(memory)


def test_view_only_staff_see_no_buttons_and_get_403_on_each_action(viewer):
    memory = make_memory()
    html = html_of(viewer.get(page_url(memory)))
    assert "Lives in Berlin" in html
    before = state_of(memory)
    for name in ACTIONS:
        assert action_url(name, memory) not in html
        assert viewer.get(action_url(name, memory)).status_code == 403
        data = {"content": "Lives in Rome", "reason": "why", "version": 1}
        assert viewer.post(action_url(name, memory), data).status_code == 403
    assert state_of(memory) == before


# --- Conversations -------------------------------------------------------------------------


def test_session_list_filters_and_page_with_its_messages(admin_client):
    session, said, _, fact = conversation("u:1")
    other = ConversationSession.objects.create(user_id="u:2", ended_at=timezone.now())
    html = html_of(admin_client.get(SESSIONS))
    assert str(session.pk) in html and str(other.pk) in html
    assert html.index(str(other.pk)) < html.index(str(session.pk))  # newest first
    assert "/admin/memories/conversationsession/add/" not in html
    only_u1 = html_of(admin_client.get(SESSIONS, {"user_id": "u:1"}))
    assert str(session.pk) in only_u1 and str(other.pk) not in only_u1
    open_only = html_of(admin_client.get(SESSIONS, {"ended": "no"}))
    assert str(session.pk) in open_only and str(other.pk) not in open_only
    assert str(other.pk) in html_of(admin_client.get(SESSIONS, {"ended": "yes"}))
    assert str(other.pk) in html_of(admin_client.get(SESSIONS, {"q": str(other.pk)}))
    assert str(other.pk) in html_of(admin_client.get(SESSIONS, {"q": "u:2"}))

    page = html_of(admin_client.get(f"{SESSIONS}{session.pk}/change/"))
    assert "Messages (2)" in page
    assert "I moved to Berlin last week" in page and "How do you like it?" in page
    assert page.index("I moved to Berlin") < page.index("How do you like it?")
    assert "done" in page and "skipped" in page
    assert reverse("admin:memories_conversationmessage_change", args=[said.pk]) in page
    assert f'href="{page_url(fact)}"' in page  # the memory written from the message
    assert 'name="_save"' not in page


def test_message_list_filters_and_page_with_the_memories_written(admin_client):
    session, said, answer, fact = conversation("u:1")
    failed = ConversationMessage.objects.create(
        session=session,
        user_id="u:1",
        role="user",
        content="Extractor was down",
        extraction_status="failed",
    )
    html = html_of(admin_client.get(MESSAGES))
    assert "I moved to Berlin last week" in html and "Extractor was down" in html
    assert "/admin/memories/conversationmessage/add/" not in html
    for query, shown, hidden in (
        ({"extraction_status": "failed"}, "Extractor was down", "I moved to Berlin"),
        ({"session_id": str(session.pk)}, "I moved to Berlin", None),
        ({"session_id": "not-a-uuid"}, None, "I moved to Berlin"),
        ({"user_id": "u:2"}, None, "I moved to Berlin"),
        ({"q": str(failed.pk)}, "Extractor was down", "I moved to Berlin"),
    ):
        page = html_of(admin_client.get(MESSAGES, query))
        assert shown is None or shown in page, query
        assert hidden is None or hidden not in page, query

    page = html_of(admin_client.get(f"{MESSAGES}{said.pk}/change/"))
    assert "Memories written from this message (1)" in page
    assert f'href="{page_url(fact)}"' in page and "Lives in Berlin" in page
    assert reverse("admin:memories_conversationsession_change", args=[session.pk]) in page
    assert "done" in page
    none = html_of(admin_client.get(f"{MESSAGES}{answer.pk}/change/"))
    assert "Memories written from this message (0)" in none
    assert admin_client.post(f"{MESSAGES}{said.pk}/change/", {}).status_code == 403


def test_viewer_reads_conversations(viewer):
    session, said, _, _ = conversation()
    assert "I moved to Berlin" in html_of(viewer.get(f"{SESSIONS}{session.pk}/change/"))
    assert "Lives in Berlin" in html_of(viewer.get(f"{MESSAGES}{said.pk}/change/"))


# --- Plans at a meaningful size ------------------------------------------------------------

ROWS = 20_000
# 20,000 memories over the four partitions, 200 users, a second apart; content words of
# different frequencies (coffee: 1 in 10, zebra: 1 in 1,000); a few expired, invalidated,
# pending and failed; scores spread over 0–100. Each row carries a lexical vector (1 KB, as
# every stored memory does), so the rows are as wide as real ones: the planner weighs a
# table scan by its pages.
ROWS_SQL = """
INSERT INTO memories (id, user_id, memory_type, content, content_hash, created_at, valid_at,
                      expired_at, invalid_at, embedding_status, score, lexical_vector,
                      trait_subtype, trait_stage, trait_confidence)
SELECT gen_random_uuid(), 'u:' || (n %% 200),
       (ARRAY['fact', 'episodic', 'trait', 'document'])[n %% 4 + 1],
       'memory ' || n || ' about '
           || (ARRAY['coffee', 'tea', 'running', 'books', 'music', 'travel', 'cooking',
                     'work', 'family', 'garden'])[n %% 10 + 1]
           || CASE WHEN n %% 1000 = 0 THEN ' and a zebra' ELSE '' END
           || CASE WHEN n %% 997 = 0 THEN ' 我喜欢喝咖啡' ELSE '' END
           || ', told on a long afternoon walk through the old town with friends',
       md5(n::text), now() - n * interval '1 second', now() - n * interval '1 second',
       CASE WHEN n %% 50 = 0 THEN now() END, CASE WHEN n %% 200 = 0 THEN now() END,
       CASE WHEN n %% 100 = 0 THEN 'pending' WHEN n %% 500 = 1 THEN 'failed' ELSE 'ready' END,
       (n * 37) %% 101, array_fill(0.04, ARRAY[512])::vector::halfvec,
       CASE WHEN n %% 4 = 2 THEN 'behavior' END,
       CASE WHEN n %% 4 = 2 THEN (ARRAY['trend', 'candidate', 'emerging', 'established',
                                       'core', 'dissolved'])[n %% 6 + 1] END,
       CASE WHEN n %% 4 = 2 THEN 0.5 END
FROM generate_series(1, %s) AS n
"""


@pytest.fixture
def many_memories():
    with connection.cursor() as cursor:
        cursor.execute(ROWS_SQL, [ROWS])
        cursor.execute("ANALYZE memories")
    yield
    # ANALYZE's row counts outlive the test's rollback: leave ones that match the empty table,
    # or later tests' estimated counts would read 20,000 rows that are gone.
    # (The deletion's audit rows go with the test's transaction.)
    with connection.cursor() as cursor:
        cursor.execute("DELETE FROM memories")
        cursor.execute("ANALYZE memories")


def list_plan(client, query: dict) -> str:
    """The plan of the query the list page ran for its rows."""
    with CaptureQueriesContext(connection) as queries:
        assert client.get(MEMORIES, query).status_code == 200
    (listing,) = [
        q["sql"]
        for q in queries.captured_queries
        if q["sql"].startswith('SELECT "memories"."id"') and "ORDER BY" in q["sql"]
    ]
    with connection.cursor() as cursor:
        cursor.execute(f"EXPLAIN {listing}")
        return "\n".join(row[0] for row in cursor.fetchall())


# Each query of the list page, and an index its plan must read.
PLANS = [
    ({}, "idx_memories_fact_created"),  # the default list: newest first
    ({"q": "zebra"}, "_search_vector_idx"),  # a rare word: idx_memories_search (GIN)
    ({"q": "coffee"}, "idx_memories_"),  # a common one
    ({"q": "咖啡"}, "_search_vector_idx"),
    ({"q": "tea garden"}, "idx_memories_"),
    ({"q": "u:7"}, "idx_"),  # a user's id
    ({"user_id": "u:7"}, "idx_"),
    ({"memory_type__exact": "episodic"}, "idx_memories_episodic_created"),
    ({"current": "current"}, "idx_memories_"),
    ({"current": "expired"}, "_not_current"),
    ({"current": "invalidated"}, "_not_current"),
    ({"current": "forgotten"}, "_forgotten"),
    ({"state": "deleted"}, "_not_current"),
    ({"embedding_status__exact": "pending"}, "_embedding_todo"),
    ({"embedding_status__exact": "failed"}, "_embedding_todo"),
    ({"trait_stage": "core"}, "idx_trait_recent"),
    ({"created_from": "2000-01-01", "created_to": "2000-01-31"}, "_created"),
]


def test_list_and_search_plans_read_indexes_not_the_table(admin_client, many_memories):
    wrong = {}
    for query, index in PLANS:
        plan = list_plan(admin_client, query)
        if "Seq Scan" in plan or index not in plan:
            wrong[str(query)] = plan
    assert not wrong, "\n\n".join(f"{query}:\n{plan}" for query, plan in wrong.items())


# --- The migration -------------------------------------------------------------------------

admin_indexes = importlib.import_module("memories.migrations.0012_admin_indexes")


@pytest.mark.slow
def test_index_migration_reverses_and_resumes_after_an_interruption():
    with scratch_database() as url:
        migrated(url)
        with psycopg.connect(url, autocommit=True) as conn:
            built = catalog(conn)
            attached = conn.execute(
                "SELECT count(*) FROM pg_inherits"
                " WHERE inhparent = 'idx_memories_created'::regclass"
            ).fetchone()
            assert attached == (4,)  # the trait partition's is 0009's idx_trait_recent

        migrated(url, "memories", "0011")
        with psycopg.connect(url, autocommit=True) as conn:
            names = {
                name for (name,) in conn.execute("SELECT indexname FROM pg_indexes").fetchall()
            }
            assert "idx_trait_recent" in names  # as 0009 left it
            ours = {*admin_indexes.PARTITIONED, *admin_indexes.PLAIN} | {
                name
                for _, children in admin_indexes.PARTITIONED.values()
                for name in children.values()
            }
            assert names & ours == {"idx_trait_recent"}
            # As an interrupted run leaves it: the parent, one partition's index attached,
            # another built but not attached.
            order = admin_indexes.ORDER
            conn.execute(f"CREATE INDEX idx_memories_created ON ONLY memories {order}")
            conn.execute(f"CREATE INDEX idx_memories_fact_created ON memories_fact {order}")
            conn.execute(
                "ALTER INDEX idx_memories_created ATTACH PARTITION idx_memories_fact_created"
            )
            conn.execute(f"CREATE INDEX idx_memories_episodic_created ON memories_episodic {order}")

        migrated(url)
        with psycopg.connect(url, autocommit=True) as conn:
            assert catalog(conn) == built
            valid = conn.execute(
                "SELECT bool_and(indisvalid) FROM pg_index"
                " WHERE indexrelid::regclass::text LIKE 'idx\\_%'"
            ).fetchone()
            assert valid == (True,)


def test_the_score_jobs_flags_are_a_filter(admin_client):
    make_memory("Flagged for deletion", eligible_for_delete=True)
    better = make_memory("The better memory")
    make_memory("A restatement", merge_candidate_of=better.id)
    make_memory("Unflagged")

    def listed(flag: str) -> set[str]:
        changelist = admin_client.get(MEMORIES, {"flag": flag}).context["cl"]
        return {memory.content for memory in changelist.result_list}

    assert listed("eligible_for_delete") == {"Flagged for deletion"}
    assert listed("merge_candidate") == {"A restatement"}


def test_a_count_that_would_scan_memories_is_estimated(many_memories):
    """The score has no index: counting a state exactly would read the partition whole, so a
    big enough list shows the planner's estimate instead (no COUNT(*) query runs), and says
    so. (20,000 rows stand for a big table here; by default, scan_below is 100,000.)"""

    class ScansFromTwentyThousand(EstimatedCountPaginator):
        scan_below = ROWS

    every = Memory.objects.all()
    active_facts = every.filter(states_q(["active"]), memory_type="fact")
    with CaptureQueriesContext(connection) as queries:
        paginator = ScansFromTwentyThousand(active_facts, 50, whole=every)
        label = paginator.count_label
    assert not [q["sql"] for q in queries if "COUNT(*)" in q["sql"].upper()]
    assert label == f"an estimated {paginator.count:,}"
    # The same list under scan_below: read whole, counted.
    counted = EstimatedCountPaginator(active_facts, 50, whole=every)
    assert counted.size == (active_facts.count(), "")


def test_big_lists_count_what_was_found_and_say_when_they_do_not(admin_client, many_memories):
    def size(query: dict) -> tuple[int, str]:
        page = admin_client.get(MEMORIES, query)
        changelist = page.context["cl"]
        label = changelist.paginator.count_label
        shown = label or str(changelist.result_count)
        assert f'id="result-count">{shown} result' in html_of(page), query
        return changelist.result_count, label

    # Found through indexes: counted exactly.
    assert size({"q": "zebra"}) == (20, "")
    assert size({"q": "coffee"}) == (2_000, "")
    assert size({"user_id": "u:7"}) == (100, "")
    # 19,500 current memories: counted up to 10,000, no further.
    count, label = size({"current": "current"})
    assert count > 10_000 and label == "more than 10,000"
    # The whole list: the planner's estimate, said to be one.
    count, label = size({})
    assert label == f"an estimated {count:,}"


@pytest.mark.parametrize(
    "query",
    [
        {"q": "coffee\x00"},
        {"user_id": "u:\x00"},
        {"created_to": "9999-12-31"},
    ],
)
def test_odd_list_parameters_answer_without_an_error(admin_client, query):
    make_memory("Drinks coffee")
    page = admin_client.get(MEMORIES, query)
    assert page.status_code in (200, 302)
    if page.status_code == 302:
        assert page["Location"].endswith("?e=1")


# --- Forgotten memories --------------------------------------------------------------------

FORGET_REQUESTS = "/admin/memories/forgetrequest/"
ADDRESS = "742 Evergreen Terrace"


def forget_url(memory):
    return reverse("admin:memories_memory_forget", args=[memory.pk])


def request_url(forget_request):
    return reverse("admin:memories_forgetrequest_change", args=[forget_request.pk])


def home_address(user_id="u:1"):
    """A fact and the message it came from, both saying where the user lives; and a fact on
    another topic."""
    session = ConversationSession.objects.create(user_id=user_id)
    said = ConversationMessage.objects.create(
        session=session,
        user_id=user_id,
        role="user",
        content=f"My home address is {ADDRESS}. I love jazz.",
    )
    fact = make_memory(f"The user's home address is {ADDRESS}", user_id)
    MemorySource.objects.create(memory_id=fact.pk, session_id=session.pk, conversation_id=said.pk)
    make_memory("The user loves jazz", user_id)
    return said, fact


def forgotten(memory, caller=SYSTEM):
    """The memory forgotten through the service (as an API client would ask)."""
    outcome = user_forget(caller=caller, user_id=memory.user_id, memory_ids=[memory.pk])
    memory.refresh_from_db()
    return outcome.request


def everything_held():
    """What a forget could change: every row's content, the history, the requests, the log."""
    return (
        sorted(Memory.objects.values_list("id", "content", "version", "forgotten_at")),
        sorted(ConversationMessage.objects.values_list("id", "content")),
        sorted(
            MemoryHistory.objects.values_list("id", "event", "old_content", "new_content"),
            key=str,
        ),
        ForgetRequest.objects.count(),
        LogEntry.objects.count(),
    )


def test_a_forgotten_memory_reads_forgotten_in_the_list_and_has_a_filter(admin_client):
    _, fact = home_address()
    make_memory("Lived in Paris", created_at=timezone.now() - timezone.timedelta(days=3))
    forgotten(fact)
    html = html_of(admin_client.get(MEMORIES))
    assert "(forgotten)" in html and "Evergreen" not in html
    assert "Lived in Paris" in html and "The user loves jazz" in html

    listed = admin_client.get(MEMORIES, {"current": "forgotten"}).context["cl"].result_list
    assert [memory.pk for memory in listed] == [fact.pk]
    assert "Forgotten (erased on request)" in html  # the filter's choice
    # Search by its id finds the record, not what it said.
    by_id = html_of(admin_client.get(MEMORIES, {"q": str(fact.pk)}))
    assert "(forgotten)" in by_id and "Evergreen" not in by_id
    assert not admin_client.get(MEMORIES, {"q": "Evergreen"}).context["cl"].result_list


def test_a_forgotten_memorys_page_says_when_and_on_whose_request_never_what(admin_client):
    said, fact = home_address()
    forget_request = forgotten(fact, caller=Caller(name="support-agent", is_staff=True))
    html = html_of(admin_client.get(page_url(fact)))
    assert "Evergreen" not in html
    when = timezone.localtime(fact.forgotten_at).strftime("%Y-%m-%d %H:%M:%S")
    assert f"Forgotten on {when}" in html
    assert "at the request of <code>support-agent</code> via api" in html
    assert f'href="{request_url(forget_request)}"' in html
    assert "field-content_text" not in html and "field-metadata_json" not in html
    # History: the ADD's content erased, and the FORGET naming the request.
    history = html.split('id="memory-history"')[1].split("</fieldset>")[0]
    assert "(erased)" in history
    assert "FORGET" in history and f"forget request {forget_request.pk}" in history
    # The message it came from keeps what was not about it.
    assert reverse("admin:memories_conversationmessage_change", args=[said.pk]) in html
    assert "[forgotten] I love jazz." in html


def test_a_forgotten_memory_offers_no_action_and_refuses_a_posted_one(admin_client):
    _, fact = home_address()
    forgotten(fact)
    html = html_of(admin_client.get(page_url(fact)))
    for name in (*ACTIONS, "forget"):
        assert action_url(name, fact) not in html
    before = everything_held()
    for name in ACTIONS:
        data = {"content": "Lives in Rome", "reason": "why", "version": fact.version}
        response = admin_client.post(action_url(name, fact), data)
        assert (response.status_code, response["Location"]) == (302, page_url(fact)), name
    response = admin_client.post(forget_url(fact))
    assert (response.status_code, response["Location"]) == (302, page_url(fact))
    assert everything_held() == before
    message = [str(m) for m in admin_client.get(page_url(fact)).context["messages"]]
    assert message == [
        *["This memory was forgotten: nothing to change."] * len(ACTIONS),
        "This memory is forgotten already: nothing more to forget.",
    ]


def test_forget_shows_the_dry_run_first_and_changes_nothing(admin_client):
    _, fact = home_address()
    older = make_memory(f"The user lived at {ADDRESS} before")
    Memory.objects.filter(pk=older.pk).update(expired_at=timezone.now(), superseded_by=fact.pk)
    assert 'id="forget-link"' in html_of(admin_client.get(page_url(fact)))
    before = everything_held()
    html = html_of(admin_client.get(forget_url(fact)))
    assert everything_held() == before
    plan = html.split('id="forget-plan-memories"')[1]
    # It and its older version, with their content; the message it came from, before and after.
    assert f"The user&#x27;s home address is {ADDRESS}" in plan
    assert f"The user lived at {ADDRESS} before" in plan
    assert "The user loves jazz" not in plan
    assert f"My home address is {ADDRESS}. I love jazz." in plan
    assert "[forgotten] I love jazz." in plan
    assert 'value="Forget"' in html and "csrfmiddlewaretoken" in html


def test_forget_confirmed_erases_as_staff_and_logs_the_request_not_the_content(
    admin_client, admin_user
):
    said, fact = home_address()
    response = admin_client.post(forget_url(fact))
    forget_request = ForgetRequest.objects.get()
    assert response.status_code == 302 and response["Location"] == request_url(forget_request)
    assert (forget_request.requested_by, forget_request.via) == ("staff:admin", "admin")
    assert forget_request.memory_ids == [fact.pk]
    assert forget_request.message_ids == [said.pk]
    fact.refresh_from_db()
    assert fact.forgotten_at is not None and fact.content == ""
    said.refresh_from_db()
    assert said.content == "[forgotten] I love jazz."
    (entry,) = LogEntry.objects.all()
    assert (entry.user, entry.action_flag, entry.object_id) == (
        admin_user,
        ADDITION,
        str(forget_request.pk),
    )
    assert entry.content_type.model_class() is ForgetRequest
    assert str(forget_request.pk) in entry.change_message
    assert "1 memory forgotten whole" in entry.change_message
    assert "Evergreen" not in entry.change_message + entry.object_repr
    page = admin_client.get(response["Location"])
    assert "Forgotten: 1 memory forgotten whole" in " ".join(
        str(m) for m in page.context["messages"]
    )


def test_view_only_staff_may_not_forget(viewer):
    _, fact = home_address()
    html = html_of(viewer.get(page_url(fact)))
    assert forget_url(fact) not in html and 'id="forget-link"' not in html
    before = everything_held()
    assert viewer.get(forget_url(fact)).status_code == 403
    assert viewer.post(forget_url(fact)).status_code == 403
    assert everything_held() == before


def test_staff_who_change_memories_but_may_not_purge_may_not_forget(client, django_user_model):
    """Forgetting is the purge's permission, not the memory actions'."""
    user = django_user_model.objects.create_user("editor", "editor@example.com", "pw")
    user.is_staff = True
    user.save()
    user.user_permissions.add(
        *Permission.objects.filter(codename__in=["view_memory", "change_memory"])
    )
    client.force_login(user)
    _, fact = home_address()
    html = html_of(client.get(page_url(fact)))
    assert action_url("supersede", fact) in html and forget_url(fact) not in html
    assert client.post(forget_url(fact)).status_code == 403
    assert not ForgetRequest.objects.exists()


def test_history_rows_erased_in_part_read_erased(admin_client):
    """An episode erased in part keeps its current content; its history loses it."""
    session = ConversationSession.objects.create(user_id="u:1")
    episode = make_memory(
        f"User: My home address is {ADDRESS}. I love jazz.", memory_type="episodic"
    )
    MemorySource.objects.create(memory_id=episode.pk, session_id=session.pk)
    outcome = user_forget(caller=SYSTEM, user_id="u:1", topic="my home address")
    assert outcome.request.erased_memory_ids == [episode.pk]
    html = html_of(admin_client.get(page_url(episode)))
    history = html.split('id="memory-history"')[1].split("</fieldset>")[0]
    assert "(erased)" in history and "Evergreen" not in html
    assert "I love jazz." in html  # what was not about it stays


# --- Forget requests -----------------------------------------------------------------------


def test_forget_request_list_newest_first_filter_and_exact_search(admin_client):
    _, fact = home_address()
    other = make_memory("Plays chess", "u:2")
    first = forgotten(other)
    second = forgotten(fact, caller=Caller(name="staff:otto", is_staff=True))
    ForgetRequest.objects.filter(pk=first.pk).update(
        created_at=timezone.now() - timezone.timedelta(hours=1)
    )
    nothing = user_forget(caller=SYSTEM, user_id="u:1", topic="everything").request

    def listed(query=None):
        changelist = admin_client.get(FORGET_REQUESTS, query or {}).context["cl"]
        return [forget_request.pk for forget_request in changelist.result_list]

    assert listed() == [nothing.pk, second.pk, first.pk]
    ForgetRequest.objects.filter(pk=second.pk).update(via="admin")
    assert listed({"via__exact": "admin"}) == [second.pk]
    assert listed({"q": "u:2"}) == [first.pk]
    assert listed({"q": str(second.pk)}) == [second.pk]
    assert listed({"q": "u:"}) == []  # exact, not a prefix
    html = html_of(admin_client.get(FORGET_REQUESTS))
    assert "names_nothing" in html and "staff:otto" in html
    assert end_user_url("u:2") in html
    assert "/admin/memories/forgetrequest/add/" not in html
    assert "delete_selected" not in html


def test_forget_request_page_links_what_it_erased_and_is_read_only(admin_client):
    said, fact = home_address()
    forget_request = forgotten(fact)
    html = html_of(admin_client.get(request_url(forget_request)))
    assert f'href="{page_url(fact)}">{fact.pk}</a>' in html
    message = reverse("admin:memories_conversationmessage_change", args=[said.pk])
    assert f'href="{message}">{said.pk}</a>' in html
    assert 'name="_save"' not in html and "Evergreen" not in html
    assert admin_client.post(request_url(forget_request), {"via": "api"}).status_code == 403
    assert admin_client.get(f"{FORGET_REQUESTS}add/").status_code == 403
    delete = reverse("admin:memories_forgetrequest_delete", args=[forget_request.pk])
    assert admin_client.post(delete, {"post": "yes"}).status_code == 403
    assert ForgetRequest.objects.filter(pk=forget_request.pk).exists()

    nothing = user_forget(caller=SYSTEM, user_id="u:1", topic="everything").request
    why = html_of(admin_client.get(request_url(nothing)))
    assert "names_nothing" in why and "names nothing specific" in why


def test_message_list_shows_what_was_redacted(admin_client):
    session = ConversationSession.objects.create(user_id="u:1")
    ConversationMessage.objects.create(
        session=session,
        user_id="u:1",
        role="user",
        content="My password is [redacted: password], key [redacted: api_key]",
        redactions={"password": 1, "api_key": 1},
    )
    html = html_of(admin_client.get(MESSAGES))
    assert "api_key 1, password 1" in html
