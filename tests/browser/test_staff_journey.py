"""A staff member's day in the back-office, in headless Chromium against a live server: log
in as an operator, find an end user, open a memory, walk its versions and history, supersede
it, veto a trait, read a SOUL version's diff, export the user and purge them; forget a topic
of a user, seeing what would go first. And a viewer, who sees no mutating button and is
refused a purge and a forget.

Data is made through the services and the ORM; every step asserts on what the page shows and
then on the database. The journey saves screenshots of its key pages (conftest.py)."""

import json
from datetime import timedelta

import pytest
from django.contrib.admin.models import LogEntry
from django.contrib.auth.models import Group
from django.utils import timezone

from core.access import Caller
from core.models import JobRun
from evolution.admin import version_url_id
from evolution.services import (
    SoulProposal,
    agent_default,
    safety_contract_update,
    soul_bootstrap,
    soul_propose_and_apply,
)
from memories.models import (
    ConversationMessage,
    ConversationSession,
    ForgetRequest,
    Memory,
    MemoryHistory,
)
from memories.services import MemoryInput, memory_add, memory_supersede
from neuromem_site.backoffice.links import end_user_url
from neuromem_site.backoffice.roles import OPERATOR, VIEWER
from reflection.models import ReflectionCycle, TraitEvidence
from tests.browser.conftest import PASSWORD
from tests.evolution.conftest import ANCHORS, CONSTRAINTS, SEED, STAFF, edited

try:
    from playwright.sync_api import expect
except ImportError:  # conftest.py skips these tests, with the reason
    expect = None

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

USER = "acme:alice"
OTHER = "acme:bob"
AGENT = Caller(name="support-agent", user_prefixes=("acme:",))
NEW_CONTENT = "Lives in Porto, by the river, since March"
SUPERSEDE_REASON = "The user corrected the date in support ticket 4711"
VETO_REASON = "Inferred from two messages only; the user says it is not true"


# --- Data ------------------------------------------------------------------------------------


def trait(content, subtype, *, parent=None, confidence=0.8, stage="established"):
    return Memory.objects.create(
        user_id=USER,
        memory_type="trait",
        content=content,
        trait_subtype=subtype,
        trait_stage=stage,
        trait_confidence=confidence,
        trait_parent_id=parent.pk if parent else None,
        trait_reinforcement_count=3,
        trait_contradiction_count=0,
        trait_first_observed=timezone.now() - timedelta(days=30),
        trait_last_reinforced=timezone.now() - timedelta(days=2),
    )


