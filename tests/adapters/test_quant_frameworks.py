"""The quantized columns (spec section 17): ggml's get_rows on Q8_0 / Q4_0, gguf-py's NumPy quantizer, MLX's
QuantizedEmbedding, FBGEMM's fused row-wise operators, ONNX Runtime's GatherBlockQuantized and torchao's quantized
nn.Embedding, each called on tables the reference quantized: what each computes is the spec's answer where it
follows it, its declared convention's where it declares one, and what it was measured to do where it deviates; a
format or option it does not have is declined (never a failure). A column whose framework is not installed is
skipped with the reason."""

from __future__ import annotations

import importlib.util
import subprocess
import sys

import numpy as np
import pytest

from embconf.adapters import create_adapter
from embconf.model.contract import Status
from embconf.reference.quantize import quantize_table
from embconf.reference.quantized import quantized_bag_forward, quantized_lookup

NEEDS = {
    "ggml_quant": ["ggml"],
    "gguf": ["gguf"],
    "mlx_quant": ["mlx"],
    "fbgemm": ["fbgemm_gpu", "torch"],
    "onnxruntime_quant": ["onnxruntime", "onnx", "onnx_ir"],
    "torchao": ["torchao", "torch"],
}
FORMATS = {  # what each column declares (its framework's own formats, or ones it reads exactly)
    "ggml_quant": {"quant-q8_0", "quant-q4_0"},
    "gguf": {"quant-q8_0", "quant-q4_0"},
    "mlx_quant": {"quant-affine"},
    "fbgemm": {"quant-fused8_rowwise", "quant-fused4_rowwise"},
    "onnxruntime_quant": {"quant-q8_0", "quant-q4_0"},
    "torchao": {"quant-q8_0", "quant-q4_0"},
}
TIES = np.array([127.0, 0.5, 1.5, 2.5, -0.5, -2.5] + [0.0] * 26, dtype=np.float32)  # d = 1: exact .5 ties


def adapter(impl: str):
    """The column ``impl`` (KIND[:TARGET]), or a skip naming what its framework needs."""
    missing = [m for m in NEEDS[impl.partition(":")[0]] if importlib.util.find_spec(m) is None]
    if missing:
        pytest.skip(f"{impl}: needs {', '.join(missing)}, not installed")
    return create_adapter(impl)


def table(rows: int = 6, width: int = 64, seed: int = 0) -> np.ndarray:
    """A float32 table with a zero row and a row of exact ties."""
    values = (np.random.default_rng(seed).standard_normal((rows, width)) * 3).astype(np.float32)
    values[1] = 0
    values[2, :32] = TIES
    return values


def outputs(reply, name: str) -> np.ndarray:
    assert reply.status is Status.OUTPUTS, reply.message
    return np.asarray(reply.outputs[name])


def looked_up(impl: str, fmt: str, width: int, out_dtype: str = "float32") -> tuple[np.ndarray, np.ndarray]:
    """(the column's rows, the reference's) of ids [[0, 5], [2, 2]] of a table the reference quantized."""
    qweight = quantize_table(table(width=width), fmt)
    ids = np.array([[0, 5], [2, 2]], dtype=np.int64)
    inputs = dict(qweight=qweight, ids=ids, format=fmt, embed_dim=width, out_dtype=out_dtype)
    return outputs(adapter(impl).call("quantized_lookup", inputs), "output"), quantized_lookup(**inputs)


@pytest.mark.parametrize("impl", sorted(NEEDS))
def test_each_quantized_column_declares_only_its_frameworks_formats(impl):
    claimed = {f for f in adapter(impl).capabilities().features if f.startswith("quant-") and f != "quant-bag-weights"}
    assert claimed == FORMATS[impl]


@pytest.mark.parametrize(
    "impl, fmt, out_dtype",
    [
        (impl, fmt, out)
        for impl in ("ggml_quant", "gguf", "onnxruntime_quant", "torchao")
        for fmt in ("q8_0", "q4_0")
        for out in ("float32", "float16")
    ]
    + [("fbgemm", "fused8_rowwise", "float32"), ("fbgemm", "fused4_rowwise", "float32")]
    + [("fbgemm", "fused4_rowwise", "float16")],
)
def test_a_lookup_of_an_exact_format_is_the_reference_bit_for_bit(impl, fmt, out_dtype):
    got, expected = looked_up(impl, fmt, 64, out_dtype)
    assert got.dtype == expected.dtype and np.array_equal(got, expected)  # ggml's (q - 8) * d may be -0.0: equal


