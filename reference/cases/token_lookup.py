"""Token lookup cases: forward gather, backward scatter-add, row-sparse gradients, id validation."""
from __future__ import annotations

import numpy as np

from embconf.reference.cases import CaseSpec, table, token_ids, values

AREA = "token_lookup"


def _forward(case_id: str, description: str, reqs: tuple[str, ...], vocab: int, dim: int, ids: np.ndarray,
             dtype: str = "float32", features: tuple[str, ...] = ()) -> CaseSpec:
    return CaseSpec(case_id, description, reqs, "embedding_forward",
                    {"weight": table(case_id, vocab, dim, dtype), "ids": ids}, features)


def _backward(case_id: str, description: str, reqs: tuple[str, ...], vocab: int, dim: int, ids: np.ndarray,
              dtype: str = "float32", features: tuple[str, ...] = (), grad: np.ndarray | None = None,
              operation: str = "embedding_backward") -> CaseSpec:
    shape = np.asarray(ids).shape + (dim,)
    g = values(case_id, shape, dtype, "grad") if grad is None else grad
    return CaseSpec(case_id, description, reqs, operation,
                    {"weight": table(case_id, vocab, dim, dtype), "ids": ids, "grad_output": g}, features)


def _error(case_id: str, description: str, reqs: tuple[str, ...], error: str, ids: np.ndarray,
           operation: str = "embedding_forward", vocab: int = 5, dim: int = 3, features: tuple[str, ...] = ()) -> CaseSpec:
    inputs = {"weight": table(case_id, vocab, dim), "ids": ids}
    if operation != "embedding_forward":
        inputs["grad_output"] = values(case_id, np.asarray(ids).shape + (dim,), salt="grad")
    return CaseSpec(case_id, description, reqs, operation, inputs, features, error=error)


def i64(data) -> np.ndarray:
    return np.array(data, dtype=np.int64)


def f32(data) -> np.ndarray:
    return np.array(data, dtype=np.float32)