def alice() -> dict:
    """acme:alice as an agent left her: a fact superseded once from a conversation, a few
    more memories, a trait tree with evidence, reflection cycles; acme:bob with one fact. A
    SOUL with one applied change, and runs of two scheduled jobs."""
    session = ConversationSession.objects.create(user_id=USER)
    ConversationMessage.objects.create(
        session=session, user_id=USER, role="user", content="Hi!", extraction_status="skipped"
    )
    said = ConversationMessage.objects.create(
        session=session,
        user_id=USER,
        role="user",
        content="I just moved from Lisbon to Porto",
        extraction_status="done",
    )
    first = memory_add(
        item=MemoryInput(user_id=USER, content="Lives in Lisbon", memory_type="fact"),
        caller=AGENT,
    ).memory
    home = memory_supersede(
        memory=first,
        content="Lives in Porto",
        caller=AGENT,
        session_id=session.pk,
        conversation_id=said.pk,
    )
    for content, kind in [
        ("Works as a nurse at the city hospital", "fact"),
        ("Went running along the river at 6 am on Monday", "episodic"),
        ("Went running again before work on Wednesday", "episodic"),
        ("Has a cat called Miso", "fact"),
    ]:
        memory_add(item=MemoryInput(user_id=USER, content=content, memory_type=kind), caller=AGENT)
    core = trait("Values honesty", "core", confidence=0.9, stage="core")
    preference = trait("Prefers direct feedback", "preference", parent=core)
    trait("Asks for blunt code reviews", "behavior", parent=preference, confidence=0.7)
    runner = trait("Runs every morning", "behavior", confidence=0.6, stage="emerging")
    for memory in Memory.objects.filter(user_id=USER, content__startswith="Went running"):
        TraitEvidence.objects.create(
            trait_id=runner.pk, memory_id=memory.pk, evidence_type="supporting", quality="B"
        )
    ReflectionCycle.objects.create(
        user_id=USER,
        trigger_type="session_end",
        status="completed",
        memories_scanned=6,
        traits_created=2,
        traits_updated=1,
        completed_at=timezone.now(),
    )
    ReflectionCycle.objects.create(
        user_id=USER, trigger_type="scheduled", status="failed", error_message="detector timed out"
    )
    memory_add(
        item=MemoryInput(user_id=OTHER, content="Plays chess", memory_type="fact"), caller=AGENT
    )

    agent = agent_default(caller=STAFF)
    safety_contract_update(agent=agent, caller=STAFF, anchors=ANCHORS, constraints=CONSTRAINTS)
    soul_bootstrap(agent=agent, caller=STAFF, content=SEED)
    applied = soul_propose_and_apply(
        agent=agent,
        caller=STAFF,
        proposal=SoulProposal(
            new_content=edited("Give a concrete example when explaining."),
            intent="Users asked for examples",
        ),
    ).version

    now = timezone.now()
    JobRun.objects.create(
        job="score-memories",
        status="done",
        started_at=now - timedelta(minutes=7),
        finished_at=now - timedelta(minutes=7) + timedelta(seconds=4),
        rows=8,
    )
    JobRun.objects.create(
        job="expire-trends",
        status="failed",
        started_at=now - timedelta(hours=1),
        finished_at=now - timedelta(hours=1) + timedelta(seconds=1),
        error="redis unavailable",
    )
    return {"first": first, "home": home, "runner": runner, "soul": applied}


def staff(django_user_model, username: str, group: str):
    user = django_user_model.objects.create_user(username, f"{username}@example.com", PASSWORD)
    user.is_staff = True
    user.save()
    user.groups.add(Group.objects.get(name=group))
    return user


# --- The browser -----------------------------------------------------------------------------


def log_in(page, username: str) -> None:
    """The admin's own login form, as a person would use it."""
    page.goto("/admin/")
    page.wait_for_url("**/admin/login/?next=/admin/")
    page.fill("#id_username", username)
    page.fill("#id_password", PASSWORD)
    page.click("input[type=submit]")
    expect(page.locator("#user-tools")).to_contain_text(username)


def shot(page, directory, name: str, *, max_height: int = 1400) -> None:
    """A screenshot of the page's top (whole pages can be very long), 1280 px wide."""
    height = min(page.evaluate("document.documentElement.scrollHeight"), max_height)
    page.screenshot(
        path=directory / f"{name}.png",
        full_page=True,
        clip={"x": 0, "y": 0, "width": 1280, "height": height},
    )


def rows(page, selector: str) -> list[str]:
    """The text of each body row of a table (cells joined by " | ")."""
    return [
        " | ".join(cell.strip() for cell in row.locator("td").all_inner_texts())
        for row in page.locator(f"{selector} tbody tr").all()
    ]


# --- The journey -----------------------------------------------------------------------------


