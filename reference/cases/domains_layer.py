"""The input domains of the embedding layer (each key of its config too) and of the memory arithmetic, whose
counts have unbounded width (integers past 2^53 and 2^63)."""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Optional

import numpy as np

from embconf.reference.cases.domain_ids import ids_domains, integer, padding, start_position
from embconf.reference.cases.domain_kinds import (
    ABSENT,
    Base,
    Boundary,
    Domain,
    Excluded,
    Inputs,
    array,
    set_value,
    value_of,
)
from embconf.reference.cases.domain_shapes import (
    choice,
    convention,
    dtyped,
    following,
    shape_of,
    sized,
    with_grad,
    within,
)
from embconf.reference.cases.domains_lookup import normal, widths

DTYPES = ("float32", "float16", "bfloat16", "float64", "int8")  # the memory arithmetic's element sizes


def _vocab(inputs: Mapping[str, Any]) -> int:
    return int(value_of(inputs, "config.vocab_size"))


def _flag(name: str) -> Domain:
    return choice(name, {"absent": ABSENT, "false": False, "true": True},
                  {"absent": "the default, False", "false": "False", "true": "True"})


def pos_encoding(name: str) -> Domain:
    """A layer's pos_encoding: absent (learned), each of the spec's, 'rope' (rope-layer) or unknown."""
    values = {"absent": ABSENT, "learned": "learned", "sinusoidal": "sinusoidal", "none": "none", "rope": "rope",
              "unknown": "Learned"}
    found = choice(name, values, {"absent": "the default, learned", "learned": "a trainable position table",
                                  "sinusoidal": "the sinusoid table", "none": "no positions",
                                  "rope": "rotary positions (feature rope-layer)", "unknown": "'Learned', not a name"},
                   {"unknown": "invalid_config"}, other="unknown")
    boundaries = tuple(Boundary(b.name, b.note, b.error, ("rope-layer",) if b.name == "rope" else ())
                       for b in found.boundaries) + (
        Boundary("rope_refused", "'rope' where rope-layer is not claimed (EMB-LAY-7)", "invalid_config"),)

    def classify(inputs: Mapping[str, Any], features: frozenset[str]) -> Optional[str]:
        at = found.classify(inputs, features)
        return "rope_refused" if at == "rope" and "rope-layer" not in features else at

    def put(inputs: Inputs, boundary: str, rng: np.random.Generator) -> None:
        found.put(inputs, "rope" if boundary == "rope_refused" else boundary, rng)

    return Domain(found.input, boundaries, classify, put)


def _fits(inputs: Inputs, boundary: str) -> None:
    """Tokens no longer than L."""
    length, tokens = value_of(inputs, "config.max_seq_len"), array(inputs, "tokens")
    if isinstance(length, int) and tokens is not None and tokens.ndim and tokens.shape[-1] > length:
        inputs["tokens"] = tokens[..., :length]


def _max_len(inputs: Mapping[str, Any]) -> int:
    """L: the config's max_seq_len, or its default."""
    given = value_of(inputs, "config.max_seq_len")
    return 512 if given is ABSENT else int(given)


def _put_table(inputs: Inputs, boundary: str, rng: np.random.Generator) -> None:
    """An (L, D) position table of the token table's dtype; none (None): a layer without learned positions."""
    if boundary == "present":
        inputs["position_table"] = normal(array(inputs, "token_weight"), (_max_len(inputs), _width(inputs)), rng)
        return
    inputs["position_table"] = None
    if value_of(inputs, "config.pos_encoding") in (ABSENT, "learned"):
        set_value(inputs, "config.pos_encoding", "none")


def _sinusoidal(inputs: Inputs, boundary: str) -> None:
    """A sinusoid profile is a sinusoidal layer's."""
    if boundary != "canonical":
        set_value(inputs, "config.pos_encoding", "sinusoidal")


def _rope_pairing() -> Domain:
    """A rope layer's pairing (EMB-LAY-10): given, it makes the layer a rope layer."""
    found = choice("config.rope_pairing", {"absent": ABSENT, "half_split": "half_split", "interleaved": "interleaved",
                                           "unknown": "reversed"},
                   {"absent": "half_split", "half_split": "(k, k + D/2)", "interleaved": "(2k, 2k + 1)",
                    "unknown": "not a pairing"}, {"unknown": "invalid_config"}, other="unknown")

    def rope(inputs: Inputs, boundary: str) -> None:
        if boundary != "absent":
            set_value(inputs, "config.pos_encoding", "rope")

    boundaries = tuple(Boundary(b.name, b.note, b.error, ("rope-layer",) if b.name != "absent" else ())
                       for b in found.boundaries)
    return following(Domain(found.input, boundaries, found.classify, found.put), rope)


def _width(inputs: Mapping[str, Any]) -> int:
    return int(value_of(inputs, "config.embed_dim"))


def _layer_shape(inputs: Mapping[str, Any]) -> tuple[int, ...]:
    return tuple(np.shape(inputs["tokens"])) + (_width(inputs),)