def forward_cases() -> list[CaseSpec]:
    fwd = ("EMB-FWD-1", "EMB-FWD-2")
    special = np.array([[np.nan, np.inf, -np.inf], [-0.0, 0.0, 1e-45], [3.4028235e38, -3.4028235e38, 1.1754944e-38]], dtype=np.float32)
    return [
        _forward("lookup.forward.module_example", "The module's example: ids [2, 0, 2] gather rows W2, W0, W2.", fwd + ("EMB-FWD-3",), 4, 3, i64([2, 0, 2])),
        _forward("lookup.forward.ids_0d", "A 0-D id gives a single (D,) row, a new array.", fwd + ("EMB-GEN-1",), 6, 4, i64(3)),
        _forward("lookup.forward.ids_1d", "1-D ids (T,) give (T, D).", fwd, 10, 5, token_ids("lookup.forward.ids_1d", 10, (7,))),
        _forward("lookup.forward.ids_2d", "2-D ids (B, T) give (B, T, D).", fwd, 12, 4, token_ids("lookup.forward.ids_2d", 12, (3, 5))),
        _forward("lookup.forward.ids_3d", "3-D ids give a 4-D output.", fwd, 9, 3, token_ids("lookup.forward.ids_3d", 9, (2, 3, 4))),
        _forward("lookup.forward.empty_ids", "No ids at all: an empty (0, D) output, not an error.", fwd, 5, 3, i64([])),
        _forward("lookup.forward.empty_sequence", "A batch of empty sequences (2, 0) gives (2, 0, D).", fwd, 5, 3, np.zeros((2, 0), np.int64)),
        _forward("lookup.forward.first_and_last_rows", "Ids 0 and V-1, the edges of the table.", fwd, 8, 4, i64([0, 7, 7, 0])),
        _forward("lookup.forward.every_row_permuted", "Every row once, in a shuffled order.", fwd, 16, 3, np.random.default_rng(16).permutation(16).astype(np.int64)),
        _forward("lookup.forward.vocab_1", "A vocabulary of one row: every id is 0.", fwd, 1, 4, i64([0, 0, 0])),
        _forward("lookup.forward.dim_1", "Width D = 1.", fwd, 7, 1, token_ids("lookup.forward.dim_1", 7, (2, 4))),
        _forward("lookup.forward.all_ids_equal", "The same id everywhere: copies of one row, in a new array (not a broadcast view).", fwd + ("EMB-GEN-1",), 6, 5, np.full((3, 4), 4, np.int64)),
        _forward("lookup.forward.identity_ids", "Ids 0..V-1 in order: the output equals W but must be a new array, not W itself.", fwd + ("EMB-GEN-1",), 6, 3, np.arange(6, dtype=np.int64)),
        CaseSpec("lookup.forward.special_values", "Rows are copied bit for bit: NaN, +-inf, -0.0, a subnormal and the float32 extremes survive unchanged.",
                 fwd + ("EMB-TOL-2",), "embedding_forward", {"weight": special, "ids": i64([[2, 1, 0], [0, 1, 2]])}),
        _forward("lookup.forward.large_table", "A (1000, 16) table and a (8, 32) batch of ids (base64-encoded arrays).", fwd, 1000, 16, token_ids("lookup.forward.large_table", 1000, (8, 32))),
        _forward("lookup.forward.wide_rows", "Wide rows: D = 300.", fwd, 20, 300, token_ids("lookup.forward.wide_rows", 20, (5,))),
        _forward("lookup.forward.random_a", "Random ids, V = 50, D = 8.", fwd, 50, 8, token_ids("lookup.forward.random_a", 50, (4, 6))),
        _forward("lookup.forward.random_b", "Random ids, V = 3, D = 6, many repeats.", fwd, 3, 6, token_ids("lookup.forward.random_b", 3, (20,))),
        _forward("lookup.forward.random_c", "Random 3-D ids, V = 30, D = 2.", fwd, 30, 2, token_ids("lookup.forward.random_c", 30, (2, 2, 5))),
        _forward("lookup.forward.float64", "A float64 table stays float64.", ("EMB-FWD-3", "EMB-FWD-4"), 6, 4, i64([1, 5, 1]), dtype="float64", features=("float64",)),
        _forward("lookup.forward.float64_2d", "A float64 table, 2-D ids.", ("EMB-FWD-1", "EMB-FWD-4"), 10, 3, token_ids("lookup.forward.float64_2d", 10, (2, 3)), dtype="float64", features=("float64",)),
        _forward("lookup.forward.int32_ids", "int32 ids work as int64 ids do.", ("EMB-FWD-5",), 9, 3, token_ids("lookup.forward.int32_ids", 9, (2, 4), "int32"), features=("int32_ids",)),
        _forward("lookup.forward.float_ids_integral", "Integer-valued float32 ids (TinyTorch stores ids as float32) select rows.", ("EMB-IDX-3",), 5, 3, f32([4.0, 0.0, 2.0]), features=("float_ids",)),
        _forward("lookup.forward.float_ids_2d", "Integer-valued float32 ids, 2-D.", ("EMB-IDX-3",), 7, 2, token_ids("lookup.forward.float_ids_2d", 7, (2, 3), "float32"), features=("float_ids",)),
    ]


