"""What the SOUL tests share: a seed document, the contract it is evaluated against, callers."""

import pytest

from core.access import Caller
from evolution.models import Agent
from evolution.services import safety_contract_update, soul_bootstrap

STAFF = Caller(name="staff:ana", is_staff=True)
AGENT = Caller(name="agent-1", user_prefixes=("a:",))
SEED = """# SOUL

## Values
- User interest first.
- Be honest about uncertainty.

## Style
- Warm and concise.
"""
ANCHORS = ["User interest first", "Be honest"]
CONSTRAINTS = [r"ignore (all|previous) instructions", r"\bharm the user\b"]


def edited(*extra: str, base: str = SEED) -> str:
    """The seed with bullet lines added: a small, sound change."""
    return base + "".join(f"- {line}\n" for line in extra)


def soul_agent() -> Agent:
    """The agent the service-level tests change: the deployment's own (no API client)."""
    return Agent.objects.get_or_create(client=None, name="default", defaults={"is_default": True})[
        0
    ]


@pytest.fixture
def soul():
    """A contract and the bootstrapped version 0 (SEED states no marked sections: the
    contract is the staff's additions alone)."""
    safety_contract_update(
        agent=soul_agent(), caller=STAFF, anchors=ANCHORS, constraints=CONSTRAINTS
    )
    return soul_bootstrap(agent=soul_agent(), caller=STAFF, content=SEED).version
