"""Boundaries the code keeps: domain code knows nothing of HTTP, reads never import writes,
services never import tasks, and every memory column is audited or named as bookkeeping."""

import ast
from pathlib import Path

import pytest

from memories.models import AUDITED, NOT_AUDITED, Memory

ROOT = Path(__file__).resolve().parent.parent
DOMAIN_PACKAGES = ("memories", "reflection", "evolution", "neuromem_site")


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