def test_mlx_dequantizes_in_its_scales_dtype_within_two_roundings():
    """MLX computes ``w * scales`` and then ``+ biases``, each rounded (EMB-QNT-7's affine tolerance)."""
    for fmt, out_dtype, p in (("affine3_g32", "float32", 24), ("affine8_g64_float16", "float16", 11)):
        qweight = quantize_table(table(width=128).astype(np.float16).astype(np.float32), fmt)
        inputs = dict(qweight=qweight, ids=np.arange(6), format=fmt, embed_dim=128, out_dtype=out_dtype)
        got = outputs(adapter("mlx_quant").call("quantized_lookup", inputs), "output").astype(np.float64)
        exact = quantized_lookup(**{**inputs, "out_dtype": "float32"}).astype(np.float64)
        assert np.all(np.abs(got - exact) <= 2.0 ** (2 - p) * (np.abs(exact) + 64))


@pytest.mark.parametrize(
    "impl, fmt, conventions",
    [
        ("ggml_quant", "q8_0", ()),
        ("ggml_quant", "q4_0", ()),
        ("gguf", "q8_0", ()),
        ("gguf", "q4_0", ()),
        ("fbgemm", "fused8_rowwise", ()),
        ("fbgemm", "fused4_rowwise", ()),
        ("mlx_quant", "affine4_g32", ()),
        ("torchao", "q8_0", ("round_half_even",)),
        ("torchao", "q4_0", ("round_half_even",)),
    ],
)
def test_a_quantizer_writes_the_references_bytes_under_its_declared_conventions(impl, fmt, conventions):
    weight = table()
    got = outputs(adapter(impl).call("quantize_table", dict(weight=weight, format=fmt)), "qweight")
    assert np.array_equal(got, quantize_table(weight, fmt, conventions))


def test_mlx_quantizes_one_bit_groups_from_their_minimum_and_wider_ones_by_the_edge_rule():
    weight = table(rows=16, width=128, seed=3)
    one = outputs(adapter("mlx_quant").call("quantize_table", dict(weight=weight, format="affine1_g32")), "qweight")
    two = outputs(adapter("mlx_quant").call("quantize_table", dict(weight=weight, format="affine2_g32")), "qweight")
    assert np.array_equal(one, quantize_table(weight, "affine1_g32", ("bias_from_min",)))
    assert np.array_equal(one, quantize_table(weight, "affine1_g32"))  # the spec follows MLX for 1 bit (EMB-QNT)
    assert np.array_equal(two, quantize_table(weight, "affine2_g32"))


def test_gguf_writes_ggmls_bytes_except_for_a_nan_which_ggml_skips():
    weight = table()
    weight[3, 40] = np.nan
    ggml = outputs(adapter("ggml_quant").call("quantize_table", dict(weight=weight, format="q8_0")), "qweight")
    with np.errstate(invalid="ignore"):
        gguf = outputs(adapter("gguf").call("quantize_table", dict(weight=weight, format="q8_0")), "qweight")
    differing = {int(r) for r in np.nonzero((ggml != gguf).any(axis=1))[0]}
    assert differing == {3}  # gguf's d is NaN (NumPy's max propagates it), ggml's the largest of the others
    assert np.isnan(gguf[3, 34:36].astype(np.uint8).view(np.float16)[0])


def test_ggml_rounds_a_q8_0_tie_away_from_zero_and_torchao_to_even():
    ties = np.tile(TIES, (1, 1))
    ggml = outputs(adapter("ggml_quant").call("quantize_table", dict(weight=ties, format="q8_0")), "qweight")
    torchao = outputs(adapter("torchao").call("quantize_table", dict(weight=ties, format="q8_0")), "qweight")
    assert ggml[0, 2:8].astype(np.uint8).view(np.int8).tolist() == [127, 1, 2, 3, -1, -3]
    assert torchao[0, 2:8].astype(np.uint8).view(np.int8).tolist() == [127, 0, 2, 2, 0, -2]


def test_ggml_cpy_rounds_a_q8_0_tie_to_even_and_a_q4_0_tie_up():
    """The CPU backend's quantizers (ggml_cpy): Q8_0 is its SIMD quantize_row_q8_0, Q4_0 the reference."""
    weight = np.tile(TIES, (1, 1))
    q8 = outputs(adapter("ggml_quant:cpy").call("quantize_table", dict(weight=weight, format="q8_0")), "qweight")
    q4 = outputs(adapter("ggml_quant:cpy").call("quantize_table", dict(weight=weight, format="q4_0")), "qweight")
    assert np.array_equal(q8, quantize_table(weight, "q8_0", ("round_half_even",)))
    assert np.array_equal(q4, quantize_table(weight, "q4_0"))


