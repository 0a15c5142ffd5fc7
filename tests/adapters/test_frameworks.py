"""The framework adapters (flax, keras, tinygrad, transformers) and the torch glue marking.

Each column of the published matrix (docs/matrix.json) is run again here: its failing cases and
their outcomes must be exactly the ones recorded, so an upstream change in a framework (or in an
adapter) shows up as a test failure, never silently. Columns whose framework is not installed are
skipped; .ci/run installs torch, jax with flax, tinygrad and clang, so CI runs those for real.
"""

from __future__ import annotations

import importlib.util
import json
import re
import shutil
import sys

import pytest
from helpers import ROOT, assert_outcome, cases_with, run_cli, run_reported

from embconf.adapters import ImplementationError, create_adapter
from embconf.adapters.frameworks import install_line
from embconf.corpus.fixtures import load_corpus

MATRIX = json.loads((ROOT / "docs" / "matrix.json").read_text())
COLUMNS = {column["impl"]: column for column in MATRIX["implementations"]}
NEEDS = {
    "torch": ["torch"],
    "flax": ["flax", "jax"],
    "keras": ["keras", "keras_hub"],
    "tinygrad": ["tinygrad"],
    "transformers": ["transformers", "torch"],
    "paddle": ["paddle"],
    "mlx": ["mlx"],
    "haiku": ["haiku", "jax"],
    "equinox": ["equinox", "jax"],
    "onnxruntime": ["onnxruntime", "onnx"],
    "mindspore": ["mindspore"],  # in an environment of its own (NumPy < 2)
    "rotary_embedding_torch": ["rotary_embedding_torch", "einops", "torch"],
    "torchtune": ["torchtune", "torchao", "torch"],
    "x_transformers": ["x_transformers", "torch"],
    "megatron": ["megatron", "torch"],
    "ggml": ["ggml"],
    "onnxruntime_rope": ["onnxruntime", "onnx"],
    "torch_bag": ["torch"],  # the bag columns (spec 2.1.0): tests/adapters/test_bag_frameworks.py
    "tensorflow_bag": ["tensorflow"],
    "torchrec": ["torchrec", "fbgemm_gpu", "torch"],  # fbgemm-gpu-cpu (requirements-matrix.txt)
    "keras_rs": ["keras_rs", "keras", "tensorflow"],
    "ggml_quant": ["ggml"],  # the quantized columns (spec 2.3.0): tests/adapters/test_quant_frameworks.py
    "gguf": ["gguf"],
    "mlx_quant": ["mlx"],
    "fbgemm": ["fbgemm_gpu", "torch"],
    "onnxruntime_quant": ["onnxruntime", "onnx", "onnx_ir"],
    "torchao": ["torchao", "torch"],
}
GLUE_CASES = {
    "pos.error.x_2d",
    "pos.error.x_4d",
    "pos.error.dim_mismatch",
    "pos.error.too_long",
    "pos.error.seq_longer_than_table",
    "pos.error.start_past_end",
    "pos.error.start_negative",
    "pos.error.start_fraction",
    "pos.error.backward_too_long",
    "pos.error.overflow_2_from_0",  # spec 1.2.0: windows two and three rows past the end
    "pos.error.overflow_3_from_start",
    "layer.error.learned_overflow_2",
    "layer.error.learned_overflow_2_start",
    "layer.error.unknown_pos_encoding",
    "layer.error.pos_encoding_capitalised",
    "layer.error.learned_too_long",
    "layer.error.start_negative",
    "layer.error.backward_too_long",
    "mem.error.parameters_unknown_pos",
    "options.max_norm.error_not_positive",
}
# the pairwise goldens' errors the glue decides: start_pos, the rank and width of x and the tokens, the layer's
# pos_encoding, a max_norm that is not > 0 (each one of GLUE_CASES' kinds, at other boundaries)
PAIR_GLUE_CASES = {
    *(f"token_lookup.pairs.embedding_forward_max_norm.{n:03d}" for n in (21, 22)),
    *(f"learned_positions.pairs.learned_positions_backward.{n:03d}" for n in (10, 11, 12, 13, 14)),
    "embedding_layer.pairs.embedding_layer_forward.034",
    *(f"embedding_layer.pairs.embedding_layer_backward.{n:03d}" for n in (26, 27, 30, 34, 35)),
    "memory.pairs.parameter_count.020",
}
# PyTorch's CPU backward sums repeated ids in the half dtype: spec 1.1.0 fails it there by ruling (EMB-HLF-3)
HALF_RUNNING_SUMS = {"half.float16.backward.many_repeats", "half.bfloat16.backward.many_repeats"}


