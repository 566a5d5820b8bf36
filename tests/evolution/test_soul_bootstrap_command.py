"""`manage.py soul_bootstrap PATH` imports a SOUL file as an agent's version 0, once, and
skips an agent that has a SOUL (a deploy hook runs it at every start)."""

import pytest
from django.core.management import CommandError, call_command

from evolution.models import Agent, SafetyContract, SoulEvent, SoulVersion

pytestmark = pytest.mark.django_db


def test_imports_a_file_once(tmp_path, capsys):
    soul = tmp_path / "SOUL.md"
    soul.write_text("# SOUL\n\n- User interest first.\n", encoding="utf-8")
    call_command("soul_bootstrap", str(soul))
    imported = SoulVersion.objects.get()
    assert (imported.version, imported.status, imported.created_by) == (0, "active", "bootstrap")
    assert imported.content == soul.read_text(encoding="utf-8")
    assert "SOUL v0 of agent" in capsys.readouterr().out
    assert SoulEvent.objects.get().actor == "system"

    call_command("soul_bootstrap", str(soul))

    assert "Skipped: agent" in capsys.readouterr().out
    assert SoulVersion.objects.count() == 1 and SoulEvent.objects.count() == 1


def test_names_an_agent_and_refuses_an_unknown_one(tmp_path, capsys):
    soul = tmp_path / "SOUL.md"
    soul.write_text("# SOUL\n\n## Anchors\n- User interest first.\n", encoding="utf-8")
    first = Agent.objects.create(name="first", is_default=True)
    second = Agent.objects.create(name="second")

    call_command("soul_bootstrap", str(soul), "--agent", str(second.pk))

    assert SoulVersion.objects.get().agent == second
    assert not SoulVersion.objects.filter(agent=first).exists()
    contract = SafetyContract.objects.get(agent=second)
    assert contract.extracted_anchors == ["User interest first."]
    with pytest.raises(CommandError, match="Agent not found"):
        call_command("soul_bootstrap", str(soul), "--agent", str(second.pk + 100))


@pytest.mark.parametrize("content", [None, "   \n"])
def test_a_missing_or_empty_file_imports_nothing(tmp_path, content):
    soul = tmp_path / "SOUL.md"
    if content is not None:
        soul.write_text(content, encoding="utf-8")
    with pytest.raises(CommandError):
        call_command("soul_bootstrap", str(soul))
    assert not SoulVersion.objects.exists()
