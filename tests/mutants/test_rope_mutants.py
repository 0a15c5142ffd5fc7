"""The rope mutants (conformance/mutants/rope.py) on cases built from the reference: each is killed, the
composition without a mistake passes, and the precision mistakes fail exactly where the precision ruling says
(cos/sin rounded to x's half dtype is allowed for a half-precision x). The goldens' kill matrix is
test_mutants.test_every_mutant_is_killed."""

from __future__ import annotations

import pytest
from helpers import run_undiagnosed
from rope_cases import LLAMA3, YARN, case, window

from embconf.model.outcomes import PROBLEMS
from embconf.mutants import catalogue, get, rope_families, rope_reports
from embconf.mutants.adapter import ImplementationAdapter, MutantAdapter
from embconf.mutants.compose import Implementation
from embconf.mutation.kills import kill_matrix

# The mistakes of one call; those in state kept between calls (mutants/rope_state.py) pass every case of one call
# and are killed and named by the cases of calls on one instance (tests/run/test_calls_on_one_instance.py).
ROPE = [m for m in catalogue() if m.area == "rope" and m.fresh is None and not m.evades]  # evading: tests/explore
# 2.0.0's forms and the mistakes from public reports are killed by the goldens below
BUILT = [m for m in ROPE if m.id not in {*rope_families.REGISTERED, *rope_reports.REPORTED}]


def _cases() -> list:
    built = []
    for op in ("rope_forward", "rope_backward", "rope_tables"):
        built += [case(f"{op}.p{p0}", op, positions=window(p0), d=64, base=500000.0) for p0 in (0, 4096, 131072)]
        built.append(case(f"{op}.partial", op, ("rope-partial",), d=64, rotary_dim=32))
        built.append(case(f"{op}.interleaved", op, d=6, pairing="interleaved"))
        built.append(case(f"{op}.llama3", op, ("rope-llama3",), positions=window(4096), d=64, scaling=LLAMA3))
        built.append(case(f"{op}.yarn", op, ("rope-yarn",), positions=window(4096), d=64, scaling=YARN))
        built.append(case(f"{op}.packed", op, ("rope-positions",), positions=[5, 6, 7, 0, 1, 2, 9, 3], d=8))
        built.append(case(f"{op}.odd_rotary_dim", op, d=8, rotary_dim=5))
        for half in ("bfloat16", "float16"):  # positions made in the activations' dtype show only there
            built.append(case(f"{op}.{half}.p32768", op, (half,), positions=window(32768), d=64, dtype=half))
    return built


CASES = _cases()


def test_the_rope_catalogue_has_the_mistakes_seen_in_real_code() -> None:
    ids = {m.id for m in ROPE}
    asked = {  # pairing, rotate_half sign, positions from 1, d-1, base, bfloat16 angles, cos/sin, every
        # band, partial rotating everything, the backward rotating forward
        "rope.pairing_swapped",
        "rope.rotate_half_sign",
        "rope.positions_from_1",
        "rope.frequencies_over_d_minus_1",
        "rope.base_ignored",
        "rope.angles_bfloat16",
        "rope.cos_sin_swapped",
        "rope.scaling_every_band",
        "rope.partial_rotates_all",
        "rope.backward_rotates_forward",
    }
    assert asked <= ids
    assert all(get(f"rope.tables.{m.id[5:]}").mistake == m.id for m in ROPE if f"rope.tables.{m.id[5:]}" in ids)


def test_without_a_mistake_the_composition_passes() -> None:
    run = run_undiagnosed(ImplementationAdapter(Implementation()), CASES)
    assert [r.id for r in run.results if r.outcome in PROBLEMS] == []


def test_every_rope_mutant_is_killed() -> None:
    matrix = kill_matrix(CASES, BUILT)
    assert [mutant_id for mutant_id, kills in matrix.items() if not kills] == []


def test_cos_sin_in_bfloat16_is_allowed_for_a_bfloat16_x_only() -> None:
    """The ruling: a bfloat16 x may be rotated with cos/sin in its own dtype; a float32 x may not."""
    mutant = get("rope.cos_sin_bfloat16")
    half = [case(f"half.{op}", op, ("bfloat16",), d=64, dtype="bfloat16") for op in ("rope_forward", "rope_backward")]
    assert kill_matrix(half, [mutant])[mutant.id] == []
    single = [case(f"single.{op}", op, d=64) for op in ("rope_forward", "rope_backward")]
    assert len(kill_matrix(single, [mutant])[mutant.id]) == 2


def test_bfloat16_angles_fail_at_long_positions_even_for_a_bfloat16_x() -> None:
    long = [case("bf16x.long", "rope_forward", ("bfloat16",), positions=window(131072), d=64, dtype="bfloat16")]
    run = run_undiagnosed(MutantAdapter("rope.angles_bfloat16"), long)
    assert [r.outcome for r in run.results] == ["fail"]


@pytest.fixture(scope="module")
def goldens(corpus) -> list:
    return [c for c in corpus.cases if c.operation.startswith("rope_")]


def test_the_goldens_rank_every_case_a_rope_mutant_covers(goldens) -> None:
    """The ranking below on the rope goldens is the ranking on the whole corpus (test_diagnosis ranks the rest)."""
    assert len(goldens) >= 40
    assert [(m.id, op) for m in ROPE for op in m.covered_operations if not op.startswith("rope_")] == []


@pytest.mark.parametrize("mutant", [m.id for m in ROPE])
def test_every_rope_mutant_is_killed_and_ranked_first_by_the_goldens(goldens, mutant) -> None:
    from embconf.mutation.measure import rank_catalogue

    (ranking,) = rank_catalogue(goldens, [mutant])
    assert ranking.failing
    assert ranking.rate >= 0.95, f"ranked first on {ranking.first} of {ranking.failing} failing cases"
