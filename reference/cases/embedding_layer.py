"""Embedding layer cases: token lookup, optional sqrt(D) scaling, and each kind of positions."""
from __future__ import annotations

from typing import Any

import numpy as np

from embconf.model.rope import LAYER_FEATURE, LAYER_REFUSED_FEATURE, Pairing
from embconf.reference.cases import CaseSpec, table, token_ids, values

AREA = "embedding_layer"


def _case(case_id: str, description: str, reqs: tuple[str, ...], config: dict[str, Any], tokens_shape: tuple[int, ...],
          start_pos: object = 0, backward: bool = False, error: str | None = None, dtype: str = "float32",
          features: tuple[str, ...] = (), tokens: np.ndarray | None = None) -> CaseSpec:
    vocab, dim = config["vocab_size"], config["embed_dim"]
    pos_kind = config.get("pos_encoding", "learned")
    max_len = config.get("max_seq_len", 512)
    ids = token_ids(case_id, vocab, tokens_shape) if tokens is None else tokens
    inputs: dict[str, Any] = {
        "config": config,
        "token_weight": table(case_id, vocab, dim, dtype, "tokens"),
        "position_table": table(case_id, max_len, dim, dtype, "positions") if pos_kind == "learned" else None,
        "tokens": ids,
        "start_pos": start_pos,
    }
    if backward:
        inputs["grad_output"] = values(case_id, np.asarray(ids).shape + (dim,), dtype, "grad")
    operation = "embedding_layer_backward" if backward else "embedding_layer_forward"
    return CaseSpec(case_id, description, reqs, operation, inputs, features, error=error)


def _config(pos: str, scale: bool, vocab: int = 20, dim: int = 8, max_len: int = 16) -> dict[str, Any]:
    return {"vocab_size": vocab, "embed_dim": dim, "max_seq_len": max_len, "pos_encoding": pos, "scale_embeddings": scale}


def combination_cases() -> list[CaseSpec]:
    """Every pos_encoding x scaling x tokens rank, forward and backward."""
    specs = []
    for pos in ("learned", "sinusoidal", "none"):
        for scale in (False, True):
            for rank, shape in ((1, (6,)), (2, (3, 6))):
                tag = f"{pos}.{'scaled' if scale else 'unscaled'}.tokens_{rank}d"
                what = f"{pos} positions, {'scaled by sqrt(D)' if scale else 'no scaling'}, {rank}-D tokens"
                fwd = ("EMB-LAY-2", "EMB-LAY-3") + (("EMB-LAY-4",) if rank == 1 else ())
                bwd = ("EMB-LAY-5", "EMB-LAY-6") + (("EMB-LAY-4",) if rank == 1 else ())
                specs.append(_case(f"layer.forward.{tag}", f"Forward: {what}.", fwd, _config(pos, scale), shape))
                specs.append(_case(f"layer.backward.{tag}", f"Backward: {what}.", bwd, _config(pos, scale), shape, backward=True))
    return specs