def torch_failing() -> set[str]:
    """The cases PyTorch fails by its own behaviour, each listed with its reason in examples/expectations/torch.yaml:
    half-precision running sums, and every row-sparse gradient of a lookup of one id (of the ids it takes, not
    float), which is made of views of grad_output and the ids (EMB-GEN-1)."""
    one_id = {
        case.id
        for case in load_corpus().cases
        if case.operation == "embedding_backward_sparse"
        and case.expected_error is None
        and "float_ids" not in case.features
        and case.inputs()["ids"].size == 1
    }
    return HALF_RUNNING_SUMS | one_id


# programs a framework needs on PATH besides its Python package (tinygrad's CPU device compiles with clang)
PROGRAMS = {"tinygrad": ["clang"]}


# MLX does not check ids >= V: it reads (forward) and writes (backward) outside the table, which may crash or not;
# each such column, with the cases of its ids outside the table (by prefix)
OUT_OF_BOUNDS_UNDEFINED = {
    "mlx": ("lookup.error.",),
    "mlx_quant": ("quant.error.lookup.id", "quant.lookup.pairwise.error.ids.range.", "quant.lookup.error."),
}
# cases whose outcome depends on memory earlier cases left: TorchRec hands an offset past the last id (7 of 6) to
# torch.embedding_bag, which reads an id past the end of the ids before its offsets check (alone: the spec's
# invalid_offsets, a pass; after other cases: whatever was there, index_out_of_range, a fail); compared apart
UNDEFINED_OUTCOME = {
    "torchrec": ("bags.pairs.embedding_bag_backward.044",),
}
# protocol peers of the matrix: the packages a peer's command needs installed (beside its program on PATH)
PEER_PACKAGES = {"examples/tfjs/": ROOT / "examples" / "tfjs" / "node_modules" / "@tensorflow" / "tfjs"}


def installed(impl: str) -> bool:
    kind, _, target = impl.partition(":")
    if kind == "subprocess":
        program = target.split()[0] if target.split() else ""
        packages = [path for marker, path in PEER_PACKAGES.items() if marker in target]
        return shutil.which(program) is not None and all(path.is_dir() for path in packages)
    return all(importlib.util.find_spec(module) is not None for module in NEEDS.get(kind, [])) and all(
        shutil.which(program) for program in PROGRAMS.get(kind, [])
    )


def needs(impl: str) -> None:
    """Skip, saying what is missing, unless ``impl``'s framework and the programs it needs are installed."""
    if not installed(impl):
        kind, _, target = impl.partition(":")
        if kind == "subprocess":
            pytest.skip(f"{impl}: needs {target.split()[0]} on PATH and its packages installed (npm ci)")
        pytest.skip(f"{impl}: needs {', '.join(NEEDS.get(kind, []) + PROGRAMS.get(kind, []))}, not all installed")


# ----- every column of the published matrix, measured again ----------------------------------


@pytest.mark.slow_tier
@pytest.mark.parametrize("impl", sorted(COLUMNS))
def test_each_implementation_deviates_exactly_as_the_matrix_records(tmp_path, impl):
    needs(impl)
    recorded = COLUMNS[impl]
    _, report = run_reported(tmp_path, impl, "--case-timeout", "120", timeout=900)
    undefined = UNDEFINED_OUTCOME.get(impl, ())
    now = {c["id"]: deviation(impl, c) for c in report["cases"] if c["outcome"] not in ("pass", "not_applicable")}
    then = {c["id"]: deviation(impl, c) for c in recorded["failing"]}
    counts_now, counts_then = without(report["summary"], now, undefined), without(recorded["summary"], then, undefined)
    now, then = ({k: v for k, v in side.items() if k not in undefined} for side in (now, then))
    version = f"recorded {recorded.get('version')}, installed {report['implementation'].get('version')}"
    new = {k: v for k, v in now.items() if then.get(k) != v}
    gone = {k: v for k, v in then.items() if now.get(k) != v}
    assert not new and not gone, (
        f"{impl} ({version}) no longer deviates as docs/matrix.json records: new {new}, "
        f"fixed or changed {gone}; regenerate with bash docs/regenerate-matrix.sh"
    )
    assert summary(impl, counts_now) == summary(impl, counts_then), version


