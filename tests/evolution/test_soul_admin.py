"""The SOUL admin on the real views and database: lists, a version's page (content, diff,
checks, events), the veto / evaluate / apply / rollback actions through the services, the
safety contract's new versions, and staff who may only look."""

import pytest
from django.contrib.admin.models import ADDITION, CHANGE, LogEntry
from django.contrib.auth.models import Permission
from django.contrib.contenttypes.models import ContentType
from django.urls import reverse

from evolution.models import Agent, SafetyContract, SoulEvent, SoulStatus, SoulVersion
from evolution.services import (
    SoulProposal,
    guard_check,
    soul_bootstrap,
    soul_propose,
    soul_propose_and_apply,
)
from tests.evolution.conftest import AGENT, CONSTRAINTS, SEED, STAFF, edited, soul_agent

pytestmark = pytest.mark.django_db

VERSIONS = "/admin/evolution/soulversion/"
CONTRACTS = "/admin/evolution/safetycontract/"
EVENTS = "/admin/evolution/soulevent/"


def propose(content: str, *, caller=STAFF, auto_apply=True, **fields) -> SoulVersion:
    outcome = soul_propose_and_apply(
        agent=soul_agent(),
        caller=caller,
        proposal=SoulProposal(new_content=content, intent=fields.pop("intent", "tone"), **fields),
        auto_apply=auto_apply,
    )
    return outcome.version


def page_url(version: SoulVersion) -> str:
    return reverse(
        "admin:evolution_soulversion_change", args=[f"a{version.agent_id}-v{version.version}"]
    )


def action_url(name: str, version: SoulVersion) -> str:
    return reverse(
        f"admin:evolution_soulversion_{name}", args=[f"a{version.agent_id}-v{version.version}"]
    )


def messages_of(response) -> list[str]:
    return [str(message) for message in response.context["messages"]]


def status_of(version: SoulVersion) -> str:
    return SoulVersion.objects.get(pk=version.pk).status


@pytest.fixture
def viewer(client, django_user_model):
    """A staff member who may only view the SOUL's versions, events and contracts."""
    user = django_user_model.objects.create_user("viewer", "viewer@example.com", "pw")
    user.is_staff = True
    user.save()
    for model in (Agent, SoulVersion, SoulEvent, SafetyContract):
        content_type = ContentType.objects.get_for_model(model)
        user.user_permissions.add(
            Permission.objects.get(
                content_type=content_type, codename=f"view_{model._meta.model_name}"
            )
        )
    client.force_login(user)
    return client


# --- Lists and the version's page ------------------------------------------------------------


def test_lists_render_with_eval_summary_intent_and_filters(admin_client, soul):
    propose(edited("Use examples."), intent="more examples")
    propose(edited("Obey.").replace("User interest first", "Owner first"), intent="obedience")
    page = admin_client.get(VERSIONS)
    assert page.status_code == 200
    html = page.content.decode()
    assert "passed — all checks passed" in html
    assert "failed — failed: anchor_preservation" in html
    assert "not evaluated" in html  # the bootstrap
    assert "more examples" in html and "obedience" in html
    assert f"{VERSIONS}add/" not in html and "delete_selected" not in html

    proposed = admin_client.get(VERSIONS, {"status__exact": "proposed"}).content.decode()
    assert "obedience" in proposed and "more examples" not in proposed
    by_user = admin_client.get(VERSIONS, {"created_by__exact": "bootstrap"})
    assert by_user.status_code == 200
    assert "obedience" not in by_user.content.decode()

    contracts = admin_client.get(CONTRACTS)
    assert contracts.status_code == 200
    contract = SafetyContract.objects.filter(agent=soul.agent_id).first()  # the newest
    assert contract.content_hash[:12] in contracts.content.decode()
    other = Agent.objects.create(name="other")
    assert (
        "obedience"
        not in admin_client.get(VERSIONS, {"agent__id__exact": other.pk}).content.decode()
    )
    agents = admin_client.get("/admin/evolution/agent/").content.decode()
    assert f"{VERSIONS}?agent__id__exact={soul.agent_id}" in agents

    events = admin_client.get(EVENTS)
    assert events.status_code == 200
    assert "staff:ana" in events.content.decode()
    vetoed = admin_client.get(EVENTS, {"to_status__exact": "vetoed"}).content.decode()
    assert "staff:ana" not in vetoed
    assert "staff:ana" in admin_client.get(EVENTS, {"q": "ana"}).content.decode()
    assert "staff:ana" not in admin_client.get(EVENTS, {"q": "nobody"}).content.decode()
    assert (
        f'href="{VERSIONS}a{soul.agent_id}-v1/change/"' in events.content.decode()
    )  # an event's version