def test_onnxruntime_keeps_the_minimum_where_a_q4_0_block_has_two_extremes_of_one_magnitude():
    """ONNX Runtime's Gather quantizer takes the min when |max| = |min|; ggml the first of largest magnitude."""
    weight = np.zeros((1, 32), dtype=np.float32)
    weight[0, :2] = [8.0, -8.0]
    got = outputs(adapter("onnxruntime_quant").call("quantize_table", dict(weight=weight, format="q4_0")), "qweight")
    expected = quantize_table(weight, "q4_0", ("round_half_even",))
    assert got[0, :2].astype(np.uint8).view(np.float16)[0] == 1.0  # d = -8 / -8
    assert expected[0, :2].astype(np.uint8).view(np.float16)[0] == -1.0  # d = 8 / -8


def test_onnxruntime_gives_a_zero_row_for_an_id_outside_the_table():
    qweight = quantize_table(table(), "q8_0")
    inputs = dict(qweight=qweight, ids=np.array([6, -7, -1]), format="q8_0", embed_dim=64, out_dtype="float32")
    got = outputs(adapter("onnxruntime_quant").call("quantized_lookup", inputs), "output")
    assert not got[:2].any() and np.array_equal(got[2], quantized_lookup(**{**inputs, "ids": np.array([5])})[0])


def test_fbgemm_folds_a_bags_weights_into_the_scale_and_averages_by_the_count():
    qweight = quantize_table(table(), "fused4_rowwise")
    weights = np.array([0.5, 2.0, -1.0], dtype=np.float32)
    inputs = dict(qweight=qweight, ids=np.array([0, 3, 4]), offsets=np.array([0]), format="fused4_rowwise")
    fbgemm = adapter("fbgemm")
    summed = outputs(fbgemm.call("quantized_bag_forward", {**inputs, "mode": "sum", "embed_dim": 64}), "output")
    reference = quantized_bag_forward(**inputs, mode="sum", embed_dim=64)
    assert np.allclose(summed, reference, rtol=0, atol=1e-5)
    mean = dict(inputs, mode="mean", embed_dim=64, per_sample_weights=weights)
    got = outputs(fbgemm.call("quantized_bag_forward", mean), "output")
    weighted_sum = quantized_bag_forward(**{**mean, "mode": "sum"})
    assert np.allclose(got, weighted_sum / 3, rtol=0, atol=1e-5)  # the spec divides by the weights' sum (1.5)


def call_inputs(operation: str, fmt: str, **given) -> dict:
    """The inputs of ``operation`` on a 6-row table of ``fmt`` (affine ones 128 wide, the others 64), ``given`` on top."""
    width = 128 if fmt.startswith("affine") else 64
    weight = table(width=width)
    every = dict(weight=weight, qweight=quantize_table(weight, fmt), ids=np.array([1]), offsets=np.array([0]))
    every.update({"format": fmt, "embed_dim": width, "out_dtype": "float32", "mode": "sum", **given})
    names = {
        "quantized_lookup": ("qweight", "ids", "format", "embed_dim", "out_dtype"),
        "quantize_table": ("weight", "format"),
        "quantized_bag_forward": ("qweight", "ids", "offsets", "mode", "format", "embed_dim"),
    }
    return {name: every[name] for name in names[operation]}


@pytest.mark.parametrize(
    "impl, operation, fmt, given",
    [
        ("mlx_quant", "quantized_lookup", "affine4_g32", {"out_dtype": "float16"}),  # its output is float32 here
        ("fbgemm", "quantized_bag_forward", "fused8_rowwise", {"mode": "mean"}),  # the byte operator only sums
        ("fbgemm", "quantized_lookup", "fused8_rowwise", {"out_dtype": "float16"}),
        ("ggml_quant", "quantize_table", "fused8_rowwise", {}),
        ("onnxruntime_quant", "quantize_table", "q8_0", {}),  # its Gather quantizer writes 4-bit blocks only
    ],
)
def test_an_option_a_framework_lacks_is_declined(impl, operation, fmt, given):
    reply = adapter(impl).call(operation, call_inputs(operation, fmt, **given))
    assert reply.status is Status.SKIPPED and "declined" in reply.message


def test_ggml_aborts_on_a_quantized_row_outside_the_table():
    """ggml's GGML_ASSERT in get_rows kills the process (the runner's worker turns it into a crash)."""
    adapter("ggml_quant")
    code = (
        "import numpy as np\nfrom embconf.adapters import create_adapter\n"
        "from embconf.reference.quantize import quantize_table\n"
        "q = quantize_table(np.ones((2, 32), np.float32), 'q8_0')\n"
        "create_adapter('ggml_quant').call('quantized_lookup', dict(qweight=q, ids=np.array([2]), format='q8_0',"
        " embed_dim=32, out_dtype='float32'))\n"
    )
    child = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert child.returncode < 0 or child.returncode == 134
