"""The catalogue of mutants proves the suite: every mutant is killed, and the diagnosis names it.

Also: the reference and the example student package get no failures and no
diagnoses; the CLI's ``mutants`` and ``explain`` commands run.
"""

from __future__ import annotations

import importlib.util
from typing import Callable

import numpy as np
import pytest
from helpers import (
    EXAMPLE_STUDENT,
    ROOT,
    assert_exit,
    assert_outcome,
    first_cause,
    run_cli,
    run_diagnosed,
    run_undiagnosed,
)

from embconf.adapters import create_adapter
from embconf.adapters.reference import ReferenceAdapter
from embconf.corpus.fixtures import Case, load_corpus
from embconf.model.outcomes import FAIL, PROBLEMS
from embconf.model.record import RunRecord
from embconf.mutants import catalogue, get
from embconf.mutants.adapter import ImplementationAdapter, MutantAdapter
from embconf.mutants.compose import Implementation
from embconf.mutation.kills import kill_matrix, kill_rate
from embconf.reference import embedding_forward
from embconf.reports.console import Console

STUDENT = EXAMPLE_STUDENT


@pytest.fixture(scope="module")
def cases() -> list[Case]:
    return load_corpus().cases


def _problems(run: RunRecord) -> list[str]:
    return [f"{r.id}: {r.outcome}: {r.message[:300]}" for r in run.results if r.outcome in PROBLEMS]


def test_catalogue_is_well_formed() -> None:
    mutants = catalogue()
    assert len(mutants) >= 35
    assert len({m.id for m in mutants}) == len(mutants)
    for m in mutants:
        assert m.description and m.hint and 1 <= len(m.overrides) <= 2, m.id
        assert all(get(other).names(m.id) for other in m.equivalent), f"{m.id}: equivalence must be declared both ways"
    assert {m.area for m in mutants} == {
        "token_lookup",
        "sinusoidal",
        "learned_positions",
        "embedding_layer",
        "memory",
        "rope",
        "bags",
        "quantized",
    }


def test_composition_without_mutation_is_the_reference(cases: list[Case]) -> None:
    """Mutants run only on the cases they cover; elsewhere they are this composition, which must pass everything."""
    assert _problems(run_undiagnosed(ImplementationAdapter(Implementation()), cases)) == []


@pytest.fixture(scope="module")
def matrix(cases: list[Case]) -> dict:
    return kill_matrix(cases)


def test_every_mutant_is_killed(matrix: dict) -> None:
    rate = kill_rate(matrix)
    print(f"\nkill rate: {100 * rate:.1f}% of {len(matrix)} mutants")
    assert [mutant_id for mutant_id, kills in matrix.items() if not kills] == [], "a surviving mutant is a missing case"
    assert rate == 1.0


def test_every_requirement_is_proven_to_catch_a_wrong_implementation(matrix: dict) -> None:
    """Each requirement is cited by a case that kills some mutant (the sinusoid family and its profiles, which
    the reference-like mutants do not claim, are proven in tests/spec/test_profiles.py and test_family.py; the
    declared rope conventions, computed for the run that declares one, in tests/run/test_rope_conventions.py; the
    declared bag conventions in tests/mutants/test_bag_mutants.py and tests/spec/test_bag_conventions.py; the quantize
    conventions in tests/spec/test_quantize_conventions.py)."""
    from embconf.corpus.validate import defined_requirements
    from embconf.model.bag_conventions import BagConvention
    from embconf.model.quantize_conventions import QuantizeConvention
    from embconf.model.rope_conventions import RopeConvention
    from embconf.model.sinusoid import FAMILY_REQUIREMENT, named_profiles

    proven = {req for kills in matrix.values() for result in kills for req in result.requirements}
    profiles = {point.requirement for point in named_profiles().values() if not point.canonical}
    conventions = {c.requirement for c in (*RopeConvention, *BagConvention, *QuantizeConvention)}
    assert sorted(defined_requirements() - proven - profiles - conventions - {FAMILY_REQUIREMENT}) == []