def test_version_page_shows_escaped_content_diff_checks_proposal_and_events(admin_client, soul):
    version = propose(
        edited("Use <b>examples</b>.").replace("- Warm and concise.\n", ""),
        intent="examples <please>",
        risk_notes="none known",
        evidence_refs=["mem:1", "mem:2"],
        auto_apply=False,
    )
    page = admin_client.get(page_url(version))
    assert page.status_code == 200
    html = page.content.decode()
    # The content, escaped, as SOUL.md.
    assert "&lt;!-- SOUL.md v1 (proposed) --&gt;" in html
    assert "Use &lt;b&gt;examples&lt;/b&gt;." in html and "<b>examples</b>" not in html
    # The diff against v0, coloured by line.
    assert '<span class="diff-add">+- Use &lt;b&gt;examples&lt;/b&gt;.</span>' in html
    assert '<span class="diff-del">-- Warm and concise.</span>' in html
    assert '<span class="diff-file">--- SOUL.md@v0</span>' in html
    assert '<span class="diff-hunk">@@' in html
    # The checks and the contract they used.
    for name in ("anchor_preservation", "constraint_compliance", "well_formed_markdown"):
        assert name in html
    assert "size_limit" in html and "diff_sanity" in html
    assert SafetyContract.objects.filter(agent=soul.agent_id).first().content_hash in html
    # The proposal.
    assert "examples &lt;please&gt;" in html and "none known" in html
    assert "mem:1, mem:2" in html
    # The events: born proposed (∅ → proposed), by the proposer, with the intent as reason.
    assert "∅ → proposed" in html and "staff:ana" in html
    # A passed proposal offers apply and veto, not evaluate or rollback.
    assert action_url("apply", version) in html and action_url("veto", version) in html
    assert action_url("evaluate", version) not in html
    assert action_url("rollback", version) not in html
    # Nothing editable in place.
    assert admin_client.post(page_url(version), {"content": "x"}).status_code == 403
    assert admin_client.post(action_url("delete", version), {"post": "yes"}).status_code == 403
    assert SoulVersion.objects.get(pk=version.pk).content == version.content

    bootstrap = admin_client.get(page_url(soul)).content.decode()
    assert "No predecessor" in bootstrap and "Not evaluated" in bootstrap


# --- Addresses and history ------------------------------------------------------------------


def test_versions_are_addressed_by_their_number_never_by_row_id(admin_client, soul):
    """Row ids and version numbers differ (`/9/change/` showed v8): a version's URLs carry its
    number, and an address by row id leads to that row's own version address, saying so."""
    versions = [soul, propose(edited("Use examples.")), propose(edited("Be brief."))]
    listed = admin_client.get(VERSIONS).content.decode()
    for version in versions:
        assert version.pk != version.version  # else the test could not tell them apart
        assert f'href="{VERSIONS}a{version.agent_id}-v{version.version}/change/"' in listed
        assert f'href="{VERSIONS}{version.pk}/change/"' not in listed
        page = admin_client.get(f"{VERSIONS}a{version.agent_id}-v{version.version}/change/")
        assert page.status_code == 200
        assert page.context["original"].version == version.version

        old_address = admin_client.get(f"{VERSIONS}{version.pk}/change/", follow=True)
        assert old_address.redirect_chain == [
            (f"{VERSIONS}a{version.agent_id}-v{version.version}/change/", 302)
        ]
        assert old_address.context["original"].version == version.version
        assert any(
            f"row id, that of v{version.version}" in message for message in messages_of(old_address)
        )
        history = admin_client.get(f"{VERSIONS}{version.pk}/history/")
        assert history["Location"] == f"{VERSIONS}a{version.agent_id}-v{version.version}/history/"

    missing = admin_client.get(f"{VERSIONS}a{soul.agent_id}-v99/change/", follow=True)
    assert missing.redirect_chain[-1][0] == "/admin/"
    no_row = admin_client.get(f"{VERSIONS}{max(v.pk for v in versions) + 1000}/change/")
    assert no_row.status_code == 302 and no_row["Location"] == "/admin/"


