"""Rotary position embeddings (spec 1.3.0, section 14): the pairings and the scaling of the frequencies.

The input ``scaling`` of the rope operations is a mapping with Hugging Face's ``rope_scaling`` key names
(``rope_type``, ``factor``, ...); :class:`RopeScaling` is its typed form, read once by :meth:`RopeScaling.of`
(ValueError, one line, for a mapping the spec does not define: the reference answers ``invalid_config``) and
written back by :meth:`RopeScaling.mapping`. The pairing names which columns rotate together.
"""

from __future__ import annotations

import enum
import math
import numbers
from collections.abc import Mapping
from dataclasses import dataclass, fields
from typing import Any, Optional

AREA = "rope"


class Pairing(enum.Enum):
    """Which columns of the rotated block form a pair of frequency k (r = rotary_dim, h = r/2)."""

    HALF_SPLIT = "half_split"  # (k, k + h): GPT-NeoX, Hugging Face rotate_half
    INTERLEAVED = "interleaved"  # (2k, 2k + 1): GPT-J, Meta's complex form, MLX traditional=True

    @property
    def feature(self) -> str:
        return f"rope-{self.value}"


class RopeType(enum.Enum):
    DEFAULT = "default"
    LINEAR = "linear"
    DYNAMIC = "dynamic"
    YARN = "yarn"
    LLAMA3 = "llama3"
    LONGROPE = "longrope"  # since 2.0.0 (EMB-ROPE-13)

    @property
    def feature(self) -> Optional[str]:
        """The feature a case of this scaling carries (none for ``default``)."""
        return None if self is RopeType.DEFAULT else f"rope-{self.value}"


PARTIAL_FEATURE = "rope-partial"  # rotary_dim < d
LAYER_FEATURE = "rope-layer"  # an embedding layer with pos_encoding 'rope' (EMB-LAY-10)
LAYER_REFUSED_FEATURE = "rope-layer-refused"  # 'rope' is invalid_config (EMB-LAY-7): implied unless rope-layer
POSITIONS_FEATURE = "rope-positions"  # position_ids that are not one contiguous run
BATCH_POSITIONS_FEATURE = "rope-batch-positions"  # position_ids (B, T): one row of positions per batch row (2.0.0)
MROPE_FEATURE = "rope-mrope"  # scaling mrope_section: M-RoPE's temporal/height/width positions (2.0.0)
MROPE_AXES = 3  # M-RoPE's position axes: temporal, height, width (Qwen2-VL)
YARN_BETA_FAST, YARN_BETA_SLOW = 32.0, 1.0  # Hugging Face's defaults (the YaRN paper's)

# rope_type -> (required keys, optional keys), in the order a mapping is written back
_KEYS: dict[RopeType, tuple[tuple[str, ...], tuple[str, ...]]] = {
    RopeType.DEFAULT: ((), ()),
    RopeType.LINEAR: (("factor",), ()),
    RopeType.DYNAMIC: (("factor", "original_max_position_embeddings"), ()),
    RopeType.YARN: (
        ("factor", "original_max_position_embeddings"),
        ("beta_fast", "beta_slow", "attention_factor", "mscale", "mscale_all_dim", "truncate"),
    ),
    RopeType.LLAMA3: (("factor", "original_max_position_embeddings", "low_freq_factor", "high_freq_factor"), ()),
    RopeType.LONGROPE: (
        ("short_factor", "long_factor", "original_max_position_embeddings"),
        ("factor", "attention_factor"),
    ),
}
LISTS = ("short_factor", "long_factor")  # per-frequency factors: one positive number per k (h of them)
SECTION = "mrope_section"  # optional with every rope_type: the frequencies of each M-RoPE position axis


