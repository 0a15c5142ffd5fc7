"""A submission importing a module no one has is one line that says which: a package the grading environment
lacks (a student's ``autograd.py`` importing SciPy), named with the file and line that imported it and how to add
it (``embconf autograder --requirements FILE``), or a module of the student's own package that was not handed in.
``grade``, ``gradescope`` and ``embconf.check`` say it; ``embconf run`` names the importing line."""

from __future__ import annotations

import csv
import importlib.util
import json
import shutil
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
import grading_samples as samples  # noqa: E402
from helpers import run_cli  # noqa: E402

import embconf  # noqa: E402
from embconf.cli import main  # noqa: E402
from embconf.grading.missing import missing_module  # noqa: E402

ABSENT = "embconf_absent_pkg"  # a package no environment has (the test skips if one does)
AUTOGRAD = Path("tinytorch", "core", "autograd.py")


@pytest.fixture(autouse=True)
def _absent():
    if importlib.util.find_spec(ABSENT) is not None:
        pytest.skip(f"this environment has a package named {ABSENT}")


def _importing(folder: Path, statement: str, into: Path = AUTOGRAD) -> Path:
    """The example student's package with ``statement`` before the first ``import`` line of ``into`` (else at its end)."""
    shutil.copytree(samples.EXAMPLE / "tinytorch", folder / "tinytorch", ignore=shutil.ignore_patterns("__pycache__"))
    lines = (folder / into).read_text(encoding="utf-8").splitlines()
    first_code = next((i for i, line in enumerate(lines) if line.startswith("import ")), len(lines))
    lines.insert(first_code, statement)
    (folder / into).write_text("\n".join(lines) + "\n", encoding="utf-8")
    return folder


def _line_of(folder: Path, statement: str, into: Path = AUTOGRAD) -> int:
    return (folder / into).read_text(encoding="utf-8").splitlines().index(statement) + 1


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    folder = tmp_path_factory.mktemp("subs")
    _importing(folder / "scipy-user", f"import {ABSENT}.special")
    _importing(folder / "uncommitted", "from tinytorch.core.activations import ReLU", Path("tinytorch", "__init__.py"))
    shutil.copytree(samples.EXAMPLE / "tinytorch", folder / "complete" / "tinytorch")
    out = tmp_path_factory.mktemp("out")
    assert main(["grade", str(folder), "--out", str(out), "--jobs", "2"]) == 0
    with open(out / "gradebook.csv", newline="", encoding="utf-8") as handle:
        return {row["name"]: row for row in csv.DictReader(handle)}, folder


def test_a_package_the_grading_environment_lacks_is_one_line_naming_it_and_the_importing_line(graded):
    rows, folder = graded
    line = _line_of(folder / "scipy-user", f"import {ABSENT}.special")
    assert rows["scipy-user"]["score"] == "0"
    assert rows["scipy-user"]["reason"] == (
        f"does not import: the grading environment lacks the package '{ABSENT}' (No module named '{ABSENT}', "
        f"imported by tinytorch/core/autograd.py line {line}): install it where embconf grade runs, or add it to "
        "the autograder with embconf autograder --requirements FILE"
    )
    assert rows["complete"]["reason"] == "" and float(rows["complete"]["score"]) == 100


def test_a_module_not_handed_in_is_told_apart_from_a_missing_package(graded):
    rows, folder = graded
    line = _line_of(
        folder / "uncommitted", "from tinytorch.core.activations import ReLU", Path("tinytorch", "__init__.py")
    )
    reason = rows["uncommitted"]["reason"]
    assert reason == (
        "does not import: ModuleNotFoundError: No module named 'tinytorch.core.activations', imported by "
        f"tinytorch/__init__.py line {line}: the submission does not hold it (hand in tinytorch/core/activations.py)"
    )
    assert "grading environment" not in reason and "\n" not in reason


def test_gradescope_says_the_same_line(graded, tmp_path):
    folder = graded[1] / "scipy-user"
    results = tmp_path / "results.json"
    assert main(["gradescope", "--submission", str(folder), "--results", str(results)]) == 0
    output = json.loads(results.read_text("utf-8"))["output"]
    assert f"the grading environment lacks the package '{ABSENT}'" in output
    assert "embconf autograder --requirements FILE" in output


def test_check_tells_a_student_to_install_it_in_their_own_environment(graded):
    result = embconf.check(graded[1] / "scipy-user")
    assert result.problem.startswith(f"does not import: this Python environment lacks the package '{ABSENT}'")
    assert result.problem.endswith(f"install it (pip install {ABSENT})")


def test_run_names_the_line_that_imported_the_missing_module(graded):
    folder = graded[1] / "scipy-user"
    done = run_cli("run", "--impl", f"tinytorch:{folder}", "-q")
    line = _line_of(folder, f"import {ABSENT}.special")
    assert done.returncode == 2
    assert f"No module named '{ABSENT}' (imported by {folder / AUTOGRAD} line {line})" in done.stderr


@pytest.mark.parametrize(
    ("text", "based", "reason"),
    [
        ("No module named 'sklearn.linear_model'", False, "lacks the package 'scikit-learn'"),
        ("No module named 'tinytorch.core.xyz'", True, "neither the submission nor the base package holds it"),
        ("cannot import name 'Tensor' from 'tinytorch.core.tensor'", False, None),
    ],
)
def test_what_the_reason_says_follows_the_module_that_is_missing(text, based, reason):
    said = missing_module(text, based)
    assert said is None if reason is None else reason in said
