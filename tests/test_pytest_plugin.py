"""The pytest plugin, as a project's own pytest run uses it."""

from __future__ import annotations

import subprocess
import sys
import xml.etree.ElementTree as ET

from helpers import IMPLS

from embconf.adapters import create_adapter


def run_pytest(tmp_path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *args],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_reference_cases_are_pytest_items_named_by_case_id(tmp_path, corpus):
    junit = tmp_path / "junit.xml"
    result = run_pytest(tmp_path, "--embconf-impl=reference", f"--junitxml={junit}")
    assert result.returncode == 0, result.stdout[-3000:]
    names = {case.get("name") for case in ET.parse(junit).getroot().iter("testcase")}
    assert names == {case.id for case in corpus.cases}
    caps = create_adapter("reference").capabilities()  # a case outside them is a skipped item
    skipped = sum(1 for case in corpus.cases if caps.applies(case.operation, case.features))
    assert f"{len(corpus.cases) - skipped} passed, {skipped} skipped" in result.stdout


def test_a_wrong_implementation_fails_its_items_with_the_reproduction(tmp_path):
    result = run_pytest(
        tmp_path, f"--embconf-impl=functions:{IMPLS / 'clamping_lookup.py'}", "--embconf-select=lookup.*"
    )
    assert result.returncode == 1
    assert "FAILED embconf::lookup.error.negative_one" in result.stdout
    assert "expected error index_out_of_range" in result.stdout


def test_without_the_option_the_plugin_collects_nothing(tmp_path):
    result = run_pytest(tmp_path)
    assert result.returncode == 5  # pytest: no tests collected


def test_bad_impl_is_a_usage_error(tmp_path):
    result = run_pytest(tmp_path, "--embconf-impl=nonsense:x")
    assert result.returncode == 4 and "unknown implementation kind" in result.stderr


def test_a_declined_case_fails_only_under_embconf_strict(tmp_path):
    module = tmp_path / "declines.py"
    module.write_text(
        "import embconf\n\n"
        "def embedding_forward(weight, ids):\n"
        "    if ids.ndim > 2:\n"
        "        raise embconf.Decline('ids of rank 3 and above are not supported')\n"
        "    return weight[ids]\n"
    )
    args = [f"--embconf-impl=functions:{module}", "--embconf-select=lookup.forward.*"]
    assert run_pytest(tmp_path, *args).returncode == 0
    strict = run_pytest(tmp_path, *args, "--embconf-strict")
    assert strict.returncode == 1
    assert "FAILED embconf::lookup.forward.ids_3d" in strict.stdout
    assert "--embconf-strict: a conformance claim cannot rest on declined cases" in strict.stdout
