"""A mistake that agrees with some elements of an integer output and not the others is not one of two mistakes
there (conformance/diagnosis/compose.py): the elements of a count vector are one formula's, so small numbers agree
by chance. A sharded table split into V // S rows per shard (the remainder in no shard) shares two shards' bytes
with the balanced split (10 rows on 4 shards: 2, 2, 2, 2 against 3, 3, 2, 2), and was told it balances the shards."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import cause_ids, problems, run_diagnosed

from embconf.corpus.fixtures import Case
from embconf.diagnosis.compose import Relation, relate
from embconf.diagnosis.replay import mutant_reply
from embconf.model.outcomes import FAIL, CaseResult
from embconf.mutants import get
from embconf.mutants.adapter import ImplementationAdapter
from embconf.mutants.compose import Implementation

SHARDS = "sharded_table_bytes"
BYTES = {"float64": 8, "float32": 4, "float16": 2, "bfloat16": 2, "int8": 1}


def _floor_split(vocab_size: int, embed_dim: int, dtype: str, shards: int, sharding: str) -> np.ndarray:
    """Every shard V // S rows (D // S columns), as a vocabulary split whose divisibility check was dropped."""
    get("bag.shards_balanced").overrides[SHARDS](vocab_size, embed_dim, dtype, shards, sharding)  # the checks
    split, other = (vocab_size, embed_dim) if sharding == "row_wise" else (embed_dim, vocab_size)
    return np.array([split // shards * other * BYTES[dtype]] * shards, dtype=np.int64)


@pytest.fixture(scope="module")
def memory(corpus) -> list[Case]:
    return [case for case in corpus.cases if case.operation == SHARDS]


def _result(case: Case, shard_bytes: np.ndarray) -> CaseResult:
    return CaseResult(
        case.id, case.requirements, case.features, case.operation, FAIL, actual={"shard_bytes": shard_bytes}
    )


def test_bytes_agreeing_on_some_shards_are_evidence_against_the_balanced_split(memory) -> None:
    case = next(c for c in memory if c.id == "bag.memory.row_wise_uneven")
    balanced = mutant_reply(get("bag.shards_balanced"), case, case.inputs())
    floor = _floor_split(**case.inputs())
    assert list(floor // 32) == [2, 2, 2, 2] and list(balanced.outputs["shard_bytes"] // 32) == [3, 3, 2, 2]
    assert relate(case, balanced, _result(case, floor), {}) is Relation.AGAINST


def test_a_floor_split_is_never_said_to_balance_the_shards(memory) -> None:
    run = run_diagnosed(ImplementationAdapter(Implementation({SHARDS: _floor_split}), "floor split"), memory)
    assert "bag.memory.row_wise_uneven" in problems(run.results)
    named = [i for result in run.results for i in cause_ids(result)] + [c.id for c in run.verdict.causes]
    assert [i for i in named if i.startswith("bag.shards")] == []


def test_the_balanced_split_itself_is_still_named(memory) -> None:
    balanced = get("bag.shards_balanced").overrides[SHARDS]
    run = run_diagnosed(ImplementationAdapter(Implementation({SHARDS: balanced}), "balanced"), memory)
    assert [c.id for c in run.verdict.causes] == ["bag.shards_balanced"]
