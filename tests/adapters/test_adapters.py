"""The in-process adapters (functions, tinytorch, torch) and the target loader.

The CLI is run as a user runs it (a fresh interpreter, ``python -m embconf run --impl ...``);
the adapters' finer behaviour is checked directly.
"""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
from helpers import EXAMPLE_STUDENT, IMPLS, ROOT, declined_for_a_later_addition, run_cli, run_report

from embconf.adapters import ImplementationError, create_adapter
from embconf.adapters.loading import load_module, package_location
from embconf.model.contract import UNSPECIFIED, Status

EXAMPLE_IMPL = f"tinytorch:{EXAMPLE_STUDENT.relative_to(ROOT)}"
NUMPY_FUNCTIONS = f"functions:{(IMPLS / 'numpy_functions.py').relative_to(ROOT)}"


@pytest.fixture(autouse=True)
def isolated_imports(monkeypatch):
    """Undo what loading a test's own modules does to sys.path and sys.modules."""
    monkeypatch.setattr(sys, "path", list(sys.path))
    before = set(sys.modules)
    yield
    for name in set(sys.modules) - before:
        if name.startswith(("embconf_target_", "embconf_shadow_pkg", "helper_for_plain")):
            del sys.modules[name]


def outcomes(report: dict, outcome: str) -> list[dict]:
    return [case for case in report["cases"] if case["outcome"] == outcome]


def assert_clean_pass(result, report) -> None:
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-2000:]
    assert report["summary"]["fail"] == report["summary"]["error"] == 0
    assert report["summary"]["pass"] > 0


# ----- whole runs through the CLI -----------------------------------------------------------


def test_reference_passes_every_case(tmp_path):
    result, report = run_report(tmp_path, "reference")
    assert_clean_pass(result, report)
    assert all(
        any(f.startswith(("sinusoid-", "sinusoid_computed", "rope-layer")) for f in c["features"])
        for c in outcomes(report, "not_applicable")
    )


def test_example_student_passes_every_applicable_case(tmp_path):
    result, report = run_report(tmp_path, EXAMPLE_IMPL)
    assert_clean_pass(result, report)
    caps = report["capabilities"]
    assert caps["error_detail"] == "coarse" and "float64" not in caps["features"]
    assert {"float_ids", "int32_ids"} <= set(caps["features"])
    ran = {c["operation"] for c in report["cases"] if c["outcome"] == "pass"}
    assert ran == {
        "embedding_forward",
        "embedding_backward",
        "sinusoidal_table",
        "learned_positions_forward",
        "learned_positions_backward",
        "embedding_layer_forward",
        "embedding_layer_backward",
        "embedding_layer_own_backward",
        "parameter_count",
    }


def test_example_student_by_module_name(tmp_path):
    env = {"PYTHONPATH": str(ROOT / "examples" / "tinytorch_student")}
    result, report = run_report(tmp_path, "tinytorch:tinytorch.core.embeddings", "-q", env=env)
    assert_clean_pass(result, report)


def test_numpy_functions_pass_every_case(tmp_path):
    result, report = run_report(tmp_path, NUMPY_FUNCTIONS)
    assert_clean_pass(result, report)
    assert all(declined_for_a_later_addition(c) for c in outcomes(report, "not_applicable"))


def test_torch_passes_every_applicable_case(tmp_path):
    """Except where PyTorch deviates, each deviation listed with its reason (spec 1.1: half-precision running sums)."""
    pytest.importorskip("torch")
    result, report = run_report(
        tmp_path, "torch", "-q", "--expectations", str(ROOT / "examples/expectations/torch.yaml"), "--strict"
    )
    assert_clean_pass(result, report)
    assert {c["id"] for c in outcomes(report, "xfail")} == {
        "half.float16.backward.many_repeats",
        "half.bfloat16.backward.many_repeats",
    }
    assert report["implementation"]["name"] == "PyTorch"
    skipped = outcomes(report, "not_applicable")
    assert not any(c["operation"] == "sinusoidal_table" and c["outcome"] != "not_applicable" for c in report["cases"])
    layer_skips = [c for c in skipped if c["operation"].startswith("embedding_layer")]
    assert layer_skips and all(
        "no sinusoidal table" in c["message"]
        or "float_ids" in c["message"]
        or "another sinusoid profile" in c["message"]
        or "rope-layer" in c["message"]
        or "does not provide embedding_layer_own_backward" in c["message"]  # no layer of its own (EMB-LAY-12)
        for c in layer_skips
    )
    passed = {c["id"] for c in outcomes(report, "pass")}
    assert {"mem.parameters.gpt3", "lookup.sparse.module_example", "lookup.forward.float64"} <= passed