def backward_cases() -> list[CaseSpec]:
    bwd = ("EMB-BWD-1", "EMB-BWD-2", "EMB-BWD-3")
    ones = np.ones((3, 2), np.float32)
    return [
        _backward("lookup.backward.module_example_020", "The module's test: ids [0, 2, 0] with an upstream gradient of ones; row 0 is used twice so its gradient is [2, 2].", bwd, 4, 2, i64([0, 2, 0]), grad=ones),
        _backward("lookup.backward.module_example_202", "The module's figure: ids [2, 0, 2]; row 2 accumulates two gradients.", bwd, 4, 3, i64([2, 0, 2])),
        _backward("lookup.backward.no_duplicates", "Distinct ids: each touched row is its upstream row, exactly.", bwd, 6, 3, i64([5, 1, 3])),
        _backward("lookup.backward.untouched_rows_zero", "Most rows are untouched and must be exactly zero.", bwd, 20, 4, i64([3, 17])),
        _backward("lookup.backward.all_ids_equal", "One id 16 times: its row is the sum of 16 upstream rows.", bwd + ("EMB-BWD-4",), 5, 3, np.full((4, 4), 2, np.int64)),
        _backward("lookup.backward.ids_0d", "A 0-D id with a (D,) upstream gradient.", bwd, 5, 4, i64(2)),
        _backward("lookup.backward.ids_2d", "2-D ids (B, T).", bwd, 10, 3, token_ids("lookup.backward.ids_2d", 10, (3, 6))),
        _backward("lookup.backward.ids_3d", "3-D ids.", bwd, 8, 2, token_ids("lookup.backward.ids_3d", 8, (2, 3, 4))),
        _backward("lookup.backward.empty_ids", "No ids: the gradient is all zeros of the table's shape.", bwd, 5, 3, i64([])),
        _backward("lookup.backward.vocab_1", "V = 1: the single row sums every upstream row.", bwd, 1, 3, i64([0, 0, 0, 0])),
        _backward("lookup.backward.dim_1", "Width D = 1.", bwd, 6, 1, token_ids("lookup.backward.dim_1", 6, (10,))),
        _backward("lookup.backward.first_and_last_rows", "Ids 0 and V-1 repeated.", bwd, 9, 3, i64([8, 0, 8, 0, 8])),
        _backward("lookup.backward.many_duplicates", "200 ids over 4 rows: the summation tolerance in action (any order conforms; --repeat checks determinism).", bwd + ("EMB-BWD-4", "EMB-TOL-1", "EMB-GEN-2"), 4, 8, token_ids("lookup.backward.many_duplicates", 4, (10, 20))),
        _backward("lookup.backward.cancellation", "Opposite upstream rows on one id cancel to exactly zero.", bwd, 3, 2, i64([1, 1]), grad=np.array([[1.5, -2.25], [-1.5, 2.25]], np.float32)),
        _backward("lookup.backward.large_table", "A (1000, 32) table, (16, 64) ids.", bwd + ("EMB-BWD-4",), 1000, 32, token_ids("lookup.backward.large_table", 1000, (16, 64))),
        _backward("lookup.backward.float64", "A float64 table gets a float64 gradient.", bwd + ("EMB-FWD-4",), 5, 3, i64([0, 4, 0]), dtype="float64", features=("float64",)),
        _backward("lookup.backward.int32_ids", "int32 ids accumulate as int64 ids do.", bwd + ("EMB-FWD-5",), 6, 2, i64([1, 1, 5]).astype(np.int32), features=("int32_ids",)),
        _backward("lookup.backward.float_ids_integral", "Integer-valued float32 ids accumulate.", bwd + ("EMB-IDX-3",), 4, 2, f32([3.0, 3.0, 0.0]), features=("float_ids",)),
        _backward("lookup.sparse.module_example", "Row-sparse gradient of ids [2, 0, 2]: indices [0, 2] and their summed rows.", ("EMB-BWD-5",), 4, 3, i64([2, 0, 2]), features=("row_sparse_grad",), operation="embedding_backward_sparse"),
        _backward("lookup.sparse.unsorted_ids", "Row-sparse indices are sorted and unique whatever the id order.", ("EMB-BWD-5",), 8, 2, i64([5, 1, 5, 3, 1]), features=("row_sparse_grad",), operation="embedding_backward_sparse"),
        _backward("lookup.sparse.empty_ids", "No ids: no rows.", ("EMB-BWD-5",), 5, 3, i64([]), features=("row_sparse_grad",), operation="embedding_backward_sparse"),
        _backward("lookup.sparse.ids_2d", "2-D ids, row-sparse.", ("EMB-BWD-5",), 30, 4, token_ids("lookup.sparse.ids_2d", 30, (4, 5)), features=("row_sparse_grad",), operation="embedding_backward_sparse"),
        _backward("lookup.sparse.int32_ids", "int32 ids still give int64 indices (np.unique keeps the ids' dtype).", ("EMB-BWD-5", "EMB-FWD-5"), 7, 2, i64([4, 0, 4, 6]).astype(np.int32), features=("row_sparse_grad", "int32_ids"), operation="embedding_backward_sparse"),
    ]


