"""The adapters of issue 18: paddle, mlx, haiku, equinox, onnxruntime, mindspore, and the TensorFlow.js peer.

Each runs as a user runs it (``embconf run --impl ...``, skipped with the reason when its framework is
absent). What it passes and how it deviates are asserted as measured on the framework itself
(../shared/docs/conventions.md, "More frameworks"): a deviation here is the framework's behaviour,
checked against the framework, never a false failure of the adapter.
"""

from __future__ import annotations

import re
import sys

import pytest
from helpers import assert_exit, outcomes, run_reported, selecting
from test_frameworks import in_fresh_python, needs

from embconf.adapters import ImplementationError, create_adapter
from embconf.adapters.frameworks import install_line

TFJS_GATHER = "subprocess:node examples/tfjs/embconf_tfjs.js"
TFJS_LAYER = "subprocess:node examples/tfjs/embconf_tfjs.js layer"
NEGATIVE = {"lookup.error.negative_one", "lookup.error.negative_vocab", "lookup.error.negative_0d"}
ABOVE = {"lookup.error.id_equals_vocab", "lookup.error.id_far_above", "lookup.error.vocab_1_id_1"}
HALF_MANY_REPEATS = {"half.float16.backward.many_repeats", "half.bfloat16.backward.many_repeats"}


def measuring(impl: str, *select: str) -> list[str]:
    """The options a framework's cases are measured with: two minutes a case, the cases matching ``select``,
    and a peer's messages checked against the protocol's schemas."""
    args = ["--case-timeout", "120", *selecting(select)]
    return args + (["--validate-protocol"] if impl.startswith("subprocess:") else [])


def failing(found: dict) -> set[str]:
    return {case for case, outcome in found.items() if outcome not in ("pass", "not_applicable")}


def passing_all(found: dict, prefix: str) -> bool:
    cases = [outcome for case, outcome in found.items() if case.startswith(prefix) and outcome != "not_applicable"]
    return bool(cases) and all(outcome == "pass" for outcome in cases)


# ----- ONNX Runtime: one Gather node ---------------------------------------------------------


def test_onnxruntime_gather_counts_negative_indices_from_the_back(tmp_path):
    needs("onnxruntime")
    result, report = run_reported(tmp_path, "onnxruntime", *measuring("onnxruntime", "lookup.*", "half.*"), timeout=900)
    found = outcomes(report)
    assert_exit(result, 1)
    assert passing_all(found, "lookup.forward.") and passing_all(found, "half.float16.forward.")
    assert failing(found) == NEGATIVE | {"lookup.error.int32_negative"}  # ONNX's definition: [-V, V-1]
    assert found["lookup.error.id_equals_vocab"] == "pass"  # InvalidArgument "out of data bounds"
    assert found["lookup.backward.module_example_020"] == "not_applicable"  # forward only
    in_fresh_python(
        "onnxruntime",
        """
        reply = create_adapter("onnxruntime").call("embedding_forward", {"weight": np.arange(8, dtype=np.float32).reshape(4, 2), "ids": np.array([-1, -4])})
        assert reply.outputs["output"].tolist() == [[6.0, 7.0], [0.0, 1.0]], reply  # -1 is the last row, -V the first
        reply = create_adapter("onnxruntime").call("embedding_forward", {"weight": np.ones((4, 2), np.float32), "ids": np.array([[1, 4]], np.int32)})
        assert (reply.status, reply.error_kind) == (Status.REJECTED, "index_out_of_range"), reply
    """,
    )


# ----- MLX -------------------------------------------------------------------------------------


def test_mlx_wraps_negative_ids_reads_past_the_table_and_a_segfault_is_one_crash(tmp_path):
    needs("mlx")
    result, report = run_reported(tmp_path, "mlx", *measuring("mlx", "lookup.*", "half.*"), timeout=900)
    found = outcomes(report)
    stdout = result.stdout
    assert_exit(result, 1)
    assert passing_all(found, "lookup.forward.") and passing_all(found, "lookup.backward.")
    crashed = {case for case, outcome in found.items() if outcome == "crash"}
    assert {"lookup.error.id_2_pow_32", "lookup.error.id_2_pow_40"} <= crashed  # far outside: SIGSEGV in the worker
    assert all(case.startswith("lookup.error.") for case in crashed)  # a write past the table may crash too
    assert NEGATIVE | ABOVE | HALF_MANY_REPEATS <= failing(found)  # wraps; no check above V; half accumulation
    assert found["lookup.error.backward_grad_shape"] == "pass"  # MLX's own cotangent check, mapped
    crash = [line for line in stdout.splitlines() if line.startswith("CRASH lookup.error.id_2_pow_32")]
    assert crash and "killed by SIGSEGV" in crash[0]
    assert found["lookup.backward.empty_ids"] == "pass"  # the run went on after the crashes


