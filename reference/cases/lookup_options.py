"""Options of a production embedding (spec 1.1): padding_idx, scale_grad_by_freq and max_norm.

Every case carries its feature, so an implementation that does not claim it gets
not_applicable. The layer takes padding_idx through its config.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from embconf.reference.cases import CaseSpec, table, values
from embconf.reference.cases.token_lookup import i64

AREA = "lookup_options"
PAD, FRQ, NRM = ("padding_idx",), ("scale_grad_by_freq",), ("max_norm",)


def _lookup(case_id: str, description: str, reqs: tuple[str, ...], features: tuple[str, ...], ids: np.ndarray,
            vocab: int = 6, dim: int = 3, backward: bool = True, error: str | None = None, **options: Any) -> CaseSpec:
    inputs: dict[str, Any] = {"weight": table(case_id, vocab, dim), "ids": ids}
    if backward:
        inputs["grad_output"] = values(case_id, ids.shape + (dim,), salt="grad")
    inputs.update(options)
    operation = "embedding_backward" if backward else "embedding_forward"
    return CaseSpec(case_id, description, reqs, operation, inputs, features, error=error)


def padding_cases() -> list[CaseSpec]:
    fwd, bwd, neg, bad = ("EMB-PAD-1", "EMB-FWD-2"), ("EMB-PAD-2", "EMB-BWD-2"), ("EMB-PAD-2", "EMB-PAD-3"), ("EMB-PAD-4", "EMB-ERR-1")
    return [
        _lookup("options.padding.forward_row_as_stored", "The forward returns the padding row as stored (here nonzero), never zeros.", fwd, PAD, i64([2, 0, 2, 5]), backward=False, padding_idx=2),
        _lookup("options.padding.forward_negative", "padding_idx -1: the forward is still a plain copy.", fwd + ("EMB-PAD-3",), PAD, i64([[5, 1], [0, 5]]), backward=False, padding_idx=-1),
        _lookup("options.padding.backward_zero_row", "The padding row's gradient is exactly zero however often it occurs; other rows accumulate as usual.", bwd, PAD, i64([1, 3, 1, 1, 4]), padding_idx=1),
        _lookup("options.padding.backward_zero", "padding_idx 0, the common choice, with 2-D ids.", bwd, PAD, i64([[0, 2, 0], [3, 0, 5]]), padding_idx=0),
        _lookup("options.padding.backward_negative_one", "padding_idx -1 means row V-1: that row gets no gradient, row 0 and the rest do.", neg, PAD, i64([5, 0, 5, 2]), padding_idx=-1),
        _lookup("options.padding.backward_negative_vocab", "padding_idx -V means row 0.", neg, PAD, i64([0, 4, 0, 1]), padding_idx=-6),
        _lookup("options.padding.backward_absent", "A padding_idx that no id uses changes nothing.", bwd, PAD, i64([1, 2, 2, 4]), padding_idx=3),
        _lookup("options.padding.error_equals_vocab", "padding_idx V lies outside [-V, V): invalid_config.", bad, PAD, i64([0, 1]), backward=False, error="invalid_config", padding_idx=6),
        _lookup("options.padding.error_below_minus_vocab", "padding_idx -V-1 lies outside [-V, V): invalid_config.", bad, PAD, i64([0, 1]), error="invalid_config", padding_idx=-7),
    ]


def frequency_cases() -> list[CaseSpec]:
    bwd = ("EMB-FRQ-1", "EMB-FRQ-3", "EMB-BWD-2")
    # Id 1 occurs 3 times in the first sequence and once in the second: 4 in the batch.
    batch = i64([[1, 1, 1, 2], [1, 3, 3, 0], [2, 0, 0, 0]])
    return [
        _lookup("options.freq.backward_1d", "Each row's gradient is divided by its id's count: [0, 2, 0, 0, 1].", bwd, FRQ, i64([0, 2, 0, 0, 1]), scale_grad_by_freq=True),
        _lookup("options.freq.backward_batch", "Counts are over the whole batch, not per sequence: id 1 occurs 3 + 1 times, id 0 1 + 3 times.", bwd, FRQ, batch, scale_grad_by_freq=True),
        _lookup("options.freq.backward_no_repeats", "Distinct ids have count 1: the gradient is the upstream rows, exactly.", bwd, FRQ, i64([4, 1, 0]), scale_grad_by_freq=True),
        _lookup("options.freq.backward_off", "scale_grad_by_freq false is the plain scatter-add.", bwd, FRQ, i64([2, 2, 0, 2]), scale_grad_by_freq=False),
        _lookup("options.freq.forward_unchanged", "Frequency scaling is a gradient option: the forward copies rows unchanged.", ("EMB-FRQ-2", "EMB-FWD-2"), FRQ, i64([[3, 3, 3], [1, 3, 0]]), backward=False, scale_grad_by_freq=True),
        _lookup("options.freq.with_padding", "Both options: counts divide every row, the padding row stays exactly zero.", bwd + ("EMB-PAD-2",), FRQ + PAD, i64([[0, 2, 2], [0, 0, 4]]), padding_idx=0, scale_grad_by_freq=True),
    ]


def _renorm(case_id: str, description: str, reqs: tuple[str, ...], weight: np.ndarray, ids: np.ndarray, max_norm: float,
            norm_type: float = 2.0, error: str | None = None) -> CaseSpec:
    return CaseSpec(case_id, description, ("EMB-NRM-1", "EMB-NRM-5") + reqs, "embedding_forward_max_norm",
                    {"weight": weight, "ids": ids, "max_norm": max_norm, "norm_type": norm_type}, NRM, error=error)


def _scaled_table(case_id: str, rows: int, dim: int) -> np.ndarray:
    """Rows of norms spread over 0.3 ... 3, so that some exceed max_norm 1 and some do not."""
    w = table(case_id, rows, dim).astype(np.float64)
    w /= np.linalg.norm(w, axis=1, keepdims=True)
    return (w * np.linspace(0.3, 3.0, rows)[:, None]).astype(np.float32)


def max_norm_cases() -> list[CaseSpec]:
    tiny = np.array([[3.0, 4.0], [6.0, 8.0], [1.5, 2.0], [0.0, 0.0]], np.float32) * np.float32(2.0**-20)
    exact_norms = np.array([[3.0, 4.0], [1.0, 2.0], [6.0, 8.0]], np.float32)
    return [
        _renorm("options.max_norm.referenced_rows", "Referenced rows of norm > 1 are rescaled to norm 1 before the lookup; unreferenced rows, even large ones, are untouched.",
                ("EMB-NRM-2", "EMB-NRM-3"), _scaled_table("options.max_norm.referenced_rows", 8, 4), i64([7, 1, 5, 2]), 1.0),
        _renorm("options.max_norm.repeated_ids", "A repeated id renormalises its row once; the output rows are the renormalised row.",
                ("EMB-NRM-2",), _scaled_table("options.max_norm.repeated_ids", 5, 3), i64([[4, 4, 0], [4, 2, 4]]), 1.5),
        _renorm("options.max_norm.norm_equals_max", "Rows whose norm equals max_norm are not rescaled (strictly greater only); with norms near 1e-6 the 1e-7 of the divisor would show.",
                ("EMB-NRM-2",), tiny, i64([0, 1, 2, 3]), float(np.float32(5.0 * 2.0**-20))),
        _renorm("options.max_norm.norm_type_1", "norm_type 1: the sum of absolute values; row [1, 2] has 1-norm 3 = max_norm and is kept, [6, 8] is scaled.",
                ("EMB-NRM-4",), exact_norms, i64([1, 2, 0]), 3.0, norm_type=1.0),
        _renorm("options.max_norm.norm_type_3", "norm_type 3.", ("EMB-NRM-4",), _scaled_table("options.max_norm.norm_type_3", 6, 5), i64([0, 5, 3, 4]), 0.9, norm_type=3.0),
        _renorm("options.max_norm.none_over", "No referenced row exceeds max_norm: output and table are unchanged copies.",
                ("EMB-NRM-3",), _scaled_table("options.max_norm.none_over", 6, 3), i64([0, 1, 2]), 2.0),
        _renorm("options.max_norm.empty_ids", "No ids: an empty output and an unchanged table.", ("EMB-NRM-3", "EMB-FWD-1"),
                _scaled_table("options.max_norm.empty_ids", 4, 3), i64([]), 1.0),
        _renorm("options.max_norm.error_out_of_range", "Ids are checked as in the plain lookup: id V is index_out_of_range, and nothing is renormalised.",
                ("EMB-IDX-1", "EMB-ERR-1"), _scaled_table("options.max_norm.error_out_of_range", 4, 3), i64([1, 4]), 1.0, error="index_out_of_range"),
        _renorm("options.max_norm.error_not_positive", "max_norm 0 is invalid_config.", ("EMB-NRM-4", "EMB-ERR-1"),
                _scaled_table("options.max_norm.error_not_positive", 4, 3), i64([1]), 0.0, error="invalid_config"),
    ]


def _layer(case_id: str, description: str, reqs: tuple[str, ...], padding_idx: int, backward: bool, error: str | None = None) -> CaseSpec:
    config = {"vocab_size": 7, "embed_dim": 4, "max_seq_len": 8, "pos_encoding": "learned", "scale_embeddings": True, "padding_idx": padding_idx}
    tokens = i64([[0, 3, 0, 6], [2, 0, 6, 6]])
    inputs: dict[str, Any] = {"config": config, "token_weight": table(case_id, 7, 4, salt="tokens"),
                              "position_table": table(case_id, 8, 4, salt="positions"), "tokens": tokens, "start_pos": 1}
    if backward:
        inputs["grad_output"] = values(case_id, (2, 4, 4), salt="grad")
    operation = "embedding_layer_backward" if backward else "embedding_layer_forward"
    return CaseSpec(case_id, description, reqs, operation, inputs, PAD, error=error)


def layer_cases() -> list[CaseSpec]:
    return [
        _layer("options.layer.padding_forward", "A layer with padding_idx 0 in its config adds positions to the stored padding row, scaled as any row.", ("EMB-PAD-5", "EMB-LAY-2"), 0, False),
        _layer("options.layer.padding_backward", "The layer's token gradient has an exactly zero padding row; positions still get every sequence's gradient.", ("EMB-PAD-5", "EMB-LAY-5", "EMB-LAY-6"), 0, True),
        _layer("options.layer.padding_negative", "padding_idx -1 in the config is row V-1.", ("EMB-PAD-5", "EMB-PAD-3"), -1, True),
        _layer("options.layer.padding_out_of_range", "padding_idx V in the config: invalid_config.", ("EMB-PAD-5", "EMB-PAD-4", "EMB-ERR-1"), 7, False, error="invalid_config"),
    ]


def cases() -> list[CaseSpec]:
    return padding_cases() + frequency_cases() + max_norm_cases() + layer_cases()