def edge_cases() -> list[CaseSpec]:
    fwd, bwd = ("EMB-LAY-2", "EMB-LAY-3"), ("EMB-LAY-5", "EMB-LAY-6")
    return [
        _case("layer.forward.defaults", "Only vocab_size and embed_dim: max_seq_len 512, learned positions, no scaling.", ("EMB-LAY-1",) + fwd, {"vocab_size": 10, "embed_dim": 4}, (2, 5)),
        _case("layer.backward.defaults", "Defaults, backward: a 512-row learned table gets the gradient.", ("EMB-LAY-1",) + bwd, {"vocab_size": 10, "embed_dim": 4}, (2, 5), backward=True),
        _case("layer.forward.learned.empty_sequence", "Learned positions, 1-D tokens with T = 0 (1.1.0): an empty (0, D) output, not an error.",
              fwd + ("EMB-LAY-4",), _config("learned", True), (0,)),
        _case("layer.forward.learned.empty_sequence_2d", "Learned positions, a batch of empty sequences (2, 0) (1.1.0): a (2, 0, D) output.",
              fwd, _config("learned", False), (2, 0)),
        _case("layer.backward.learned.empty_sequence", "Learned positions, T = 0, backward (1.1.0): both gradients are all zeros.",
              bwd + ("EMB-LAY-4",), _config("learned", True), (0,), backward=True),
        _case("layer.forward.learned.start_pos", "Learned positions from start_pos 5.", fwd, _config("learned", False), (2, 4), start_pos=5),
        _case("layer.forward.sinusoidal.start_pos", "Sinusoidal positions from start_pos 9, scaled.", fwd, _config("sinusoidal", True), (2, 4), start_pos=9),
        _case("layer.forward.sinusoidal.start_at_end", "start_pos + T == max_seq_len: allowed.", fwd + ("EMB-LAY-8",), _config("sinusoidal", False), (1, 4), start_pos=12),
        _case("layer.forward.sinusoidal.odd_dim", "Sinusoidal positions with odd D = 7.", fwd + ("EMB-SIN-3",), _config("sinusoidal", True, dim=7), (2, 5)),
        _case("layer.forward.sinusoidal.long", "Sinusoidal positions up to 512 (the default length), scaled, D = 32.", fwd, _config("sinusoidal", True, vocab=50, dim=32, max_len=512), (2, 64), start_pos=448),
        _case("layer.forward.learned.dim_1", "D = 1 with learned positions and scaling (sqrt(1) = 1).", fwd, _config("learned", True, dim=1), (2, 3)),
        _case("layer.forward.none.repeated_tokens", "Repeated tokens, no positions.", fwd, _config("none", True), (2, 5), tokens=np.array([[3, 3, 3, 0, 3], [0, 0, 3, 3, 0]], np.int64)),
        _case("layer.backward.learned.start_pos", "Learned positions from start_pos 5: rows 5..8 get the batch sum.", bwd, _config("learned", True), (3, 4), start_pos=5, backward=True),
        _case("layer.backward.sinusoidal.start_pos", "Sinusoidal from start_pos 9: the table takes no gradient.", bwd, _config("sinusoidal", True), (2, 4), start_pos=9, backward=True),
        _case("layer.backward.repeated_tokens", "Repeated tokens accumulate c * G into one row.", bwd, _config("learned", True), (2, 5), backward=True, tokens=np.array([[3, 3, 3, 0, 3], [0, 0, 3, 3, 0]], np.int64)),
        _case("layer.backward.large", "Scaled, learned, (4, 32) tokens over V = 500, D = 32.", bwd, _config("learned", True, vocab=500, dim=32, max_len=64), (4, 32), start_pos=16, backward=True),
        _case("layer.forward.float64", "A float64 layer.", fwd + ("EMB-FWD-4",), _config("learned", True), (2, 3), dtype="float64", features=("float64",)),
        _case("layer.forward.float64.sinusoidal", "A float64 layer with sinusoidal positions.", fwd + ("EMB-FWD-4",), _config("sinusoidal", True), (2, 3), start_pos=2, dtype="float64", features=("float64",)),
        _case("layer.backward.float64", "A float64 layer, backward.", bwd + ("EMB-FWD-4",), _config("learned", True), (2, 3), backward=True, dtype="float64", features=("float64",)),
        _case("layer.forward.float_ids", "Integer-valued float32 tokens.", fwd + ("EMB-IDX-3",), _config("learned", False), (2, 3), features=("float_ids",), tokens=np.array([[1.0, 19.0, 0.0], [4.0, 4.0, 7.0]], np.float32)),
    ]


