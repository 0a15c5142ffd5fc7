"""ONNX's RotaryEmbedding operators in ONNX Runtime (``onnxruntime_rope[:contrib]``) and ggml's lookup (``ggml``, C
through ggml-python): what each adapter computes against NumPy, what it maps and declines, and what ggml does with
an id outside the table (it aborts the process: the run records a crash, not an error kind). Each test skips with
the reason when its framework is absent.
"""

from __future__ import annotations

import signal
import subprocess
import sys

import numpy as np
import pytest
from helpers import assert_outcomes, run_reported
from rope_probe import allowed, rotated
from test_frameworks import needs

from embconf.adapters import create_adapter
from embconf.model.errors import Decline
from embconf.reference.errors import EmbeddingError

ONNX_ROPE = ["onnxruntime_rope", "onnxruntime_rope:contrib"]
DEFAULT = {"rope_type": "default"}
OTHER = {"half_split": "interleaved", "interleaved": "half_split"}


def adapter(impl: str):
    needs(impl)
    return create_adapter(impl)


@pytest.mark.parametrize("impl", ONNX_ROPE)
def test_onnx_rotary_embedding_rotates_the_declared_pairings_and_keeps_the_rest(impl):
    rope = adapter(impl).handlers["rope_forward"]
    rng = np.random.default_rng(35)
    x = rng.standard_normal((2, 3, 5, 10)).astype(np.float32)
    positions = np.array([0, 7, 3, 4100, 4100])  # any positions, looked up in the caches
    for pairing in OTHER:
        got = rope(x, positions, 8, 10000.0, DEFAULT, pairing)
        want = rotated(x, positions, 8, 10000.0, pairing)
        assert np.abs(got - want).max() <= allowed(positions, x)
        assert np.abs(got - rotated(x, positions, 8, 10000.0, OTHER[pairing])).max() > 100 * allowed(positions, x)
        assert np.array_equal(got[..., 8:], x[..., 8:])  # rotary_embedding_dim 8 of 10: the rest as given


@pytest.mark.parametrize("impl", ONNX_ROPE)
def test_onnx_rotary_embedding_refusals_are_onnx_runtimes_own_and_typed(impl):
    onnx = adapter(impl)
    rope = onnx.handlers["rope_forward"]
    x = np.ones((2, 8, 8), dtype=np.float32)
    for args, kind in (((np.arange(8), 10), "invalid_config"), ((np.arange(7), 8), "shape_mismatch")):
        with pytest.raises(EmbeddingError) as raised:
            rope(x, args[0], args[1], 10000.0, DEFAULT, "half_split")
        assert raised.value.kind == kind and getattr(raised.value, "decided_by", "") == ""
    with pytest.raises(Decline):  # the caches are the caller's: a scaled table would not be the operator's
        rope(x, np.arange(8), 8, 10000.0, {"rope_type": "linear", "factor": 2.0}, "half_split")
    assert onnx.capabilities().operations == frozenset({"rope_forward", "rope_apply"})  # no gradient, no tables API


@pytest.mark.parametrize("impl", ONNX_ROPE)
def test_onnx_rope_apply_takes_the_cases_tables_as_its_caches_and_declines_pairs_that_differ(impl):
    rope_apply = adapter(impl).handlers["rope_apply"]
    rng = np.random.default_rng(35)
    x = rng.standard_normal((2, 3, 5, 10)).astype(np.float32)
    angles = rng.uniform(-3, 3, (2, 5, 4))  # (B, T, h): per-batch tables
    for pairing in OTHER:
        first = slice(0, 4) if pairing == "half_split" else slice(0, 8, 2)
        second = slice(4, 8) if pairing == "half_split" else slice(1, 8, 2)
        cos, sin = np.zeros((2, 5, 8), np.float32), np.zeros((2, 5, 8), np.float32)
        for columns in (first, second):
            cos[..., columns], sin[..., columns] = np.cos(angles), np.sin(angles)
        got = rope_apply(x, cos, sin, pairing)
        c, s = cos[:, None, :, first], sin[:, None, :, first]
        want = x.astype(np.float64)
        want[..., first] = x[..., first] * c - x[..., second] * s
        want[..., second] = x[..., second] * c + x[..., first] * s
        assert np.abs(got - want).max() < 1e-5 and np.array_equal(got[..., 8:], x[..., 8:])
        sin[..., second] *= 2  # the two columns of a pair now read different values: no cache holds that
        with pytest.raises(Decline, match="pair"):
            rope_apply(x, cos, sin, pairing)


def test_ggml_is_a_c_implementation_and_looks_up_rows_exactly():
    ggml = adapter("ggml")
    assert ggml.describe()["language"] == "c"
    rng = np.random.default_rng(35)
    weight = rng.standard_normal((6, 4)).astype(np.float32)
    for ids in (np.array([[2, 0, 2], [5, 1, 1]]), np.array(3), np.array([], dtype=np.int64)):
        assert np.array_equal(ggml.handlers["embedding_forward"](weight, ids), weight[ids])
    ids = np.array([1, 4, 1, 1])
    grad = rng.standard_normal((4, 4)).astype(np.float32)
    want = np.zeros_like(weight)
    np.add.at(want, ids, grad)
    assert np.allclose(ggml.handlers["embedding_backward"](weight, ids, grad), want, rtol=0, atol=1e-6)


def test_ggml_adapter_declines_ids_without_an_int32_form_and_checks_what_its_backward_never_sees():
    ggml = adapter("ggml")
    weight = np.ones((4, 3), dtype=np.float32)
    with pytest.raises(Decline, match="int32"):
        ggml.handlers["embedding_forward"](weight, np.array([2**32]))
    with pytest.raises(EmbeddingError) as raised:
        ggml.handlers["embedding_backward"](weight, np.array([0, 1]), np.ones((2, 2), dtype=np.float32))
    assert raised.value.kind == "shape_mismatch" and raised.value.decided_by == "glue"
    with pytest.raises(EmbeddingError) as raised:
        x = np.ones((2, 8, 8), dtype=np.float32)
        ggml.handlers["rope_backward"](x, np.arange(8), 8, 1e4, DEFAULT, "half_split", x[..., :6])
    assert raised.value.kind == "shape_mismatch" and raised.value.decided_by == "glue"


def test_ggml_aborts_the_process_on_an_id_outside_the_table():
    needs("ggml")
    code = (
        "import numpy as np; from embconf.adapters import create_adapter; "
        "create_adapter('ggml').handlers['embedding_forward'](np.ones((4, 3), np.float32), np.array([4]))"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert result.returncode == -signal.SIGABRT, result.stderr[-2000:]


def test_a_ggml_run_records_the_abort_as_a_crash(tmp_path):
    needs("ggml")
    _, report = run_reported(tmp_path, "ggml", select=("lookup.error.id_equals_vocab", "lookup.forward.module_example"))
    assert_outcomes(report, {"lookup.error.id_equals_vocab": "crash", "lookup.forward.module_example": "pass"})
