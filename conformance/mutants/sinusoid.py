"""Mistakes of the sinusoidal position table, each a float64 table function of (max_len, embed_dim)."""

from __future__ import annotations

from typing import Any, Callable, Optional

import numpy as np

from embconf.model.dtypes import numpy_dtype
from embconf.mutants.base import Mutant, register
from embconf.reference.sinusoid import BASE, concatenated, interleaved, tensor2tensor

Table = Callable[[int, int], np.ndarray]
Exponent = Callable[[np.ndarray, int], np.ndarray]  # (pair index k, D) -> exponent of the base


def canonical_exponent(k: np.ndarray, dim: int) -> np.ndarray:
    return -2.0 * k / dim


def _table(
    max_len: int, dim: int, exponent: Exponent = canonical_exponent, offset: int = 0, swap: bool = False
) -> np.ndarray:
    """The interleaved layout with a chosen frequency exponent, position offset, or sin/cos swapped."""
    pairs = np.arange((dim + 1) // 2, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        angles = (np.arange(max_len, dtype=np.float64)[:, None] + offset) * BASE ** exponent(pairs, dim)
    even, odd = (np.cos, np.sin) if swap else (np.sin, np.cos)
    table = np.empty((max_len, dim))
    table[:, 0::2] = even(angles)
    table[:, 1::2] = odd(angles[:, : dim // 2])
    return table


def _odd_last(column: Callable[[np.ndarray], np.ndarray]) -> Table:
    """The canonical table whose extra (sine) column of an odd D is replaced by ``column(angle)``."""

    def table(max_len: int, dim: int) -> np.ndarray:
        out = interleaved(max_len, dim)
        if dim % 2:
            angle = np.arange(max_len, dtype=np.float64) * BASE ** canonical_exponent(np.float64(dim // 2), dim)
            out[:, -1] = column(angle)
        return out

    return table


def _column_exponent(max_len: int, dim: int) -> np.ndarray:
    """Every column j gets frequency base^(-2j/D), then sin on even and cos on odd columns."""
    angles = np.arange(max_len, dtype=np.float64)[:, None] * BASE ** (-2.0 * np.arange(dim) / dim)
    table = np.cos(angles)
    table[:, 0::2] = np.sin(angles[:, 0::2])
    return table


def _float16(max_len: int, dim: int) -> np.ndarray:
    """The canonical formula evaluated in float16 throughout."""
    half = np.float16
    pairs = np.arange((dim + 1) // 2, dtype=half)
    with np.errstate(over="ignore", invalid="ignore"):
        angles = np.arange(max_len, dtype=half)[:, None] * np.power(half(BASE), half(-2.0) * pairs / half(dim))
        table = np.empty((max_len, dim), dtype=half)
        table[:, 0::2] = np.sin(angles)
        table[:, 1::2] = np.cos(angles[:, : dim // 2])
    return table.astype(np.float64)


def _operation(table: Table) -> Callable[..., np.ndarray]:
    def sinusoidal_table(max_len: int, embed_dim: int, dtype: str = "float32") -> np.ndarray:
        return table(max_len, embed_dim).astype(numpy_dtype(dtype))

    return sinusoidal_table


def sinusoid(
    mutant_id: str,
    description: str,
    hint: str,
    table: Table,
    convention: Optional[str] = None,
    source: str = "",
    family: Optional[dict[str, Any]] = None,
) -> None:
    """Register a table mistake; ``family`` places it in the diagnosis's sinusoid family (recognised in any precision)."""
    register(
        Mutant(
            mutant_id,
            description,
            hint,
            {"sinusoidal_table": _operation(table)},
            convention=convention,
            source=source,
            family=family or {},
        )
    )


FORMULA = "w_k = 10000^(-2k/D) for pair k, sin(pos*w_k) at column 2k, cos(pos*w_k) at column 2k+1 (EMB-SIN-2)"

sinusoid(
    "sin.swapped",
    "puts cos at the even columns and sin at the odd ones",
    "even columns take np.sin, odd columns np.cos: row 0 is [0, 1, 0, 1, ...]",
    lambda n, d: _table(n, d, swap=True),
    family={"layout": "swapped"},
)
sinusoid(
    "sin.exponent_sign",
    "flips the sign of the frequency exponent (10000^(+2k/D), or pos / div_term): higher columns oscillate faster",
    "the frequency is exp(-log(10000) * 2k / D): it shrinks as the column index grows",
    lambda n, d: _table(n, d, lambda k, dim: 2.0 * k / dim),
    source="https://github.com/harvardnlp/annotated-transformer/issues/131",
    family={"sign": 1},
)
sinusoid(
    "sin.k_over_d",
    "uses k/D instead of 2k/D in the exponent",
    f"the exponent of pair k is -2k/D: {FORMULA}",
    lambda n, d: _table(n, d, lambda k, dim: -k / dim),
    family={"form": "k/D"},
)
sinusoid(
    "sin.d_minus_1",
    "divides the exponent by D - 1 instead of D",
    f"divide by D itself: {FORMULA}",
    lambda n, d: _table(n, d, lambda k, dim: -2.0 * k / (dim - 1)),
    family={"form": "2k/(D-1)"},
)
sinusoid(
    "sin.d_half",
    "divides the exponent by D/2 instead of D (the number of pairs)",
    f"divide 2k by D, not by D/2: {FORMULA}",
    lambda n, d: _table(n, d, lambda k, dim: -2.0 * k / (dim / 2)),
    family={"form": "4k/D"},
)
sinusoid(
    "sin.log10_base",
    "uses log10(10000) = 4 inside exp(), so the base becomes e^4 instead of 10000",
    "use the natural log: exp(-ln(10000) * 2k / D), i.e. 10000 ** (-2k / D)",
    lambda n, d: _table(n, d, lambda k, dim: -2.0 * k / dim * 4.0 / np.log(BASE)),
    family={"base": "e^4"},
)
sinusoid(
    "sin.positions_from_1",
    "counts positions from 1: row 0 is not [0, 1, 0, 1, ...]",
    "positions start at 0: use np.arange(max_len), not np.arange(1, max_len + 1)",
    lambda n, d: _table(n, d, offset=1),
    family={"origin": 1},
)
sinusoid(
    "sin.column_exponent",
    "uses the column index j in the exponent (2j/D) instead of the pair index k = j // 2",
    "columns 2k and 2k+1 share one frequency: the exponent uses 2 * (j // 2) / D",
    _column_exponent,
    source="https://github.com/jadore801120/attention-is-all-you-need-pytorch/issues/32",
)
sinusoid(
    "sin.float16",
    "computes the table in float16: positions above 2048 are not even representable and angles lose precision",
    "compute positions and angles in float64 (or at least float32) and round once to the requested dtype (EMB-SIN-5)",
    _float16,
    family={"precision": "float16"},
)
sinusoid(
    "sin.odd_last_cos",
    "fills the extra column of an odd D with cos instead of sin",
    "for odd D the last column is column 2k, a sine: sin(pos * w_k) with k = D // 2 (EMB-SIN-3)",
    _odd_last(np.cos),
)
sinusoid(
    "sin.odd_last_zero",
    "leaves the extra column of an odd D at zero (tensor2tensor's padding)",
    "for odd D the last column is sin(pos * w_k) with k = D // 2, not zero (EMB-SIN-3)",
    _odd_last(np.zeros_like),
)
sinusoid(
    "sin.concatenated",
    "concatenates a sine block and a cosine block ([sin | cos], Marian, Transformer-XL) instead of interleaving",
    "interleave: sin at column 2k, cos at 2k+1; or, if this is the table meant, declare sinusoid_convention 'concatenated' (EMB-SIN-V1)"
    " to be judged against it instead of the canonical table",
    concatenated,
    convention="concatenated",
    source="https://github.com/allenai/allennlp/issues/2993",
    family={"layout": "[sin | cos]"},
)
sinusoid(
    "sin.tensor2tensor",
    "uses tensor2tensor's timing signal: frequencies 10000^(-k/(h-1)) and a [sin | cos] layout",
    "interleave with w_k = 10000^(-2k/D); or, if this is the table meant, declare sinusoid_convention 'tensor2tensor' (EMB-SIN-V2)"
    " to be judged against it instead of the canonical table",
    tensor2tensor,
    convention="tensor2tensor",
    source="https://github.com/facebookresearch/fairseq/issues/4648",
)
