"""Bag cases (spec section 16, since 2.1.0): embedding_bag forward and backward in every mode, the errors, a sharded
table's memory, and the declared conventions of TensorFlow's safe_embedding_lookup_sparse.

Each case's bag features are derived from its inputs (:func:`embconf.model.bag.implied_features`), plus its
dtype's feature, so an implementation that claims no bag feature gets every case not_applicable.
"""
from __future__ import annotations

from typing import Any, Optional

import numpy as np

from embconf.model.bag import implied_features
from embconf.model.dtypes import round_once
from embconf.reference.cases import CaseSpec, table, token_ids, values
from embconf.reference.cases.domains import case_at  # a case at named boundaries of the inputs' domains
from embconf.reference.cases.token_lookup import i64

AREA = "bags"
DTYPE_FEATURES = {"float64": "float64", "float16": "float16", "bfloat16": "bfloat16"}


def _bag(case_id: str, description: str, reqs: tuple[str, ...], mode: Any, ids: np.ndarray, offsets: Optional[list[int]],
         backward: bool = False, vocab: int = 8, dim: int = 4, dtype: str = "float32", weights: Optional[list[Any]] = None,
         error: Optional[str] = None, convention: str = "", weight: Optional[np.ndarray] = None,
         grad_rows: Optional[int] = None, offsets_dtype: str = "int64", **options: Any) -> CaseSpec:
    """A bag case; ``weights`` as decimals (rounded to the table's dtype), ``options`` the optional inputs."""
    inputs: dict[str, Any] = {"weight": table(case_id, vocab, dim, dtype) if weight is None else weight, "ids": ids,
                              "offsets": None if offsets is None else np.array(offsets, dtype=offsets_dtype), "mode": mode}
    if backward:
        bags = (len(offsets) - (1 if options.get("include_last_offset") else 0)) if offsets is not None else ids.shape[0]
        inputs["grad_output"] = values(case_id, (bags if grad_rows is None else grad_rows, dim), dtype, "grad")
    if weights is not None:
        given = round_once(np.array(weights, dtype=np.float64), str(inputs["weight"].dtype))
        inputs["per_sample_weights"] = given.reshape(ids.shape) if given.size == ids.size else given
    inputs.update(options)
    conventions = (f"bag-{convention}",) if convention else ()
    derived = implied_features("embedding_bag_backward" if backward else "embedding_bag_forward", inputs, error, conventions)
    features = tuple(sorted(derived)) + tuple(f for f in (DTYPE_FEATURES.get(str(inputs["weight"].dtype)),) if f)
    features += ("int32_ids",) if ids.dtype == np.int32 else ()
    reqs = ("EMB-BAG-V1" if convention == "drop_negative_ids" else "EMB-BAG-V2",) + reqs if convention else reqs
    operation = "embedding_bag_backward" if backward else "embedding_bag_forward"
    return CaseSpec(case_id, description, reqs, operation, inputs, features + conventions, error=error)


def _tied() -> np.ndarray:
    """Rows 2 and 5 hold the largest value, 4, in columns 0 and 2, rows 1 and 4 in column 1: ties for the maximum of
    any bag that holds both; the other values are a standard normal table's."""
    w = table("bag.tied", 8, 4)
    w[2, [0, 2]] = w[5, [0, 2]] = np.float32(4)
    w[1, 1] = w[4, 1] = np.float32(4)
    return w


def _negative_rows() -> np.ndarray:
    """Every value negative: a max that starts from 0 (or from a zero row) is wrong."""
    return -np.abs(table("bag.negative_rows", 8, 4)) - np.float32(0.25)