def error_cases() -> list[CaseSpec]:
    cfg_err, too_long, bad_start = ("EMB-LAY-7", "EMB-ERR-1"), ("EMB-LAY-8", "EMB-ERR-1"), ("EMB-LAY-9", "EMB-ERR-1")
    return [
        _case("layer.error.unknown_pos_encoding", "pos_encoding 'rope' is not in the spec: invalid_config.", cfg_err, _config("rope", False), (2, 3), error="invalid_config",
              features=(LAYER_REFUSED_FEATURE,)),
        _case("layer.error.pos_encoding_capitalised", "pos_encoding 'Learned' (case matters).", cfg_err, _config("Learned", False), (2, 3), error="invalid_config"),
        _case("layer.error.learned_too_long", "Learned: T = max_seq_len + 1.", too_long, _config("learned", False, max_len=4), (1, 5), error="sequence_too_long"),
        _case("layer.error.sinusoidal_too_long", "Sinusoidal: start_pos + T > max_seq_len is an error too, not a longer table.", too_long, _config("sinusoidal", False, max_len=8), (2, 4), start_pos=5, error="sequence_too_long"),
        _case("layer.error.sinusoidal_too_long_1d", "Sinusoidal, 1-D tokens past max_seq_len.", too_long, _config("sinusoidal", True, max_len=4), (5,), error="sequence_too_long"),
        _case("layer.error.start_negative", "start_pos -2.", bad_start, _config("learned", False), (1, 3), start_pos=-2, error="invalid_start_pos"),
        _case("layer.error.start_fraction", "start_pos 0.5.", bad_start, _config("sinusoidal", False), (1, 3), start_pos=0.5, error="invalid_start_pos"),
        _case("layer.error.token_out_of_range", "A token id equal to vocab_size.", bad_start[:1] + ("EMB-IDX-1",), _config("none", False), (1, 3), error="index_out_of_range", tokens=np.array([[0, 20, 1]], np.int64)),
        _case("layer.error.token_negative", "A negative token id.", ("EMB-LAY-9", "EMB-IDX-2"), _config("learned", True), (3,), error="index_out_of_range", tokens=np.array([1, -1, 2], np.int64)),
        _case("layer.error.learned_overflow_2", "Learned: T = max_seq_len + 2 from position 0 (1.2.0).", too_long, _config("learned", False, max_len=4), (1, 6), error="sequence_too_long"),
        _case("layer.error.sinusoidal_overflow_3", "Sinusoidal: start_pos 4, T = 7, max_seq_len 8: three rows past the end (1.2.0).", too_long, _config("sinusoidal", True, max_len=8), (2, 7), start_pos=4, error="sequence_too_long"),
        _case("layer.error.learned_overflow_2_start", "Learned: start_pos 3, T = 5, max_seq_len 6: two rows past the end (1.2.0).", too_long, _config("learned", False, max_len=6), (1, 5), start_pos=3, error="sequence_too_long"),
        _case("layer.error.backward_too_long", "Backward rejects start_pos + T > max_seq_len.", too_long, _config("learned", False, max_len=6), (2, 4), start_pos=3, backward=True, error="sequence_too_long"),
    ]


def profile_cases() -> list[CaseSpec]:
    """Spec 1.2.0: a sinusoidal layer of an implementation that declares a non-canonical profile adds that
    profile's rows (EMB-SIN-6), from start_pos > 0; MLX's refusal of odd D holds in the layer too."""
    fwd = ("EMB-LAY-2", "EMB-LAY-3", "EMB-SIN-6")
    specs = []
    for profile, requirement in (("concatenated", "EMB-SIN-V1"), ("tensor2tensor", "EMB-SIN-V2"),
                                 ("guided-diffusion", "EMB-SIN-V3"), ("mlx", "EMB-SIN-V4")):
        tag, feature = profile.replace("-", "_"), (f"sinusoid-{profile}",)
        specs.append(_case(f"layer.forward.sinusoidal.{tag}.start_pos", f"The {profile} profile's positions from start_pos 9, scaled.",
                           fwd + (requirement,), _config("sinusoidal", True), (2, 4), start_pos=9, features=feature))
        if profile != "mlx":
            specs.append(_case(f"layer.forward.sinusoidal.{tag}.odd_dim", f"The {profile} profile's positions, odd D = 7, from start_pos 3.",
                               fwd + (requirement,), _config("sinusoidal", False, dim=7), (5,), start_pos=3, features=feature))
    specs.append(_case("layer.error.sinusoidal_mlx_odd_dim", "The MLX profile refuses odd D = 7 in the layer too: invalid_config.",
                       ("EMB-SIN-6", "EMB-SIN-V4", "EMB-ERR-1"), _config("sinusoidal", True, dim=7), (2, 3), features=("sinusoid-mlx",),
                       error="invalid_config"))
    return specs


