"""The mutants of spec 2.0.0's rope families and forms (conformance/mutants/rope_families.py): the public bugs
the 1.3.0 cases could not see pass them and fail 2.0.0's, and the fused backward that mixes the halves of sin
passes tables with equal halves and fails tables whose halves differ. That each is killed and ranked first by
the goldens is test_rope_mutants.test_every_rope_mutant_is_killed_and_ranked_first_by_the_goldens."""

from __future__ import annotations

import pytest

from embconf.corpus.fixtures import load_corpus
from embconf.mutants import catalogue, get
from embconf.mutation.kills import kill_matrix

NEW = {
    "rope.yarn_off_below_original",
    "rope.llama3_constants",
    "rope.yarn_attention_factor_ignored",
    "rope.yarn_mscale_ignored",
    "rope.longrope_short_always",
    "rope.longrope_long_at_original",
    "rope.longrope_attention_missing",
    "rope.mrope_temporal_only",
    "rope.mrope_height_width_swapped",
    "rope.batch_positions_first_row",
    "rope.apply_backward_mixes_halves",
    "rope.apply_first_half_tables",
    "rope.apply_backward_rotates_forward",
}
FAMILIES_FILE = "reference/cases/rope_families.py"


@pytest.fixture(scope="module")
def rope_goldens():
    return [case for case in load_corpus().cases if case.operation.startswith("rope_")]


def _new_cases(goldens):
    from embconf.reference.cases import rope_families

    ids = {spec.id for spec in rope_families.cases()}
    assert len(ids) >= 60
    return [case for case in goldens if case.id in ids]


def test_the_catalogue_has_a_mistake_for_each_new_family_and_form():
    ids = {m.id for m in catalogue()}
    assert NEW <= ids
    assert {
        get(i).source
        for i in ("rope.yarn_off_below_original", "rope.llama3_constants", "rope.apply_backward_mixes_halves")
    } == {
        "https://github.com/pytorch/torchtitan/issues/4117",
        "https://github.com/meta-llama/llama-models/issues/241",
        "https://github.com/PaddlePaddle/Paddle/issues/74716",
    }


@pytest.mark.parametrize(
    "mutant, old_cases",
    [
        ("rope.yarn_off_below_original", lambda c: True),  # 1.3.0's only YaRN case below L0 is half-split
        ("rope.llama3_constants", lambda c: "half_split" in c.id),  # 1.3.0's half-split llama3 cases use factor 8
    ],
)
def test_bugs_the_1_3_cases_missed_fail_the_2_1_cases(rope_goldens, mutant, old_cases):
    new = _new_cases(rope_goldens)
    old = [case for case in rope_goldens if case not in new and old_cases(case)]
    assert kill_matrix(old, [get(mutant)])[mutant] == []
    assert kill_matrix(new, [get(mutant)])[mutant] != []


def test_a_backward_mixing_the_halves_of_sin_is_seen_only_with_tables_whose_halves_differ(rope_goldens):
    mutant = get("rope.apply_backward_mixes_halves")
    applied = [case for case in rope_goldens if case.operation == "rope_apply_backward"]
    equal = [case for case in applied if case.id.endswith("equal_halves")]
    assert equal and kill_matrix(equal, [mutant])[mutant.id] == []
    killed = {result.id for result in kill_matrix(applied, [mutant])[mutant.id]}
    assert {"rope.apply_backward.half_split.halves_differ", "rope.apply_backward.interleaved.halves_differ"} <= killed


def test_longrope_at_the_original_length_is_short(rope_goldens):
    """L = L0 takes the short factors: the off-by-one switch fails exactly the cases at that boundary."""
    killed = {
        result.id
        for mutant in ("rope.longrope_long_at_original", "rope.tables.longrope_long_at_original")
        for result in kill_matrix(rope_goldens, [get(mutant)])[mutant]
    }
    assert killed == {
        "rope.forward.half_split.longrope_short",
        "rope.forward.interleaved.longrope_short",
        "rope.tables.longrope_short",
    }
