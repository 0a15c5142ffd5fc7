"""The pytest plugin, as a project's own pytest run uses it."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections import Counter

from helpers import HOSTILE, IMPLS, assert_exit, run_pytest, run_report
from mlx_family import MLX_COS_FIRST_FULL_TURNS, MLX_OPTIONS

from embconf.adapters import create_adapter


def test_reference_cases_are_pytest_items_named_by_case_id(tmp_path, corpus):
    junit = tmp_path / "junit.xml"
    result = run_pytest(tmp_path, "--embconf-impl=reference", f"--junitxml={junit}")
    assert_exit(result, 0)
    names = {case.get("name") for case in ET.parse(junit).getroot().iter("testcase")}
    assert names == {case.id for case in corpus.cases}
    caps = create_adapter("reference").capabilities()  # a case outside them is a skipped item
    skipped = sum(1 for case in corpus.cases if caps.applies(case.operation, case.features))
    assert f"{len(corpus.cases) - skipped} passed, {skipped} skipped" in result.stdout


def test_a_wrong_implementation_fails_its_items_with_the_reproduction(tmp_path):
    result = run_pytest(
        tmp_path, f"--embconf-impl=functions:{IMPLS / 'clamping_lookup.py'}", "--embconf-select=lookup.*"
    )
    assert_exit(result, 1)
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
    assert_exit(strict, 1)
    assert "FAILED embconf::lookup.forward.ids_3d" in strict.stdout
    assert "--embconf-strict: a conformance claim cannot rest on declined cases" in strict.stdout


def plugin_outcomes(junit) -> dict[str, tuple[str, list[str]]]:
    """{case id: (outcome, the causes shown)} of the plugin's JUnit file: a failed item's outcome is the tag its
    message starts with, a skipped one not_applicable (xfail: xfail), a passed one pass."""
    found = {}
    for case in ET.parse(junit).getroot().iter("testcase"):
        failure = case.find("failure")
        skipped = case.find("skipped")
        if failure is not None:
            text = failure.text or ""
            outcome = text[1 : text.index("]")]
            shown = [line.split(": ", 1)[1] for line in text.splitlines() if line.startswith(CAUSE_LINES)]
            found[case.get("name")] = (outcome, shown)
        elif skipped is not None:
            xfail = skipped.get("type") == "pytest.xfail"
            found[case.get("name")] = ("xfail" if xfail else "not_applicable", [])
        else:
            found[case.get("name")] = ("pass", [])
    return found


CAUSE_LINES = ("  likely cause: ", "  measured: ")


def run_outcomes(report) -> dict[str, tuple[str, list[str]]]:
    """The same of `embconf run`'s JSON report: each case's outcome and the summaries of its first 3 causes."""
    problems = {"fail", "error", "crash", "timeout"}
    return {
        case["id"]: (
            case["outcome"],
            [entry["summary"] for entry in case.get("diagnosis", [])[:3]] if case["outcome"] in problems else [],
        )
        for case in report["cases"]
    }


DECLINES = """import embconf

def embedding_forward(weight, ids):
    if ids.ndim > 2:
        raise embconf.Decline('ids of rank 3 and above are not supported')
    return weight[ids]
"""


def test_run_and_the_plugin_give_the_same_outcomes_and_causes(tmp_path):
    """Five implementations (correct, wrong, declining, crashing, a declared sinusoid point with its computed
    cases) through `embconf run` and through the plugin: the same cases, outcomes and causes."""
    (tmp_path / "declines.py").write_text(DECLINES)
    (tmp_path / "family.py").write_text(MLX_COS_FIRST_FULL_TURNS.format(parameters=MLX_OPTIONS))
    implementations = {  # impl: (selection, an outcome it must show)
        "reference": ("lookup.forward.*", "pass"),
        "mutant:bwd.overwrite": ("lookup.*", "fail"),
        f"functions:{tmp_path / 'declines.py'}": ("lookup.forward.*", "not_applicable"),
        f"functions:{HOSTILE / 'segfault.py'}": ("lookup.forward.*", "crash"),
        f"functions:{tmp_path / 'family.py'}": ("sin.*", "pass"),
    }
    for impl, (glob, shown) in implementations.items():
        _, report = run_report(tmp_path, impl, "-q", select=[glob])
        junit = tmp_path / "junit.xml"
        run_pytest(tmp_path, f"--embconf-impl={impl}", f"--embconf-select={glob}", f"--junitxml={junit}")
        under_run, under_plugin = run_outcomes(report), plugin_outcomes(junit)
        assert under_plugin == under_run, impl
        assert shown in {outcome for outcome, _ in under_run.values()}, impl
        if shown == "fail":
            assert all(causes for outcome, causes in under_run.values() if outcome == "fail")
        if shown == "not_applicable" and impl.endswith("declines.py"):
            assert report["declined"] > 0
    family = Counter(outcome for outcome, _ in under_plugin.values())
    assert family["pass"] == 9 and all(c.startswith("sin.family.") for c, (o, _) in under_plugin.items() if o == "pass")


def test_the_plugin_takes_the_limit_options_and_repeat_from_embconf_run(tmp_path):
    """Its limit options are `embconf run`'s (the same defaults in the help), and --embconf-repeat repeats."""
    from embconf.processes.limits import DEFAULT_MEMORY_LIMIT_MB

    help_text = run_pytest(tmp_path, "--help").stdout
    assert f"default {DEFAULT_MEMORY_LIMIT_MB}" in help_text and "--embconf-repeat=N" in help_text
    result = run_pytest(
        tmp_path,
        f"--embconf-impl=functions:{HOSTILE / 'nondeterministic.py'}",
        "--embconf-select=sin.canonical.l16_d8",
        "--embconf-repeat=3",
        "--embconf-strict",
    )
    assert result.returncode == 1 and "nondeterministic: output(s) 'table' differ bitwise" in result.stdout