def _rope(pairing: str, scale: bool, dim: int = 8, vocab: int = 20, **extra: Any) -> dict[str, Any]:
    return {**_config("rope", scale, vocab=vocab, dim=dim), "rope_pairing": pairing, **extra}


def rope_cases() -> list[CaseSpec]:
    """Spec 1.3.0: a layer with pos_encoding 'rope' (feature rope-layer and the pairing of its config) rotates
    W[tokens] * c by positions start_pos .. start_pos+T-1 (EMB-LAY-10), and its token gradient is c times the
    scatter-add of the rotated G (EMB-LAY-11)."""
    fwd, bwd = ("EMB-LAY-2", "EMB-LAY-10"), ("EMB-LAY-5", "EMB-LAY-11")
    one = ("EMB-LAY-4",)
    specs = []
    for pairing in (p.value for p in Pairing):
        feats = (LAYER_FEATURE, Pairing(pairing).feature)
        specs += [
            _case(f"layer.forward.rope.{pairing}.unscaled.tokens_1d", f"Rope ({pairing}), no scaling, 1-D tokens.", fwd + one, _rope(pairing, False), (6,), features=feats),
            _case(f"layer.forward.rope.{pairing}.scaled.tokens_2d", f"Rope ({pairing}), W[tokens] * sqrt(D) rotated, 2-D tokens.", fwd, _rope(pairing, True), (3, 6), features=feats),
            _case(f"layer.forward.rope.{pairing}.start_pos", f"Rope ({pairing}), positions 9..12, scaled.", fwd, _rope(pairing, True), (2, 4), start_pos=9, features=feats),
            _case(f"layer.forward.rope.{pairing}.d64_p4096", f"Rope ({pairing}), D = 64, positions 4093..4100: past max_seq_len, which a rope layer ignores.", fwd, _rope(pairing, False, dim=64, vocab=50), (2, 8), start_pos=4093, features=feats),
            _case(f"layer.backward.rope.{pairing}.unscaled.tokens_2d", f"Rope ({pairing}) backward: the scatter-add of G rotated back.", bwd, _rope(pairing, False), (3, 6), backward=True, features=feats),
            _case(f"layer.backward.rope.{pairing}.scaled.tokens_1d", f"Rope ({pairing}) backward, scaled, 1-D tokens.", bwd + one, _rope(pairing, True), (6,), backward=True, features=feats),
            _case(f"layer.backward.rope.{pairing}.start_pos_repeated", f"Rope ({pairing}) backward from start_pos 5: a repeated token adds G rotated back by each of its positions.", bwd, _rope(pairing, True), (2, 5), start_pos=5, backward=True, features=feats,
                  tokens=np.array([[3, 3, 3, 0, 3], [0, 0, 3, 3, 0]], np.int64)),
        ]
    half = (LAYER_FEATURE, Pairing.HALF_SPLIT.feature)
    cfg_err = ("EMB-LAY-10", "EMB-ERR-1")
    return specs + [
        _case("layer.forward.rope.half_split.beyond_max_seq_len", "Rope: start_pos 14, T = 6, max_seq_len 16: no table, so no length limit.", fwd, _rope("half_split", False), (2, 6), start_pos=14, features=half),
        _case("layer.forward.rope.half_split.empty_sequence", "Rope, T = 0: an empty (0, D) output.", fwd + one, _rope("half_split", True), (0,), features=half),
        _case("layer.forward.rope.half_split.float64", "A float64 rope layer.", fwd + ("EMB-FWD-4",), _rope("half_split", True), (2, 3), start_pos=2, dtype="float64", features=half + ("float64",)),
        _case("layer.forward.rope.half_split.pairing_default", "Rope without rope_pairing in the config: half_split, the default.", ("EMB-LAY-1",) + fwd, _config("rope", True), (2, 4), start_pos=3, features=half),
        _case("layer.backward.rope.half_split.padding_idx", "Rope with padding_idx 3: the padding row gets an exactly zero gradient, as for the other encodings.", bwd + ("EMB-PAD-5",), _rope("half_split", True, padding_idx=3), (2, 5), backward=True,
              features=half + ("padding_idx",), tokens=np.array([[3, 1, 3, 0, 2], [4, 3, 3, 1, 0]], np.int64)),
        _case("layer.error.rope_odd_dim", "Rope with odd D = 7: invalid_config.", cfg_err, _rope("half_split", False, dim=7), (2, 3), error="invalid_config", features=(LAYER_FEATURE,)),
        _case("layer.error.rope_unknown_pairing", "Rope with rope_pairing 'complex': invalid_config.", cfg_err, _rope("complex", False), (2, 3), error="invalid_config", features=(LAYER_FEATURE,)),
        _case("layer.error.rope_start_negative", "Rope, start_pos -1: invalid_start_pos.", ("EMB-LAY-9", "EMB-ERR-1"), _rope("half_split", False), (1, 3), start_pos=-1, error="invalid_start_pos", features=(LAYER_FEATURE,)),
    ]


