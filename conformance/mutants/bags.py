"""Mistakes of bag lookups (area bags, SPEC section 16), each a wrong embedding_bag_forward/backward.

A mistake is a :class:`BagSlip` (what it changes: the positions a bag reads, what a mean divides by, where a max
sends its gradient, ...). Its operations check their inputs by calling the reference (its errors are the
spec's), then reduce every bag in float64 as the slip says and round each output once to the table's dtype.
A slip of the forward is two mutants of one mistake: ``bag.NAME`` (the forward) and ``bag.backward.NAME`` (the
gradient of that forward, as an autograd framework computes it); a slip of the backward leaves the forward the
spec's. The arithmetic is :mod:`embconf.mutants.bag_reduce`.
Each mutant cites where the mistake was found: PyTorch's EmbeddingBag and TensorFlow's
embedding_lookup_sparse trackers, kernels ported to other hardware (FlagGems, DeepRec), TorchRec users.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any, Callable, Optional

import numpy as np

from embconf.adapters.bags import BagCall, BagOperations
from embconf.mutants.bag_reduce import BWD, FWD, BagSlip, bag_backward, bag_forward
from embconf.mutants.base import Mutant, register
from embconf.reference import OPERATIONS
from embconf.reference.errors import EmbeddingError
from embconf.reference.memory import element_size


def _checked(made: BagSlip, weight: np.ndarray, ids: Any, offsets: Any, include_last_offset: Any) -> tuple[Any, ...]:
    """(ids, offsets, include_last_offset) as the reference checks them for this slip: a slip that reads ids or
    offsets otherwise checks them as it reads them (negative ids wrapped first; the last offset not told apart)."""
    if made.wrap_negative and isinstance(ids, np.ndarray) and ids.dtype.kind in "iu":
        ids = np.where(ids < 0, ids + weight.shape[0], ids)
    return ids, offsets, (False if made.last_offset_a_bag else include_last_offset)


def _refuse_empty(made: BagSlip, call: BagCall) -> None:
    """After the spec's checks: a slip that refuses equal offsets (an empty bag) raises invalid_offsets."""
    points = np.asarray(call.offsets) if call.offsets is not None and np.ndim(call.ids) == 1 else np.zeros(0)
    ends = points if call.include_last_offset is True else np.append(points, np.size(call.ids))
    if made.empty_refused and points.size and np.any(np.diff(ends) == 0):
        raise EmbeddingError("invalid_offsets", "offsets must increase strictly: an empty bag is refused")


class Slipped(BagOperations):
    """The bag operations with one slip: the reference checks the inputs as the slip reads them, then the slip's
    arithmetic computes (mutants/bag_reduce.py)."""

    def __init__(self, made: BagSlip) -> None:
        self.made = made

    def forward(self, call: BagCall) -> np.ndarray:
        ids, offsets, last = _checked(self.made, call.weight, call.ids, call.offsets, call.include_last_offset)
        OPERATIONS[FWD](call.weight, ids, offsets, call.mode, call.per_sample_weights, call.padding_idx, last)
        _refuse_empty(self.made, call)
        return bag_forward(self.made, replace(call, include_last_offset=last))

    def backward(self, call: BagCall, grad_output: np.ndarray) -> tuple[np.ndarray, Optional[np.ndarray]]:
        ids, offsets, last = _checked(self.made, call.weight, call.ids, call.offsets, call.include_last_offset)
        checks = (call.weight, ids, offsets, call.mode, grad_output, call.per_sample_weights, call.padding_idx)
        OPERATIONS[BWD](*checks, last)
        _refuse_empty(self.made, call)
        return bag_backward(self.made, replace(call, include_last_offset=last), grad_output)