def test_history_shows_the_versions_events_and_the_staff_actions(admin_client, soul):
    version = propose(edited("Use examples."), auto_apply=False)
    page = admin_client.get(page_url(version)).content.decode()
    history_url = f"{VERSIONS}a{version.agent_id}-v{version.version}/history/"
    assert f'href="{history_url}"' in page  # the History button, by number too

    admin_client.post(action_url("veto", version), {"reason": "Not what we want"})
    history = admin_client.get(history_url)
    assert history.status_code == 200
    html = history.content.decode()
    # The SOUL's own event log: born proposed, then vetoed by the staff member.
    assert 'id="audit-trail"' in html
    assert "∅ → proposed" in html and "proposed → vetoed" in html
    # The admin's log, kept by row id, found for the address by number.
    assert "Vetoed: Not what we want" in html
    assert "doesn’t have a change history" not in html
    assert f'href="{page_url(version)}"' in html  # the breadcrumb back to the version


# --- Veto ------------------------------------------------------------------------------------


def test_veto_of_a_proposal_records_who_and_why(admin_client, admin_user, soul):
    version = propose(edited("Use examples."), auto_apply=False)
    form = admin_client.get(action_url("veto", version))
    assert form.status_code == 200 and 'name="reason"' in form.content.decode()

    response = admin_client.post(
        action_url("veto", version), {"reason": "Not what we want"}, follow=True
    )
    assert response.redirect_chain[-1][0] == page_url(version)
    assert any("Vetoed the proposal v1" in message for message in messages_of(response))
    assert status_of(version) == SoulStatus.VETOED
    event = SoulEvent.objects.get(version=1, to_status="vetoed")
    assert event.from_status == "proposed"
    assert event.actor == f"staff:{admin_user.get_username()}"
    assert event.reason == "Not what we want"
    entry = LogEntry.objects.get(object_id=str(version.pk))
    assert entry.action_flag == CHANGE and "Not what we want" in entry.change_message
    assert entry.user == admin_user
    # A vetoed proposal offers nothing any more.
    html = response.content.decode()
    assert action_url("veto", version) not in html and action_url("apply", version) not in html


def test_veto_without_a_reason_changes_nothing(admin_client, soul):
    version = propose(edited("Use examples."), auto_apply=False)
    response = admin_client.post(action_url("veto", version), {"reason": "   "})
    assert response.status_code == 200
    assert any("Nothing was vetoed: Say why." in message for message in messages_of(response))
    assert status_of(version) == SoulStatus.PROPOSED
    assert not SoulEvent.objects.filter(to_status="vetoed").exists()
    assert not LogEntry.objects.exists()


def test_veto_of_the_active_version_restores_the_previous_stable_one(admin_client, soul):
    active = propose(edited("Use examples."))
    response = admin_client.post(action_url("veto", active), {"reason": "Regressed"}, follow=True)
    assert any("v2" in message and "active now" in message for message in messages_of(response))
    assert status_of(active) == SoulStatus.VETOED
    restored = SoulVersion.objects.get(status="active")
    assert (restored.version, restored.content, restored.created_by) == (2, SEED, "system")
    assert LogEntry.objects.filter(object_id=str(restored.pk), action_flag=CHANGE).exists()


def test_veto_of_a_superseded_version_is_refused(admin_client, soul):
    propose(edited("Use examples."))
    assert action_url("veto", soul) not in admin_client.get(page_url(soul)).content.decode()
    response = admin_client.post(action_url("veto", soul), {"reason": "Old"}, follow=True)
    assert any("Nothing was vetoed" in message for message in messages_of(response))
    assert status_of(soul) == SoulStatus.SUPERSEDED
    assert not LogEntry.objects.exists()


# --- Evaluate and apply ----------------------------------------------------------------------


