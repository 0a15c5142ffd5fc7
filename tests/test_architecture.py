"""The shape of the code, held: which layer may import which, small modules, room-plan docstrings, a CLI
that only dispatches, and ruff and the type checker passing."""

from __future__ import annotations

import argparse
import ast
import importlib
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import ROOT

SOURCES = {"conformance": "embconf", "reference": "embconf.reference"}
MAX_LINES = 400
MAX_TOP_MODULES = 6
# What each layer may import from the project (its own modules always). model is the ground floor.
ALLOWED = {
    "embconf.model": {"embconf.model"},
    "embconf.reference": {"embconf.model"},
    "embconf.untrusted": {"embconf.model"},
    "embconf.processes": {"embconf.model", "embconf.untrusted"},
    "embconf.corpus": {"embconf.model", "embconf.untrusted", "embconf.reference"},
}


def _modules() -> dict[str, Path]:
    """Dotted module name -> file, for every source file of the two folders."""
    found = {}
    for folder, package in SOURCES.items():
        for path in (ROOT / folder).rglob("*.py"):
            parts = list(path.relative_to(ROOT / folder).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            found[".".join([package, *parts])] = path
    return found


MODULES = _modules()


def _imports(path: Path) -> list[tuple[int, str, int]]:
    """(line, imported module, relative level) of every import in a file, at any depth."""
    out = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            out += [(node.lineno, alias.name, 0) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            out.append((node.lineno, node.module or "", node.level))
    return out


def _layer(module: str) -> str:
    return next(
        (
            layer
            for layer in sorted(ALLOWED, key=len, reverse=True)
            if module == layer or module.startswith(layer + ".")
        ),
        "",
    )


def test_no_relative_imports_anywhere():
    relative = [
        f"{path.relative_to(ROOT)}:{line}" for path in MODULES.values() for line, _, level in _imports(path) if level
    ]
    assert relative == []


@pytest.mark.parametrize("layer", sorted(ALLOWED))
def test_a_layer_imports_only_the_layers_below_it(layer):
    wrong = []
    for module, path in MODULES.items():
        if _layer(module) != layer:
            continue
        for line, imported, _ in _imports(path):
            if (
                imported.startswith("embconf")
                and _layer(imported) != layer
                and not any(imported == allowed or imported.startswith(allowed + ".") for allowed in ALLOWED[layer])
            ):
                wrong.append(f"{path.relative_to(ROOT)}:{line} imports {imported}")
    assert wrong == []


def test_the_reference_imports_only_the_ground_floor():
    for module, path in MODULES.items():
        if module.startswith("embconf.reference"):
            outside = [
                imported
                for _, imported, _ in _imports(path)
                if imported.startswith("embconf") and not imported.startswith(("embconf.model", "embconf.reference"))
            ]
            assert outside == [], path


def test_small_modules_and_few_at_the_top():
    long = {
        str(path.relative_to(ROOT)): n
        for path in MODULES.values()
        if (n := len(path.read_text().splitlines())) > MAX_LINES
    }
    assert long == {}
    top = sorted(p.name for p in (ROOT / "conformance").glob("*.py"))
    assert len(top) <= MAX_TOP_MODULES, top


def test_every_package_opens_with_a_room_plan():
    missing = [
        str(p.relative_to(ROOT))
        for p in (ROOT / "conformance").rglob("__init__.py")
        if not ast.get_docstring(ast.parse(p.read_text()))
    ]
    assert missing == []


def test_the_cli_only_dispatches():
    tree = ast.parse((ROOT / "conformance" / "cli.py").read_text())
    functions = sorted(node.name for node in tree.body if isinstance(node, ast.FunctionDef))
    assert functions == ["build_parser", "entry", "main"]


def test_ruff_passes():
    pytest.importorskip("ruff", reason="ruff is not installed (pip install -e '.[test]' brings it)")
    for check in (["check", "--no-cache", "."], ["format", "--check", "--no-cache", "."]):
        done = subprocess.run([sys.executable, "-m", "ruff", *check], cwd=ROOT, capture_output=True, text=True)
        assert done.returncode == 0, done.stdout[-4000:]


def test_the_type_checker_passes():
    pytest.importorskip("mypy", reason="mypy is not installed (pip install -e '.[test]' brings it)")
    done = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "typecheck.py")], capture_output=True, text=True, timeout=900
    )
    assert done.returncode == 0, done.stdout[-4000:]


def test_the_cli_knows_which_module_registers_each_command():
    from embconf import cli

    for module, commands in cli.COMMAND_MODULES.items():
        parser = argparse.ArgumentParser()
        sub = parser.add_subparsers(dest="command")
        importlib.import_module(module).register(sub)
        assert tuple(sub.choices) == commands, module
    probe = "import sys; from embconf import cli; cli.main(['list', 'features']); print(sorted(m for m in sys.modules if m.endswith('.command')))"
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120)
    assert done.stdout.splitlines()[-1] == "['embconf.corpus.command']", done.stdout[-2000:] + done.stderr[-2000:]