def error_cases() -> list[CaseSpec]:
    oor, neg, bad = ("EMB-IDX-1", "EMB-ERR-1"), ("EMB-IDX-2", "EMB-ERR-1"), ("EMB-IDX-4", "EMB-ERR-1")
    return [
        _error("lookup.error.id_equals_vocab", "Id V is one past the end: index_out_of_range, no clamping.", oor, "index_out_of_range", i64([0, 5, 1])),
        _error("lookup.error.id_far_above", "Id 1000 in a vocabulary of 5.", oor, "index_out_of_range", i64([1000])),
        _error("lookup.error.id_2_pow_40", "Id 2^40: must not wrap when narrowed to 32 bits.", oor, "index_out_of_range", i64([2**40])),
        _error("lookup.error.id_2_pow_32", "Id 2^32 (0 modulo 2^32): must not wrap to row 0.", oor, "index_out_of_range", i64([2**32, 1])),
        _error("lookup.error.vocab_1_id_1", "V = 1 admits only id 0.", oor, "index_out_of_range", i64([0, 1]), vocab=1),
        _error("lookup.error.out_of_range_in_2d", "One bad id deep in a 2-D batch.", oor, "index_out_of_range", i64([[0, 1, 2], [3, 4, 5]])),
        _error("lookup.error.negative_one", "Id -1: an error, never a wrap to the last row.", neg, "index_out_of_range", i64([2, -1])),
        _error("lookup.error.negative_vocab", "Id -V: an error, never a wrap to row 0.", neg, "index_out_of_range", i64([-5])),
        _error("lookup.error.negative_0d", "A 0-D negative id.", neg, "index_out_of_range", i64(-2)),
        _error("lookup.error.backward_id_equals_vocab", "Backward also rejects id V.", oor, "index_out_of_range", i64([5, 0]), operation="embedding_backward"),
        _error("lookup.error.backward_negative", "Backward also rejects id -1.", neg, "index_out_of_range", i64([-1, 0]), operation="embedding_backward"),
        _error("lookup.error.sparse_out_of_range", "The row-sparse backward rejects id V.", oor, "index_out_of_range", i64([1, 5]), operation="embedding_backward_sparse", features=("row_sparse_grad",)),
        _error("lookup.error.int32_negative", "A negative int32 id.", neg, "index_out_of_range", np.array([1, -1], np.int32), features=("int32_ids",)),
        _error("lookup.error.int32_out_of_range", "An int32 id equal to V.", oor, "index_out_of_range", np.array([5], np.int32), features=("int32_ids",)),
        _error("lookup.error.float_half", "Float id 0.5 is not an integer: invalid_index, never truncated to 0.", bad, "invalid_index", f32([1.0, 0.5]), features=("float_ids",)),
        _error("lookup.error.float_2_7", "Float id 2.7: never truncated or rounded.", bad, "invalid_index", f32([2.7]), features=("float_ids",)),
        _error("lookup.error.float_nan", "Float id NaN.", bad, "invalid_index", f32([0.0, np.nan]), features=("float_ids",)),
        _error("lookup.error.float_inf", "Float id +inf.", bad, "invalid_index", f32([np.inf]), features=("float_ids",)),
        _error("lookup.error.float_negative_inf", "Float id -inf.", bad, "invalid_index", f32([-np.inf, 1.0]), features=("float_ids",)),
        _error("lookup.error.float_negative_integral", "Float id -1.0 is an integer out of range.", neg, "index_out_of_range", f32([-1.0]), features=("float_ids",)),
        _error("lookup.error.float_equals_vocab", "Float id 5.0 with V = 5.", oor, "index_out_of_range", f32([5.0]), features=("float_ids",)),
        CaseSpec("lookup.error.backward_grad_shape", "grad_output of shape (3, 2, D) for ids of shape (2, 3): shape_mismatch, never a silent reshape.",
                 ("EMB-BWD-1", "EMB-ERR-1"), "embedding_backward", {"weight": table("lookup.error.backward_grad_shape", 6, 3), "ids": i64([[0, 1, 2], [3, 4, 5]]),
                                                                    "grad_output": values("lookup.error.backward_grad_shape", (3, 2, 3), salt="grad")}, error="shape_mismatch"),
        _error("lookup.error.float_backward_half", "Backward rejects float id 1.5.", bad, "invalid_index", f32([1.5, 0.0]), operation="embedding_backward", features=("float_ids",)),
    ]


def cases() -> list[CaseSpec]:
    return forward_cases() + backward_cases() + error_cases()
