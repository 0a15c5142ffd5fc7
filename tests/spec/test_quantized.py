"""Quantized tables (spec section 17): the goldens against code written apart from the reference (struct-read rows,
float32 arithmetic, tests/impls/quantized_plain.py), the formats' byte layouts and sizes worked by hand, small
quantizations worked by hand (ties, the nibble order, MLX's snapped edge), the errors in the section's order, and
every pair of the family's input domains covered."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest
from helpers import IMPLS, assert_exit, outcomes, problems, run_cli, run_named

from embconf.corpus.fixtures import load_corpus
from embconf.model.outcomes import NOT_APPLICABLE, PASS
from embconf.model.quantize_conventions import QuantizeConvention
from embconf.model.quantized import parse_format
from embconf.reference.errors import EmbeddingError
from embconf.reference.quantize import quantize_table
from embconf.reference.quantized import quantized_bag_forward, quantized_lookup, quantized_table_bytes, rounded
from embconf.reference.quantized_codec import pack_rows, round_fraction

PLAIN = f"functions:{IMPLS / 'quantized_plain.py'}"


@pytest.fixture(scope="module")
def quantized():
    return [case for case in load_corpus().cases if case.id.startswith("quant.")]


def test_code_written_apart_passes_every_quantized_case(quantized):
    """Rows read with struct and computed in float32 (two roundings), bags summed in float32: every case passes
    but those under a declared convention, which it does not declare."""
    run = run_named(PLAIN, quantized)
    result = outcomes(run)
    assert problems(run.results) == []
    conventions = {c.feature for c in QuantizeConvention}
    for case in quantized:
        expected = NOT_APPLICABLE if conventions & set(case.features) else PASS
        assert result[case.id] == expected, case.id
    assert len(quantized) >= 150


@pytest.mark.parametrize(
    ("name", "width", "row"),
    [
        ("q8_0", 4096, 4352),  # 128 blocks of 2 + 32 bytes
        ("q4_0", 4096, 2304),  # 128 blocks of 2 + 16 bytes
        ("fused8_rowwise", 127, 135),  # 127 + two float32
        ("fused4_rowwise", 127, 68),  # ceil(127 / 2) + two float16
        ("affine4_g64", 4096, 2560),  # 2048 + 64 scales and 64 biases of float32
        ("affine3_g128_float16", 384, 156),  # 144 + 3 scales and 3 biases of float16
        ("affine6_g32_bfloat16", 96, 84),  # 72 + 3 + 3 bfloat16
        ("affine1_g32", 32, 12),  # 4 + one float32 scale and bias
    ],
)
def test_row_bytes_are_the_layouts_worked_by_hand(name, width, row):
    assert quantized_table_bytes(32000, width, name) == {"row_bytes": row, "table_bytes": 32000 * row}
    assert quantize_table(np.ones((2, width), np.float32), name).shape == (2, row)


def _bytes(values) -> np.ndarray:
    return np.frombuffer(np.asarray(values).tobytes(), np.uint8).astype(np.int32)


def test_q8_0_rounds_a_tie_away_from_zero_and_stores_d_as_float16():
    block = np.zeros(32, np.float32)
    block[:5] = [127.0, 0.5, -0.5, 2.5, -2.5]
    stored = quantize_table(block.reshape(1, 32), "q8_0")[0]
    assert list(stored[:2]) == list(_bytes(np.float16(1.0)))
    assert list(stored[2:7].astype(np.uint8).view(np.int8)) == [127, 1, -1, 3, -3]


def test_q4_0_holds_element_j_low_and_j_plus_16_high_offset_by_8():
    q = np.arange(32) % 16
    d = np.float16(0.5)
    row = np.concatenate([_bytes(d), q[:16] | (q[16:] << 4)]).reshape(1, 18)
    values = quantized_lookup(row, np.array([0]), "q4_0", 32)[0]
    assert np.array_equal(values, (0.5 * (q - 8)).astype(np.float32))
    block = np.full((1, 32), 0.75, np.float32)
    block[0, 3] = 8.0  # the largest magnitude is positive: d = 8 / -8 = -1
    stored = quantize_table(block, "q4_0")[0]
    assert np.frombuffer(stored[:2].astype(np.uint8).tobytes(), np.float16)[0] == -1.0
    assert stored[2 + 3] & 15 == 0  # 8 / -1 + 8.5 truncates to 0: the value -8 * d = 8


def test_fused_rowwise_rounds_a_tie_to_even_and_puts_scale_and_bias_after_the_row():
    row = np.array([[0.0, 255.0, 1.5, 2.5, 3.5]], np.float32)
    stored = quantize_table(row, "fused8_rowwise")[0]
    assert list(stored[:5]) == [0, 255, 2, 2, 4]
    assert list(stored[5:]) == list(_bytes(np.array([1.0, 0.0], np.float32)))
    four = quantize_table(np.array([[0.0, 15.0, 0.5]], np.float32), "fused4_rowwise")[0]
    assert list(four) == [0 | 15 << 4, 0] + list(_bytes(np.array([1.0, 0.0], np.float16)))


def test_affine_snaps_the_larger_edge_as_mlx_does():
    """MLX's own example group (measured with mlx 0.32.4): -1 .. 2.1 in steps of 0.1, 2 bits: scale -1.05,
    bias 2.1 (the maximum, of larger magnitude, is exactly representable)."""
    group = (np.arange(32, dtype=np.float32) / 10 - 1.0).astype(np.float32)
    stored = quantize_table(np.tile(group, 2).reshape(1, 64), "affine2_g32")[0]
    scales = np.frombuffer(stored[16:32].astype(np.uint8).tobytes(), np.float32)
    assert scales[0] == np.float32(-1.05) and scales[2] == np.float32(2.1)


@pytest.mark.parametrize(
    ("call", "kind"),
    [
        (lambda t: quantized_lookup(t, np.array([-1]), "q4_k", 32), "invalid_config"),
        (lambda t: quantized_lookup(t, np.array([0]), "q8_0", 32, "bfloat16"), "invalid_config"),
        (lambda t: quantized_lookup(t, np.array([-1]), "q8_0", 48), "shape_mismatch"),
        (lambda t: quantized_lookup(t[:, :-1], np.array([-1]), "q8_0", 32), "shape_mismatch"),
        (lambda t: quantized_lookup(t, np.array([-1]), "q8_0", 32), "index_out_of_range"),
        (lambda t: quantized_lookup(t, np.array([2]), "q8_0", 32), "index_out_of_range"),
        (lambda t: quantized_table_bytes(-1, 48, "q8_0"), "invalid_config"),
        (lambda t: quantized_table_bytes(1, 0, "q8_0"), "invalid_config"),
    ],
)
def test_errors_are_the_sections_kinds_in_its_order(call, kind):
    table = quantize_table(np.ones((2, 32), np.float32), "q8_0")
    with pytest.raises(EmbeddingError) as raised:
        call(table)
    assert raised.value.kind == kind


def test_every_pair_of_the_familys_domains_is_covered():
    result = run_cli("coverage", "--area", "quantized", "--fail-under", "100", timeout=300)
    assert_exit(result, 0)
    assert "quantized" in result.stdout and "(100%)" in result.stdout


@pytest.mark.parametrize("dtype", ["float32", "float16"])
def test_exact_values_are_rounded_once_also_just_off_a_halfway_point(dtype):
    """The reference rounds an exact value through float64 and falls back to the exact rounding where float64
    lands halfway between two neighbours: values a hair off such halfway points (which float64 rounds onto them),
    on them, and past the largest finite value give the once-rounded answer; naive double rounding would miss
    about half of the first kind."""
    rng = np.random.default_rng(7)
    kind = np.dtype(dtype).type
    low = rng.uniform(-1000, 1000, 400).astype(dtype)
    high = np.nextafter(low, kind(np.inf))
    halfway = [(Fraction(float(a)) + Fraction(float(b))) / 2 for a, b in zip(low, high)]
    nudges = [Fraction(int(s), 2 ** int(k)) for s, k in zip(rng.choice([-1, 1], 400), rng.integers(60, 120, 400))]
    largest = np.finfo(dtype).max
    past = Fraction(float(largest)) + Fraction(float(largest - np.nextafter(largest, kind(0)))) / 2
    values = [h + n for h, n in zip(halfway, nudges)] + halfway + [past - Fraction(1, 2**300), past, -past]
    got = rounded(values, (len(values),), dtype)
    want = np.array([round_fraction(v, dtype) for v in values], dtype=dtype)
    assert got.tobytes() == want.tobytes()
    naive = np.array([float(v) for v in values]).astype(dtype)
    assert naive.tobytes() != want.tobytes()


def test_a_bag_sums_its_rows_exactly_before_its_one_rounding():
    """Rows 1 + 2^-24 and 2^-60 (fused8_rowwise: q 1, scales 2^-24 and 2^-60, biases 1 and 0): the exact sum lies
    just above the float32 halfway point between 1 and 1 + 2^-23 and rounds up; a sum kept in float64 loses the
    2^-60, lands on the halfway point and rounds to even, 1."""
    fmt = parse_format("fused8_rowwise")
    scales = np.array([[2.0**-24], [2.0**-60]], dtype=np.float32)
    table = pack_rows(np.ones((2, 1), dtype=np.uint8), scales, np.array([[1.0], [0.0]], dtype=np.float32), fmt)
    out = quantized_bag_forward(table, np.array([0, 1]), np.array([0]), "sum", "fused8_rowwise", 1)
    assert out.tolist() == [[1 + 2.0**-23]]
    assert np.float32((1 + 2.0**-24) + 2.0**-60) == 1  # what a float64 sum would give
