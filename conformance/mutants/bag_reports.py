"""Mistakes of bag lookups found in the trackers and pull requests of the projects that ship them (area bags), each
citing its report: ids past the table read as zero rows (a GPU gather), offsets read unchecked, empty bags refused
(an exported graph), the last bag's row returned alone, sums accumulated in a half dtype, repeated ids whose gradients overwrite each other, the
weights' gradient missing or given to padding positions. Each is a :class:`~embconf.mutants.bag_reduce.BagSlip`
registered with :func:`embconf.mutants.bags.slip` (a forward slip and its gradient are one mistake).
"""

from __future__ import annotations

from embconf.mutants.bag_reduce import BWD, FWD, BagSlip
from embconf.mutants.bags import slip

REPORTED = [
    slip(
        "out_of_range_ids_zero",
        "reads an id >= V as a zero row instead of refusing it: the bag keeps the position, counted in a mean's "
        "divisor (a negative id is refused)",
        "raise index_out_of_range for an id >= V (and < 0), before indexing (EMB-BAG-13)",
        BagSlip(out_of_range_zero=True),
        "https://github.com/tensorflow/tensorflow/issues/13642 (embedding_lookup on GPU returns zeros for ids out "
        "of range: out-of-bound indices give safe but unspecified results)",
    ).id,
    slip(
        "offsets_unchecked",
        "does not check the offsets: a bag whose end is below its start is empty, ids before offsets[0] or past "
        "the last offset are ignored, offsets past N are clipped",
        "raise invalid_offsets for offsets that do not start at 0, decrease, exceed N, or (with "
        "include_last_offset) do not end at N (EMB-BAG-13)",
        BagSlip(offsets_unchecked=True),
        "https://github.com/pytorch/pytorch/issues/55549 (embedding_bag gives unexpected results for offsets that "
        "are not monotonically increasing; #52851: the last offset not checked)",
    ).id,
    slip(
        "empty_bags_refused",
        "refuses equal offsets (an empty bag) as invalid offsets: the offsets must increase strictly",
        "equal offsets are an empty bag, a zero row (EMB-BAG-1, 6)",
        BagSlip(empty_refused=True),
        "https://github.com/pytorch/pytorch/issues/58567 (an ONNX-exported EmbeddingBag fails for offsets that are "
        "not strictly increasing)",
    ).id,
    slip(
        "last_bag_only",
        "returns only the last bag's row, shape (D,), instead of one row per bag: the reduction loop's last value",
        "write each bag's row into a (B, D) output (EMB-BAG-1)",
        BagSlip(last_bag_only=True),
        "https://github.com/google/torchax/issues/44 (_aten__embedding_bag returned the last bag, not all of "
        "them; fixed by #45, storing each bag in the output array)",
        only=FWD,
    ).id,
    slip(
        "sums_in_table_dtype",
        "accumulates each bag's sum in the table's dtype, rounding after every addition (a float16 or bfloat16 "
        "running sum), instead of rounding the exact sum once",
        "accumulate in float32 or wider and round each output element once to the table's dtype (EMB-BAG-14)",
        BagSlip(accumulate_in_dtype=True),
        "https://github.com/meta-pytorch/torchrec/pull/3730 (Triton TBE added FP16 rows in FP16 before the FP32 "
        "accumulator); pytorch/pytorch #74844 (FP32 accumulation for FP16 EmbeddingBag)",
        only=FWD,  # its gradient's roundings stay within the goldens' half-precision backward tolerance
    ).id,
    slip(
        "repeated_ids_overwritten",
        "assigns each occurrence's gradient to its row instead of adding it: a row an id selects several times "
        "keeps only the last occurrence's gradient",
        "grad_weight[id_i] += g[b] * w_i / divisor_b for every occurrence, in every bag (EMB-BAG-10, EMB-BWD-2)",
        BagSlip(repeats_overwritten=True),
        "https://github.com/pytorch/pytorch/issues/1528 (indexing with repeated indices kept only the last copy's "
        "gradient); tenstorrent/tt-metal #6232 (embedding backward wrong unless the indices are unique)",
        only=BWD,
    ).id,
    slip(
        "weight_gradient_missing",
        "returns no gradient for per_sample_weights (None) although the forward used them",
        "return d out / d w_i for every position (EMB-BAG-12): g[b] . W[id_i] in mode sum",
        BagSlip(weight_gradient_missing=True),
        "https://github.com/meta-pytorch/torchrec/pull/4602 (TritonTBE.backward returned None for "
        "per_sample_weights: their .grad stayed None)",
        only=BWD,
    ).id,
    slip(
        "padding_weight_gradient",
        "gives padding positions a weight gradient g[b] . W[padding_idx] (divided as a counted one), where a "
        "position not counted has 0",
        "zero grad_per_sample_weights at positions holding padding_idx (EMB-BAG-12)",
        BagSlip(padding_weight_gradient=True),
        "https://github.com/flagos-ai/FlagGems/pull/3683 (review: _embedding_bag_per_sample_weights_backward "
        "ignored padding_idx; the positions holding it were then zeroed)",
        only=BWD,
    ).id,
]