def test_mlx_sinusoidal_encoding_is_the_mlx_profile_it_declares(tmp_path):
    needs("mlx")
    result, report = run_reported(tmp_path, "mlx", *measuring("mlx", "sin.*"), timeout=900)
    found = outcomes(report)
    stdout = result.stdout
    assert_exit(result, 0)
    assert passing_all(found, "sin.mlx.")  # its defaults: EMB-SIN-V4, odd D refused as invalid_config
    assert all(outcome in ("pass", "not_applicable") for outcome in found.values())
    assert found["sin.canonical.l50_d7"] == "not_applicable"  # no canonical table is claimed
    assert "(EMB-SIN-V4)" in stdout


# ----- dm-haiku, both lookup styles ------------------------------------------------------------


def test_haiku_array_index_wraps_and_clamps(tmp_path):
    needs("haiku")
    result, report = run_reported(tmp_path, "haiku", *measuring("haiku", "lookup.*", "half.*"), timeout=900)
    found = outcomes(report)
    assert_exit(result, 1)
    assert passing_all(found, "lookup.forward.") and passing_all(found, "half.float16.forward.")
    assert NEGATIVE | ABOVE | {"lookup.error.id_2_pow_32"} | HALF_MANY_REPEATS <= failing(found)
    assert found["lookup.error.backward_grad_shape"] == "pass"
    assert found["lookup.error.float_half"] == "not_applicable"  # Haiku refuses float ids: not claimed


def test_haiku_one_hot_gives_zero_rows_and_float32_for_half_tables(tmp_path):
    needs("haiku:one_hot")
    result, report = run_reported(
        tmp_path, "haiku:one_hot", *measuring("haiku:one_hot", "lookup.*", "half.*"), timeout=900
    )
    found = outcomes(report)
    assert_exit(result, 1)
    assert passing_all(found, "lookup.backward.")
    assert found["lookup.forward.special_values"] == "fail"  # 0 * NaN spreads into every row
    assert {"half.float16.forward.random", "half.bfloat16.forward.random"} <= failing(found)  # float32 output
    assert not HALF_MANY_REPEATS & failing(found)  # the one-hot matmul accumulates in float32
    in_fresh_python(
        "haiku",
        """
        weight = np.arange(8, dtype=np.float32).reshape(4, 2)
        reply = create_adapter("haiku:one_hot").call("embedding_forward", {"weight": weight, "ids": np.array([-1, 4, 1])})
        assert reply.outputs["output"].tolist() == [[0.0, 0.0], [0.0, 0.0], [2.0, 3.0]], reply
        reply = create_adapter("haiku").call("embedding_forward", {"weight": weight, "ids": np.array([-1, 9])})
        assert reply.outputs["output"].tolist() == [[6.0, 7.0], [6.0, 7.0]], reply  # wrapped; clamped
    """,
    )


# ----- Equinox -----------------------------------------------------------------------------------


def test_equinox_maps_scalar_lookups_over_any_ids(tmp_path):
    needs("equinox")
    result, report = run_reported(tmp_path, "equinox", *measuring("equinox", "lookup.*"), timeout=900)
    found = outcomes(report)
    assert_exit(result, 1)
    assert passing_all(found, "lookup.forward.") and passing_all(found, "lookup.backward.")
    assert found["lookup.forward.ids_0d"] == found["lookup.forward.empty_sequence"] == "pass"
    assert NEGATIVE | ABOVE | {"lookup.error.id_2_pow_32"} <= failing(found)


# ----- PaddlePaddle ------------------------------------------------------------------------------