def slip(
    name: str, description: str, hint: str, made: BagSlip, source: str, only: str = "", mistake: str = ""
) -> Mutant:
    """Register ``bag.NAME``, the slip's forward, and ``bag.backward.NAME``, the gradient of that forward, as one
    mistake (code whose forward has the slip may compute its backward otherwise: each form is ruled out on its
    own); or the one operation ``only`` names (a slip of the backward; or of the forward whose output no backward
    of the spec's shape can follow). ``mistake``: the lookup mistake this one is the bag form of (one identity)."""
    slipped = Slipped(made)
    ops: dict[str, Any] = {FWD: slipped.embedding_bag_forward, BWD: slipped.embedding_bag_backward}
    op = only or FWD
    primary = register(Mutant(f"bag.{name}", description, hint, {op: ops[op]}, source=source, mistake=mistake))
    if not only:
        register(replace(primary, id=f"bag.backward.{name}", overrides={BWD: ops[BWD]}, mistake=primary.id))
    return primary


PADDING = "leave positions whose id is padding_idx out of the sum, the count and the weight sum (EMB-BAG-7)"
OFFSETS = "bag b holds ids[offsets[b] : offsets[b+1]], the last bag running to N (EMB-BAG-1)"
MEAN = "mean divides the weighted sum by the sum of the counted weights, or the count without weights (EMB-BAG-3)"
SQRTN = "sqrtn divides by sqrt of the sum of the counted squared weights, sqrt(count) without weights (EMB-BAG-5)"
MAX_GRAD = "send column j of a bag's gradient to the FIRST counted position holding the bag's max in j (EMB-BAG-11)"