def test_operator_journey(page, live_server, django_user_model, screenshots):
    data = alice()
    staff(django_user_model, "otto", OPERATOR)

    # Log in: the dashboard.
    log_in(page, "otto")
    dashboard = page.locator("#dashboard")
    expect(dashboard.locator("#dashboard-memories h2")).to_have_text("Memories (11)")
    expect(dashboard.locator("#dashboard-jobs")).to_contain_text("redis unavailable")
    expect(dashboard.locator("#dashboard-cycles h2")).to_contain_text("Failed reflection cycles: 1")
    expect(dashboard.locator("#dashboard-cycles")).to_contain_text("detector timed out")
    shot(page, screenshots, "dashboard")

    # Find the end user by the beginning of their id.
    page.fill("#dashboard-end-users input[name=q]", "acme:")
    page.click("#dashboard-end-users input[type=submit]")
    found = page.locator("#end-users-found")
    expect(found.locator("h2")).to_have_text("2 end users matching “acme:”")
    assert found.locator("a").all_inner_texts() == [USER, OTHER]
    found.get_by_role("link", name=USER).click()

    # Their page: counts, the trait tree, latest memories, cycles.
    expect(page.locator("#end-user-counts h2")).to_have_text(
        "Memories: 10 · conversation sessions: 1"
    )
    tree = rows(page, "#end-user-traits")
    assert [row.split(" | ")[:3] for row in tree] == [
        ["Values honesty", "core", "core"],
        ["↳ Prefers direct feedback", "preference", "established"],
        ["↳ Asks for blunt code reviews", "behavior", "established"],
        ["Runs every morning", "behavior", "emerging"],
    ]
    expect(page.locator("#end-user-cycles")).to_contain_text("detector timed out")
    shot(page, screenshots, "end-user")
    user_page = page.url

    # A memory from the user's page: the current version, its source and history.
    page.locator("#end-user-memories").get_by_role(
        "link", name="Lives in Porto", exact=True
    ).click()
    versions = page.locator("#memory-versions")
    expect(versions.locator("tr.memory-this")).to_contain_text("Lives in Porto")
    assert len(rows(page, "#memory-versions")) == 2
    expect(page.locator("#memory-sources")).to_contain_text("I just moved from Lisbon to Porto")
    expect(page.locator("#memory-history")).to_contain_text("support-agent")

    # Walk the chain back to the first version, then forward again.
    versions.get_by_role("link", name="Lives in Lisbon", exact=True).click()
    expect(page.locator("#memory-versions tr.memory-this")).to_contain_text("Lives in Lisbon")
    assert page.get_by_role("link", name="Supersede…").count() == 0  # not current
    lisbon_history = rows(page, "#memory-history")
    assert any("support-agent" in row and "Lives in Porto" not in row for row in lisbon_history)
    page.locator(".field-newer_version a").click()
    expect(page.locator("#memory-versions tr.memory-this")).to_contain_text("Lives in Porto")

    # Supersede it with new content and a reason.
    page.get_by_role("link", name="Supersede…").click()
    expect(page.locator("#id_content")).to_have_value("Lives in Porto")
    page.fill("#id_content", NEW_CONTENT)
    page.fill("#id_reason", SUPERSEDE_REASON)
    expect(page.locator("#content-main")).to_contain_text("You act as staff:otto")
    shot(page, screenshots, "supersede")
    page.click("input[type=submit][value=Supersede]")
    expect(page.locator(".messagelist")).to_contain_text("is the current one")
    expect(page.locator("#memory-versions tr.memory-this")).to_contain_text(NEW_CONTENT)
    assert [row.split(" | ")[-1] for row in rows(page, "#memory-versions")] == [
        "Lives in Lisbon",
        "Lives in Porto",
        NEW_CONTENT,
    ]
    expect(page.locator("#memory-history")).to_contain_text("staff:otto")
    shot(page, screenshots, "memory", max_height=1800)
    newest = Memory.objects.get(user_id=USER, content=NEW_CONTENT)
    assert newest.expired_at is None
    assert Memory.objects.get(pk=data["home"].pk).superseded_by == newest.pk
    assert MemoryHistory.objects.filter(memory_id=newest.pk, actor="staff:otto").exists()
    assert LogEntry.objects.filter(
        object_id=str(data["home"].pk), change_message__contains=SUPERSEDE_REASON
    ).exists()

    # Veto a trait from the user's page, with a reason.
    page.goto(user_page)
    page.locator("#end-user-traits").get_by_role("link", name="Runs every morning").click()
    expect(page.locator("#trait-evidence")).to_contain_text("Went running along the river")
    page.get_by_role("link", name="Veto…").click()
    page.fill("#id_reason", VETO_REASON)
    page.click("input[type=submit][value=Veto]")
    expect(page.locator(".messagelist")).to_contain_text(
        "Vetoed 1 trait(s); they are now dissolved."
    )
    expect(page.locator(".fieldBox.field-trait_stage")).to_contain_text("Dissolved")
    assert page.get_by_role("link", name="Veto…").count() == 0
    expect(page.locator(".field-metadata")).to_contain_text(VETO_REASON)
    shot(page, screenshots, "trait-vetoed", max_height=1300)
    runner = Memory.objects.get(pk=data["runner"].pk)
    assert runner.trait_stage == "dissolved"
    assert runner.metadata["veto"]["reason"] == VETO_REASON
    assert runner.metadata["veto"]["by"] == "staff:otto"

    # The SOUL: the applied version's diff against the bootstrap.
    page.goto(user_page)
    expect(page.locator("#end-user-traits h2")).to_contain_text("1 dissolved not shown")
    page.locator("#end-user-links").get_by_role("link", name="SOUL versions").click()
    page.get_by_role("link", name=str(data["soul"].version), exact=True).click()
    diff = page.locator("#soul-diff")
    expect(diff.locator("h2")).to_contain_text("Diff against v0")
    expect(diff.locator(".diff-add")).to_have_text(["+- Give a concrete example when explaining."])
    expect(diff.locator(".diff-del")).to_have_count(0)
    expect(page.locator("#soul-eval h2")).to_contain_text("passed")
    shot(page, screenshots, "soul-diff", max_height=1500)

    # Export: the download is the API's export of the user.
    page.goto(user_page)
    with page.expect_download() as download_info:
        page.click("#export-link")
    download = download_info.value
    assert download.suggested_filename == "neuromem-export-acme_alice.json"
    exported = json.loads(download.path().read_text(encoding="utf-8"))
    assert exported["ok"] is True and exported["data"]["user_id"] == USER
    contents = {memory["content"] for memory in exported["data"]["memories"]}
    assert {"Lives in Lisbon", "Lives in Porto", NEW_CONTENT, "Runs every morning"} <= contents
    assert "Plays chess" not in contents
    assert len(exported["data"]["memories"]) == 11

    # Purge: the wrong id changes nothing; the right one deletes everything, counted per table.
    held = {
        "memories": Memory.objects.filter(user_id=USER).count(),
        "memory_history": MemoryHistory.objects.filter(
            memory_id__in=Memory.objects.filter(user_id=USER).values("id")
        ).count(),
        "trait_evidence": 2,
        "conversations": 2,
        "conversation_sessions": 1,
        "reflection_cycles": 2,
    }
    assert held["memories"] == 11
    page.click("#purge-link")
    page.fill("#id_confirm_user_id", OTHER)
    page.click("input[type=submit][value=Purge]")
    expect(page.locator(".errornote, .messagelist")).to_contain_text("nothing was purged")
    assert Memory.objects.filter(user_id=USER).count() == 11
    page.fill("#id_confirm_user_id", USER)
    page.click("input[type=submit][value=Purge]")
    expect(page.locator(".messagelist")).to_contain_text(
        f"Purged everything held about end user {USER}."
    )
    deleted = dict(row.split(" | ") for row in rows(page, "#purged-counts"))
    for table, number in held.items():
        assert deleted[table] == str(number), table
    shot(page, screenshots, "purged")
    assert not Memory.objects.filter(user_id=USER).exists()
    assert not ConversationSession.objects.filter(user_id=USER).exists()
    assert not ReflectionCycle.objects.filter(user_id=USER).exists()
    assert Memory.objects.filter(user_id=OTHER).count() == 1