WRONG_VARIANTS = {
    "wrong_overwrite.py": (
        "lookup.backward.module_example_020",
        ["Row 0 is used twice so its gradient should be [2., 2.], got [1., 1.]"],
    ),
    "wrong_sin_cos_swapped.py": ("sin.canonical.l4_d4", ["'table' differs at index [0, 0]: expected 0.0, got 1.0"]),
    "wrong_exponent_sign.py": (
        "sin.canonical.l4_d4",
        ["'table' differs at index [1, 2]: expected 0.0099998", "6 of 16 elements out of tolerance"],
    ),
}


@pytest.mark.parametrize("variant", sorted(WRONG_VARIANTS))
def test_wrong_student_variants_fail_with_actionable_messages(tmp_path, variant):
    case_id, phrases = WRONG_VARIANTS[variant]
    result, report = run_report(tmp_path, f"tinytorch:{(IMPLS / variant).relative_to(ROOT)}")
    assert result.returncode == 1, result.stderr
    failed = {c["id"]: c["message"] for c in outcomes(report, "fail")}
    assert case_id in failed and f"FAIL {case_id}" in result.stdout
    for phrase in phrases:
        assert phrase in failed[case_id] and phrase in result.stdout
    assert not outcomes(report, "error")


def test_wrong_variants_fail_only_where_their_bug_shows(tmp_path):
    _, report = run_report(tmp_path, f"tinytorch:{(IMPLS / 'wrong_overwrite.py').relative_to(ROOT)}", "-q")
    failing = {c["operation"] for c in outcomes(report, "fail")}  # the layer's own tables accumulate as well
    assert failing == {"embedding_backward", "embedding_layer_backward", "embedding_layer_own_backward"}
    assert "lookup.backward.no_duplicates" in {c["id"] for c in outcomes(report, "pass")}


# ----- bad --impl strings: exit 2, one line, no traceback ------------------------------------


def _raises_at_import(tmp_path: Path) -> str:
    path = tmp_path / "raises_at_import.py"
    path.write_text("raise RuntimeError('the module refuses to import')\n")
    return f"functions:{path}"


def _syntax_error(tmp_path: Path) -> str:
    path = tmp_path / "syntax_error.py"
    path.write_text("def embedding_forward(weight, ids)\n    return weight\n")
    return f"tinytorch:{path}"


BAD_IMPLS = {
    "empty": lambda tmp: "",
    "unknown kind": lambda tmp: "nosuchkind:whatever",
    "functions without target": lambda tmp: "functions:",
    "missing file": lambda tmp: "functions:tests/impls/does_not_exist.py",
    "missing module": lambda tmp: "tinytorch:no_such_package.embeddings",
    "raises at import": _raises_at_import,
    "syntax error": _syntax_error,
    "no operations": lambda tmp: f"functions:{EXAMPLE_STUDENT}",
}
EXPECTED_WORDS = {
    "unknown kind": "nosuchkind",
    "functions without target": "needs a target",
    "missing file": "no such file",
    "missing module": "ModuleNotFoundError",
    "raises at import": "RuntimeError: the module refuses to import",
    "syntax error": "SyntaxError",
    "no operations": "defines none of the spec operations",
}


@pytest.mark.parametrize("name", sorted(BAD_IMPLS))
def test_bad_impl_exits_2_with_one_line(tmp_path, name):
    result = run_cli("run", "--impl", BAD_IMPLS[name](tmp_path), env={"PYTHONPATH": ""})
    message = result.stderr.strip()
    assert result.returncode == 2, (result.stdout[-1000:], message)
    assert "Traceback" not in result.stderr and len(message.splitlines()) == 1, message
    assert EXPECTED_WORDS.get(name, "") in message


