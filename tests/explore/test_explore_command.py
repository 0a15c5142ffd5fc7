"""``embconf explore``: nothing found on a correct implementation, each evading mutant found and shrunk to the
combination it misbehaves at, its candidate fixture failing it under ``embconf run --fixtures`` (and passing the
reference), the same seed the same search, bad options and a missing Hypothesis said in one line."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from helpers import assert_exit, assert_one_line_error, run_cli, run_main

from embconf.corpus.fixtures import load_corpus
from embconf.mutants import get
from embconf.reference.cases.domains import calls_at

pytest.importorskip("hypothesis", reason="embconf explore needs the optional extra explore (Hypothesis)")

from embconf.explore.search import areas  # noqa: E402 - after the skip: explore imports Hypothesis

# (mutant, area, a seed that meets it early, a budget that holds that seed's search): quick, and deterministic
FOUND = [
    ("fwd.ids_uint16", "token_lookup", "3", "200"),
    ("bag.max_empty_unpadded", "bags", "2", "200"),
    ("rope.past_cache_unrotated", "rope", "3", "600"),
]


def _points(description: str) -> set[str]:
    """The boundaries a candidate's description names ('... at a=x, b=y (values seeded 0).')."""
    return set(description.split(" at ", 1)[1].split(" (values", 1)[0].split(", "))


@pytest.mark.parametrize(("mutant", "area", "seed", "budget"), FOUND, ids=[found[0] for found in FOUND])
def test_an_evading_mutant_is_found_shrunk_to_its_combination_and_its_candidate_fails_it(
    tmp_path: Path, mutant: str, area: str, seed: str, budget: str
) -> None:
    written = tmp_path / "found.yaml"
    impl = f"mutant:{mutant}"
    done = run_cli(
        "explore", "--impl", impl, "--area", area, "--seed", seed, "--budget", budget, "--write-cases", str(written)
    )
    assert_exit(done, 1)
    assert f"explore {area}: " in done.stderr and "a failure, shrunk" in done.stderr
    assert "shrunk to this case" in done.stdout and "FAIL explore." in done.stdout  # the verdict as run prints it
    (case,) = load_corpus(written).cases
    ((operation, at),) = calls_at(case)
    combinations = [points for named, points in get(mutant).evades if named == operation]
    matched = [
        {f"{name}={b}" for name, b in points} for points in combinations if all(at.get(name) == b for name, b in points)
    ]
    assert any(_points(case.description) <= points for points in matched), (case.description, at)  # nothing else set
    assert case.description.endswith("(values seeded 0).")
    assert case.requirements and all(r.startswith("EMB-") for r in case.requirements)
    assert_exit(run_cli("run", "-q", "--impl", impl, "--fixtures", str(written)), 1)
    assert_exit(run_cli("run", "-q", "--impl", "reference", "--fixtures", str(written)), 0)


def test_a_correct_implementation_gives_no_failure_in_process_and_in_its_worker(capsys) -> None:
    code, out, err = run_main(capsys, "explore", "--impl", "reference", "--in-process", "--budget", "40")
    assert code == 0, out[-2000:] + err[-2000:]
    assert "no failure found" in out and err.count("no failure") == len(areas())  # one line an area
    assert all(f"explore {area}: " in err for area in areas())
    done = run_cli("explore", "--impl", "reference", "--area", "bags", "--budget", "60")
    assert_exit(done, 0)
    assert "explore bags: " in done.stderr


def test_the_same_seed_draws_the_same_cases(tmp_path: Path) -> None:
    found = []
    for run in ("a", "b"):
        written = tmp_path / f"{run}.yaml"
        done = run_cli(
            "explore",
            "--impl",
            "mutant:fwd.ids_uint16",
            "--area",
            "token_lookup",
            "--seed",
            "4",
            "--budget",
            "200",
            "--in-process",
            "--write-cases",
            str(written),
        )
        assert_exit(done, 1)
        found.append((done.stderr.split(", ")[0], written.read_bytes()))
    assert found[0] == found[1]


@pytest.mark.parametrize(
    ("argv", "words"),
    [
        (["--budget", "0"], ("--budget",)),
        (["--seconds", "0"], ("--seconds",)),
        (["--write-cases", "."], ("not a regular file",)),
    ],
)
def test_unusable_options_are_one_line(capsys, argv: list[str], words: tuple[str, ...]) -> None:
    assert_one_line_error(run_main(capsys, "explore", "--impl", "reference", "--area", "rope", *argv), *words)


def test_without_hypothesis_it_says_how_to_install_it(capsys, monkeypatch) -> None:
    monkeypatch.setitem(sys.modules, "hypothesis", None)  # import hypothesis raises ImportError
    assert_one_line_error(run_main(capsys, "explore", "--impl", "reference"), "pip install hypothesis", "explore")