def forward_cases() -> list[CaseSpec]:
    sum_, mean, mx, sq = ("EMB-BAG-1", "EMB-BAG-2"), ("EMB-BAG-1", "EMB-BAG-3"), ("EMB-BAG-1", "EMB-BAG-4"), ("EMB-BAG-1", "EMB-BAG-5")
    long_ids = token_ids("bag.forward.sum.long_bag", 64, (4096,))
    return [
        _bag("bag.forward.sum.basic", "Three bags of 2, 3 and 1 ids read from offsets [0, 2, 5]: each the sum of its rows.", sum_, "sum", i64([1, 3, 5, 2, 7, 0]), [0, 2, 5]),
        _bag("bag.forward.sum.empty_bags", "Empty bags first, in the middle and last (offsets [0, 0, 3, 3, 5]) are zero rows.", sum_ + ("EMB-BAG-6",), "sum", i64([4, 1, 6, 2, 2]), [0, 0, 3, 3, 5]),
        _bag("bag.forward.sum.no_bags", "No ids and no offsets: zero bags, an output of shape (0, D).", sum_, "sum", i64([]), []),
        _bag("bag.forward.sum.single_ids", "Bags of one id each: the rows themselves.", sum_, "sum", i64([6, 0, 3, 3]), [0, 1, 2, 3]),
        _bag("bag.forward.sum.repeated_ids", "An id repeated within a bag counts each time; repeated across bags it counts in each.", sum_, "sum", i64([2, 2, 2, 4, 2, 4]), [0, 3]),
        _bag("bag.forward.sum.padding", "padding_idx 3 is not counted; the second bag holds only padding and is a zero row.", sum_ + ("EMB-BAG-6", "EMB-BAG-7"), "sum", i64([3, 1, 3, 3, 3, 5, 0]), [0, 3, 5], padding_idx=3),
        _bag("bag.forward.sum.padding_negative", "padding_idx -1 is row V-1 (7): it is left out of the bags, row 0 is not.", sum_ + ("EMB-BAG-7",), "sum", i64([7, 0, 7, 2, 7]), [0, 2], padding_idx=-1),
        _bag("bag.forward.sum.last_offset", "include_last_offset: offsets [0, 2, 2, 5] hold 3 bags, the last offset is N.", sum_ + ("EMB-BAG-6", "EMB-BAG-8"), "sum", i64([1, 4, 0, 6, 6]), [0, 2, 2, 5], include_last_offset=True),
        _bag("bag.forward.sum.last_offset_false", "include_last_offset false: the last offset starts a bag that runs to N.", sum_ + ("EMB-BAG-8",), "sum", i64([1, 4, 0, 6, 6]), [0, 2, 2], include_last_offset=False),
        _bag("bag.forward.sum.two_d", "2-D ids (3, 4) and offsets null: each row one bag of 4.", sum_, "sum", token_ids("bag.forward.sum.two_d", 8, (3, 4)), None),
        _bag("bag.forward.sum.weights", "Per-sample weights scale each row before the sum.", sum_ + ("EMB-BAG-9",), "sum", i64([1, 3, 5, 2, 7, 1]), [0, 2, 5], weights=[0.5, 2.0, 1.25, 0.75, 3.0, 1.5]),
        _bag("bag.forward.sum.weights_zero_negative", "A weight 0 and negative weights are used as given (the zero-weighted row adds nothing, the negative ones subtract).", sum_ + ("EMB-BAG-9",), "sum", i64([0, 4, 4, 6, 2]), [0, 3], weights=[0.0, -1.0, 2.5, -0.5, 1.0]),
        _bag("bag.forward.sum.long_bag", "One bag of 4096 ids over 64 rows: the exact sum rounded once (EMB-BAG-14).", sum_ + ("EMB-BAG-14",), "sum", long_ids, [0], vocab=64),
        _bag("bag.forward.sum.float64", "A float64 table stays float64.", sum_ + ("EMB-BAG-14",), "sum", i64([5, 2, 2, 0, 7]), [0, 3], dtype="float64"),
        _bag("bag.forward.sum.float16", "A float16 table: each output the exact sum rounded once to float16.", sum_ + ("EMB-BAG-14",), "sum", i64([5, 2, 2, 0, 7, 1]), [0, 3, 3], dtype="float16"),
        _bag("bag.forward.sum.bfloat16", "A bfloat16 table: each output the exact sum rounded once to bfloat16.", sum_ + ("EMB-BAG-14",), "sum", i64([5, 2, 2, 0, 7, 1]), [0, 2], dtype="bfloat16"),
        _bag("bag.forward.sum.float16_long_bag", "Two float16 bags of 512 ids: float16 accumulation is too coarse there, float32 accumulation passes (EMB-HLF-3).", sum_ + ("EMB-BAG-14",), "sum", token_ids("bag.forward.sum.float16_long_bag", 16, (1024,)), [0, 512], vocab=16, dtype="float16"),
        _bag("bag.forward.sum.int32_ids", "int32 ids and int32 offsets work as int64 ones do.", sum_, "sum", token_ids("bag.forward.sum.int32_ids", 8, (6,), "int32"), [0, 4], offsets_dtype="int32"),
        _bag("bag.forward.mean.basic", "Mean: each bag's sum divided by its count.", mean, "mean", i64([1, 3, 5, 2, 7, 0]), [0, 2, 5]),
        _bag("bag.forward.mean.padding_empty", "Padding is not counted in a mean's count; an empty bag and a bag of only padding are zero rows, not NaN.", mean + ("EMB-BAG-6", "EMB-BAG-7"), "mean", i64([0, 6, 0, 0, 0, 2, 2]), [0, 3, 3, 5], padding_idx=0),
        _bag("bag.forward.mean.last_offset", "include_last_offset with a mean: the last offset is the end, not a bag.", mean + ("EMB-BAG-8",), "mean", i64([3, 1, 1, 6]), [0, 1, 4], include_last_offset=True),
        _bag("bag.forward.mean.two_d", "2-D ids in mode mean: each row a bag of 5.", mean, "mean", token_ids("bag.forward.mean.two_d", 8, (2, 5)), None),
        _bag("bag.forward.mean.weights", "A weighted mean divides by the sum of the weights (TensorFlow's mean combiner), not the count.", mean + ("EMB-BAG-9",), "mean", i64([1, 3, 5, 2, 7, 1]), [0, 2], weights=[0.5, 2.0, 1.25, 0.75, 3.0, 1.5]),
        _bag("bag.forward.mean.weights_negative", "A weighted mean with negative weights: divided by their signed sum.", mean + ("EMB-BAG-9",), "mean", i64([0, 4, 4, 6]), [0, 2], weights=[-0.5, 2.0, 1.5, -3.0]),
        _bag("bag.forward.mean.weights_sum_zero", "A weighted mean whose weights sum to zero is a zero row, never NaN or infinity.", mean + ("EMB-BAG-6", "EMB-BAG-9"), "mean", i64([2, 5, 1]), [0, 2], weights=[1.5, -1.5, 2.0]),
        _bag("bag.forward.mean.bfloat16", "A bfloat16 mean: the exact quotient rounded once.", mean + ("EMB-BAG-14",), "mean", i64([4, 1, 1, 0, 3, 6]), [0, 3], dtype="bfloat16"),
        _bag("bag.forward.max.basic", "Max: the column-wise maximum of each bag's rows, a copy of stored values.", mx, "max", i64([1, 3, 5, 2, 7, 0]), [0, 2, 5]),
        _bag("bag.forward.max.negative_values", "Every value negative: the maximum is negative, not 0.", mx, "max", i64([1, 3, 5, 2, 7]), [0, 3], weight=_negative_rows()),
        _bag("bag.forward.max.padding_empty", "Max over counted rows only: the padding row (here the largest) is left out; an empty bag and a bag of padding are zero rows.", mx + ("EMB-BAG-6", "EMB-BAG-7"), "max", i64([6, 2, 6, 6, 1]), [0, 2, 2, 4], padding_idx=6, weight=np.abs(table("bag.forward.max.padding_empty", 8, 4)) + np.float32(np.arange(8)[:, None] == 6) * np.float32(4)),
        _bag("bag.forward.max.ties", "Tied values in a column give that value.", mx, "max", i64([5, 2, 4, 1]), [0, 2], weight=_tied()),
        _bag("bag.forward.max.two_d", "2-D ids in mode max.", mx, "max", token_ids("bag.forward.max.two_d", 8, (3, 3)), None),
        _bag("bag.forward.max.float16", "A float16 max: a copy, bit for bit.", mx, "max", i64([5, 2, 2, 0, 7, 1]), [0, 3], dtype="float16"),
        _bag("bag.forward.sqrtn.basic", "sqrtn: each bag's sum divided by sqrt(count) (TensorFlow's combiner).", sq, "sqrtn", i64([1, 3, 5, 2, 7, 0]), [0, 2, 5]),
        _bag("bag.forward.sqrtn.weights", "Weighted sqrtn: divided by sqrt of the sum of squared weights.", sq + ("EMB-BAG-9",), "sqrtn", i64([1, 3, 5, 2, 7, 1]), [0, 3], weights=[0.5, 2.0, 1.25, 0.75, 3.0, 1.5]),
        _bag("bag.forward.sqrtn.weights_zero_negative", "Weighted sqrtn with a zero and negative weights: used as given, squared in the divisor.", sq + ("EMB-BAG-9",), "sqrtn", i64([0, 4, 4, 6, 2]), [0, 3], weights=[0.0, -1.0, 2.5, -0.5, 1.0]),
        _bag("bag.forward.sqrtn.padding_empty", "sqrtn counts only counted positions; an empty bag is a zero row.", sq + ("EMB-BAG-6", "EMB-BAG-7"), "sqrtn", i64([5, 5, 1, 3, 5]), [0, 3, 5], padding_idx=5, include_last_offset=True),
        _bag("bag.forward.sqrtn.float64", "A float64 sqrtn: the exact quotient rounded once to float64.", sq + ("EMB-BAG-14",), "sqrtn", i64([6, 1, 4, 4, 0]), [0, 3], dtype="float64"),
    ]