# ----- the loader ---------------------------------------------------------------------------


def test_package_file_is_imported_under_its_dotted_name():
    root, dotted = package_location(EXAMPLE_STUDENT.resolve())
    assert dotted == "tinytorch.core.embeddings" and root == (ROOT / "examples" / "tinytorch_student").resolve()
    module = load_module(str(EXAMPLE_STUDENT))
    assert module.__name__ == "tinytorch.core.embeddings" and module.Tensor.__module__ == "tinytorch.core.tensor"


def test_plain_file_is_loaded_from_its_location(tmp_path):
    (tmp_path / "helper_for_plain.py").write_text("VALUE = 7\n")
    (tmp_path / "plain.py").write_text("from helper_for_plain import VALUE\n")
    assert load_module(str(tmp_path / "plain.py")).VALUE == 7


def test_a_shadowing_package_is_reported(tmp_path):
    for tree in ("first", "second"):
        package = tmp_path / tree / "embconf_shadow_pkg"
        package.mkdir(parents=True)
        (package / "__init__.py").write_text("")
        (package / "impl.py").write_text(f"WHERE = {tree!r}\n")
    assert load_module(str(tmp_path / "first" / "embconf_shadow_pkg" / "impl.py")).WHERE == "first"
    with pytest.raises(ImplementationError, match="shadows it"):
        load_module(str(tmp_path / "second" / "embconf_shadow_pkg" / "impl.py"))


@pytest.mark.parametrize(
    "target, words",
    [
        ("no/such/file.py", "no such file"),
        ("not a module", "neither"),
        ("embconf_no_such_module_xyz", "ModuleNotFoundError"),
    ],
)
def test_loader_failures_are_implementation_errors(target, words):
    with pytest.raises(ImplementationError, match=words):
        load_module(target)


# ----- the functions adapter ----------------------------------------------------------------


def _module(tmp_path: Path, name: str, source: str) -> str:
    path = tmp_path / f"{name}.py"
    path.write_text(textwrap.dedent(source))
    return str(path)


def test_functions_capabilities_come_from_the_module(tmp_path):
    adapter = create_adapter(NUMPY_FUNCTIONS)
    caps = adapter.capabilities()
    assert len(caps.operations) == 12 and caps.sinusoid_convention == "interleaved"
    assert caps.features == {"float64", "int32_ids", "float_ids", "row_sparse_grad", "large_tables"}
    partial = create_adapter(
        "functions:"
        + _module(
            tmp_path,
            "partial_impl",
            """
        EMBCONF_SINUSOID_CONVENTION = "concatenated"
        def sinusoidal_table(max_len, embed_dim, dtype):
            raise NotImplementedError
        helper = 3
    """,
        )
    )
    caps = partial.capabilities()
    assert caps.operations == {"sinusoidal_table"} and "sinusoid-concatenated" in caps.all_features


@pytest.mark.parametrize(
    "source, words",
    [
        ("EMBCONF_FEATURES = ['float64', 'bfloat8']\ndef embedding_forward(weight, ids): pass\n", "unknown feature"),
        ("EMBCONF_FEATURES = 'float64'\ndef embedding_forward(weight, ids): pass\n", "must be a list"),
        ("EMBCONF_SINUSOID_CONVENTION = 'cosine'\ndef embedding_forward(weight, ids): pass\n", "not one of"),
        ("def forward(weight, ids): pass\n", "defines none of the spec operations"),
    ],
)
def test_functions_declaration_errors(tmp_path, source, words):
    with pytest.raises(ImplementationError, match=words):
        create_adapter("functions:" + _module(tmp_path, "bad_declaration", source))


def test_functions_typed_errors_and_exceptions(tmp_path):
    adapter = create_adapter(
        "functions:"
        + _module(
            tmp_path,
            "typed",
            """
        class Rejected(Exception):
            kind = "index_out_of_range"
        def embedding_forward(weight, ids):
            raise Rejected("id 9 is out of range")
        def embedding_backward(weight, ids, grad_output):
            raise ValueError("no kind")
    """,
        )
    )
    weight, ids = np.zeros((2, 2), np.float32), np.array([9])
    typed = adapter.call("embedding_forward", {"weight": weight, "ids": ids})
    assert (typed.status, typed.error_kind) == (Status.REJECTED, "index_out_of_range")
    other = adapter.call(
        "embedding_backward", {"weight": weight, "ids": ids, "grad_output": np.zeros((1, 2), np.float32)}
    )
    assert other.status == Status.RAISED and "ValueError: no kind" in other.message


