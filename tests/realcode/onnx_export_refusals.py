"""An EmbeddingBag as the legacy ONNX exporter lowered it: a loop over the bags that fails on an empty one, and the
options the exporter did not support refused.

Inspired by: pytorch/pytorch #58567 ("ONNX exported EmbeddingBag fails for not strictly increasing offset": the
exported loop over bags raises in onnxruntime when two offsets are equal, an empty bag); pytorch/pytorch #128930
(``torch.onnx.export`` raises "embedding_bag with padding_idx"); and the review of pytorch/pytorch PR #41234
("Add similar check for include_last_offset": the symbolic refuses ``include_last_offset``). Checked against torch
2.13.0 and onnxruntime 1.32.0: the legacy exporter (``dynamo=False``) still raises RuntimeError "embedding_bag with
padding_idx"; the empty bag now runs and include_last_offset now exports, so those two model the exporter of the
issues' time (PyTorch 1.8, opset 12), not today's.
"""

import numpy as np
from _bag import FEATURES, check_call, functions, gradients, pool

EMBCONF_FEATURES = FEATURES

MISTAKES = [
    {
        "phrase": ["empty bag", "RuntimeError"],
        "mutants": [],
        "claims": ["symptom:untyped:RuntimeError:*"],
    },  # a bag with no ids (two equal offsets, or a last offset at N) raises RuntimeError
    {
        "phrase": ["padding_idx", "RuntimeError"],
        "mutants": [],
        "claims": ["symptom:untyped:RuntimeError:*"],
    },  # any padding_idx refused with RuntimeError
    {
        "phrase": ["include_last_offset", "RuntimeError"],
        "mutants": [],
        "claims": ["symptom:untyped:RuntimeError:*"],
    },  # include_last_offset=True refused with RuntimeError
]


def _call(weight, ids, offsets, mode, per_sample_weights, padding_idx, include_last_offset, grad_output=None):
    call = check_call(weight, ids, offsets, mode, per_sample_weights, padding_idx, include_last_offset, grad_output)
    if padding_idx is not None:
        raise RuntimeError("Unsupported: ONNX export of embedding_bag with padding_idx")
    if include_last_offset:
        raise RuntimeError("Unsupported: ONNX export of embedding_bag with include_last_offset")
    if any(end == start for start, end in call.bounds):
        raise RuntimeError("Loop: Slice of an empty bag (offsets not strictly increasing)")
    return call


embedding_bag_forward, embedding_bag_backward = functions(_call)