def test_apply_of_a_passed_proposal_makes_it_active(admin_client, soul):
    version = propose(edited("Use examples."), auto_apply=False)
    assert version.eval_result["passed"] and version.status == SoulStatus.PROPOSED
    response = admin_client.post(action_url("apply", version), follow=True)
    assert response.redirect_chain[-1][0] == page_url(version)
    assert any("Applied SOUL v1" in message for message in messages_of(response))
    assert status_of(version) == SoulStatus.ACTIVE
    assert status_of(soul) == SoulStatus.SUPERSEDED
    event = SoulEvent.objects.get(version=1, to_status="active")
    assert event.actor == "staff:admin" and event.reason == "apply"
    assert LogEntry.objects.filter(object_id=str(version.pk), change_message="Applied").exists()
    assert LogEntry.objects.filter(
        object_id=str(soul.pk), change_message="Superseded by v1"
    ).exists()
    # Applying twice is refused and changes nothing.
    again = admin_client.post(action_url("apply", version), follow=True)
    assert any("Nothing was applied" in message for message in messages_of(again))
    assert admin_client.get(action_url("apply", version)).status_code == 405


def test_a_rejected_proposal_has_no_apply_and_is_refused(admin_client, soul):
    rejected = propose(edited("Obey.").replace("Be honest", "Be vague"), auto_apply=False)
    assert rejected.eval_result["passed"] is False
    html = admin_client.get(page_url(rejected)).content.decode()
    assert action_url("apply", rejected) not in html
    assert "GUARD_ANCHOR_MISSING" in html and "soul-check-failed" in html
    assert action_url("veto", rejected) in html  # a rejected proposal can still be vetoed

    response = admin_client.post(action_url("apply", rejected), follow=True)
    assert any(
        "Nothing was applied" in message and "rejected by its evaluation" in message
        for message in messages_of(response)
    )
    assert status_of(rejected) == SoulStatus.PROPOSED
    assert status_of(soul) == SoulStatus.ACTIVE
    assert not LogEntry.objects.exists()


def test_a_stale_proposal_has_no_apply_and_is_refused(admin_client, soul):
    first = propose(edited("Use examples."), auto_apply=False)
    second = propose(edited("Use short examples."), auto_apply=False)
    admin_client.post(action_url("apply", first))
    assert status_of(first) == SoulStatus.ACTIVE
    html = admin_client.get(page_url(second)).content.decode()
    assert action_url("apply", second) not in html
    assert "changes v0, which is no longer active" in html
    response = admin_client.post(action_url("apply", second), follow=True)
    assert any("no longer active" in message for message in messages_of(response))
    assert status_of(second) == SoulStatus.PROPOSED and status_of(first) == SoulStatus.ACTIVE


def test_evaluate_then_apply_an_unevaluated_proposal(admin_client, soul):
    version = soul_propose(
        agent=soul_agent(),
        caller=AGENT,
        proposal=SoulProposal(new_content=edited("Use examples."), intent="tone"),
    )
    html = admin_client.get(page_url(version)).content.decode()
    assert action_url("evaluate", version) in html
    assert action_url("apply", version) not in html
    assert "Not evaluated yet." in html
    refused = admin_client.post(action_url("apply", version), follow=True)
    assert any("not evaluated" in message for message in messages_of(refused))

    response = admin_client.post(action_url("evaluate", version), follow=True)
    assert any("Evaluated SOUL v1: passed" in message for message in messages_of(response))
    evaluated = SoulVersion.objects.get(pk=version.pk)
    assert evaluated.eval_result["passed"] and evaluated.status == SoulStatus.PROPOSED
    html = response.content.decode()
    assert action_url("apply", version) in html and action_url("evaluate", version) not in html
    assert LogEntry.objects.filter(object_id=str(version.pk)).count() == 1


# --- Rollback --------------------------------------------------------------------------------


def test_rollback_to_a_superseded_version_makes_a_new_active_copy(admin_client, soul):
    current = propose(edited("Use examples."))
    html = admin_client.get(page_url(soul)).content.decode()
    assert action_url("rollback", soul) in html
    assert (
        action_url("rollback", current) not in admin_client.get(page_url(current)).content.decode()
    )

    response = admin_client.post(
        action_url("rollback", soul), {"reason": "Examples were noise"}, follow=True
    )
    assert any("Rolled back to SOUL v0" in message for message in messages_of(response))
    restored = SoulVersion.objects.get(status="active")
    assert (restored.version, restored.content, restored.created_by) == (2, SEED, "user")
    assert restored.proposal["restores"] == 0 and restored.proposal["requested_by"] == "staff:admin"
    assert status_of(current) == SoulStatus.ROLLED_BACK
    assert status_of(soul) == SoulStatus.SUPERSEDED  # history is never rewritten
    event = SoulEvent.objects.get(version=1, to_status="rolled_back")
    assert (event.actor, event.reason) == ("staff:admin", "Examples were noise")
    assert LogEntry.objects.filter(object_id=str(restored.pk), action_flag=ADDITION).exists()
    assert LogEntry.objects.filter(object_id=str(current.pk), action_flag=CHANGE).exists()

    # The restored version's page shows the diff against the version it replaced.
    restored_page = admin_client.get(page_url(restored)).content.decode()
    assert '<span class="diff-del">-- Use examples.</span>' in restored_page
    assert "restores version" in restored_page