slip(
    "mean_counts_padding",
    "divides a mean by the padded length (sqrtn by its root): padding positions are left out of the sum but "
    "counted in the divisor",
    PADDING,
    BagSlip(padding_counted=True),
    "https://github.com/pytorch/pytorch/issues/3194 (padding counted in EmbeddingBag's reduction; #47858: the "
    "average skewed by padding)",
)
slip(
    "offsets_start_plus_one",
    "reads bag b from offsets[b] + 1: the first id of every non-empty bag is dropped",
    OFFSETS,
    BagSlip(start_shift=1),
    "https://github.com/pytorch/pytorch/issues/76885 (CUDA EmbeddingBag read a bag's ids from the wrong offset)",
)
slip(
    "offsets_end_plus_one",
    "reads bag b to offsets[b+1] + 1: every bag but the last also takes the id at offsets[b+1], a later bag's",
    OFFSETS,
    BagSlip(end_shift=1),
    "https://github.com/pytorch/pytorch/pull/77095 (the end of a bag computed from the wrong offset location)",
)
slip(
    "last_offset_is_a_bag",
    "ignores include_last_offset: the (B+1)-th offset starts one more, empty bag, so the output has B+1 rows",
    "with include_last_offset, offsets has B+1 entries and the last one is the end (N) of bag B-1 (EMB-BAG-8)",
    BagSlip(last_offset_a_bag=True),
    "https://github.com/pytorch/pytorch/pull/178546 (CUDA EmbeddingBag did not respect include_last_offset)",
    only=FWD,
)
slip(
    "two_d_read_as_one_bag",
    "reads 2-D ids (B, N) as one bag of B*N ids instead of B bags, one per row",
    "with 2-D ids and no offsets, each row is one bag: the output has one row per row of ids (EMB-BAG-1)",
    BagSlip(one_bag_2d=True),
    "https://github.com/pytorch/pytorch/issues/2169 (EmbeddingBag mishandled 2-D input: its offsets were not "
    "one bag per row)",
    only=FWD,
)
slip(
    "negative_ids_wrapped",
    "wraps a negative id to the end of the table (Python indexing: -1 reads row V-1) instead of refusing it",
    "raise index_out_of_range for an id < 0 or >= V, before indexing (EMB-BAG-13)",
    BagSlip(wrap_negative=True),
    "https://github.com/pytorch/pytorch/issues/183608 (Inductor's embedding lowering wrapped negative row "
    "indices; fixed by #183636)",
)
slip(
    "weighted_mean_divides_by_count",
    "divides a weighted mean by the number of ids instead of the sum of their weights",
    MEAN,
    BagSlip(divisors=(("mean", "count"),)),
    "https://github.com/opensearch-project/neural-search/pull/235 (a weighted mean kept count++ as its divisor; "
    "review: count += weight)",
)
slip(
    "per_sample_weights_ignored",
    "ignores per_sample_weights: every id counts with weight 1 (and the weights' gradient is zero)",
    "multiply each row by its per_sample_weights entry before reducing (EMB-BAG-9)",
    BagSlip(weights_ignored=True),
    "https://github.com/alibaba/TorchEasyRec/pull/648 (an EmbeddingBagCollection built with is_weighted=False "
    "dropped the weights at export)",
)
slip(
    "weighted_sqrtn_divides_by_sqrt_count",
    "divides a weighted sqrtn by sqrt(number of ids) instead of sqrt(sum of squared weights)",
    SQRTN,
    BagSlip(divisors=(("sqrtn", "sqrt_count"),)),
    "https://github.com/DeepRec-AI/DeepRec/blob/main/tensorflow/core/kernels/fused_embedding/"
    "fused_embedding_common.cu.h (Combine<Sqrtn> divides by sqrtf(feature_num) whatever the weights)",
)
slip(
    "sqrtn_divides_by_count",
    "divides sqrtn by the count, as a mean does, instead of its square root (with weights: by their sum, not "
    "the root of their squares' sum)",
    SQRTN,
    BagSlip(divisors=(("sqrtn", "weights"),)),
    "https://github.com/DeepRec-AI/DeepRec/blob/main/tensorflow/core/kernels/fused_embedding/"
    "fused_embedding_common.cu.h (the Mean and Sqrtn combiners differ by one divisor, written side by side)",
)
slip(
    "mean_divides_by_sqrt",
    "divides a mean by sqrtn's divisor: the square root of the count instead of the count (with weights: the "
    "root of their squares' sum, not their sum)",
    MEAN,
    BagSlip(divisors=(("mean", "squares"),)),
    "https://github.com/tensorflow/tensorflow/issues/36359 (embedding_lookup_sparse's mean and sqrtn combiners: "
    "one divisor apart)",
)
slip(
    "empty_bag_nan",
    "divides by a bag's divisor unguarded: in mean and sqrtn an empty bag (or one of only padding) is NaN (0/0), "
    "a bag whose weights sum to zero infinite or NaN",
    "a bag with nothing counted, or a zero divisor, is a zero row in every mode, never NaN (EMB-BAG-6)",
    BagSlip(empty="nan"),
    "https://github.com/pytorch/pytorch/issues/11739 (empty bags NaN on CUDA; #21400, TensorFlow #36359)",
    only=FWD,
)
slip(
    "trailing_empty_bags_dropped",
    "gives no row for the empty bags after the last bag holding an id: the output has fewer rows than bags",
    "one output row per bag, empty bags included: B rows for B offsets, or B+1 offsets with include_last_offset "
    "(EMB-BAG-1, 6)",
    BagSlip(trailing_empty_dropped=True),
    "https://github.com/tensorflow/tensorflow/issues/38792 (embedding_lookup_sparse: the last, empty row disappeared "
    "from the output)",
    only=FWD,
)
slip(
    "empty_max_minus_inf",
    "gives -inf for an empty bag (or one of only padding) in max: the max of nothing",
    "an empty bag, or one whose ids are all padding, is a zero row in every mode (EMB-BAG-6)",
    BagSlip(empty="-inf"),
    "https://github.com/pytorch/pytorch/issues/4169 (EmbeddingBag returned -inf for an empty bag)",
    only=FWD,
)
slip(
    "mean_backward_undivided",
    "does not divide the gradient of a mean (or sqrtn) by the bag's divisor: every counted row gets g[b] * w_i whole",
    "grad_weight[id_i] += g[b] * w_i / divisor_b, the divisor the forward divided by (EMB-BAG-10)",
    BagSlip(backward_undivided=True),
    "https://github.com/flagos-ai/FlagGems/pull/3900 (review: the kernel called used scale 1 for mean)",
    only=BWD,
)
slip(
    "padding_gets_gradient",
    "gives padding positions a gradient: the padding row receives g[b] * w_i / divisor_b like a counted id",
    "padding positions take no part in the bag: the padding row's gradient is exactly zero (EMB-BAG-7, 10)",
    BagSlip(padding_gradient=True),
    "https://github.com/pytorch/pytorch/issues/26302 (the gradient at padding_idx not zero on GPU)",
    only=BWD,
)
slip(
    "max_gradient_to_every_tie",
    "sends a max's gradient to every counted position holding the maximum (a mask W == max), not to one",
    MAX_GRAD,
    BagSlip(max_gradient="all"),
    "https://github.com/Theano/Theano/issues/5404 (max gradient back-propagated to every point equal to the max)",
    only=BWD,
)
slip(
    "max_gradient_to_last_tie",
    "sends a max's gradient to the LAST counted position holding the maximum (a >= scan), not the first",
    MAX_GRAD,
    BagSlip(max_gradient="last"),
    "https://github.com/xtensor-stack/xtensor/issues/2404 (which tied index an arg-max keeps is not defined)",
    only=BWD,
)
slip(
    "max_backward_as_mean",
    "gives max the mean's gradient: g[b] / count to every counted position, not g to the arg-max",
    MAX_GRAD,
    BagSlip(max_gradient="mean"),
    "https://github.com/flagos-ai/FlagGems/issues/5220 (mode max fell into the mean arm of the dense backward)",
    only=BWD,
)
slip(
    "weight_gradient_as_sum",
    "gives per_sample_weights the sum's gradient g[b] . W[id_i] in every mode: a mean's or sqrtn's divisor, "
    "which depends on the weights too, is left out",
    "d out / d w_i: mean g.(W[id_i] - out[b]) / sum(w); sqrtn g.W[id_i]/s - w_i (g.S)/s^3 (EMB-BAG-12)",
    BagSlip(weight_gradient_as_sum=True),
    "https://github.com/flagos-ai/FlagGems/pull/3683 (review: the per_sample_weights gradient said to be the "
    "same regardless of mode)",
    only=BWD,
)