def _layer() -> dict[str, tuple[Domain, ...]]:
    config = (
        following(choice("config.vocab_size", {"one": 1, "many": 10}, {"one": "V = 1", "many": "V = 10"},
                         test=lambda v: "one" if v == 1 else "many"), within("tokens", _vocab)),
        widths("config.embed_dim"),
        following(choice("config.max_seq_len", {"absent": ABSENT, "one": 1, "many": 8},
                         {"absent": "the default, 512", "one": "L = 1", "many": "L = 8"},
                         test=lambda v: "one" if v == 1 else "many"), _fits),
        pos_encoding("config.pos_encoding"),
        _flag("config.scale_embeddings"),
        padding("config.padding_idx", _vocab),
        _rope_pairing(),
    )
    tables = (dtyped(("token_weight", "position_table", "grad_output")),
              Domain("position_table", (Boundary("absent", "None"), Boundary("present", "an (L, D) table")),
                     lambda inputs, features: "absent" if value_of(inputs, "position_table") is ABSENT else "present",
                     _put_table))
    tokens = ids_domains("tokens", _vocab, ("1d", "2d", "3d"), rank_errors={"3d": "shape_mismatch"})
    start = (start_position("start_pos", _max_len, lambda inputs: int(np.shape(inputs["tokens"])[-1])),)
    grad = (shape_of("grad_output", lambda inputs: _layer_shape(inputs) if "grad_output" in inputs else None),)
    return {
        "embedding_layer_forward": config + tables + tokens + start + (following(convention("sinusoidal"), _sinusoidal),),
        "embedding_layer_backward": config + tables + tokens + start + grad,
        "embedding_layer_own_backward": config + tokens + start + grad,
    }


def _repeats(inputs: Mapping[str, Any], features: frozenset[str]) -> Optional[str]:
    ids = array(inputs, "ids")
    if ids is None or ids.size == 0:
        return None
    return "distinct" if np.unique(ids).size == ids.size else "repeated"


def _put_repeats(inputs: Inputs, boundary: str, rng: np.random.Generator) -> None:
    ids = np.array(array(inputs, "ids"), copy=True)
    if boundary == "repeated" and ids.size:
        ids.flat[-1] = ids.flat[0]
    elif boundary == "distinct":
        ids = np.arange(ids.size, dtype=np.int64).reshape(ids.shape)
    inputs["ids"] = ids


def _memory() -> dict[str, tuple[Domain, ...]]:
    dtype = choice("dtype", {**{d: d for d in DTYPES}, "unknown": "float8"},
                   {**{d: f"{d} elements" for d in DTYPES}, "unknown": "a dtype not in the spec"},
                   {"unknown": "invalid_config"}, other="unknown")
    sizes = ("zero", "one", "many", "past_2_53", "past_2_63")
    ids = (sized("ids", lambda inputs, n, rng: rng.integers(0, 10, size=(n,)).astype(np.int64)),
           Domain("ids", (Boundary("distinct", "every id once"), Boundary("repeated", "an id twice: counted once")),
                  _repeats, _put_repeats, "repeats"))
    storage = Domain("storage", (Boundary("stored", "the sinusoid table is stored (the default)"),
                                 Boundary("computed", "computed on every call: nothing stored", features=("sinusoid_computed",))),
                     lambda inputs, features: "computed" if "sinusoid_computed" in features else "stored",
                     lambda inputs, boundary, rng: None)
    config = (integer("config.vocab_size"), integer("config.embed_dim"),
              choice("config.max_seq_len", {"absent": ABSENT, "many": 512, "past_2_53": 2**53 + 1},
                     {"absent": "the default, 512", "many": "an ordinary length", "past_2_53": "2^53 + 1"},
                     test=lambda v: "past_2_53" if v > 2**53 else "many"),
              pos_encoding("config.pos_encoding"), _flag("config.scale_embeddings"), storage)
    return {
        "parameter_count": config,
        "table_bytes": (integer("num_rows", sizes), integer("embed_dim", sizes), dtype),
        "gradient_bytes": (integer("vocab_size"), integer("embed_dim"), dtype) + ids,
        "adam_state_bytes": (integer("num_params", sizes), dtype),
    }


def _layer_base(rng: np.random.Generator) -> Inputs:
    config = {"vocab_size": 10, "embed_dim": 8, "max_seq_len": 8, "pos_encoding": "learned", "scale_embeddings": False}
    return {"config": config, "token_weight": normal(None, (10, 8), rng), "position_table": normal(None, (8, 8), rng),
            "tokens": rng.integers(0, 10, size=(2, 3)).astype(np.int64), "start_pos": 0}


def _layer_finish(inputs: Inputs, rng: np.random.Generator) -> None:
    """The tables follow the config's V, L and D; the gradient the output's shape."""
    v, d = _vocab(inputs), _width(inputs)
    for name, rows in (("token_weight", v), ("position_table", _max_len(inputs))):
        given = array(inputs, name)
        if given is not None and given.shape != (rows, d):
            inputs[name] = normal(given, (rows, d), rng)
    if "grad_output" in inputs or "token_weight" not in inputs:
        inputs["grad_output"] = normal(array(inputs, "token_weight") if "token_weight" in inputs else None,
                                       _layer_shape(inputs), rng)