# ----- the tinytorch adapter ----------------------------------------------------------------


def _fake_student(tmp_path: Path, body: str) -> str:
    """A student module built on the example's Tensor, with ``body`` appended."""
    header = f"""
        import sys
        sys.path.insert(0, {str(ROOT / "examples" / "tinytorch_student")!r})
        import numpy as np
        from tinytorch.core.tensor import Tensor
        import tinytorch.core.autograd
    """
    return "tinytorch:" + _module(tmp_path, "fake_student", textwrap.dedent(header) + textwrap.dedent(body))


def test_tinytorch_declares_only_what_the_module_has(tmp_path):
    adapter = create_adapter(
        _fake_student(
            tmp_path,
            """
        def _compute_sinusoidal_table(max_len, embed_dim):
            return np.zeros((max_len, embed_dim), dtype=np.float64)
    """,
        )
    )
    assert adapter.capabilities().operations == {"sinusoidal_table"}
    reply = adapter.call("sinusoidal_table", {"max_len": 2, "embed_dim": 4, "dtype": "float32"})
    assert (
        reply.status == Status.OUTPUTS and reply.outputs["table"].dtype == np.float64
    )  # reported as produced, not cast


@pytest.mark.parametrize(
    "body, words",
    [("x = 1\n", "none of the TinyTorch embeddings API"), ("del Tensor\nclass Embedding: pass\n", "no Tensor class")],
)
def test_tinytorch_without_the_api_is_an_implementation_error(tmp_path, body, words):
    with pytest.raises(ImplementationError, match=words):
        create_adapter(_fake_student(tmp_path, body))


def test_tinytorch_reports_a_missing_gradient_as_none(tmp_path):
    adapter = create_adapter(
        _fake_student(
            tmp_path,
            """
        class Embedding:
            def __init__(self, vocab_size, embed_dim):
                self.weight = Tensor(np.zeros((vocab_size, embed_dim)), requires_grad=True)
            def forward(self, indices):
                rows = self.weight.data[indices.data.astype(np.int64)]
                return Tensor(rows, requires_grad=True)  # detached from the table: no gradient reaches it
    """,
        )
    )
    weight = np.ones((3, 2), np.float32)
    reply = adapter.call(
        "embedding_backward", {"weight": weight, "ids": np.array([0, 2]), "grad_output": np.ones((2, 2), np.float32)}
    )
    assert reply.status == Status.OUTPUTS and reply.outputs["grad_weight"] is None


def test_tinytorch_value_errors_are_coarse_rejections():
    adapter = create_adapter(EXAMPLE_IMPL)
    reply = adapter.call("embedding_forward", {"weight": np.zeros((3, 2), np.float32), "ids": np.array([3])})
    assert (reply.status, reply.error_kind) == (Status.REJECTED, UNSPECIFIED) and "out of range" in reply.message
    reply = adapter.call(
        "embedding_layer_forward",
        {
            "config": {"vocab_size": 3, "embed_dim": 2, "pos_encoding": "rope"},
            "token_weight": np.zeros((3, 2), np.float32),
            "position_table": None,
            "tokens": np.array([0]),
            "start_pos": 0,
        },
    )
    assert (reply.status, reply.error_kind) == (Status.REJECTED, UNSPECIFIED)  # raised by the constructor


def test_tinytorch_flags_a_trainable_sinusoidal_constant(tmp_path):
    adapter = create_adapter(
        _fake_student(
            tmp_path,
            f"""
        sys.path.insert(0, {str(ROOT / "examples" / "tinytorch_student")!r})
        from tinytorch.core import embeddings as correct

        class EmbeddingLayer(correct.EmbeddingLayer):
            def __init__(self, *args, **kwargs):
                super().__init__(*args, **kwargs)
                if isinstance(self.pos_encoding, Tensor):
                    self.pos_encoding.requires_grad = True  # the constant is marked trainable
    """,
        )
    )
    reply = adapter.call(
        "embedding_layer_backward",
        {
            "config": {"vocab_size": 3, "embed_dim": 2, "max_seq_len": 4, "pos_encoding": "sinusoidal"},
            "token_weight": np.zeros((3, 2), np.float32),
            "position_table": None,
            "tokens": np.array([0, 1]),
            "start_pos": 0,
            "grad_output": np.ones((2, 2), np.float32),
        },
    )
    assert reply.status == Status.OUTPUTS and reply.outputs["grad_position_table"] is not None