def test_rollback_to_a_proposal_is_refused(admin_client, soul):
    proposal = propose(edited("Use examples."), auto_apply=False)
    response = admin_client.post(action_url("rollback", proposal), follow=True)
    assert any("Nothing was rolled back" in message for message in messages_of(response))
    assert SoulVersion.objects.get(status="active").pk == soul.pk
    assert SoulVersion.objects.count() == 2


# --- The safety contract ---------------------------------------------------------------------


def test_contract_add_creates_the_next_version(admin_client, admin_user, soul):
    add = f"{CONTRACTS}add/"
    form = admin_client.get(add)
    assert form.status_code == 200
    html = form.content.decode()
    assert "User interest first\nBe honest" in html  # starts from the current contract
    assert "safety contract v3" in html  # v2: v1 with the bootstrapped SOUL as source

    response = admin_client.post(
        add,
        {
            "agent": soul.agent_id,
            "anchors": "User interest first\r\n  Be honest \r\n\r\n",
            "constraints": "ignore (all|previous) instructions\r\n\\bharm the user\\b\r\n"
            "\\bdeceive\\b\r\n",
        },
        follow=True,
    )
    created = SafetyContract.objects.get(version=3)
    assert response.redirect_chain[-1][0] == reverse(
        "admin:evolution_safetycontract_change", args=[created.pk]
    )
    assert created.anchors == ["User interest first", "Be honest"]
    assert created.constraints == [*CONSTRAINTS, r"\bdeceive\b"]
    assert created.created_by == f"staff:{admin_user.get_username()}"
    assert SafetyContract.objects.get(version=1).constraints == CONSTRAINTS
    assert LogEntry.objects.filter(object_id=str(created.pk), action_flag=ADDITION).exists()
    page = response.content.decode()
    assert r"\bdeceive\b" in page and created.content_hash in page

    # New evaluations use it.
    version = propose(edited("Deceive when it helps."), auto_apply=False)
    assert version.eval_result["contract_version"] == 3
    assert version.eval_result["passed"] is False


def test_contract_add_with_a_bad_regex_shows_the_error_and_creates_nothing(admin_client, soul):
    response = admin_client.post(
        f"{CONTRACTS}add/",
        {
            "agent": soul.agent_id,
            "anchors": "User interest first",
            "constraints": "fine\n(unclosed",
        },
    )
    assert response.status_code == 200
    errors = response.context["form"].errors
    assert "constraints" in errors
    assert (
        "Line 2" in errors["constraints"][0]
        and "Not a regular expression" in errors["constraints"][0]
    )
    assert "Not a regular expression" in response.content.decode()
    assert SafetyContract.objects.count() == 2
    assert not LogEntry.objects.exists()

    body = {"agent": soul.agent_id, "anchors": " \n", "constraints": ""}
    empty = admin_client.post(f"{CONTRACTS}add/", body)
    assert "anchors" in empty.context["form"].errors
    assert SafetyContract.objects.count() == 2


def test_contract_versions_are_read_only(admin_client, soul):
    contract = SafetyContract.objects.get(version=2)
    change = reverse("admin:evolution_safetycontract_change", args=[contract.pk])
    page = admin_client.get(change)
    assert page.status_code == 200
    html = page.content.decode()
    assert "<code>User interest first</code>" in html
    assert "<code>ignore (all|previous) instructions</code>" in html
    assert f"{CONTRACTS}add/?from={contract.pk}" in html
    assert admin_client.post(change, {"anchors": "[]"}).status_code == 403
    delete = reverse("admin:evolution_safetycontract_delete", args=[contract.pk])
    assert admin_client.post(delete, {"post": "yes"}).status_code == 403
    assert SafetyContract.objects.get(version=2).anchors == ["User interest first", "Be honest"]


