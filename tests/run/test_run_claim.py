"""``embconf run`` ends with the sentence that matters, the claim ``embconf matrix`` makes for the same run
(conforms / does not conform to the spec for its declared capabilities), and its per-requirement table folds the
requirements with nothing applicable into one line (``-v`` lists each)."""

from __future__ import annotations

import json

from helpers import EXAMPLE_STUDENT, run_cli


def test_run_ends_with_the_claim_matrix_makes(tmp_path):
    done = run_cli("run", "--impl", "reference", "-q")
    matrix = run_cli("matrix", "--impl", "reference", "--json", str(tmp_path / "m.json"))
    assert done.returncode == 0 and matrix.returncode == 0, done.stderr + matrix.stderr
    statement = json.loads((tmp_path / "m.json").read_text())["implementations"][0]["claim"]["statement"]
    assert statement.startswith("conforms to spec ") and done.stdout.rstrip().endswith(statement)


def test_a_failing_run_says_it_does_not_conform():
    done = run_cli("run", "--impl", "mutant:bwd.overwrite", "-q")
    assert done.returncode == 1 and "does not conform to spec" in done.stdout.strip().splitlines()[-1]


def test_requirements_with_nothing_applicable_fold_unless_verbose():
    student = f"tinytorch:{EXAMPLE_STUDENT}"
    short = run_cli("run", "--impl", student, "-q").stdout
    full = run_cli("run", "--impl", student, "-q", "-v").stdout
    table = short.split("By requirement:")[1].split("\n\n")[0].splitlines()
    assert not any(" n/a " in row for row in table) and "more with no applicable case" in table[-1]
    assert sum(" n/a " in row for row in full.split("By requirement:")[1].split("\n\n")[0].splitlines()) > 10