def _positive(name: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not math.isfinite(value) or value <= 0:
        raise ValueError(f"scaling {name} must be a finite number > 0, got {value!r}")
    return float(value)


def _factors(name: str, value: Any) -> tuple[float, ...]:
    if isinstance(value, (str, bytes, Mapping)) or not hasattr(value, "__iter__"):
        raise ValueError(f"scaling {name} must be a list of numbers > 0, got {value!r}")
    factors = tuple(_positive(name, v) for v in value)
    if not factors:
        raise ValueError(f"scaling {name} must not be empty")
    return factors


def _section(value: Any) -> tuple[int, ...]:
    if isinstance(value, (str, bytes, Mapping)) or not hasattr(value, "__iter__"):
        raise ValueError(f"scaling {SECTION} must be a list of {MROPE_AXES} integers >= 1, got {value!r}")
    section = tuple(value)
    if len(section) != MROPE_AXES or any(
        isinstance(v, bool) or not isinstance(v, numbers.Integral) or v < 1 for v in section
    ):
        raise ValueError(f"scaling {SECTION} must be a list of {MROPE_AXES} integers >= 1, got {list(section)!r}")
    return tuple(int(v) for v in section)


@dataclass(frozen=True)
class RopeScaling:
    """One scaling of the frequencies; the fields a rope_type does not use stay None."""

    rope_type: RopeType = RopeType.DEFAULT
    factor: Optional[float] = None
    original_max_position_embeddings: Optional[int] = None
    beta_fast: Optional[float] = None
    beta_slow: Optional[float] = None
    attention_factor: Optional[float] = None
    mscale: Optional[float] = None
    mscale_all_dim: Optional[float] = None
    truncate: Optional[bool] = None
    low_freq_factor: Optional[float] = None
    high_freq_factor: Optional[float] = None
    short_factor: Optional[tuple[float, ...]] = None
    long_factor: Optional[tuple[float, ...]] = None
    mrope_section: Optional[tuple[int, ...]] = None

    @classmethod
    def of(cls, scaling: Optional[Mapping[str, Any]]) -> "RopeScaling":
        """The typed form of a ``scaling`` input (None is ``{"rope_type": "default"}``); ValueError when invalid."""
        if scaling is None:
            return cls()
        if isinstance(scaling, RopeScaling):
            return scaling
        if not isinstance(scaling, Mapping):
            raise ValueError(f"scaling must be a mapping with a rope_type, got {type(scaling).__name__}")
        try:
            rope_type = RopeType(scaling.get("rope_type"))
        except ValueError:
            known = ", ".join(t.value for t in RopeType)
            raise ValueError(f"unknown rope_type {scaling.get('rope_type')!r} (known: {known})") from None
        required, optional = _KEYS[rope_type]
        missing = [key for key in required if scaling.get(key) is None]
        unknown = sorted(set(scaling) - {"rope_type", SECTION, *required, *optional})
        if missing or unknown:
            raise ValueError(
                f"rope_type {rope_type.value!r} needs {list(required)}; missing {missing}, unknown {unknown}"
            )
        values: dict[str, Any] = {"rope_type": rope_type}
        for key in (*required, *optional, SECTION):
            value = scaling.get(key)
            if value is None:
                continue
            if key in LISTS:
                values[key] = _factors(key, value)
            elif key == SECTION:
                values[key] = _section(value)
            elif key == "truncate":
                if not isinstance(value, bool):
                    raise ValueError(f"scaling truncate must be true or false, got {value!r}")
                values[key] = value
            elif key == "original_max_position_embeddings":
                if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 1:
                    raise ValueError(f"scaling original_max_position_embeddings must be an integer >= 1, got {value!r}")
                values[key] = int(value)
            else:
                values[key] = _positive(key, value)
        result = cls(**values)
        if rope_type is RopeType.LLAMA3 and result.low_freq_factor == result.high_freq_factor:
            raise ValueError(
                "scaling low_freq_factor and high_freq_factor must differ (llama3 divides by their difference)"
            )
        return result

    def mapping(self) -> dict[str, Any]:
        """The ``scaling`` input of this scaling, as fixtures and the wire carry it."""
        out: dict[str, Any] = {"rope_type": self.rope_type.value}
        for field in fields(self)[1:]:
            value = getattr(self, field.name)
            if value is not None:
                out[field.name] = list(value) if isinstance(value, tuple) else value
        return out

    @property
    def feature(self) -> Optional[str]:
        return self.rope_type.feature

    @property
    def features(self) -> tuple[str, ...]:
        """The features a case of this scaling carries: its family's, and M-RoPE's with a section."""
        family = (self.rope_type.feature,) if self.rope_type.feature else ()
        return family + ((MROPE_FEATURE,) if self.mrope_section else ())


def pairing_of(pairing: Any) -> Pairing:
    """The typed pairing of a ``pairing`` input; ValueError for a name the spec does not define."""
    if isinstance(pairing, Pairing):
        return pairing
    try:
        return Pairing(pairing)
    except ValueError:
        raise ValueError(f"unknown pairing {pairing!r} (known: half_split, interleaved)") from None


def rope_features() -> tuple[str, ...]:
    """Every feature of the rope area."""
    scaled = tuple(t.feature for t in RopeType if t.feature)
    return (
        *(p.feature for p in Pairing),
        PARTIAL_FEATURE,
        POSITIONS_FEATURE,
        *scaled,
        BATCH_POSITIONS_FEATURE,
        MROPE_FEATURE,
    )


def _rope_operations(*needs: str) -> tuple[str, ...]:
    """The rope family's operations with every input ``needs`` (the vocabulary says which family each is)."""
    from embconf.model.family import operations_of
    from embconf.model.vocabulary import operations

    return tuple(name for name in operations_of("rope") if set(needs) <= set(operations()[name]["inputs"]))


TABLE_OPERATIONS = _rope_operations("rotary_dim")  # tables from a configuration: rope_tables, _forward, _backward
APPLY_OPERATIONS = _rope_operations("cos")  # tables given as inputs (since 2.0.0, EMB-ROPE-16)
ROTATIONS = _rope_operations("rotary_dim", "x")  # rope_forward, rope_backward


def batch_positions(position_ids_rank: int, mrope: bool) -> bool:
    """Whether position_ids of this rank hold one row of positions per batch row: (B, T), or (3, B, T) with M-RoPE."""
    return position_ids_rank == (3 if mrope else 2)


def case_feature_problems(operation: str, inputs: Mapping[str, Any], features: Any, error: Optional[str]) -> list[str]:
    """What a rope case's features lack or claim wrongly for its (encoded) inputs: the pairing it names, its
    scaling's family and M-RoPE, per-batch positions, partial rotary (``embconf validate``; the generator derives
    them the same way)."""
    if operation not in TABLE_OPERATIONS + APPLY_OPERATIONS:
        return []
    needed = implied_features(operation, inputs, error)
    from embconf.model.rope_conventions import KIND  # a convention's feature is declared, not implied by inputs

    claimed = {f for f in features if f.startswith("rope-") and f != POSITIONS_FEATURE and f not in KIND.features}
    problems = [f"a rope case of these inputs needs feature {f!r}" for f in sorted(needed - claimed)]
    return problems + [f"feature {f!r} does not match the case's inputs" for f in sorted(claimed - needed)]


def implied_features(operation: str, inputs: Mapping[str, Any], error: Optional[str]) -> set[str]:
    """The rope features a case of ``operation`` with these (encoded) inputs needs (none outside the family)."""
    if operation not in TABLE_OPERATIONS + APPLY_OPERATIONS:
        return set()
    needed: set[str] = set()
    pairing = inputs.get("pairing")
    if operation != "rope_tables" and pairing in {p.value for p in Pairing}:
        needed.add(Pairing(pairing).feature)
    try:
        scaling = RopeScaling.of(inputs.get("scaling")) if operation in TABLE_OPERATIONS else RopeScaling()
    except ValueError:
        scaling = RopeScaling()
    needed |= set(scaling.features)
    shape = _shape_of(inputs.get("x"))
    if operation in APPLY_OPERATIONS:
        table = _shape_of(inputs.get("cos"))
        rotary, batched = (table[-1] if table else None), len(table or ()) == 3
    else:
        rotary = inputs.get("rotary_dim")
        batched = batch_positions(len(_shape_of(inputs.get("position_ids")) or ()), bool(scaling.mrope_section))
    if error is None and batched:
        needed.add(BATCH_POSITIONS_FEATURE)
    if error is None and shape and isinstance(rotary, int) and rotary < shape[-1]:
        needed.add(PARTIAL_FEATURE)
    return needed


def _shape_of(value: Any) -> Optional[list[int]]:
    """The shape of an encoded (a mapping) or decoded array input, None for anything else."""
    if isinstance(value, Mapping):
        shape = value.get("shape")
        return list(shape) if isinstance(shape, list) else None
    shape = getattr(value, "shape", None)
    return list(shape) if shape is not None else None