@pytest.mark.parametrize("impl", ["paddle", "paddle:functional"])
def test_paddle_options_pass_and_its_measured_deviations_fail(tmp_path, impl):
    needs(impl)
    result, report = run_reported(tmp_path, impl, *measuring(impl, "lookup.*", "options.*", "half.*"), timeout=900)
    found = outcomes(report)
    assert_exit(result, 1)
    for prefix in ("lookup.forward.", "lookup.backward.", "lookup.sparse.", "options.freq.", "options.max_norm."):
        assert passing_all(found, prefix), prefix
    assert (
        failing(found)
        == {
            "lookup.error.negative_one",  # -1 is not range-checked on the CPU: it reads before the table
            "lookup.error.int32_negative",
            "options.padding.forward_row_as_stored",  # documented: the padding row reads as zeros
            "options.padding.forward_negative",
            "options.padding.error_below_minus_vocab",  # accepted and ignored
        }
        | HALF_MANY_REPEATS
    )
    assert found["lookup.error.float_half"] == "not_applicable"  # float ids: NotImplementedError, not claimed
    assert found["options.padding.error_equals_vocab"] == found["lookup.error.backward_negative"] == "pass"


# ----- MindSpore (an environment of its own: NumPy < 2) -----------------------------------------------


def test_mindspore_wraps_once_and_keeps_the_padding_rows_gradient(tmp_path):
    needs("mindspore")
    result, report = run_reported(
        tmp_path, "mindspore", *measuring("mindspore", "lookup.*", "options.*", "half.*"), timeout=900
    )
    found = outcomes(report)
    assert_exit(result, 1)
    assert passing_all(found, "lookup.forward.")
    assert NEGATIVE | {"lookup.error.id_2_pow_32", "lookup.error.backward_negative"} <= failing(found)
    assert found["lookup.error.id_equals_vocab"] == found["lookup.error.backward_grad_shape"] == "pass"
    assert {"options.padding.backward_zero_row", "options.padding.backward_negative_one"} <= failing(found)
    assert found["lookup.backward.empty_ids"] == "error"  # UnsortedSegmentSum refuses an empty input
    assert found["half.bfloat16.forward.random"] == "not_applicable"  # no bfloat16 Gather on the CPU


# ----- TensorFlow.js over the wire -----------------------------------------------------------------


def test_tfjs_gather_narrows_int64_ids_and_checks_the_rest(tmp_path):
    needs(TFJS_GATHER)  # node on PATH, @tensorflow/tfjs installed by npm ci
    result, report = run_reported(tmp_path, TFJS_GATHER, *measuring(TFJS_GATHER, "lookup.*"), timeout=900)
    found = outcomes(report)
    assert_exit(result, 1)
    assert passing_all(found, "lookup.forward.") and passing_all(found, "lookup.backward.")
    assert failing(found) == {"lookup.error.id_2_pow_32", "lookup.error.id_2_pow_40"}  # int32 tensors
    assert found["lookup.error.backward_grad_shape"] == "pass"  # tf.grad's own dy check


def test_tfjs_layer_casts_float_ids(tmp_path):
    needs(TFJS_GATHER)  # node on PATH, @tensorflow/tfjs installed by npm ci
    result, report = run_reported(
        tmp_path,
        TFJS_LAYER,
        *measuring(TFJS_LAYER, "lookup.forward.*", "lookup.error.float_*", "*.backward_grad_shape"),
        timeout=900,
    )
    found = outcomes(report)
    assert_exit(result, 1)
    assert passing_all(found, "lookup.forward.")
    assert found["lookup.forward.float_ids_integral"] == "pass"
    assert {"lookup.error.float_half", "lookup.error.float_nan", "lookup.error.float_2_7"} <= failing(found)
    assert found["lookup.error.backward_grad_shape"] == "error"  # its broadcasting error: the exception reply, no crash


# ----- a missing framework -----------------------------------------------------------------------


@pytest.mark.parametrize(
    "impl, module, extra",
    [
        ("paddle", "paddle", "paddle"),
        ("mlx", "mlx.core", "mlx"),
        ("haiku", "haiku", "haiku"),
        ("equinox", "equinox", "equinox"),
        ("onnxruntime", "onnxruntime", "onnxruntime"),
        ("mindspore", "mindspore", "mindspore"),
    ],
)
def test_a_missing_new_framework_is_the_pip_install_line(monkeypatch, impl, module, extra):
    monkeypatch.setitem(sys.modules, module, None)
    with pytest.raises(ImplementationError, match=re.escape(install_line(extra))) as raised:
        create_adapter(impl)
    assert "embedding-conformance" not in str(raised.value)  # the suite is on no index: the packages themselves


@pytest.mark.parametrize(
    "impl", ["paddle:cuda", "mlx:gpu", "haiku:dense", "equinox:x", "onnxruntime:cuda", "mindspore:ascend"]
)
def test_an_unknown_target_is_one_line(impl):
    with pytest.raises(ImplementationError, match="takes no target"):
        create_adapter(impl)
