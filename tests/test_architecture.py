"""The shape of the code, held: which layer may import which, small modules, room-plan docstrings, a CLI
that only dispatches, and ruff and the type checker passing."""

from __future__ import annotations

import argparse
import ast
import importlib
import re
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import ROOT

SOURCES = {"conformance": "embconf", "reference": "embconf.reference"}
MAX_LINES = 400
MAX_TOP_MODULES = 6
# The floors of the room plan (conformance/__init__.py), the ground floor first: a package imports its own modules
# and the floors below its own, never a package of its own floor or above. The entry points (the top floor) are
# imported by nothing; they may import each other.
FLOORS: tuple[tuple[str, ...], ...] = (
    ("embconf.model",),
    ("embconf.reference", "embconf.untrusted"),
    ("embconf.processes", "embconf.corpus"),
    ("embconf.judging", "embconf.adapters"),
    ("embconf.isolation", "embconf.protocol", "embconf.mutants"),
    ("embconf.diagnosis",),
    ("embconf.session",),
    ("embconf.reports",),
    ("embconf.matrix", "embconf.bench", "embconf.mutation", "embconf.explore"),
    ("embconf.run", "embconf.grading"),
    ("embconf.autograder",),
    ("embconf", "embconf.__main__", "embconf.cli", "embconf.pytest_plugin"),
)
FLOOR = {package: number for number, packages in enumerate(FLOORS) for package in packages}
ENTRY = len(FLOORS) - 1


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
    """(line, imported module, relative level) of every import in a file, at any depth; ``from embconf import
    session`` imports the module ``embconf.session``."""
    out = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            out += [(node.lineno, alias.name, 0) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            module = node.module or ""
            named = sorted({f"{module}.{a.name}" if f"{module}.{a.name}" in MODULES else module for a in node.names})
            out += [(node.lineno, name, node.level) for name in named]
    return out


def _layer(module: str) -> str:
    """The package of the room plan a module is in ('' for none); the package root is only itself."""
    if module == "embconf":
        return module
    return max(
        (p for p in FLOOR if p != "embconf" and (module == p or module.startswith(p + "."))), key=len, default=""
    )


def _upward() -> list[tuple[str, str, str]]:
    """(where, module, imported) of every import that runs up the floors or across the packages of one floor (the
    entry points aside)."""
    found = []
    for module, path in MODULES.items():
        layer = _layer(module)
        for line, imported, _ in _imports(path):
            target = _layer(imported) if imported.startswith("embconf") else layer
            if target != layer and FLOOR[target] >= FLOOR[layer] and FLOOR[layer] != ENTRY:
                found.append((f"{path.relative_to(ROOT)}:{line}", module, imported))
    return found


def test_no_relative_imports_anywhere():
    relative = [
        f"{path.relative_to(ROOT)}:{line}" for path in MODULES.values() for line, _, level in _imports(path) if level
    ]
    assert relative == []


def test_every_module_is_on_a_floor_of_the_room_plan():
    assert sorted(module for module in MODULES if not _layer(module)) == []
    plan = ast.get_docstring(ast.parse((ROOT / "conformance" / "__init__.py").read_text())) or ""
    unnamed = [p for p in FLOOR if p != "embconf" and p.removeprefix("embconf.") not in plan]
    assert unnamed == [], "the room plan in conformance/__init__.py names every package of the floors"


@pytest.mark.parametrize("layer", sorted(FLOOR))
def test_a_layer_imports_only_the_layers_below_it(layer):
    wrong = [f"{where} imports {imported}" for where, module, imported in _upward() if _layer(module) == layer]
    assert wrong == []


def test_no_import_runs_up_a_floor():
    assert _upward() == []


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


# ----- the tests' own shape: small files named after behaviour, one runner vocabulary (tests/helpers.py)

TEST_FILES = sorted([*(ROOT / "tests").rglob("test_*.py"), *(ROOT / "examples").rglob("test_*.py")])
# a name that says when or why a test was written, not what it checks: an issue, a review, a round of work
NAMED_AFTER_WORK = re.compile(
    r"(^|_)(issues?|reviews?|round_?(one|two|three|four|five|six|seven|eight|nine|ten|\d+)|issue_?\d+)(_|$)"
)
# the runners of tests/helpers.py: a test file calls them from tests and fixtures, never wraps them in its own
RUNNERS = {"run_report", "run_cases", "run_reported", "run_selected", "run_main", "run_with_closed_streams", "main"}


def _names_after_work(path: Path) -> list[str]:
    """The test module, test functions and test classes of a file whose names are named after work, not behaviour."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names = [path.stem] + [
        node.name
        for node in ast.walk(tree)
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)) and node.name.lower().startswith("test")
    ]
    return [name for name in names if NAMED_AFTER_WORK.search(name.lower())]


def _own_runners(source: str) -> list[str]:
    """Where a test file's source runs embconf (or pytest) its own way: an argv spelling ``-m embconf`` or
    ``-m pytest`` (helpers.embconf_argv, pytest_argv), or a function that is neither a test nor a fixture wrapping a
    runner of tests/helpers.py (or ``run_cli("run", ...)``)."""
    tree = ast.parse(source)
    found = [
        f"line {node.lineno}: spells -m {b.value}"
        for node in ast.walk(tree)
        if isinstance(node, (ast.List, ast.Tuple))
        for a, b in zip(node.elts, node.elts[1:])
        if isinstance(a, ast.Constant)
        and a.value == "-m"
        and isinstance(b, ast.Constant)
        and b.value in ("embconf", "pytest")
    ]
    for function in tree.body:
        if not isinstance(function, ast.FunctionDef) or function.name.startswith("test"):
            continue
        if any("fixture" in ast.unparse(decorator) for decorator in function.decorator_list):
            continue
        for call in ast.walk(function):
            if not isinstance(call, ast.Call) or not isinstance(call.func, ast.Name):
                continue
            first = call.args[0] if call.args else None
            runs = isinstance(first, ast.Constant) and first.value == "run"
            if call.func.id in RUNNERS or (call.func.id == "run_cli" and runs):
                found.append(f"line {function.lineno}: {function.name} wraps {call.func.id}")
    return found


def test_test_files_are_small():
    long = {str(p.relative_to(ROOT)): n for p in TEST_FILES if (n := len(p.read_text().splitlines())) > MAX_LINES}
    assert long == {}


def test_every_test_is_named_after_the_behaviour_it_checks():
    named = {str(p.relative_to(ROOT)): names for p in TEST_FILES if (names := _names_after_work(p))}
    assert named == {}


def test_no_test_file_runs_embconf_its_own_way():
    own = {str(p.relative_to(ROOT)): found for p in TEST_FILES if (found := _own_runners(p.read_text()))}
    assert own == {}


def test_the_shape_checks_catch_what_they_forbid(tmp_path):
    for name in ("test_untrusted_round_three", "test_issue_33", "test_the_catalogue_has_the_issues_mistakes"):
        (tmp_path / f"{name}.py").write_text(f"def {name}():\n    pass\n")
        assert _names_after_work(tmp_path / f"{name}.py") == [name, name]
    (tmp_path / "test_rounding.py").write_text("def test_inline_text_round_trips_and_rounds_once():\n    pass\n")
    assert _names_after_work(tmp_path / "test_rounding.py") == []
    wrapper = "def run_one(*args):\n    return run_cli('run', '--impl', 'reference', *args)\n"
    hostile = "def hostile(tmp_path, m):\n    return run_report(tmp_path, m)\n"
    argv = "import sys\nEMBCONF = [sys.executable, '-m', 'embconf']\n"
    for source in (wrapper, hostile, argv):
        assert len(_own_runners(source)) == 1, source
    allowed = "@pytest.fixture\ndef ran(tmp_path):\n    return run_report(tmp_path, 'reference')\n"
    allowed += "def _zip(tmp_path):\n    return run_cli('autograder', '--out', str(tmp_path))\n"
    assert _own_runners(allowed) == []


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


def _spelt_exit_codes(source: str) -> list[str]:
    """Where a source spells an exit code as a number: a function returning an integer literal (or choosing
    between two), a constant named ``EXIT_...`` set to one, or a signal's code computed as ``128 + N``."""
    found = []
    for node in ast.walk(ast.parse(source)):
        values = [node.value] if isinstance(node, ast.Return) else []
        values += [v.body for v in values if isinstance(v, ast.IfExp)] + [
            v.orelse for v in values if isinstance(v, ast.IfExp)
        ]
        named = [n.id for t in getattr(node, "targets", ()) for n in ast.walk(t) if isinstance(n, ast.Name)]
        if isinstance(node, ast.Assign) and any(name.startswith("EXIT_") for name in named):
            values += node.value.elts if isinstance(node.value, ast.Tuple) else [node.value]
        if isinstance(node, ast.BinOp) and isinstance(node.left, ast.Constant) and node.left.value == 128:
            values.append(node.left)
        found += [
            f"line {node.lineno}"
            for v in values
            if isinstance(v, ast.Constant) and type(v.value) is int and v.value in (0, 1, 2, 128, 130)
        ]
    return found


def test_exit_codes_are_named_in_one_module():
    from embconf import cli

    commands = {"embconf.cli", "embconf.processes.lifetime", "embconf.grading.pool", *cli.COMMAND_MODULES}
    spelt = {module: found for module in sorted(commands) if (found := _spelt_exit_codes(MODULES[module].read_text()))}
    assert spelt == {}, "name them in embconf.model.exits"
    assert _spelt_exit_codes("EXIT_OK, EXIT_FAIL = 0, 1\ndef f(bad):\n    return 1 if bad else 0\n") == [
        "line 1",
        "line 1",
        "line 3",
        "line 3",
    ]


def _namespace_takers(source: str) -> list[str]:
    """The functions of a source taking a parsed command line (a parameter annotated ``argparse.Namespace``) that
    are not a command's reading of it into typed values (a ``read``)."""
    return [
        f"{node.name} (line {node.lineno})"
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.FunctionDef) and node.name != "read"
        for arg in [*node.args.args, *node.args.kwonlyargs]
        if arg.annotation is not None and "Namespace" in ast.unparse(arg.annotation)
    ]


def test_the_parsed_command_line_stops_where_each_command_reads_it():
    reading = {"embconf.cli", "embconf.untrusted.arguments"}
    takers = {
        module: found
        for module, path in MODULES.items()
        if module not in reading and (found := _namespace_takers(path.read_text()))
    }
    assert takers == {}, "a command reads its options into a dataclass; what it calls takes that"
    assert "argparse" not in MODULES["embconf.session"].read_text()
    assert _namespace_takers("def run_command(args: argparse.Namespace) -> int: ...") == ["run_command (line 1)"]


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