def backward_cases() -> list[CaseSpec]:
    bwd, mx, psw = ("EMB-BAG-10",), ("EMB-BAG-11",), ("EMB-BAG-10", "EMB-BAG-12")
    return [
        _bag("bag.backward.sum.basic", "Each counted occurrence adds its bag's upstream row; ids repeated across bags accumulate; untouched rows are exactly zero.", bwd + ("EMB-BAG-2",), "sum", i64([1, 3, 1, 1, 6, 3]), [0, 2, 4], backward=True),
        _bag("bag.backward.sum.padding", "The padding row's gradient is exactly zero; a bag of only padding passes nothing back.", bwd + ("EMB-BAG-7",), "sum", i64([2, 4, 2, 2, 2, 0]), [0, 2, 4], backward=True, padding_idx=2),
        _bag("bag.backward.sum.two_d", "2-D ids: each row's upstream gradient goes to every id of the row.", bwd, "sum", token_ids("bag.backward.sum.two_d", 6, (3, 4)), None, backward=True, vocab=6),
        _bag("bag.backward.sum.last_offset_empty", "include_last_offset with an empty bag: its upstream row goes nowhere.", bwd + ("EMB-BAG-6", "EMB-BAG-8"), "sum", i64([5, 0, 0, 7]), [0, 2, 2, 4], backward=True, include_last_offset=True),
        _bag("bag.backward.sum.weights", "Weighted sum: row id_i gets g[b] * w_i; the gradient of w_i is g[b] . W[id_i].", psw + ("EMB-BAG-9",), "sum", i64([1, 3, 5, 1, 7, 3]), [0, 2, 5], backward=True, weights=[0.5, 2.0, 1.25, 0.75, 3.0, 1.5]),
        _bag("bag.backward.sum.weights_zero_negative", "A zero weight sends a zero gradient to its row but its own gradient is g . W; negative weights flip their rows' gradients.", psw + ("EMB-BAG-9",), "sum", i64([0, 4, 4, 6, 2]), [0, 3], backward=True, weights=[0.0, -1.0, 2.5, -0.5, 1.0]),
        _bag("bag.backward.sum.weights_padding", "Weights at padding positions get a zero gradient and send none.", psw + ("EMB-BAG-7",), "sum", i64([1, 0, 3, 0, 2]), [0, 3], backward=True, weights=[1.5, 2.0, 0.5, 1.25, 0.75], padding_idx=0),
        _bag("bag.backward.sum.long_bag", "A bag of 4096 ids over 64 rows: each row's gradient is g times its count, rounded once.", bwd + ("EMB-BAG-14",), "sum", token_ids("bag.backward.sum.long_bag", 64, (4096,)), [0, 2048], backward=True, vocab=64),
        _bag("bag.backward.sum.bfloat16", "A bfloat16 backward: each element the exact sum rounded once.", bwd + ("EMB-BAG-14",), "sum", i64([5, 2, 2, 0, 7, 2]), [0, 3], backward=True, dtype="bfloat16"),
        _bag("bag.backward.mean.basic", "Mean: each occurrence gets g[b] / count.", bwd + ("EMB-BAG-3",), "mean", i64([1, 3, 1, 1, 6, 3]), [0, 3, 4], backward=True),
        _bag("bag.backward.mean.padding_empty", "Mean with padding: divided by the counted size; the padding row and the rows of an empty bag get nothing.", bwd + ("EMB-BAG-6", "EMB-BAG-7"), "mean", i64([0, 6, 0, 2, 0, 0]), [0, 3, 3, 4], backward=True, padding_idx=0),
        _bag("bag.backward.mean.weights", "Weighted mean: row id_i gets g[b] w_i / Σw; the gradient of w_i is g . (W[id_i] - out[b]) / Σw.", psw + ("EMB-BAG-3", "EMB-BAG-9"), "mean", i64([1, 3, 5, 2, 7, 1]), [0, 2], backward=True, weights=[0.5, 2.0, 1.25, 0.75, 3.0, 1.5]),
        _bag("bag.backward.mean.float16", "A float16 mean backward.", bwd + ("EMB-BAG-14",), "mean", i64([4, 1, 1, 0, 3, 6]), [0, 3], backward=True, dtype="float16"),
        _bag("bag.backward.max.basic", "Max: element j of g[b] goes to the row holding the bag's max in column j; other rows get nothing.", mx + ("EMB-BAG-4",), "max", i64([1, 3, 5, 2, 7, 0]), [0, 2, 5], backward=True),
        _bag("bag.backward.max.ties_first_position", "Ties: element j goes to the first counted position holding the max, here the higher row id (bag [5, 2]), not every tied row.", mx, "max", i64([5, 2, 4, 1]), [0, 2], backward=True, weight=_tied()),
        _bag("bag.backward.max.ties_other_order", "The same ties in the other order (bag [2, 5]): the lower row id is first.", mx, "max", i64([2, 5, 1, 4]), [0, 2], backward=True, weight=_tied()),
        _bag("bag.backward.max.ties_padding", "The first position holding the max is padding: it is not counted, so the next tied row gets the gradient.", mx + ("EMB-BAG-7",), "max", i64([5, 2, 1]), [0], backward=True, weight=_tied(), padding_idx=5),
        _bag("bag.backward.max.repeated", "A row that is the max of several bags (and repeated within one) accumulates their gradients once per bag.", mx + ("EMB-BAG-10",), "max", i64([3, 3, 1, 3, 6, 3]), [0, 3, 5], backward=True, weight=np.abs(table("bag.backward.max.repeated", 8, 4)) + np.float32(np.arange(8)[:, None] == 3) * np.float32(4)),
        _bag("bag.backward.max.empty_negative", "Negative values and an empty bag: the empty bag routes nothing.", mx + ("EMB-BAG-6",), "max", i64([1, 3, 5, 2]), [0, 2, 2], backward=True, weight=_negative_rows()),
        _bag("bag.backward.sqrtn.basic", "sqrtn: each occurrence gets g[b] / sqrt(count).", bwd + ("EMB-BAG-5",), "sqrtn", i64([1, 3, 1, 1, 6, 3]), [0, 3, 4], backward=True),
        _bag("bag.backward.sqrtn.weights", "Weighted sqrtn: row id_i gets g w_i / s; the gradient of w_i is g . W[id_i] / s - w_i (g . S) / s^3.", psw + ("EMB-BAG-5", "EMB-BAG-9"), "sqrtn", i64([1, 3, 5, 2, 7, 1]), [0, 3], backward=True, weights=[0.5, 2.0, 1.25, 0.75, 3.0, 1.5]),
        _bag("bag.backward.sqrtn.two_d", "2-D ids in mode sqrtn.", bwd + ("EMB-BAG-5",), "sqrtn", token_ids("bag.backward.sqrtn.two_d", 6, (2, 3)), None, backward=True, vocab=6),
    ]


