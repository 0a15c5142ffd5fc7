"""``embconf coverage``: each family's allowed pairs of boundary values and error boundaries, as the domains
(reference/cases/domains.py) count them over the committed goldens; the pairs missing and the case covering each;
one family with ``--area``; JSON for CI; exit 1 only under ``--fail-under`` with a family below it."""

from __future__ import annotations

import json
import re
import subprocess
from dataclasses import replace

import pytest

from embconf.model.family import families
from embconf.reference.cases.domain_kinds import Boundary
from embconf.reference.cases.domains import DOMAINS, allowed_pairs, boundaries_of, covered_pairs, error_points
from tests.helpers import ROOT, assert_exit, assert_one_line_error, embconf_argv, run_cli, run_main

LINE = re.compile(r"^(\w+)\s+(\d+) of (\d+) allowed pairs \((\d+)%\), (\d+) of (\d+) error boundaries$")
RUN = ("run", "--impl", "reference", "--no-colour", "--select", "lookup.forward.empty_ids")
MEASURED = [family for family in families().values() if family.operations]


@pytest.fixture(scope="module")
def covered(corpus):
    return covered_pairs(corpus.cases)


def expected_pairs(area: str, covered: dict) -> tuple[int, int]:
    """(covered, allowed) pairs of a family as the domains compute them."""
    operations = families()[area].operations
    return sum(len(covered.get(op, ())) for op in operations), sum(len(allowed_pairs(op)) for op in operations)


def figures(out: str) -> dict[str, tuple[int, ...]]:
    """{family or 'total': (pairs covered, allowed, percent, error boundaries covered, declared)} of the output."""
    return {m[1]: tuple(int(n) for n in m.groups()[1:]) for line in out.splitlines() if (m := LINE.match(line))}


def line_of(operation: str, pair: tuple) -> str:
    (a, x), (b, y) = pair
    return f"{operation}: {a}={x} x {b}={y}"


def test_each_familys_figures_are_what_the_domains_compute(capsys, covered):
    code, out, _ = run_main(capsys, "coverage")
    assert code == 0
    found = figures(out)
    for family in MEASURED:
        pairs = expected_pairs(family.area, covered)
        declared = sum(len(error_points(op)) for op in family.operations)
        assert found[family.area][:2] == pairs and found[family.area][4] == declared, family.area
        assert found[family.area][3] <= declared
    assert found["total"][:2] == tuple(map(sum, zip(*(expected_pairs(f.area, covered) for f in MEASURED))))
    assert set(found) == {f.area for f in MEASURED} | {"total"}


@pytest.fixture
def new_mode(monkeypatch):
    """The bags' forward with a mode no golden has, so every allowed pair of it is missing."""
    operation = "embedding_bag_forward"
    domains = DOMAINS["bags"][operation]
    mode = next(d for d in domains if d.name == "mode")
    wider = replace(mode, boundaries=mode.boundaries + (Boundary("median", "a mode added after the goldens"),))
    monkeypatch.setitem(DOMAINS["bags"], operation, tuple(wider if d is mode else d for d in domains))
    return operation


def test_missing_lists_a_pair_no_golden_covers_and_not_one_a_golden_covers(capsys, new_mode):
    # bag.forward.max.padding_empty is a max bag with a positive padding_idx: that pair is covered
    held = (("mode", "max"), ("padding_idx", "positive"))
    code, out, _ = run_main(capsys, "coverage", "--area", "bags", "--missing")
    assert code == 0
    listed = [line.strip() for line in out.splitlines()]
    assert line_of(new_mode, (("mode", "median"), ("padding_idx", "positive"))) in listed
    assert line_of(new_mode, held) not in listed
    assert [line for line in out.splitlines() if LINE.match(line)][0].startswith("bags ")


def test_covered_names_the_case_that_covers_each_pair_and_error_boundary(capsys, cases_by_id):
    code, out, _ = run_main(capsys, "coverage", "--area", "bags", "--covered")
    assert code == 0
    covering = re.search(r"embedding_bag_forward: mode=max x padding_idx=positive  by (\S+)", out)
    assert covering is not None, out[:2000]
    at = boundaries_of(cases_by_id[covering[1]])
    assert (at["mode"], at["padding_idx"]) == ("max", "positive")
    assert "embedding_bag_forward: offsets=past_end (error invalid_offsets)  by bag.error.offsets_past_end" in out


def test_an_unknown_area_is_one_line_naming_the_known_ones():
    assert_one_line_error(run_cli("coverage", "--area", "unicorns"), "unicorns", "bags", "token_lookup")


def test_every_family_covers_every_allowed_pair_and_error_boundary(capsys):
    code, out, _ = run_main(capsys, "coverage", "--fail-under", "100")
    assert code == 0, out[-2000:]
    for area, (covered, allowed, percent, errors, declared) in figures(out).items():
        assert (covered, percent, errors) == (allowed, 100, declared), area


def test_a_new_allowed_pair_without_a_golden_fails_under_100_naming_the_pair(capsys, new_mode):
    code, out, _ = run_main(capsys, "coverage", "--missing", "--fail-under", "100")
    assert code == 1
    assert out.splitlines()[-1] == "covered less than 100%: bags"
    assert f"  {line_of(new_mode, (('mode', 'median'), ('padding_idx', 'absent')))}" in out.splitlines()
    assert run_main(capsys, "coverage", "--fail-under", "0")[0] == 0


def test_fail_under_outside_a_percentage_is_refused():
    assert_one_line_error(run_cli("coverage", "--fail-under", "120"), "--fail-under", "120")


def test_json_holds_the_same_figures_and_lists(capsys, tmp_path, covered):
    path = tmp_path / "coverage.json"
    code, out, _ = run_main(capsys, "coverage", "--json", str(path))
    assert code == 0
    document = json.loads(path.read_text(encoding="utf-8"))
    shown = figures(out)
    for family in MEASURED:
        entry = document["families"][family.area]
        assert (entry["pairs"]["covered"], entry["pairs"]["total"]) == expected_pairs(family.area, covered)
        assert (entry["error_boundaries"]["covered"], entry["error_boundaries"]["total"]) == shown[family.area][3:]
        bag = entry["operations"].get("embedding_bag_forward")
        if bag is not None:
            assert len(bag["covered"]) + len(bag["missing"]) == len(allowed_pairs("embedding_bag_forward"))
    total = document["total"]
    assert (total["pairs"]["covered"], total["pairs"]["total"]) == shown["total"][:2]


def test_coverage_in_a_fresh_interpreter_exits_0_while_it_measures():
    result = run_cli("coverage", "--area", "rope")
    assert_exit(result, 0)
    assert figures(result.stdout).keys() == {"rope"}


@pytest.mark.parametrize(("command", "loads"), [(("coverage", "--area", "memory"), True), (RUN, False)])
def test_only_the_coverage_command_imports_the_domains(command, loads):
    """`embconf run` starts without the domains (start-up); `embconf coverage` is what loads them."""
    done = subprocess.run(
        embconf_argv(*command, python=("-X", "importtime")), cwd=ROOT, capture_output=True, text=True, timeout=300
    )
    assert_exit(done, 0)
    assert ("embconf.reference.cases.domains\n" in done.stderr) is loads
    assert ("embconf.corpus.coverage\n" in done.stderr) is loads
