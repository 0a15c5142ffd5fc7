"""The adapters through the command line: whole runs of the reference, the example student, NumPy functions and
torch, wrong student variants, and bad --impl strings (exit 2, one line).

The CLI is run as a user runs it (a fresh interpreter, ``python -m embconf run --impl ...``); the adapters' finer
behaviour is test_in_process_adapters.py, the loader and plugins test_loading.py.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers import (
    EXAMPLE_STUDENT,
    IMPLS,
    ROOT,
    assert_clean_pass,
    assert_exit,
    assert_one_line_error,
    cases_with,
    declined_for_a_later_addition,
    run_cli,
    run_report,
    undeclared_by_the_reference,
)
from test_frameworks import torch_failing

pytestmark = pytest.mark.usefixtures("isolated_imports")

EXAMPLE_IMPL = f"tinytorch:{EXAMPLE_STUDENT.relative_to(ROOT)}"
NUMPY_FUNCTIONS = f"functions:{(IMPLS / 'numpy_functions.py').relative_to(ROOT)}"


# ----- whole runs through the CLI -----------------------------------------------------------


def test_reference_passes_every_case(tmp_path):
    result, report = run_report(tmp_path, "reference")
    assert_clean_pass(result, report)
    assert all(undeclared_by_the_reference(c) for c in cases_with(report, "not_applicable"))


def test_example_student_passes_every_applicable_case(tmp_path):
    result, report = run_report(tmp_path, EXAMPLE_IMPL)
    assert_clean_pass(result, report)
    caps = report["capabilities"]
    assert caps["error_detail"] == "coarse" and "float64" not in caps["features"]
    assert {"float_ids", "int32_ids"} <= set(caps["features"])
    ran = {c["operation"] for c in cases_with(report, "pass")}
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
        "embedding_bag_forward",  # its optional bag layer (spec 2.1.0)
        "embedding_bag_backward",
    }


def test_example_student_by_module_name(tmp_path):
    env = {"PYTHONPATH": str(ROOT / "examples" / "tinytorch_student")}
    result, report = run_report(tmp_path, "tinytorch:tinytorch.core.embeddings", "-q", env=env)
    assert_clean_pass(result, report)


def test_numpy_functions_pass_every_case(tmp_path):
    result, report = run_report(tmp_path, NUMPY_FUNCTIONS)
    assert_clean_pass(result, report)
    assert all(declined_for_a_later_addition(c) for c in cases_with(report, "not_applicable"))


def test_torch_passes_every_applicable_case(tmp_path):
    """Except where PyTorch deviates, each deviation listed with its reason (spec 1.1: half-precision running sums;
    the sparse gradient of one id made of views of its inputs), and what it declines listed too (--strict): layers
    with sinusoidal positions, which it has not, and parameter counts of tables past int64, which it cannot hold."""
    pytest.importorskip("torch")
    result, report = run_report(
        tmp_path, "torch", "-q", "--expectations", str(ROOT / "examples/expectations/torch.yaml"), "--strict"
    )
    assert_clean_pass(result, report)
    assert {c["id"] for c in cases_with(report, "xfail")} == torch_failing()
    assert report["implementation"]["name"] == "PyTorch"
    skipped = cases_with(report, "not_applicable")
    assert all(c in skipped for c in report["cases"] if c["operation"] == "sinusoidal_table")
    layer_skips = [c for c in skipped if c["operation"].startswith("embedding_layer")]
    assert layer_skips and all(
        "no sinusoidal table" in c["message"]
        or "float_ids" in c["message"]
        or "another sinusoid profile" in c["message"]
        or "rope-layer" in c["message"]
        or "does not provide embedding_layer_own_backward" in c["message"]  # no layer of its own (EMB-LAY-12)
        for c in layer_skips
    )
    counts = [c for c in skipped if c.get("declined") and c["operation"] == "parameter_count" and "decided_by" not in c]
    assert counts and all("large_tables" in c["features"] and "cannot hold" in c["message"] for c in counts)
    passed = {c["id"] for c in cases_with(report, "pass")}
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
    assert_exit(result, 1)
    failed = {c["id"]: c["message"] for c in cases_with(report, "fail")}
    assert case_id in failed and f"FAIL {case_id}" in result.stdout
    for phrase in phrases:
        assert phrase in failed[case_id] and phrase in result.stdout
    assert not cases_with(report, "error")


def test_wrong_variants_fail_only_where_their_bug_shows(tmp_path):
    _, report = run_report(tmp_path, f"tinytorch:{(IMPLS / 'wrong_overwrite.py').relative_to(ROOT)}", "-q")
    failing = {c["operation"] for c in cases_with(report, "fail")}  # the layer's own tables accumulate as well
    assert failing == {"embedding_backward", "embedding_layer_backward", "embedding_layer_own_backward"}
    assert "lookup.backward.no_duplicates" in {c["id"] for c in cases_with(report, "pass")}


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
    assert_one_line_error(result, EXPECTED_WORDS.get(name, ""))