def _own_base(rng: np.random.Generator) -> Inputs:
    found = _layer_base(rng)
    return {"config": found["config"], "tokens": found["tokens"], "start_pos": 0}


DOMAINS: dict[str, dict[str, tuple[Domain, ...]]] = {"embedding_layer": _layer(), "memory": _memory()}

BASES: dict[str, Base] = {
    "embedding_layer_forward": Base(_layer_base, _layer_finish),
    "embedding_layer_backward": Base(with_grad(_layer_base), _layer_finish),
    "embedding_layer_own_backward": Base(_own_base, _layer_finish),
    "parameter_count": Base(lambda rng: {"config": {"vocab_size": 100, "embed_dim": 16, "max_seq_len": 32,
                                                    "pos_encoding": "learned"}}),
    "table_bytes": Base(lambda rng: {"num_rows": 1000, "embed_dim": 64, "dtype": "float32"}),
    "gradient_bytes": Base(lambda rng: {"vocab_size": 1000, "embed_dim": 64, "dtype": "float32",
                                        "ids": rng.integers(0, 10, size=(5,)).astype(np.int64)}),
    "adam_state_bytes": Base(lambda rng: {"num_params": 1000, "dtype": "float32"}),
}

_PROFILES = tuple(b.name for b in convention("sinusoidal").boundaries if b.name != "canonical")
_ROPE_D = "a rope layer needs an even embed_dim (EMB-LAY-10)"
EXCLUDED: dict[str, tuple[Excluded, ...]] = {
    "embedding_layer": (
        Excluded(("config.pos_encoding", "learned"), ("position_table", "absent"), "a learned layer needs its table (EMB-LAY-9)", "shape_mismatch"),
        Excluded(("config.pos_encoding", "absent"), ("position_table", "absent"), "a learned layer needs its table (EMB-LAY-9)", "shape_mismatch"),
        Excluded(("config.pos_encoding", "rope"), ("config.embed_dim", "one"), _ROPE_D, "invalid_config"),
        Excluded(("config.pos_encoding", "rope"), ("config.embed_dim", "odd"), _ROPE_D, "invalid_config"),
        Excluded(("config.vocab_size", "one"), ("tokens.range", "inside"), "V = 1: the only valid id is V-1"),
        *(Excluded(("config.embed_dim", d), ("convention", "mlx"), "MLX's profile refuses an odd D (EMB-SIN-6)", "invalid_config")
          for d in ("one", "odd")),
        Excluded(("config.vocab_size", "one"), ("config.padding_idx", "positive"), "V = 1: no positive row"),
        *(Excluded(("config.max_seq_len", "one"), ("start_pos", b), "L = 1: the only start that fits is 0")
          for b in ("inside", "last_fit")),
        *(Excluded(("convention", c), ("config.pos_encoding", e), "a sinusoid profile is a sinusoidal layer's")
          for c in _PROFILES
          for e in ("absent", "learned", "none", "rope", "rope_refused", "unknown")),
        *(Excluded(("config.embed_dim", d), ("config.rope_pairing", p), "a pairing is a rope layer's, which needs an even "
                   "embed_dim (EMB-LAY-10)", "invalid_config") for d in ("one", "odd") for p in ("half_split", "interleaved")),
        *(Excluded(("convention", c), ("config.rope_pairing", p), "a sinusoid profile is a sinusoidal layer's, a pairing "
                   "a rope layer's (EMB-LAY-10)") for c in _PROFILES for p in ("half_split", "interleaved")),
        *(Excluded(("position_table", "present"), ("config.pos_encoding", e), "position_table is null but for a learned "
                   "layer (EMB-LAY-2, section 11)") for e in ("sinusoidal", "none", "rope")),
        *(Excluded(("position_table", "present"), ("convention", c), "a sinusoid profile is a sinusoidal layer's, whose "
                   "position_table is null (EMB-LAY-2)") for c in _PROFILES),
        *(Excluded(("position_table", "present"), ("config.rope_pairing", p), "a pairing is a rope layer's, whose "
                   "position_table is null (EMB-LAY-2)") for p in ("half_split", "interleaved")),
        *(Excluded(("config.rope_pairing", p), ("config.pos_encoding", e), "a pairing is a rope layer's (EMB-LAY-10)")
          for p in ("half_split", "interleaved", "unknown") for e in ("absent", "learned", "sinusoidal", "none", "unknown")),
    ),
    "memory": (
        *(Excluded(("config.embed_dim", d), ("config.pos_encoding", "rope"), _ROPE_D, "invalid_config")
          for d in ("one", "past_2_53", "past_2_63")),  # odd widths
        Excluded(("ids.count", "one"), ("ids.repeats", "repeated"), "one id cannot repeat"),
    ),
}
