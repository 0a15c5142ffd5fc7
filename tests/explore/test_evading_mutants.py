"""The catalogue's mutants evading by design: each misbehaves only at the combinations of boundaries it names,
none of which a golden of today is at; a case at each of them kills it, the goldens at none of them do not (after
the goldens covering those combinations land, those are what kill it), and the catalogue counts it apart; the
diagnosis names one only where the run has measured the combination it narrows its mistake to."""

from __future__ import annotations

import pytest
from helpers import assert_exit, cause_ids, first_cause, problems, run_cli, run_diagnosed

from embconf.corpus.fixtures import Case, case_of, load_corpus
from embconf.mutants import catalogue
from embconf.mutants.adapter import MutantAdapter
from embconf.mutants.base import Mutant
from embconf.mutation.kills import evading, kill_matrix, killing, run_mutant
from embconf.reference.cases.domains import allowed_pairs, calls_at, case_at
from embconf.reference.generate import build_case

EVADING = [m for m in catalogue() if m.evades]


@pytest.fixture(scope="module")
def goldens() -> list[Case]:
    return load_corpus().cases


def _at_one_of(case: Case, mutant: Mutant) -> bool:
    """Whether some call of ``case`` is at every point of one of the mutant's combinations."""
    return any(
        operation == named and all(at.get(name) == boundary for name, boundary in points)
        for operation, at in calls_at(case)
        for named, points in mutant.evades
    )


def test_there_is_an_evading_mutant_for_lookup_bags_and_rope() -> None:
    assert {m.area for m in EVADING} >= {"token_lookup", "bags", "rope"}
    assert all(m.source.startswith("https://github.com/") for m in EVADING)


@pytest.mark.parametrize("mutant", EVADING, ids=[m.id for m in EVADING])
def test_each_combination_is_of_boundaries_the_spec_allows_together(mutant: Mutant) -> None:
    for operation, points in mutant.evades:
        allowed = set(allowed_pairs(operation))
        pairs = [(a, b) if a <= b else (b, a) for i, a in enumerate(points) for b in points[i + 1 :]]
        assert pairs and [pair for pair in pairs if pair not in allowed] == [], (operation, points)


@pytest.mark.parametrize("mutant", EVADING, ids=[m.id for m in EVADING])
def test_a_case_at_each_combination_kills_it(mutant: Mutant) -> None:
    for number, (operation, points) in enumerate(mutant.evades):
        spec = case_at(operation, dict(points), f"probe.{number}", "At the combination.", ("EMB-GEN-1",))
        case = case_of(build_case(spec), "probe")
        assert _at_one_of(case, mutant)
        assert [r.id for r in killing(run_mutant(mutant, [case]))] == [case.id], (operation, points)


@pytest.mark.parametrize("mutant", EVADING, ids=[m.id for m in EVADING])
def test_no_golden_at_none_of_its_combinations_kills_it(goldens: list[Case], mutant: Mutant) -> None:
    elsewhere = [case for case in goldens if not _at_one_of(case, mutant)]
    assert elsewhere and [r.id for r in killing(run_mutant(mutant, elsewhere))] == []


def test_the_catalogue_counts_an_unkilled_evading_mutant_apart(goldens: list[Case]) -> None:
    matrix = kill_matrix([c for c in goldens if not any(_at_one_of(c, m) for m in EVADING)], EVADING)
    assert sorted(evading(matrix)) == sorted(m.id for m in EVADING)
    done = run_cli("mutants", "--area", "bags")
    assert_exit(done, 0)
    evaders = [line.split()[0] for line in done.stdout.splitlines() if "evades by design" in line]
    unkilled = [m.id for m in EVADING if m.area == "bags" and not any(_at_one_of(c, m) for c in goldens)]
    assert evaders == unkilled
    assert "SURVIVED" not in done.stdout


def _first_causes(mutant: str, cases: list[Case]) -> set[str]:
    run = run_diagnosed(MutantAdapter(mutant), cases)
    return {first_cause(result) for result in run.results if result.id in problems(run.results)}


def test_an_evading_mistake_is_named_only_where_a_passed_case_rules_out_the_broader_one(goldens: list[Case]) -> None:
    """bag.max_empty_unpadded's '-inf unless padding_idx is given' is said where an empty max bag with padding_idx
    passed (ruling out bag.empty_max_minus_inf, -inf with padding too); on its unpadded case alone, or of code that
    fails the padded bag too, the broader mistake is said, the narrower one nowhere."""
    bags = [case for case in goldens if case.operation == "embedding_bag_forward"]
    unpadded = [case for case in bags if case.id == "bags.pairs.embedding_bag_forward.021"]
    assert _first_causes("bag.max_empty_unpadded", bags) == {"bag.max_empty_unpadded"}
    assert _first_causes("bag.max_empty_unpadded", unpadded) == {"bag.empty_max_minus_inf"}
    broader = run_diagnosed(MutantAdapter("bag.empty_max_minus_inf"), bags)
    assert problems(broader.results)
    assert [r.id for r in broader.results if "bag.max_empty_unpadded" in cause_ids(r)] == []
