"""Boundaries the code keeps (docs/architecture.md): the kernel imports no app, memories never
imports reflection, domain code knows nothing of HTTP nor of the site, reads never import writes,
services never import tasks, "current" and "latest" are said only in memories/predicates.py, and
every memory column is audited or named as bookkeeping."""

import ast
import re
from pathlib import Path

import pytest

from memories.models import AUDITED, NOT_AUDITED, Memory

ROOT = Path(__file__).resolve().parent.parent
APPS = ("memories", "reflection", "evolution")
DOMAIN_PACKAGES = ("core", *APPS, "neuromem_site")
# The adapters that face the outside: they may use the site's API platform, MCP and back-office.
ADAPTERS = {"api", "mcp", "admin", "admin.py", "management"}


def imports(path: Path) -> set[str]:
    """The modules a file imports (absolute names)."""
    names = set()
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
            names.update(f"{node.module}.{alias.name}" for alias in node.names)
    return names


def python_files(*packages: str) -> list[Path]:
    return [
        path
        for package in packages
        for path in sorted((ROOT / package).rglob("*.py"))
        if "migrations" not in path.parts
    ]


def offending_imports(files: list[Path], *forbidden: str) -> list[str]:
    return [
        f"{path.relative_to(ROOT)} imports {name}"
        for path in files
        for name in imports(path)
        if any(name == package or name.startswith(f"{package}.") for package in forbidden)
    ]


def test_the_kernel_imports_no_app_nor_the_site():
    assert offending_imports(python_files("core"), *APPS, "neuromem_site") == []


def test_memories_never_imports_reflection():
    """Reflection builds on memories; memories reaches it only through memories.hooks and
    memories.signals, which reflection answers."""
    assert offending_imports(python_files("memories"), "reflection", "evolution") == []


def test_domain_code_does_not_import_the_site():
    domain = [
        path for path in python_files(*APPS) if not ADAPTERS & set(path.relative_to(ROOT).parts)
    ]
    assert offending_imports(domain, "neuromem_site") == []


# "Current" (neither expired nor invalidated) and "latest" (not expired) have names in
# memories/predicates.py; a bare predicate elsewhere is one that can drift from them. A trigger's
# OLD./NEW. transition is not such a predicate.
BARE_PREDICATE = re.compile(r"(?<!OLD\.)(?<!NEW\.)\bexpired_at IS NULL|expired_at__isnull=True")


def test_current_and_latest_are_said_only_in_predicates():
    offenders = [
        f"{path.relative_to(ROOT)}:{number}"
        for path in python_files(*DOMAIN_PACKAGES)
        if path.relative_to(ROOT) != Path("memories/predicates.py")
        for number, line in enumerate(path.read_text().splitlines(), start=1)
        if BARE_PREDICATE.search(line)
    ]
    assert offenders == []


def test_only_the_api_packages_import_rest_framework():
    offenders = [
        str(path.relative_to(ROOT))
        for path in python_files(*DOMAIN_PACKAGES)
        if not {"api", "mcp"} & set(path.relative_to(ROOT).parts)
        and any(
            name.split(".")[0] in ("rest_framework", "drf_spectacular") for name in imports(path)
        )
    ]
    assert offenders == []


@pytest.mark.parametrize(
    ("reader", "forbidden"),
    [
        ("memories/selectors.py", "memories.services"),
        ("memories/recall.py", "memories.services"),
        ("memories/recall_statement.py", "memories.services"),
        ("memories/services", "memories.tasks"),
    ],
)
def test_layers_do_not_import_upwards(reader, forbidden):
    target = ROOT / reader
    files = sorted(target.rglob("*.py")) if target.is_dir() else [target]
    offenders = [
        f"{path.relative_to(ROOT)} imports {name}"
        for path in files
        for name in imports(path)
        if name == forbidden or name.startswith(f"{forbidden}.")
    ]
    assert offenders == []


def test_every_memory_column_is_audited_or_named_bookkeeping():
    columns = {field.column for field in Memory._meta.concrete_fields}
    assert set(AUDITED) & set(NOT_AUDITED) == set()
    assert columns - set(AUDITED) - set(NOT_AUDITED) == set(), "audit or exclude the new column"
    assert (set(AUDITED) | set(NOT_AUDITED)) - columns == set(), "a listed column is gone"
