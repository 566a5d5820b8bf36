"""The contract from the SOUL document (issue #30): the bullets under Core principles /
Anchors (核心原则 / 锚点) and Constraints (约束), staff additions kept, `source_hash`, and the
lazy refresh when the active SOUL's text changes."""

import hashlib

import pytest

from evolution.contract import contract_extract
from evolution.models import SafetyContract
from evolution.selectors import safety_contract_current
from evolution.services import (
    SoulProposal,
    safety_contract_fresh,
    safety_contract_update,
    soul_bootstrap,
    soul_propose_and_apply,
)
from tests.evolution.conftest import AGENT, STAFF, soul_agent

ENGLISH = """# SOUL

Intro text, not a rule.
- Not under a marked heading.

## Core principles
- User interest first.
* Be honest about uncertainty.

### Style
- Warm and concise.

## Anchors:
1. Protect the user's privacy.
- User interest first.

## Constraints
- Never share memories with another user.

```
## Anchors
- Inside a code block.
```
"""
CHINESE = """# 灵魂

## 核心原则
- 用户利益优先
- 诚实面对不确定性

## 锚点
- 保护用户隐私

## 约束
- 不得向他人泄露用户记忆

## 风格
- 温暖简洁
"""


def test_english_headings_give_anchors_and_constraints():
    extracted = contract_extract(ENGLISH)
    assert extracted.anchors == [
        "User interest first.",
        "Be honest about uncertainty.",
        "Protect the user's privacy.",
    ]
    assert extracted.constraints == ["Never share memories with another user."]
    assert extracted.source_hash == hashlib.sha256(ENGLISH.encode()).hexdigest()


def test_chinese_headings_give_anchors_and_constraints():
    extracted = contract_extract(CHINESE)
    assert extracted.anchors == ["用户利益优先", "诚实面对不确定性", "保护用户隐私"]
    assert extracted.constraints == ["不得向他人泄露用户记忆"]


def test_a_document_without_marked_sections_states_nothing():
    extracted = contract_extract("# SOUL\n\n## Values\n- Be kind.\n")
    assert (extracted.anchors, extracted.constraints) == ([], [])


@pytest.mark.django_db
def test_a_bootstrapped_agent_has_a_contract_and_its_proposals_are_judged_at_once():
    outcome = soul_bootstrap(agent=soul_agent(), caller=AGENT, content=CHINESE)
    contract = safety_contract_current(agent=soul_agent())
    assert (contract.version, contract.source_hash) == (
        1,
        hashlib.sha256(CHINESE.encode()).hexdigest(),
    )
    assert contract.extracted_anchors == ["用户利益优先", "诚实面对不确定性", "保护用户隐私"]

    kept = CHINESE + "- 多举例子\n"
    applied = soul_propose_and_apply(
        agent=soul_agent(), caller=AGENT, proposal=SoulProposal(kept, "examples")
    )
    dropped = kept.replace("- 不得向他人泄露用户记忆\n", "")
    rejected = soul_propose_and_apply(
        agent=soul_agent(), caller=AGENT, proposal=SoulProposal(dropped, "drop a rule")
    )

    assert applied.applied and outcome.version.version == 0
    assert not rejected.applied
    check = rejected.version.eval_result["checks"][1]
    assert (check["name"], check["passed"]) == ("constraint_compliance", False)
    assert "drops 不得向他人泄露用户记忆" in check["detail"]


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("heading", "renamed", "check"),
    [("## 锚点", "## 备注", 0), ("## 约束", "## 备注", 1), ("## 核心原则", "## 原则", 0)],
)
def test_a_proposal_that_moves_a_marked_item_out_of_its_section_is_rejected(
    heading, renamed, check
):
    # Else the item would leave the contract on apply, and the next change could delete it.
    soul_bootstrap(agent=soul_agent(), caller=AGENT, content=CHINESE)
    demoted = CHINESE.replace(heading, renamed)
    outcome = soul_propose_and_apply(
        agent=soul_agent(), caller=AGENT, proposal=SoulProposal(demoted, "rename a section")
    )
    assert not outcome.applied
    assert outcome.version.eval_result["checks"][check]["passed"] is False
    # Reworded inside its section, an item is still kept.
    reworded = CHINESE.replace("- 保护用户隐私", "- 保护用户隐私，始终如此")
    kept = soul_propose_and_apply(
        agent=soul_agent(), caller=AGENT, proposal=SoulProposal(reworded, "reword")
    )
    assert kept.applied, kept.version.eval_result


@pytest.mark.django_db
def test_the_contract_follows_each_apply_and_keeps_the_staff_additions():
    soul_bootstrap(agent=soul_agent(), caller=STAFF, content=ENGLISH)
    staff = safety_contract_update(
        agent=soul_agent(), caller=STAFF, anchors=["Be honest"], constraints=[r"\bharm\b"]
    )
    assert (staff.version, staff.extracted_anchors[0]) == (2, "User interest first.")
    changed = ENGLISH.replace("## Constraints\n", "## Constraints\n- Never pretend to be human.\n")

    soul_propose_and_apply(
        agent=soul_agent(), caller=AGENT, proposal=SoulProposal(changed, "one more rule")
    )

    refreshed = safety_contract_current(agent=soul_agent())
    assert refreshed.version == 3
    assert refreshed.source_hash == hashlib.sha256(changed.encode()).hexdigest()
    assert refreshed.extracted_constraints == [
        "Never pretend to be human.",
        "Never share memories with another user.",
    ]
    assert (refreshed.anchors, refreshed.constraints) == (["Be honest"], [r"\bharm\b"])
    # The hash unchanged: nothing new.
    assert safety_contract_fresh(agent=soul_agent()) == refreshed
    assert SafetyContract.objects.count() == 3


@pytest.mark.django_db
def test_a_stale_contract_is_refreshed_lazily_when_the_hash_differs():
    """A contract from before extraction (the migration's, or staff's): its source_hash is not
    the active SOUL's, so the next read extracts."""
    safety_contract_update(agent=soul_agent(), caller=STAFF, anchors=["Be honest"], constraints=[])
    soul_bootstrap(agent=soul_agent(), caller=STAFF, content=ENGLISH)
    SafetyContract.objects.create(
        agent=soul_agent(), version=3, anchors=["Be honest"], content_hash="x", created_by="t"
    )

    fresh = safety_contract_fresh(agent=soul_agent())

    assert fresh.version == 4
    assert fresh.extracted_anchors[0] == "User interest first."
    assert fresh.anchors == ["Be honest"]