def error_cases() -> list[CaseSpec]:
    err = ("EMB-BAG-13", "EMB-ERR-1")
    return [
        _bag("bag.error.id_too_large", "An id equal to V is index_out_of_range.", err, "sum", i64([1, 8, 2]), [0, 1], error="index_out_of_range"),
        _bag("bag.error.id_negative", "A negative id is index_out_of_range (TensorFlow's safe lookup drops it: a declared convention).", err, "mean", i64([1, -1, 2]), [0, 2], error="index_out_of_range"),
        _bag("bag.error.backward_id_too_large", "The backward checks ids too.", err, "sum", i64([3, 9]), [0], backward=True, error="index_out_of_range"),
        _bag("bag.error.offsets_not_from_zero", "Offsets must start at 0 (ids before the first offset belong to no bag).", err, "sum", i64([1, 2, 3]), [1, 2], error="invalid_offsets"),
        _bag("bag.error.offsets_decreasing", "Offsets must not decrease.", err, "sum", i64([1, 2, 3, 4]), [0, 3, 2], error="invalid_offsets"),
        _bag("bag.error.offsets_past_end", "An offset past the number of ids is invalid_offsets.", err, "mean", i64([1, 2, 3]), [0, 2, 4], error="invalid_offsets"),
        _bag("bag.error.last_offset_not_n", "With include_last_offset the last offset must be N.", err + ("EMB-BAG-8",), "sum", i64([1, 2, 3, 4]), [0, 2, 3], error="invalid_offsets", include_last_offset=True),
        _bag("bag.error.backward_offsets_decreasing", "The backward checks offsets too.", err, "max", i64([1, 2, 3]), [0, 2, 1], backward=True, error="invalid_offsets"),
        _bag("bag.error.unknown_mode", "A mode other than sum, mean, max and sqrtn is invalid_config.", err, "median", i64([1, 2]), [0], error="invalid_config"),
        _bag("bag.error.weights_with_max", "Per-sample weights with mode max are invalid_config.", err + ("EMB-BAG-4", "EMB-BAG-9"), "max", i64([1, 2]), [0], weights=[1.0, 2.0], error="invalid_config"),
        _bag("bag.error.padding_out_of_range", "padding_idx V lies outside [-V, V): invalid_config.", err + ("EMB-BAG-7",), "sum", i64([1, 2]), [0], padding_idx=8, error="invalid_config"),
        _bag("bag.error.weights_shape", "Per-sample weights of another shape than the ids are shape_mismatch.", err + ("EMB-BAG-9",), "sum", i64([1, 2, 3]), [0], weights=[[1.0, 2.0]], error="shape_mismatch"),
        _bag("bag.error.offsets_with_2d_ids", "2-D ids are fixed-length bags: offsets given with them are shape_mismatch.", err, "sum", token_ids("bag.error.offsets_with_2d_ids", 8, (2, 3)), [0, 3], error="shape_mismatch"),
        _bag("bag.error.1d_ids_without_offsets", "1-D ids without offsets are shape_mismatch.", err, "sum", i64([1, 2, 3]), None, error="shape_mismatch"),
        _bag("bag.error.last_offset_not_boolean", "include_last_offset 1 (an integer, not a boolean) is invalid_config.", err + ("EMB-BAG-8",), "sum", i64([1, 2]), [0, 2], include_last_offset=1, error="invalid_config"),
        _bag("bag.error.order_shape_before_range", "An input with two errors raises the first of the order: a wrong grad_output shape before an id out of range.", err + ("EMB-BAG-10",), "sum", i64([1, 9, 3]), [0, 1], backward=True, grad_rows=1, error="shape_mismatch"),
        _bag("bag.error.order_offsets_before_range", "Offsets that decrease are invalid_offsets before an id out of range.", err, "sum", i64([1, 9, 3]), [0, 2, 1], error="invalid_offsets"),
        _bag("bag.error.grad_output_shape", "grad_output must be (B, D): one row per bag.", err + ("EMB-BAG-10",), "mean", i64([1, 2, 3]), [0, 1], backward=True, grad_rows=3, error="shape_mismatch"),
    ]


