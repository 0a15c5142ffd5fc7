"""The bag mutants (conformance/mutants/bags.py): the mistakes people make with nn.EmbeddingBag,
embedding_lookup_sparse and sharded tables. Each is killed by the bag goldens and named first by the diagnosis on
every case it fails; the reduction they are built on, without a slip, passes every bag case; ``embconf mutants
--area bags`` measures them alone."""

from __future__ import annotations

import importlib.util
from dataclasses import replace
from functools import partial
from typing import Any, Callable

import pytest
from helpers import (
    ROOT,
    assert_exit,
    assert_one_line_error,
    cause_ids,
    first_cause,
    problems,
    run_cli,
    run_diagnosed,
    run_undiagnosed,
)

from embconf.model.bag_conventions import BagConvention
from embconf.mutants import catalogue, get
from embconf.mutants.adapter import ImplementationAdapter, MutantAdapter
from embconf.mutants.bag_reduce import BWD, FWD, BagSlip
from embconf.mutants.bags import Slipped
from embconf.mutants.compose import Implementation
from embconf.mutation.kills import kill_matrix
from embconf.reference import embedding_bag_backward, embedding_bag_forward

BAGS = [m for m in catalogue() if m.area == "bags" and not m.evades]  # evading by design: tests/explore
EVADING_BAGS = [m for m in catalogue() if m.area == "bags" and m.evades]
ASKED = {  # issue 36: mean over the padded length, max gradient to every tied row, offsets off by one, the last
    # offset treated as a bag, weights applied after the mean, an empty bag giving NaN; and the others people make
    "bag.mean_counts_padding",
    "bag.max_gradient_to_every_tie",
    "bag.max_gradient_to_last_tie",
    "bag.offsets_start_plus_one",
    "bag.offsets_end_plus_one",
    "bag.last_offset_is_a_bag",
    "bag.weighted_mean_divides_by_count",
    "bag.per_sample_weights_ignored",
    "bag.empty_bag_nan",
    "bag.sqrtn_divides_by_count",
    "bag.mean_divides_by_sqrt",
    "bag.mean_backward_undivided",
    "bag.padding_gets_gradient",
    "bag.two_d_read_as_one_bag",
    "bag.negative_ids_wrapped",
    "bag.empty_max_minus_inf",
}


@pytest.fixture(scope="module")
def goldens(corpus) -> list:
    return [case for case in corpus.cases if case.id.startswith("bag.")]


def test_the_bag_catalogue_has_the_mistakes_people_make() -> None:
    assert ASKED <= {m.id for m in BAGS}
    assert [m.id for m in BAGS if not m.source.startswith("https://github.com/")] == []


def test_a_bag_mutant_changes_only_bag_operations(goldens) -> None:
    """What the goldens below rank is the whole of what each bag mutant can change."""
    assert len(goldens) >= 40
    assert [
        (m.id, op) for m in BAGS for op in m.covered_operations if not op.startswith(("embedding_bag", "sharded"))
    ] == []


def test_without_a_slip_the_reduction_passes_every_bag_case(goldens) -> None:
    """The arithmetic the mutants share is the spec's: a mutant fails only by its slip."""
    spec = Slipped(BagSlip())
    plain = Implementation({FWD: spec.embedding_bag_forward, BWD: spec.embedding_bag_backward})
    assert problems(run_undiagnosed(ImplementationAdapter(plain, "no slip"), goldens).results) == []


def test_every_bag_mutant_is_killed_by_the_goldens(goldens) -> None:
    matrix = kill_matrix(goldens, BAGS)
    assert [mutant_id for mutant_id, kills in matrix.items() if not kills] == [], "a surviving mutant is a missing case"


