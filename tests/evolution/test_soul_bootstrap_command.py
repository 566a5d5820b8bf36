"""`manage.py soul_bootstrap PATH` imports a SOUL file as version 0, once."""

import pytest
from django.core.management import CommandError, call_command

from evolution.models import SoulEvent, SoulVersion

pytestmark = pytest.mark.django_db


def test_imports_a_file_once(tmp_path, capsys):
    soul = tmp_path / "SOUL.md"
    soul.write_text("# SOUL\n\n- User interest first.\n", encoding="utf-8")
    call_command("soul_bootstrap", str(soul))
    imported = SoulVersion.objects.get()
    assert (imported.version, imported.status, imported.created_by) == (0, "active", "bootstrap")
    assert imported.content == soul.read_text(encoding="utf-8")
    assert "SOUL v0 imported" in capsys.readouterr().out
    assert SoulEvent.objects.get().actor == "system"
    with pytest.raises(CommandError, match="bootstrapped already"):
        call_command("soul_bootstrap", str(soul))


@pytest.mark.parametrize("content", [None, "   \n"])
def test_a_missing_or_empty_file_imports_nothing(tmp_path, content):
    soul = tmp_path / "SOUL.md"
    if content is not None:
        soul.write_text(content, encoding="utf-8")
    with pytest.raises(CommandError):
        call_command("soul_bootstrap", str(soul))
    assert not SoulVersion.objects.exists()