def without(counts: dict, failing: dict, cases: tuple[str, ...]) -> dict:
    """``counts`` less the outcomes of ``cases`` (each failing as ``failing`` says, else a pass)."""
    left = dict(counts)
    for case in cases:
        outcome = failing.get(case, "pass")
        left[outcome] = left.get(outcome, 0) - 1
    return left


def deviation(impl: str, case: dict) -> str:
    """A case's outcome; 'fail or crash' where the framework reads or writes outside the table (undefined)."""
    undefined = case["id"].startswith(OUT_OF_BOUNDS_UNDEFINED.get(impl, ()))
    return "fail or crash" if undefined and case["outcome"] in ("fail", "crash") else case["outcome"]


def summary(impl: str, counts: dict) -> dict:
    if impl not in OUT_OF_BOUNDS_UNDEFINED:
        return counts
    return {**counts, "fail": counts["fail"] + counts["crash"], "crash": 0}


def test_the_matrix_records_the_deviations_seen_in_the_frameworks():
    """What the frameworks were seen to do, as the committed matrix holds it (a regenerated matrix must keep them)."""

    def failing(impl: str) -> set[str]:
        return {c["id"] for c in COLUMNS[impl]["failing"]}

    assert {"lookup.error.negative_one", "lookup.error.id_equals_vocab", "lookup.error.id_2_pow_32"} <= failing("flax")
    assert "lookup.error.id_2_pow_32" in failing("flax:x64")  # narrowed to row 0 even with x64 on
    assert "lookup.error.float_half" in failing("keras")  # float ids truncated
    assert "lookup.error.id_equals_vocab" in failing("tinygrad")  # zero rows
    assert "sin.tensor2tensor.l16_d2" in failing("transformers:m2m100")  # fairseq's division by zero (EMB-SIN-V2)
    assert "sin.tensor2tensor.l64_d7" in failing("transformers:whisper")  # odd width rejected
    assert "transformers:marian" not in {impl for impl in COLUMNS if failing(impl)}  # [sin | cos], declared: conforms
    assert not failing("reference") and COLUMNS["reference"]["claim"]["conforms"]
    torch = COLUMNS["torch"]
    assert failing("torch") == torch_failing() and set(torch["glue_decided"]) == GLUE_CASES | PAIR_GLUE_CASES


# ----- the torch adapter's glue, visible per case ---------------------------------------------


def test_torch_glue_decisions_are_marked_per_case(tmp_path):
    pytest.importorskip("torch")
    from embconf.model.schemas import validator

    select = ("pos.*", "layer.error.*", "mem.error.*", "lookup.error.*", "options.max_norm.error_*")
    _, report = run_reported(tmp_path, "torch", "--case-timeout", "120", select=select, timeout=900)
    validator("report").validate(report)
    glue = {c["id"] for c in cases_with(report, "pass") if c.get("decided_by") == "glue"}
    assert glue == GLUE_CASES
    skipped = [c for c in report["cases"] if c.get("decided_by") == "glue" and c["outcome"] != "pass"]
    assert skipped  # the glue's skips are marked too: a glue skip is no decline of PyTorch's
    for case in skipped:
        assert_outcome(case, "not_applicable", "no sinusoidal table")
    own = [c for c in cases_with(report, "pass") if c["id"].startswith("lookup.error.")]
    assert own and not any("decided_by" in c for c in own)  # PyTorch's own IndexError: not glue


# ----- each adapter's own behaviour -------------------------------------------------------------


@pytest.mark.parametrize(
    "impl, module, extra",
    [
        ("flax", "jax", "flax"),
        ("keras", "keras", "keras"),
        ("tinygrad", "tinygrad", "tinygrad"),
        ("transformers:marian", "transformers", "transformers"),
    ],
)
def test_a_missing_framework_is_the_pip_install_line(monkeypatch, impl, module, extra):
    monkeypatch.setitem(sys.modules, module, None)
    with pytest.raises(ImplementationError, match=re.escape(install_line(extra))) as raised:
        create_adapter(impl)
    assert "embedding-conformance" not in str(raised.value)  # the suite is on no index: the packages themselves


