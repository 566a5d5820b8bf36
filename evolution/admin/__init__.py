"""Staff views of the agents' SOUL documents: their versions, their Core Safety Contracts, the
event log, and what each agent's runtime guardrail recorded; each list filters by agent.

Nothing is edited in place. A version changes only through the services (docs/evolution.md)
that the API uses too, reached from its page: veto (with a reason), evaluate and apply a
proposal, roll back to a version that was active once. Each needs the
`evolution.change_soulversion` permission, and is recorded in the admin's history besides
the database's own event log. A contract change is a new contract version
(`safety_contract_update`, the `evolution.add_safetycontract` permission).

A version's pages are addressed by its agent and number (`soulversion/a2-v8/change/`), never
by its row id, which differs: an address by row id leads to the version's own address, saying
so.

Modules: `agents` (agents and their guardrails' events), `versions` (the SOUL's versions and
their actions, shown through `display`), `safety_contract`, `events` (the event log).
"""

# Imported for their registrations: admin.autodiscover imports this package only.
from evolution.admin import agents, events, safety_contract, versions

# How other code (the back-office's tests among them) names a version's admin pages.
from evolution.admin.display import version_url_id

__all__ = ["agents", "events", "safety_contract", "version_url_id", "versions"]
