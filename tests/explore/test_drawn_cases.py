"""What ``embconf explore`` draws: the same seed the same draws; every case a valid fixture whose features are
those a golden of its inputs carries; an error boundary judged against the error the spec names there; a draw
the spec does not answer never a case."""

from __future__ import annotations

from pathlib import Path

import pytest

from embconf.adapters.reference import ReferenceAdapter
from embconf.corpus.fixtures import load_corpus
from embconf.model.bag_conventions import BagConvention
from embconf.model.quantize_conventions import QuantizeConvention
from embconf.model.rope import LAYER_FEATURE
from embconf.model.rope_conventions import RopeConvention
from embconf.model.sinusoid import named_profiles
from embconf.reference.cases.domains import DOMAINS, error_points

pytest.importorskip("hypothesis", reason="embconf explore needs the optional extra explore (Hypothesis)")

from embconf.explore.candidate import document_text  # noqa: E402 - after the skip: it imports Hypothesis
from embconf.explore.draw import Drawer, Drawn, build  # noqa: E402
from embconf.explore.features import needed_features  # noqa: E402

CLAIMED = ReferenceAdapter().capabilities().all_features
# the features a case's boundaries carry (a convention's, a rope layer's, a sinusoid profile's or storage's)
CARRIED = {
    *(c.feature for c in (*RopeConvention, *BagConvention, *QuantizeConvention)),
    *(f"sinusoid-{name}" for name in named_profiles()),
    LAYER_FEATURE,
    "sinusoid_computed",
}


def _draws(area: str, seed: int, count: int) -> list[Drawn]:
    drawer = Drawer(list(DOMAINS[area]), CLAIMED, seed)
    return [drawer.next() for _ in range(count)]


def test_the_same_seed_draws_the_same_cases_and_another_seed_others() -> None:
    assert _draws("bags", 5, 50) == _draws("bags", 5, 50)
    assert _draws("bags", 5, 50) != _draws("bags", 6, 50)


@pytest.mark.parametrize("area", list(DOMAINS))
def test_every_drawn_case_is_a_fixture_the_runner_loads(tmp_path: Path, area: str) -> None:
    cases = [case for drawn in _draws(area, 0, 25) if (case := build(drawn)) is not None]
    assert len(cases) >= 20
    written = tmp_path / "drawn.yaml"
    written.write_text(document_text(cases, "reference", 0))
    assert [case.id for case in load_corpus(written).cases] == [case.id for case in cases]  # schema and semantics
    assert any(not case.expected_error for case in cases)
    assert any(case.expected_error for case in cases) == any(error_points(op) for op in DOMAINS[area])


def test_the_features_a_case_needs_are_those_every_golden_of_its_inputs_carries() -> None:
    differ = {}
    for case in (case for case in load_corpus().cases if not case.is_sequence):
        carried = [f for f in case.features if f in CARRIED]
        derived = set(needed_features(case.operation, case.inputs(), case.expected_error, carried))
        if derived != set(case.features):
            differ[case.id] = sorted(derived ^ set(case.features))
    assert differ == {}


@pytest.mark.parametrize(
    ("operation", "at", "error"),
    [
        ("embedding_forward", (("ids.range", "equal_v"),), "index_out_of_range"),
        ("embedding_bag_forward", (("ids.range", "equal_v"),), "index_out_of_range"),
        ("embedding_bag_forward", (("offsets", "past_end"),), "invalid_offsets"),
        ("learned_positions_forward", (("start_pos", "past_end"),), "sequence_too_long"),
        ("rope_forward", (("rotary_dim", "odd"),), "invalid_config"),
    ],
)
def test_a_case_at_an_error_boundary_expects_the_error_the_spec_names(operation: str, at: tuple, error: str) -> None:
    case = build(Drawn(operation, at, 0))
    assert case is not None and case.expected_error == error


def test_a_draw_whose_error_the_spec_leaves_open_is_never_a_case() -> None:
    """Two errors at once: the domains' order says index_out_of_range, the reference raises invalid_config."""
    drawn = Drawn("embedding_forward", (("ids.range", "equal_v"), ("scale_grad_by_freq", "not_boolean")), 0)
    assert build(drawn) is None
    assert build(Drawn("embedding_forward", (("ids.range", "equal_v"),), 0)) is not None