SHARDS = "sharded_table_bytes"
BLOCKS = "block = ceil(size / shards); shard k holds clamp(size - k*block, 0, block) rows or columns (EMB-BAG-15)"


def _split(vocab_size: int, embed_dim: int, dtype: str, shards: int, sharding: str, sizes: Any) -> np.ndarray:
    """Each shard's bytes when the sharded dimension is split by ``sizes(size, shards)`` (after the spec's checks)."""
    OPERATIONS[SHARDS](vocab_size, embed_dim, dtype, shards, sharding)
    split, other = (vocab_size, embed_dim) if sharding == "row_wise" else (embed_dim, vocab_size)
    return np.array([count * other * element_size(dtype) for count in sizes(split, shards)], dtype=np.int64)


def _sharded(sizes: Callable[[int, int], list[int]]) -> Callable[..., np.ndarray]:
    def sharded_table_bytes(vocab_size: int, embed_dim: int, dtype: str, shards: int, sharding: str) -> np.ndarray:
        return _split(vocab_size, embed_dim, dtype, shards, sharding, sizes)

    return sharded_table_bytes


def _last_takes_the_rest(total: int, shards: int) -> list[int]:
    block = -(-total // shards)
    return [block] * (shards - 1) + [total - (shards - 1) * block]


def _balanced(total: int, shards: int) -> list[int]:
    return [total // shards + (1 if k < total % shards else 0) for k in range(shards)]


register(
    Mutant(
        "bag.shards_last_takes_the_rest",
        "gives every shard but the last a full block and the last one what remains, which is negative when "
        "fewer rows than shards times blocks remain (2 rows on 4 shards: 1, 1, 1, -1)",
        BLOCKS,
        {SHARDS: _sharded(_last_takes_the_rest)},
        source="https://github.com/tinygrad/tinygrad/pull/5131 (not every first shard has the block's size: "
        "size 2 on 4 shards is 1, 1, 0, 0)",
    )
)
register(
    Mutant(
        "bag.shards_balanced",
        "balances the shards (sizes differ by at most one, the remainder on the first shards: 10 rows on 4 "
        "shards are 3, 3, 2, 2) instead of ceil-sized blocks (3, 3, 3, 1)",
        BLOCKS,
        {SHARDS: _sharded(_balanced)},
        source="https://github.com/meta-pytorch/torchrec/pull/3452 (ZCH buckets spread over hosts as 3, 3, 2, 2)",
    )
)
