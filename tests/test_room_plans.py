"""The room plans: every package's docstring names each of its modules and subpackages (a module it does not name
is a room the plan forgot), and no two classes of the suite share a name (one name, one thing)."""

from __future__ import annotations

import ast
import re
from collections import defaultdict
from pathlib import Path

import pytest
from helpers import ROOT

PACKAGES = sorted(p.parent for folder in ("conformance", "reference") for p in (ROOT / folder).rglob("__init__.py"))


def _rooms(package: Path) -> list[str]:
    """The modules and subpackages of a package, by name."""
    modules = [p.stem for p in package.glob("*.py") if p.stem != "__init__"]
    return sorted(modules + [p.parent.name for p in package.glob("*/__init__.py")])


def _names(docstring: str, room: str) -> bool:
    """Whether the docstring names ``room`` as code: ``room``, ``.room``, ``room.py``, ``package.room`` or
    :mod:`.room`, in backticks."""
    quoted = rf"(?:``|:mod:`|`)(?:[\w~]+\.)*\.?{re.escape(room)}(?:\.py)?(?:``|`)"
    return re.search(quoted, docstring) is not None


@pytest.mark.parametrize("package", PACKAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_a_package_docstring_names_each_of_its_modules(package):
    docstring = ast.get_docstring(ast.parse((package / "__init__.py").read_text(encoding="utf-8"))) or ""
    assert [room for room in _rooms(package) if not _names(docstring, room)] == []


def test_no_two_classes_of_the_suite_share_a_name():
    where: dict[str, list[str]] = defaultdict(list)
    for folder in ("conformance", "reference"):
        for path in (ROOT / folder).rglob("*.py"):
            for node in ast.parse(path.read_text(encoding="utf-8")).body:
                if isinstance(node, ast.ClassDef):
                    where[node.name].append(str(path.relative_to(ROOT)))
    assert {name: paths for name, paths in where.items() if len(paths) > 1} == {}