def test_convention_is_named(cases: list[Case]) -> None:
    case = next(c for c in cases if c.id == "sin.canonical.l16_d8")
    for convention in ("concatenated", "tensor2tensor"):
        run = run_diagnosed(MutantAdapter(f"sin.{convention}"), [case])
        summary = run.results[0].causes[0].summary
        assert summary.startswith(
            f"follows the {convention} convention; the spec's canonical table is interleaved (EMB-SIN-2)"
        )


def test_error_kinds_are_diagnosed(cases: list[Case]) -> None:
    """A wrong error kind and a result where an error was expected are both matched."""
    chosen = [c for c in cases if c.id in ("lookup.error.negative_one", "lookup.error.float_half")]
    for mutant_id, case_id in (
        ("fwd.negative_wrong_kind", "lookup.error.negative_one"),
        ("fwd.float_truncated", "lookup.error.float_half"),
    ):
        run = run_diagnosed(create_adapter(f"mutant:{mutant_id}"), chosen)
        result = next(r for r in run.results if r.id == case_id)
        assert_outcome(result, FAIL)
        assert first_cause(result) == mutant_id


def test_unknown_mistake_says_so(cases: list[Case]) -> None:
    odd = Implementation({"embedding_forward": lambda weight, ids: embedding_forward(weight, ids) + np.float32(1000)})
    chosen = [c for c in cases if c.id == "lookup.forward.module_example"]
    run = run_diagnosed(ImplementationAdapter(odd, "unknown mistake"), chosen)
    (cause,) = run.results[0].causes  # no mistake named: only what was measured, in plain words
    assert_outcome(run.results[0], FAIL)
    assert cause.key == "unexplained:embedding_forward:output", cause
    assert "first differs at [0, 0]" in cause.summary and "values differ" in cause.summary, cause.summary
    out = _console_text(run)
    assert "no known mistake matches; what was measured:" in out and "first differs at [0, 0]" in out


def _console_text(run: RunRecord) -> str:
    import io

    stream = io.StringIO()
    Console(stream, colour=False, quiet=True).report(run)
    return stream.getvalue()


@pytest.mark.parametrize(
    "make",
    [
        ReferenceAdapter,
        lambda: _student_adapter(),
        lambda: create_adapter(f"functions:{ROOT / 'tests/impls/numpy_functions.py'}"),
        lambda: _torch_adapter(),
    ],
    ids=["reference", "tinytorch_student", "numpy_functions", "torch"],
)
def test_correct_implementations_get_no_diagnosis(cases: list[Case], make: Callable) -> None:
    adapter = make()
    try:
        run = run_diagnosed(adapter, cases)
    finally:
        adapter.close()
    assert _problems(run) == []
    assert [r.id for r in run.results if r.causes] == []


def _torch_adapter():
    pytest.importorskip("torch")
    return create_adapter(
        "torch:float32-master"
    )  # native torch sums half-precision repeats in the half dtype: EMB-HLF-3 fails it by ruling


def _student_adapter():
    if importlib.util.find_spec("embconf.adapters.tinytorch") is None:
        pytest.skip("the tinytorch adapter (embconf.adapters.tinytorch) is not there yet")
    return create_adapter(f"tinytorch:{STUDENT}")


@pytest.mark.parametrize(
    "argv, expected",
    [
        (["mutants"], "kill rate 100.0%"),
        (["explain", "bwd.overwrite"], "np.add.at"),
        (["explain", "EMB-BWD-2"], "bwd.overwrite"),  # a requirement: its cases and the mistakes they catch
        (["explain", "EMB-PAD-4"], "rule:   (Range.) `padding_idx` MUST be an integer in `[-V, V)`"),  # the rule
    ],
)
def test_cli(argv: list[str], expected: str) -> None:
    done = run_cli(*argv)
    assert_exit(done, 0)
    assert expected in done.stdout
