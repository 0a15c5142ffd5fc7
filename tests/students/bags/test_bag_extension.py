"""The TinyTorch bag extension (spec section 16 on a student's own Tensor and autograd): the features read from the
student's ``EmbeddingBag``, the example student's layer passing every bag case it claims, a module without the
class unchanged, and the wrong layers of tests/students/bags failing where, and because, their mistake shows."""

from __future__ import annotations

import types

import numpy as np
import pytest
from helpers import ROOT, STUDENTS, outcomes, run_diagnosed, run_undiagnosed

from embconf.adapters.tinytorch import TinyTorchAdapter
from embconf.adapters.tinytorch_bags import bag_claim
from embconf.model.family import operations_of
from embconf.model.outcomes import FAIL, NOT_APPLICABLE, PASS
from embconf.model.vocabulary import features
from embconf.mutants import catalogue

EXAMPLE_ROOT = ROOT / "examples" / "tinytorch_student"
EXAMPLE = EXAMPLE_ROOT / "tinytorch" / "core" / "embeddings.py"
BAGS = STUDENTS / "bags"
INTERFACE = {"bag-sum", "bag-mean", "bag-max"}
EVERY_OPTION = INTERFACE | {"bag-weights", "bag-weighted-mean", "bag-padding", "bag-last-offset", "bag-2d"}


@pytest.fixture(scope="module")
def bag_cases(corpus):
    return [case for case in corpus.cases if case.id.startswith("bag.")]


def _module(cls: type | None) -> types.ModuleType:
    module = types.ModuleType("submission")
    if cls is not None:
        module.EmbeddingBag = cls
    return module


class Minimal:  # the interface's positional parameters only: modes sum, mean and max, 1-D ids with offsets
    def __init__(self, vocab_size, embed_dim, mode="mean"): ...

    def forward(self, indices, offsets): ...


class Listed:  # its own modes (sqrtn, and a mode the spec does not know), weights in sum only, 2-D ids
    MODES = ("sum", "sqrtn", "median")

    def __init__(self, vocab_size, embed_dim, mode="sum", padding_idx=None): ...

    def forward(self, indices, offsets=None, per_sample_weights=None): ...


class WeightedSqrtn(Listed):
    WEIGHTED_MODES = ["sqrtn"]


class _Raising(type):  # a class whose attributes raise when read: nothing it lists is read, nothing breaks
    def __getattribute__(cls, name):
        if name in ("MODES", "forward"):
            raise RuntimeError(f"{name} is not for reading")
        return super().__getattribute__(name)


class Raising(metaclass=_Raising):
    def __init__(self, vocab_size, embed_dim, mode="mean", include_last_offset=False): ...


@pytest.mark.parametrize(
    "cls, claimed",
    [
        (None, set()),
        (Minimal, INTERFACE),
        (Listed, {"bag-sum", "bag-sqrtn", "bag-weights", "bag-padding", "bag-2d"}),
        (WeightedSqrtn, {"bag-sum", "bag-sqrtn", "bag-weights", "bag-weighted-mean", "bag-padding", "bag-2d"}),
        (Raising, INTERFACE | {"bag-last-offset"}),
    ],
)
def test_the_features_are_what_the_class_accepts(cls, claimed):
    assert bag_claim(_module(cls)) == claimed


def test_the_example_student_passes_every_bag_case_it_claims(bag_cases):
    adapter = TinyTorchAdapter(str(EXAMPLE))
    assert EVERY_OPTION <= adapter.capabilities().features and EVERY_OPTION <= set(features())
    record = run_undiagnosed(adapter, bag_cases)
    found = outcomes(record)
    assert sum(outcome == PASS for outcome in found.values()) >= 50
    assert set(found.values()) <= {PASS, NOT_APPLICABLE}, [
        (r.id, r.message[:200]) for r in record.results if r.outcome not in (PASS, NOT_APPLICABLE)
    ]
    # not applicable only for what TinyTorch lacks: sqrtn, another dtype, a convention, the sharded table's bytes
    outside = [r.id for r in record.results if r.outcome == NOT_APPLICABLE and set(r.features) <= EVERY_OPTION]
    assert all(r.startswith("bag.memory.") for r in outside), outside


