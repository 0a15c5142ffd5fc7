"""Mistakes of bag lookups found in the trackers and pull requests of the projects that ship them (area bags), each
citing its report: the bags never reduced, the offsets read as boundaries (the last bag lost), empty bags refused
(an exported graph), the last bag's row returned alone, sums accumulated in a half dtype, repeated ids whose gradients overwrite each other, the
weights' gradient missing or given to padding positions. Each is a :class:`~embconf.mutants.bag_reduce.BagSlip`
registered with :func:`embconf.mutants.bags.slip` (a forward slip and its gradient are one mistake).
"""

from __future__ import annotations

from embconf.mutants.bag_reduce import BWD, FWD, BagSlip
from embconf.mutants.bags import slip

REPORTED = [
    slip(
        "not_reduced",
        "returns the ids' rows unreduced, shape ids.shape + (D,), as an embedding lookup does: the bags are never "
        "summed, averaged or maxed",
        "reduce each bag's rows to one (B, D) row per bag in the mode asked for (EMB-BAG-1 to 5)",
        BagSlip(unreduced=True),
        "https://github.com/keras-team/keras-rs/pull/98 (EmbedReduce inherited Embedding's behaviour and did not "
        "apply the reduction)",
        only=FWD,
    ).id,
    slip(
        "last_bag_dropped",
        "reads the B offsets as B+1 bag boundaries: bag b ends at offsets[b+1] and the last bag, offsets[B-1] to N, "
        "gets no row (B-1 rows)",
        "without include_last_offset, offsets holds B starts and the last bag runs to N (EMB-BAG-1, 8)",
        BagSlip(boundaries_only=True),
        "https://github.com/pytorch/pytorch/pull/168159 (EmbeddingBag built offsets that were read as boundaries: "
        "one fewer bag than expected; issue #167974)",
        only=FWD,
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
        "overwrites a row's gradient with each occurrence's (indexed assignment, grad[ids] = g) instead of "
        "accumulating: a row a repeated id selects keeps only its last occurrence's gradient",
        "grad_weight[id_i] += g[b] * w_i / divisor_b for every occurrence, in every bag (EMB-BAG-10, EMB-BWD-2)",
        BagSlip(repeats_overwritten=True),
        "https://github.com/pytorch/pytorch/issues/1528 (indexing with repeated indices kept only the last copy's "
        "gradient); tenstorrent/tt-metal #6232 (embedding backward wrong unless the indices are unique)",
        only=BWD,
        mistake="bwd.overwrite",  # the lookup backward's indexed assignment, in a bag: one mistake
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