def memory_cases() -> list[CaseSpec]:
    def shard(case_id: str, description: str, vocab: int, dim: int, dtype: str, shards: int, sharding: str, error: Optional[str] = None) -> CaseSpec:
        inputs = {"vocab_size": vocab, "embed_dim": dim, "dtype": dtype, "shards": shards, "sharding": sharding}
        return CaseSpec(case_id, description, ("EMB-BAG-15",) + (("EMB-BAG-13",) if error else ()), "sharded_table_bytes", inputs, ("bag-sharding",), error=error)

    return [
        shard("bag.memory.row_wise_even", "1000 x 64 float32 rows over 4 shards: 250 rows each, 64000 bytes.", 1000, 64, "float32", 4, "row_wise"),
        shard("bag.memory.row_wise_uneven", "10 rows over 4 shards: blocks of ceil(10/4) = 3 rows, the last shard holds 1.", 10, 8, "float32", 4, "row_wise"),
        shard("bag.memory.row_wise_more_shards_than_rows", "3 rows over 5 shards: one row each, two shards empty (0 bytes).", 3, 16, "float16", 5, "row_wise"),
        shard("bag.memory.row_wise_empty_tail", "9 rows over 4 shards: blocks of 3 fill three shards and leave the fourth empty.", 9, 4, "float64", 4, "row_wise"),
        shard("bag.memory.row_wise_criteo", "A 40-million-row, 128-wide float32 table (a DLRM feature) over 8 shards: 2.56 GB each.", 40_000_000, 128, "float32", 8, "row_wise"),
        shard("bag.memory.column_wise_uneven", "Column-wise: 10 columns over 4 shards are blocks of 3, 3, 3 and 1 columns of every row.", 1000, 10, "bfloat16", 4, "column_wise"),
        shard("bag.memory.column_wise_more_shards_than_columns", "Column-wise: 2 columns over 3 shards, the third empty.", 50, 2, "float32", 3, "column_wise"),
        case_at("sharded_table_bytes", {"sharding": "unknown"}, "bag.memory.unknown_sharding", "A sharding other than row_wise and column_wise is invalid_config.", ("EMB-BAG-15", "EMB-BAG-13"), ("bag-sharding",), vocab_size=100, shards=2),
    ]