def test_without_the_class_every_bag_case_is_not_applicable_and_nothing_else_changes(tmp_path, corpus):
    names = "Embedding, EmbeddingFunction, PositionalEncoding, EmbeddingLayer, _compute_sinusoidal_table"
    module = tmp_path / "embeddings_without_bags.py"
    module.write_text(
        f"import sys\nsys.path.insert(0, {str(EXAMPLE_ROOT)!r})\n"
        "from tinytorch.core.tensor import Tensor\n"
        f"from tinytorch.core.embeddings import {names}, create_sinusoidal_embeddings\n",
        encoding="utf-8",
    )
    with_bags, without = TinyTorchAdapter(str(EXAMPLE)), TinyTorchAdapter(str(module))
    assert with_bags.capabilities().features - without.capabilities().features == EVERY_OPTION
    assert "embedding_bag_forward" not in without.capabilities().operations
    full, bare = outcomes(run_undiagnosed(with_bags, corpus.cases)), outcomes(run_undiagnosed(without, corpus.cases))
    bags = {case.id for case in corpus.cases if case.operation in operations_of("bags")}  # hand-written and pairwise
    assert {outcome for case, outcome in bare.items() if case in bags} == {NOT_APPLICABLE}
    assert {case: outcome for case, outcome in full.items() if case not in bags} == {
        case: outcome for case, outcome in bare.items() if case not in bags
    }


pytestmark = pytest.mark.filterwarnings("ignore:.*encountered in divide:RuntimeWarning")  # empty_bag_nan's 0 / 0

# student -> (the requirement its failures pin, what every failing case has, the catalogue's mutant of the mistake)
WRONG = {
    "mean_over_padded_length": (
        "EMB-BAG-7",
        lambda inputs: inputs.get("padding_idx") is not None,
        "bag.mean_counts_padding",
    ),
    "empty_bag_nan": ("EMB-BAG-6", lambda inputs: True, "bag.empty_bag_nan"),
}


@pytest.mark.parametrize("student", sorted(WRONG))
def test_a_wrong_bag_layer_fails_only_where_its_mistake_shows(bag_cases, student):
    requirement, has, _ = WRONG[student]
    record = run_undiagnosed(TinyTorchAdapter(str(BAGS / f"{student}.py")), bag_cases)
    failing = [r for r in record.results if r.outcome != PASS and r.outcome != NOT_APPLICABLE]
    assert failing and all(r.outcome == FAIL for r in failing), [(r.id, r.outcome) for r in failing]
    by_id = {case.id: case for case in bag_cases}
    for result in failing:
        inputs = by_id[result.id].inputs()
        assert requirement in result.requirements and inputs["mode"] == "mean" and has(inputs), result.id
    example = outcomes(run_undiagnosed(TinyTorchAdapter(str(EXAMPLE)), [by_id[r.id] for r in failing]))
    assert set(example.values()) == {PASS}  # the one change the student made is what fails


def test_the_empty_bag_is_not_a_number(bag_cases):
    record = run_undiagnosed(TinyTorchAdapter(str(BAGS / "empty_bag_nan.py")), bag_cases)
    empty = next(r for r in record.results if r.id == "bag.forward.mean.padding_empty")
    assert empty.outcome == FAIL and np.isnan(empty.actual["output"]).any()


@pytest.mark.parametrize("student", sorted(WRONG))
def test_the_verdict_names_the_catalogues_mistake(bag_cases, student):
    _, _, mutant = WRONG[student]
    if mutant not in {m.id for m in catalogue()}:
        pytest.skip(f"the catalogue has no mutant {mutant} in this tree (the bag mutants arrive with their branch)")
    record = run_diagnosed(TinyTorchAdapter(str(BAGS / f"{student}.py")), bag_cases)
    failing = {r.id for r in record.results if r.outcome == FAIL}
    (cause,) = record.verdict.causes  # one mistake, explaining every failure, forward and backward alike
    assert failing and cause.id == mutant and set(cause.cases) == failing, (cause.id, cause.cases, failing)
