"""Writes of the evolution app, by subject: agents and their SOUL documents (`soul`), the
runtime guardrail (`guard`)."""

from evolution.services.guard import (
    GuardScope,
    guard_check,
    guard_gate,
    guard_scope_parsed,
    guard_session_checked,
)
from evolution.services.soul import (
    AGENT_NAME_MAX_CHARS,
    REASON_MAX_CHARS,
    TEXT_MAX_CHARS,
    SoulProposal,
    agent_create,
    agent_default,
    agent_for,
    agent_update,
    safety_contract_fresh,
    safety_contract_update,
    soul_apply,
    soul_bootstrap,
    soul_evaluate,
    soul_propose,
    soul_propose_and_apply,
    soul_rollback,
    soul_veto,
)

__all__ = [
    "AGENT_NAME_MAX_CHARS",
    "REASON_MAX_CHARS",
    "TEXT_MAX_CHARS",
    "GuardScope",
    "SoulProposal",
    "agent_create",
    "agent_default",
    "agent_for",
    "agent_update",
    "guard_check",
    "guard_gate",
    "guard_scope_parsed",
    "guard_session_checked",
    "safety_contract_fresh",
    "safety_contract_update",
    "soul_apply",
    "soul_bootstrap",
    "soul_evaluate",
    "soul_propose",
    "soul_propose_and_apply",
    "soul_rollback",
    "soul_veto",
]