def test_a_missing_framework_exits_2_in_one_line():
    result = run_cli("run", "--impl", "transformers:no_such_table")
    assert result.returncode == 2 and "distilbert, marian, m2m100, whisper" in result.stderr
    assert "Traceback" not in result.stderr


def test_tinygrad_without_clang_says_so(monkeypatch):
    pytest.importorskip("tinygrad")
    import shutil

    monkeypatch.setattr(shutil, "which", lambda name, *a, **k: None)
    with pytest.raises(ImplementationError, match=r"clang, which is not on PATH; install it \(apt-get install clang\)"):
        create_adapter("tinygrad")


def in_fresh_python(module: str, body: str) -> None:
    """Run ``body`` in a fresh interpreter: JAX and TensorFlow start threads, and the worker forks."""
    pytest.importorskip(module)
    import subprocess
    import textwrap

    code = (
        "import numpy as np\nfrom embconf.adapters import create_adapter\nfrom embconf.model.contract import Status\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code + textwrap.dedent(body)], capture_output=True, text=True, timeout=600
    )
    assert result.returncode == 0, result.stderr[-3000:]


def test_tinygrad_keeps_0d_ids_0d():
    needs("tinygrad")
    in_fresh_python(
        "tinygrad",
        """
        reply = create_adapter("tinygrad").call("embedding_forward", {"weight": np.eye(3, dtype=np.float32), "ids": np.array(1)})
        assert reply.status == Status.OUTPUTS and reply.outputs["output"].shape == (3,), reply
    """,
    )


def test_flax_maps_only_a_wrong_cotangent_shape():
    in_fresh_python(
        "flax",
        """
        adapter = create_adapter("flax")
        weight, ids = np.ones((4, 2), np.float32), np.array([0, 1, 1])
        wrong_shape = adapter.call("embedding_backward", {"weight": weight, "ids": ids, "grad_output": np.ones((3, 3), np.float32)})
        assert (wrong_shape.status, wrong_shape.error_kind) == (Status.REJECTED, "shape_mismatch"), wrong_shape
        wrong_dtype = adapter.call("embedding_backward", {"weight": weight, "ids": ids, "grad_output": np.ones((3, 2), np.int32)})
        assert wrong_dtype.status == Status.RAISED, wrong_dtype  # a dtype refusal names no kind
        negative = adapter.call("embedding_forward", {"weight": np.arange(8, dtype=np.float32).reshape(4, 2), "ids": np.array([-1])})
        assert negative.status == Status.OUTPUTS and negative.outputs["output"].tolist() == [[6.0, 7.0]]  # Flax's wrap, unaided
        assert "float64" not in adapter.capabilities().features
        assert "float64" in create_adapter("flax:x64").capabilities().features
    """,
    )


def test_transformers_tables_declare_their_conventions():
    in_fresh_python(
        "transformers",
        """
        conventions = {name: create_adapter(f"transformers:{name}").capabilities().to_json()["sinusoid_convention"]
                       for name in ("distilbert", "marian", "m2m100", "whisper")}
        assert conventions == {"distilbert": "interleaved", "marian": "concatenated", "m2m100": "tensor2tensor",
                               "whisper": "tensor2tensor"}, conventions
    """,
    )


def test_keras_declines_configurations_keras_hub_does_not_provide():
    in_fresh_python(
        "keras_hub",
        """
        adapter = create_adapter("keras")
        base = {"vocab_size": 5, "embed_dim": 2, "max_seq_len": 4}
        assert adapter.skip_reason("embedding_layer_forward", {"config": {**base, "pos_encoding": "sinusoidal"}})
        assert adapter.skip_reason("embedding_layer_forward", {"config": {**base, "scale_embeddings": True}})
        assert adapter.skip_reason("parameter_count", {"config": {"vocab_size": 5, "embed_dim": 2}})  # no default length
        assert adapter.skip_reason("embedding_layer_forward", {"config": {**base, "pos_encoding": "learned"}}) is None
        assert adapter.describe()["backend"] == adapter.backend
    """,
    )