def test_viewer_sees_no_mutating_button_and_may_not_purge(page, live_server, django_user_model):
    data = alice()
    staff(django_user_model, "vera", VIEWER)
    log_in(page, "vera")

    page.goto(end_user_url(USER))
    expect(page.locator("#end-user-counts h2")).to_contain_text("Memories: 10")
    expect(page.locator("#export-link")).to_be_visible()
    assert page.locator("#purge-link").count() == 0

    page.goto(f"/admin/memories/memory/{data['home'].pk}/change/")
    expect(page.locator("#memory-versions tr.memory-this")).to_contain_text("Lives in Porto")
    for label in ("Supersede…", "Invalidate…", "Delete…", "Forget (erase)…"):
        assert page.get_by_role("link", name=label).count() == 0, label

    page.goto(f"/admin/reflection/trait/{data['runner'].pk}/change/")
    expect(page.locator("#trait-evidence")).to_contain_text("Went running along the river")
    assert page.get_by_role("link", name="Veto…").count() == 0

    soul = data["soul"]
    page.goto(f"/admin/evolution/soulversion/{version_url_id(soul.agent_id, soul.version)}/change/")
    expect(page.locator("#soul-diff")).to_contain_text("Give a concrete example")
    assert page.locator("#soul-actions").count() == 0

    # The agent's runtime guardrail: its events from the agent list; no action to turn it on.
    page.goto("/admin/evolution/agent/")
    expect(page.locator("#result_list")).to_contain_text(soul.agent.name)
    assert page.locator("select[name=action] option[value=guard_on]").count() == 0
    page.locator("#result_list").get_by_role("link", name="guardrail").first.click()
    expect(page.locator("#content h1")).to_contain_text("guard event")

    assert page.locator("#end-user-forget").count() == 0
    for url in (
        end_user_url(USER) + "purge/",
        end_user_url(USER) + "forget/",
        f"/admin/memories/memory/{data['home'].pk}/forget/",
        f"/admin/memories/memory/{data['home'].pk}/supersede/",
        f"/admin/reflection/trait/{data['runner'].pk}/veto/",
    ):
        response = page.goto(url)
        assert response.status == 403, url
    assert Memory.objects.filter(user_id=USER).count() == 10


