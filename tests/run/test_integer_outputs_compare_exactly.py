"""Byte and parameter counts are exact integers of unbounded width (spec section 6): the judge compares an integer
output exactly, never through a float, at 2**53 + 1 and past 2**63, in process and over the wire."""

from __future__ import annotations

import pytest
from helpers import PYTHON, outcomes, run_named

from embconf.corpus.fixtures import Case, load_corpus
from embconf.reference.memory import table_bytes

PAST_FLOAT = 2**53 + 1  # the first integer a float64 cannot hold
PAST_INT64 = 2**64 + 3  # bytes past what any fixed-width integer holds
ANSWERS = """
def table_bytes(num_rows, embed_dim, dtype):
    size = num_rows * embed_dim * {{"float64": 8, "float32": 4, "float16": 2, "bfloat16": 2, "int8": 1}}[dtype]
    return {{"bytes": {bytes}, "megabytes": size / 10**6, "mebibytes": size / 2**20}}
"""


def table_bytes_case(num_rows: int, dtype: str) -> Case:
    """A table_bytes case built in memory, its golden the reference's, its tolerance the shipped cases'."""
    shipped = next(case for case in load_corpus().cases if case.operation == "table_bytes")
    inputs = {"num_rows": num_rows, "embed_dim": 1, "dtype": dtype}
    record = {
        "id": f"mem.table_bytes.rows_{num_rows}.{dtype}",
        "description": "a table of more rows than a float64 or an int64 counts exactly",
        "requirements": list(shipped.requirements),
        "features": [],
        "operation": "table_bytes",
        "inputs": inputs,
        "expected": {"outputs": table_bytes(**inputs)},
        "tolerance": dict(shipped.tolerance),
    }
    return Case.from_record(record, "built in memory")


CASES = [table_bytes_case(PAST_FLOAT, "int8"), table_bytes_case(PAST_INT64, "float64")]


def answering(tmp_path, name: str, expression: str) -> str:
    """``functions:`` naming a module whose table_bytes answers ``bytes`` as ``expression`` (of ``size``)."""
    module = tmp_path / f"{name}.py"
    module.write_text(ANSWERS.format(bytes=expression))
    return f"functions:{module}"


def test_the_reference_passes_its_own_counts_past_float_and_int64():
    assert CASES[1].expected_outputs["bytes"] > 2**63
    assert set(outcomes(run_named("reference", CASES)).values()) == {"pass"}


def test_the_reference_passes_them_over_the_wire():
    record = run_named(f"subprocess:{PYTHON} -m embconf.protocol.reference_peer", CASES)
    assert set(outcomes(record).values()) == {"pass"}


@pytest.mark.parametrize("expression", ["size + 1", "size - 1"])
def test_a_count_off_by_one_fails(tmp_path, expression):
    record = run_named(answering(tmp_path, "off_by_one", expression), CASES)
    assert set(outcomes(record).values()) == {"fail"}
    assert all("bytes" in result.message for result in record.results)


def test_a_float_answer_fails_where_a_float_cannot_hold_the_count(tmp_path):
    record = run_named(answering(tmp_path, "as_float", "float(size)"), CASES)
    assert set(outcomes(record).values()) == {"fail"}
    assert float(PAST_FLOAT) == 9007199254740992.0
    assert all("answer an integer" in result.message for result in record.results)


def test_a_float_answer_holding_the_exact_count_passes(tmp_path):
    small = table_bytes_case(1024, "int8")
    record = run_named(answering(tmp_path, "exact_float", "float(size)"), [small])
    assert outcomes(record) == {small.id: "pass"}


def test_an_integer_too_long_to_print_fails_and_is_shown_by_its_size(tmp_path):
    """Python refuses to print an integer past 4300 digits: the judge says its size instead of raising."""
    record = run_named(answering(tmp_path, "huge", "10**5000"), CASES)
    assert set(outcomes(record).values()) == {"fail"}
    assert all("an integer of 16610 bits" in result.message for result in record.results)