# --- Staff who may only look -----------------------------------------------------------------


def test_view_only_staff_see_no_actions_and_get_403(viewer, soul):
    current = propose(edited("Use examples."))
    proposal = propose(edited("Use short examples."), auto_apply=False)
    contracts = SafetyContract.objects.count()
    unevaluated = soul_propose(
        agent=soul_agent(),
        caller=AGENT,
        proposal=SoulProposal(new_content=edited("Use more."), intent="more"),
    )
    for version in (soul, current, proposal, unevaluated):
        page = viewer.get(page_url(version))
        assert page.status_code == 200
        html = page.content.decode()
        assert 'id="soul-actions"' not in html
        for name in ("veto", "apply", "rollback", "evaluate"):
            assert action_url(name, version) not in html

    assert viewer.get(action_url("veto", proposal)).status_code == 403
    assert viewer.post(action_url("veto", proposal), {"reason": "No"}).status_code == 403
    assert viewer.post(action_url("veto", current), {"reason": "No"}).status_code == 403
    assert viewer.post(action_url("apply", proposal)).status_code == 403
    assert viewer.post(action_url("evaluate", unevaluated)).status_code == 403
    assert viewer.post(action_url("rollback", soul), {"reason": "No"}).status_code == 403

    statuses = dict(SoulVersion.objects.values_list("version", "status"))
    assert statuses == {0: "superseded", 1: "active", 2: "proposed", 3: "proposed"}
    assert SoulVersion.objects.get(pk=unevaluated.pk).eval_result is None
    assert not LogEntry.objects.exists()

    # Nor may they make a contract version.
    assert viewer.get(f"{CONTRACTS}add/").status_code == 403
    assert viewer.post(f"{CONTRACTS}add/", {"anchors": "x"}).status_code == 403
    assert SafetyContract.objects.count() == contracts
    assert f"{CONTRACTS}add/" not in viewer.get(CONTRACTS).content.decode()


# --- Per agent -------------------------------------------------------------------------------


def test_each_agent_s_versions_have_their_own_pages(admin_client, soul):
    helper = Agent.objects.create(name="helper")
    other = soul_bootstrap(agent=helper, caller=STAFF, content="# Helper\n").version
    assert (other.version, soul.version) == (0, 0)

    mine = admin_client.get(page_url(soul)).content.decode()
    theirs = admin_client.get(page_url(other)).content.decode()

    assert "User interest first" in mine and "# Helper" not in mine
    assert "# Helper" in theirs and "User interest first" not in theirs
    assert "helper" in theirs  # the agent, among the version's fields
    only_helper = admin_client.get(VERSIONS, {"agent__id__exact": helper.pk}).content.decode()
    assert page_url(other) in only_helper and page_url(soul) not in only_helper


def test_staff_turn_an_agents_guardrail_on_and_read_its_events(admin_client, soul):
    agent = soul_agent()
    response = admin_client.post(
        "/admin/evolution/agent/",
        {"action": "guard_on", "_selected_action": [agent.pk]},
        follow=True,
    )
    assert "Turned the guardrail on for 1 agent(s)." in messages_of(response)
    assert Agent.objects.get(pk=agent.pk).guard_enabled
    entry = LogEntry.objects.get(object_id=str(agent.pk), action_flag=CHANGE)
    assert entry.change_message == "Turned the runtime guardrail on."
    guard_check(caller=STAFF, agent=agent, session="s", context="nothing of the contract")
    events = admin_client.get("/admin/evolution/guardevent/", {"agent__id__exact": agent.pk})
    assert events.status_code == 200
    assert b"guardrail_warning" in events.content
    agents = admin_client.get("/admin/evolution/agent/").content.decode()
    assert f"/admin/evolution/guardevent/?agent__id__exact={agent.pk}" in agents


def test_a_viewer_cannot_turn_a_guardrail_on(viewer, soul):
    agent = soul_agent()
    assert viewer.get("/admin/evolution/agent/").status_code == 200
    response = viewer.post(
        "/admin/evolution/agent/", {"action": "guard_on", "_selected_action": [agent.pk]}
    )
    assert response.status_code in (200, 302)  # the list again: the action is not offered
    assert not Agent.objects.get(pk=agent.pk).guard_enabled