def _own(case_id: str, description: str, config: dict[str, Any], tokens_shape: tuple[int, ...], start_pos: int = 0,
         features: tuple[str, ...] = (), reqs: tuple[str, ...] = ()) -> CaseSpec:
    """An embedding_layer_own_backward case: the layer's own tables, so no table among the inputs (EMB-LAY-12)."""
    ids = token_ids(case_id, config["vocab_size"], tokens_shape)
    inputs: dict[str, Any] = {"config": config, "tokens": ids, "start_pos": start_pos,
                              "grad_output": values(case_id, ids.shape + (config["embed_dim"],), "float32", "grad")}
    return CaseSpec(case_id, description, ("EMB-LAY-12",) + reqs, "embedding_layer_own_backward", inputs, features)


def own_parameter_cases() -> list[CaseSpec]:
    """Spec 2.0.0: a freshly constructed layer's own parameters receive the gradients of its backward
    (EMB-LAY-12), so that the layer can learn; an implementation that builds its tables without gradient
    tracking leaves them None."""
    half = (LAYER_FEATURE, Pairing.HALF_SPLIT.feature)
    return [
        _own("layer.own_backward.learned.scaled", "Its own tables, learned positions, scaled: both receive their gradients.", _config("learned", True), (3, 6), reqs=("EMB-LAY-5", "EMB-LAY-6")),
        _own("layer.own_backward.learned.start_pos", "Its own tables from start_pos 5: rows 5..8 of its position table get the batch sum.", _config("learned", False), (2, 4), start_pos=5, reqs=("EMB-LAY-6",)),
        _own("layer.own_backward.defaults", "Only vocab_size and embed_dim: its own 512-row learned table gets the gradient.", {"vocab_size": 10, "embed_dim": 4}, (2, 5), reqs=("EMB-LAY-1", "EMB-LAY-6")),
        _own("layer.own_backward.sinusoidal.scaled", "Its own token table with sinusoidal positions (a constant: no gradient).", _config("sinusoidal", True), (2, 4), start_pos=3, reqs=("EMB-LAY-5",)),
        _own("layer.own_backward.none.tokens_1d", "Its own token table, no positions, 1-D tokens.", _config("none", False), (6,), reqs=("EMB-LAY-4", "EMB-LAY-5")),
        _own("layer.own_backward.rope.half_split", "A rope layer's own token table receives c times the scatter-add of G rotated back.", _rope("half_split", True), (2, 5), start_pos=2, features=half, reqs=("EMB-LAY-11",)),
        _own("layer.own_backward.padding_idx", "Its own tables with padding_idx 3: the padding row's gradient is exactly zero.", {**_config("learned", True), "padding_idx": 3}, (2, 5), features=("padding_idx",), reqs=("EMB-PAD-5",)),
    ]


def cases() -> list[CaseSpec]:
    return combination_cases() + edge_cases() + error_cases() + profile_cases() + rope_cases() + own_parameter_cases()
