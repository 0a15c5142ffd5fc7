"""The wheel ships every package of the source tree (a package missing from pyproject.toml imports in a
checkout, through the editable install, and fails only once installed from a wheel)."""

from __future__ import annotations

import pytest

tomllib = pytest.importorskip("tomllib")  # Python 3.11+

from helpers import ROOT


def test_pyproject_lists_every_package_directory():
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    roots = {source: name for name, source in config["package-dir"].items()}
    found = set()
    for source, name in roots.items():
        for init in (ROOT / source).rglob("__init__.py"):
            relative = init.parent.relative_to(ROOT / source)
            found.add(".".join([name, *relative.parts]))
    listed = set(config["packages"])
    assert found - listed == set(), f"packages missing from pyproject.toml: {sorted(found - listed)}"


def test_ci_runs_exactly_the_readme_quick_start():
    readme = (ROOT / "README.md").read_text()
    block = readme.split("## Quick start", 1)[1].split("```sh\n", 1)[1].split("```", 1)[0]
    commands = [line for line in block.splitlines() if line.strip()]
    ci = [
        line
        for line in (ROOT / ".ci" / "run").read_text().splitlines()
        if line.strip() and not line.lstrip().startswith("#")
    ]
    assert len(commands) == 2 and commands[0] in ci
    at = ci.index(commands[0])
    assert ci[at : at + 2] == commands  # exactly the README's two commands, then only the slow tier (CI runs all)
    assert ci[at + 2 :] == ["python -m pytest --all-tiers -m slow_tier"]


def test_ci_runs_the_quick_start_in_a_fresh_virtual_environment_it_creates():
    lines = [line.strip() for line in (ROOT / ".ci" / "run").read_text().splitlines()]
    steps = [line for line in lines if line and not line.startswith("#")]
    creates = next(i for i, line in enumerate(steps) if " -m venv " in line)
    activates = next(i for i, line in enumerate(steps) if line.startswith("source ") and "/bin/activate" in line)
    installs = [i for i, line in enumerate(steps) if line.startswith("pip install") or " -m pip install" in line]
    assert creates < activates < min(installs), "every install must go into the fresh environment"
    assert any("mktemp -d" in line for line in steps[:creates]), "the environment lives in a new temporary directory"
