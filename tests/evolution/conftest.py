"""What the SOUL tests share: a seed document, the contract it is evaluated against, callers."""

import pytest

from core.access import Caller
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


@pytest.fixture
def soul():
    """A contract and the bootstrapped version 0."""
    safety_contract_update(caller=STAFF, anchors=ANCHORS, constraints=CONSTRAINTS)
    return soul_bootstrap(caller=STAFF, content=SEED)