def test_tinytorch_parameter_count_reads_the_students_objects():
    adapter = create_adapter(EXAMPLE_IMPL)
    reply = adapter.call(
        "parameter_count",
        {"config": {"vocab_size": 10, "embed_dim": 4, "max_seq_len": 6, "pos_encoding": "sinusoidal"}},
    )
    assert reply.outputs == {"trainable": 40, "non_trainable": 24}


# ----- the torch adapter --------------------------------------------------------------------


def test_torch_missing_is_a_one_line_install_hint(monkeypatch):
    from embconf.adapters.pytorch import TorchAdapter

    monkeypatch.setitem(sys.modules, "torch", None)
    with pytest.raises(
        ImplementationError,
        match=r"torch is not installed; pip install torch --index-url https://download\.pytorch\.org/whl/cpu",
    ):
        TorchAdapter()


def test_torch_maps_errors_and_skips_sinusoidal_layers():
    pytest.importorskip("torch")
    adapter = create_adapter("torch")
    reply = adapter.call("embedding_forward", {"weight": np.zeros((3, 2), np.float32), "ids": np.array([-1])})
    assert (reply.status, reply.error_kind) == (Status.REJECTED, "index_out_of_range")
    config = {"vocab_size": 3, "embed_dim": 2, "max_seq_len": 4, "pos_encoding": "sinusoidal"}
    assert adapter.call("parameter_count", {"config": config}).status == Status.SKIPPED
    assert "sinusoidal_table" not in adapter.capabilities().operations
    huge = adapter.call(
        "parameter_count",
        {"config": {"vocab_size": 256000, "embed_dim": 2304, "max_seq_len": 8192, "pos_encoding": "learned"}},
    )
    assert huge.outputs == {"trainable": (256000 + 8192) * 2304, "non_trainable": 0}  # counted on the meta device


def test_torch_takes_no_target():
    pytest.importorskip("torch")
    with pytest.raises(ImplementationError, match="takes no target"):
        create_adapter("torch:something")


def _install_plugin(root, body: str) -> dict:
    """A third-party adapter package registered in the entry point group, visible through PYTHONPATH."""
    (root / "demo_embconf_plugin.py").write_text(body)
    info = root / "demo_embconf_plugin-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: demo-embconf-plugin\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text("[embconf.adapters]\ndemo = demo_embconf_plugin:make\n")
    return {"PYTHONPATH": str(root)}


def test_a_third_party_adapter_registered_by_entry_point_is_named_like_a_builtin(tmp_path):
    env = _install_plugin(
        tmp_path,
        (
            '"""Demo plugin: an adapter for a NumPy module, reached as demo:PATH."""\n'
            "from embconf.adapters.functions import FunctionsAdapter\n\n\n"
            "def make(target):\n"
            "    return FunctionsAdapter(target)\n"
        ),
    )
    result = run_cli("run", "--impl", f"demo:{IMPLS / 'numpy_functions.py'}", "--select", "lookup.*", "-q", env=env)
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr
    assert " pass" in result.stdout and "fail" not in result.stdout.splitlines()[-1]
    unknown = run_cli("run", "--impl", "nosuch:x", env=env)
    assert unknown.returncode == 2 and "demo" in unknown.stderr  # listed among the known kinds


def test_a_plugin_that_fails_to_load_is_one_line(tmp_path):
    env = _install_plugin(tmp_path, "raise RuntimeError('plugin is broken')\n")
    result = run_cli("run", "--impl", "demo:x", env=env)
    assert result.returncode == 2
    assert "adapter plugin 'demo' failed to load: RuntimeError: plugin is broken" in result.stderr
    assert "Traceback" not in result.stderr