def convention_cases() -> list[CaseSpec]:
    drop, prune = "drop_negative_ids", "prune_nonpositive_weights"
    return [
        _bag("bag.convention.drop_negative_ids.forward_sum", "Declared drop_negative_ids: id -1 is dropped from its bag, not refused.", ("EMB-BAG-2",), "sum", i64([1, -1, 2, -3]), [0, 2, 3], convention=drop),
        _bag("bag.convention.drop_negative_ids.forward_mean", "Declared drop_negative_ids: a dropped id is not counted in the mean; a bag of only dropped ids is a zero row.", ("EMB-BAG-3", "EMB-BAG-6"), "mean", i64([-1, 4, 4, -2, -2, 6]), [0, 3, 5], convention=drop),
        _bag("bag.convention.drop_negative_ids.backward_sum", "Declared drop_negative_ids: a dropped id sends no gradient anywhere.", ("EMB-BAG-10",), "sum", i64([1, -1, 2, -1, 1]), [0, 3], backward=True, convention=drop),
        _bag("bag.convention.drop_negative_ids.too_large_refused", "Declared drop_negative_ids: an id >= V is still index_out_of_range.", ("EMB-BAG-13",), "sum", i64([1, 8, 2]), [0, 1], convention=drop, error="index_out_of_range"),
        _bag("bag.convention.prune_nonpositive_weights.forward_sum", "Declared prune_nonpositive_weights: positions of weight 0 or negative are dropped.", ("EMB-BAG-9",), "sum", i64([0, 4, 4, 6, 2]), [0, 3], weights=[0.0, -1.0, 2.5, -0.5, 1.0], convention=prune),
        _bag("bag.convention.prune_nonpositive_weights.forward_mean", "Declared prune_nonpositive_weights: the weighted mean of the positive weights alone; a bag of only pruned positions is a zero row.", ("EMB-BAG-3", "EMB-BAG-9"), "mean", i64([0, 4, 4, 6]), [0, 2], weights=[-0.5, 2.0, -1.5, -3.0], convention=prune),
        _bag("bag.convention.prune_nonpositive_weights.backward_sqrtn", "Declared prune_nonpositive_weights: a pruned position gets a zero gradient and sends none.", ("EMB-BAG-5", "EMB-BAG-12"), "sqrtn", i64([1, 3, 5, 2, 7, 1]), [0, 3], backward=True, weights=[0.5, 2.0, -1.25, 0.75, 0.0, 1.5], convention=prune),
    ]


def cases() -> list[CaseSpec]:
    return forward_cases() + backward_cases() + error_cases() + memory_cases() + convention_cases() + mutant_cases()



# --- Cases added with the catalogue's bag mutants (w-36b, conformance/mutants/bags.py): each is a case a mutant
# was not yet killed by on an operation or mode it changes. Kept apart so the core cases above stay as written. ---
def mutant_cases() -> list[CaseSpec]:
    sq = ("EMB-BAG-1", "EMB-BAG-5", "EMB-BAG-6", "EMB-BAG-7")
    return [
        _bag("bag.forward.sqrtn.empty_bags", "sqrtn: an empty bag and a bag of only padding are zero rows, not NaN (0/0); the third bag is divided by sqrt(3).", sq, "sqrtn", i64([0, 0, 2, 6, 3]), [0, 0, 2], padding_idx=0),
        _bag("bag.error.backward_id_negative", "Backward: a negative id is index_out_of_range as in the forward, not row V-1.", ("EMB-BAG-13",), "sum", i64([2, -1, 4]), [0, 1], backward=True, error="index_out_of_range"),
    ]