@pytest.mark.parametrize("mutant", [m.id for m in BAGS])
def test_every_bag_mutant_is_named_first_on_every_case_it_fails(goldens, mutant: str) -> None:
    wrong = get(mutant)
    run = run_diagnosed(MutantAdapter(mutant), [case for case in goldens if wrong.covers(case.operation)])
    failing = [result for result in run.results if result.id in problems(run.results)]
    assert failing
    unnamed = [
        (result.id, cause_ids(result)[:3])
        for result in failing
        if not (result.causes and result.causes[0].is_mutant and wrong.names(result.causes[0].key))
    ]
    assert unnamed == []


FORWARD_SLIPS = [m for m in BAGS if f"bag.backward.{m.id[4:]}" in {other.id for other in BAGS}]


@pytest.mark.parametrize("primary", FORWARD_SLIPS, ids=[m.id for m in FORWARD_SLIPS])
def test_a_forward_mistake_and_its_gradient_are_one_mistake_in_the_verdict(goldens, primary) -> None:
    """Code with the slip in its forward and the gradient of that forward as its backward: one verdict entry,
    the forward's, explaining every failure, forward and backward."""
    both = {FWD: primary.overrides[FWD], BWD: get(f"bag.backward.{primary.id[4:]}").overrides[BWD]}
    run = run_diagnosed(ImplementationAdapter(Implementation(both), "forward and backward"), goldens)
    failing = problems(run.results)
    assert {result.operation for result in run.results if result.id in failing} == {FWD, BWD}
    (entry,) = run.verdict.causes
    assert entry.id == primary.id and sorted(entry.cases) == sorted(failing)


