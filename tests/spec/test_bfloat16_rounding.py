"""The suite's own rounding to bfloat16 (:func:`embconf.model.dtypes.bfloat16_bits`): exact from float64, ties to
even, subnormals, overflow to infinity, NaN kept NaN, so that any ml_dtypes >= 0.5 (whose casts before 0.7 round
through float32 first) holds the same goldens. Checked against exact rational arithmetic, needing no ml_dtypes."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

from embconf.model.dtypes import BFLOAT16_MAX, bfloat16_bits, have_bfloat16, round_once


def _value(bits: int) -> Fraction:
    """The exact value of a finite bfloat16 bit pattern."""
    sign = -1 if bits >> 15 else 1
    exponent, mantissa = (bits >> 7) & 0xFF, bits & 0x7F
    if exponent == 0:
        return sign * Fraction(mantissa, 128) * Fraction(2) ** -126
    return sign * (1 + Fraction(mantissa, 128)) * Fraction(2) ** (exponent - 127)


def _nearest_even(x: float) -> int:
    """The bfloat16 nearest ``x`` by exact arithmetic, ties to the even pattern (brute force around float32(x))."""
    exact = Fraction(x)
    near = int(np.array(x, np.float32).view(np.uint32)) >> 16
    candidates = [b for b in range(max(near - 2, 0), near + 3) if b & 0x7F80 != 0x7F80 or b & 0x7F == 0]
    candidates += [b | 0x8000 for b in candidates] + [b & 0x7FFF for b in candidates]
    finite = [b for b in set(candidates) if (b >> 7) & 0xFF != 0xFF]
    best = min(finite, key=lambda b: (abs(_value(b) - exact), b & 1, (b >> 15) != (x < 0 or str(x) == "-0.0")))
    if abs(exact) >= Fraction(BFLOAT16_MAX) + Fraction(2) ** (127 - 8):  # at or past the tie with 2**128
        return 0xFF80 if x < 0 else 0x7F80
    return best


def _samples() -> np.ndarray:
    rng = np.random.default_rng(20)
    ties = np.array([1 + 2**-8, 1 + 3 * 2**-8, 1 + 2**-8 + 2**-30, 1 + 2**-8 - 2**-40, 2**-134, 3 * 2**-135, 2**-149])
    scales = 2.0 ** rng.integers(-140, 128, 3000)
    return np.concatenate([ties, -ties, rng.standard_normal(3000) * scales, [BFLOAT16_MAX, 3.3961e38, 3.3962e38, 0.0]])


def test_every_sample_is_the_nearest_bfloat16_ties_to_even():
    samples = _samples()
    got = bfloat16_bits(samples)
    wrong = [
        (float(x), hex(int(g)), hex(_nearest_even(float(x))))
        for x, g in zip(samples, got)
        if g != _nearest_even(float(x))
    ]
    assert not wrong, wrong[:5]


def test_a_value_just_above_a_tie_rounds_up_where_a_float32_detour_rounds_down():
    x = 1 + 2**-8 + 2**-30
    detour = int(np.array(x, np.float32).view(np.uint32)) >> 16  # what rounding through float32 and truncating gives
    assert int(bfloat16_bits(x)) == 0x3F81 != detour


def test_specials_keep_their_sign_and_kind():
    values = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, -np.nan, 1e300, -1e300, 5e-324, -5e-324])
    assert [hex(int(b)) for b in bfloat16_bits(values)] == [
        "0x0", "0x8000", "0x7f80", "0xff80", "0x7fc0", "0xffc0", "0x7f80", "0xff80", "0x0", "0x8000",
    ]  # fmt: skip


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
def test_other_dtypes_are_numpys_own_casts(dtype):
    values = np.array([1 / 3, 65520.0, -2.5e-8])
    with np.errstate(over="ignore"):
        assert np.array_equal(round_once(values, dtype), values.astype(dtype))


@pytest.mark.skipif(not have_bfloat16(), reason="ml_dtypes (the bfloat16 extra) is not installed")
def test_round_once_holds_bfloat16_arrays_of_those_bits():
    held = round_once(_samples(), "bfloat16")
    assert held.dtype.name == "bfloat16" and np.array_equal(held.view(np.uint16), bfloat16_bits(_samples()))