def test_operator_forgets_a_topic_seeing_first_what_goes(
    page, live_server, django_user_model, screenshots
):
    alice()
    staff(django_user_model, "otto", OPERATOR)
    log_in(page, "otto")
    cat = Memory.objects.get(user_id=USER, content="Has a cat called Miso")

    # From the user's page: the topic, then what forgetting it would erase.
    page.goto(end_user_url(USER))
    page.fill("#end-user-forget textarea[name=topic]", "my cat")
    page.click("#end-user-forget input[type=submit]")
    expect(page.locator("#forget-plan-memories")).to_contain_text("Has a cat called Miso")
    assert "Lives in Porto" not in page.locator("#forget-plan-memories").inner_text()
    shot(page, screenshots, "forget-preview")
    assert not ForgetRequest.objects.exists()  # a dry run

    page.click("#forget-confirm input[type=submit][value=Forget]")
    expect(page.locator(".messagelist")).to_contain_text("Forgotten: 1 memory forgotten whole")
    forget_request = ForgetRequest.objects.get()
    assert (forget_request.requested_by, forget_request.via) == ("staff:otto", "admin")

    # The forget request's page links the memory, whose page says when and by whom, not what.
    page.get_by_role("link", name=str(cat.pk)).click()
    expect(page.locator(".field-forgotten")).to_contain_text(
        "at the request of staff:otto via admin"
    )
    expect(page.locator("#memory-history")).to_contain_text("(erased)")
    assert "Miso" not in page.content()
    shot(page, screenshots, "forgotten")
    assert page.get_by_role("link", name="Forget (erase)…").count() == 0