def _float32_loops() -> Any:
    """A fresh copy of tests/impls/bag_float32.py: bags as real code computes them, in float32 with plain loops."""
    spec = importlib.util.spec_from_file_location("bag_float32_slipped", ROOT / "tests" / "impls" / "bag_float32.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _last_tie(first_max: Callable) -> Callable:
    def last_max(weight: Any, bag: list, column: int) -> int:
        best = bag[0][1]
        for _, row, _ in bag[1:]:
            best = row if weight[row, column] >= weight[best, column] else best  # >=: a tie moves to the later row
        return best

    return last_max


def _unguarded(pool: Callable) -> Callable:
    def pooled(weight: Any, bag: list, mode: str, acc: Any) -> tuple:
        total, divisor = pool(weight, bag, mode, acc)
        return total, (acc(0) if divisor is None and mode != "sum" else divisor)  # 0/0 left to the division

    return pooled


@pytest.mark.parametrize(
    "mutant, part, slipped",
    [
        ("bag.max_gradient_to_last_tie", "_first_max", _last_tie),
        ("bag.empty_bag_nan", "_pool", _unguarded),
    ],
)
def test_the_mistake_in_float32_code_is_named_as_in_the_catalogue(goldens, mutant: str, part: str, slipped) -> None:
    """Real code computes in float32, the catalogue in float64: the mistake is named on every case it fails."""
    module = _float32_loops()
    setattr(module, part, slipped(getattr(module, part)))
    parts = {FWD: module.embedding_bag_forward, BWD: module.embedding_bag_backward}
    run = run_diagnosed(ImplementationAdapter(Implementation(parts), f"float32 loops, {mutant}"), goldens)
    failing = [result for result in run.results if result.id in problems(run.results)]
    assert failing
    assert [(result.id, cause_ids(result)[:3]) for result in failing if first_cause(result) != mutant] == []


def test_a_forward_mistake_is_named_where_the_code_s_backward_is_not_its_gradient(goldens) -> None:
    """A weighted mean divided by the count in the forward of hand-written code whose backward keeps the spec's
    formulas: bag.weighted_mean_divides_by_count is named on every forward case it fails, and no mistake of the
    catalogue is said of a backward case (bag.backward.weighted_mean_divides_by_count, the gradient of that
    forward, fails them otherwise)."""
    module = _float32_loops()
    pool = module._pool
    module._pool = lambda weight, bag, mode, acc: (
        pool(weight, bag, mode, acc)[0],
        acc(len(bag)) if mode == "mean" and bag else pool(weight, bag, mode, acc)[1],
    )
    parts = {FWD: module.embedding_bag_forward, BWD: module.embedding_bag_backward}
    run = run_diagnosed(ImplementationAdapter(Implementation(parts), "float32 loops, count divisor"), goldens)
    failing = [result for result in run.results if result.id in problems(run.results)]
    forward_cases = [result for result in failing if result.operation == FWD]
    assert forward_cases and {first_cause(result) for result in forward_cases} == {"bag.weighted_mean_divides_by_count"}
    backward_cases = [result for result in failing if result.operation == BWD]
    assert backward_cases and [r.id for r in backward_cases if any(c.is_mutant for c in r.causes)] == []


@pytest.fixture(scope="module")
def counted(corpus) -> list[str]:
    """The bag mutants the catalogue counts: every one but those evading by design that no golden kills yet (the
    pairwise goldens are at bag.max_empty_unpadded's combinations)."""
    return [m.id for m in BAGS] + [i for i, kills in kill_matrix(corpus.cases, EVADING_BAGS).items() if kills]


def test_the_mutants_command_measures_one_area(counted: list[str]) -> None:
    done = run_cli("mutants", "--area", "bags")
    assert_exit(done, 0)
    lines = [line for line in done.stdout.splitlines() if line.startswith("bag.")]
    listed = [line.split()[0] for line in lines if "evades by design" not in line]
    apart = [line.split()[0] for line in lines if "evades by design" in line]
    assert sorted(listed) == sorted(counted) and sorted(listed + apart) == sorted(m.id for m in BAGS + EVADING_BAGS)
    assert f"{len(counted)} mutants, {len(counted)} killed, 0 survived: kill rate 100.0%" in done.stdout
    assert "rope." not in done.stdout


def test_the_diagnosis_figures_measure_one_area(counted: list[str]) -> None:
    """``--diagnosis --area bags``: the kill rate and the first-ranked figures of the bag mistakes alone, an evading
    mistake among them once a golden kills it."""
    done = run_cli("mutants", "--diagnosis", "--area", "bags", "--correct", "reference")
    assert_exit(done, 0)
    assert f"catalogue: kill rate 100.0% of {len(counted)} mutants" in done.stdout
    assert f"for {len(counted)} of {len(counted)} mutants" in done.stdout
    assert "correct implementation reference: 0 failures, 0 diagnoses" in done.stdout


def test_an_area_without_mistakes_is_a_one_line_error() -> None:
    assert_one_line_error(run_cli("mutants", "--area", "no_such_area"), "--area no_such_area", "bags")


class Declaring(ImplementationAdapter):
    """An implementation that declares one bag convention (its operations follow it, or not)."""

    def __init__(self, convention: BagConvention, follows: bool) -> None:
        given = {"conventions": (convention.value,)} if follows else {}
        parts = {FWD: partial(embedding_bag_forward, **given), BWD: partial(embedding_bag_backward, **given)}
        super().__init__(Implementation(parts), f"declares {convention.value}")
        self.convention = convention

    def capabilities(self):
        return replace(super().capabilities(), conventions=frozenset({self.convention}))


@pytest.mark.parametrize("convention", list(BagConvention), ids=[c.value for c in BagConvention])
def test_a_declared_convention_is_proven_to_catch_an_implementation_that_does_not_follow_it(
    goldens, convention: BagConvention
) -> None:
    """EMB-BAG-V1, V2 (the mutants, which declare none, leave them to this test): the cases under the declared
    convention pass the implementation that follows it and fail the one that declares it and answers canonically."""
    under = [case for case in goldens if convention.feature in case.features]
    assert under and all(convention.requirement in case.requirements for case in under)
    assert problems(run_undiagnosed(Declaring(convention, follows=True), under).results) == []
    canonical = problems(run_undiagnosed(Declaring(convention, follows=False), under).results)
    assert canonical, f"no case under {convention.value} tells its answer from the canonical one"
