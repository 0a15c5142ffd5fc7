"""docs/upstream.md: every reproduction it lists runs without embconf and shows its deviation where its framework is
installed (skipped with the reason otherwise), and the page refuses a finding that docs/matrix.json does not record,
and lists every deviation the matrix records."""

from __future__ import annotations

import copy
import importlib.util
import re
import subprocess
import sys

import pytest
from helpers import ROOT

sys.path.insert(0, str(ROOT / "scripts"))
from upstream_doc import (  # noqa: E402
    StaleFinding,
    deviations_markdown,
    findings_markdown,
    load_findings,
    load_matrix,
)

FINDINGS = load_findings()


def installed(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except ModuleNotFoundError:  # a parent package absent
        return False


AWAITING = "## Findings of the pairwise goldens, awaiting the matrix"
SECTION = re.compile(r'### <a id="([^"]+)"></a>.*?```python\n(.*?)```', re.S)


def awaiting_matrix() -> list[tuple[str, str, str]]:
    """(id, module, code) of each finding written by hand in docs/upstream.md until the matrix records its cases."""
    text = (ROOT / "docs" / "upstream.md").read_text(encoding="utf-8")
    found = SECTION.findall(text.partition(AWAITING)[2])
    return [(name, framework(code), code) for name, code in found]


def framework(code: str) -> str:
    """The last module the code imports (a crash's reproduction imports it in its child) that is neither the
    standard library's nor NumPy: a library built on a framework is imported after it."""
    imported = re.findall(r"^\s*(?:from|import) (\w+)", code, re.M)
    return [m for m in imported if m not in sys.stdlib_module_names and m != "numpy"][-1]


def shows_its_deviation(name: str, module: str, code: str, folder) -> None:
    if not installed(module):
        pytest.skip(f"{name}: needs {module}, not installed")
    assert "embconf" not in code  # a maintainer pastes it with only the framework and NumPy
    script = folder / f"{name}.py"
    script.write_text(code, encoding="utf-8")
    # -I: no user site, no PYTHONPATH, not this checkout's directory; run from an empty one
    result = subprocess.run(
        [sys.executable, "-I", str(script)], cwd=folder, capture_output=True, text=True, timeout=300
    )
    assert result.returncode == 0, f"{name} no longer shows its deviation:\n{result.stdout}\n{result.stderr}"
    assert result.stdout.strip(), "a reproduction prints what it found"


@pytest.mark.parametrize("finding", FINDINGS, ids=[f.id for f in FINDINGS])
def test_each_reproduction_runs_without_embconf_and_shows_its_deviation(finding, tmp_path):
    shows_its_deviation(finding.id, finding.module, finding.code, tmp_path)


@pytest.mark.parametrize("name, module, code", awaiting_matrix(), ids=[f[0] for f in awaiting_matrix()])
def test_each_reproduction_awaiting_the_matrix_shows_its_deviation(name, module, code, tmp_path):
    shows_its_deviation(name, module, code, tmp_path)


def test_the_findings_awaiting_the_matrix_are_read_with_their_module():
    assert {(name, module) for name, module, _ in awaiting_matrix()} >= {
        ("torch-embedding-bag-padding-idx-no-offsets-segfault", "torch"),
        ("torch-sparse-gradient-aliases-inputs", "torch"),
        ("transformers-rope-update-empty-positions", "transformers"),
    }


def test_a_finding_the_matrix_no_longer_records_is_refused():
    matrix = load_matrix()
    recorded = next(f for f in FINDINGS if f.cases and any(c["impl"] == f.impl for c in matrix["implementations"]))
    findings_markdown(matrix, [recorded])  # as committed: accepted
    fixed = copy.deepcopy(matrix)
    for column in fixed["implementations"]:
        if column["impl"] == recorded.impl:
            column["failing"] = [case for case in column["failing"] if case["id"] != recorded.cases[0]]
    with pytest.raises(StaleFinding, match=recorded.cases[0]):
        findings_markdown(fixed, [recorded])


def test_every_deviation_of_the_matrix_is_listed_with_its_reproduction():
    matrix = load_matrix()
    table = deviations_markdown(matrix, FINDINGS).splitlines()
    deviations = [(c["impl"], d) for c in matrix["implementations"] for d in c["deviations"]]
    rows = [line for line in table if line.startswith("| `")]
    assert len(rows) == len(deviations)
    for row, (impl, deviation) in zip(rows, deviations):
        assert row.startswith(f"| `{impl}` ") and ("| yes |" in row) == bool(deviation["documented"])
    linked = {f.id for f in FINDINGS if f.cases and any(c["impl"] == f.impl for c in matrix["implementations"])}
    assert linked and all(f"[{finding}](#{finding})" in "\n".join(rows) for finding in linked)


def test_a_finding_no_golden_holds_names_its_requirements_and_says_no_golden_shows_it(tmp_path):
    matrix = load_matrix()
    unshown = [f for f in FINDINGS if not f.cases]
    assert unshown  # torch_bag's segfault and its backward's read past grad_output: no golden holds either input
    for finding in unshown:
        section = findings_markdown(matrix, [finding])
        assert f"Breaks: {', '.join(finding.requirements)} (cases none yet: no golden case holds this input" in section
    entry = tmp_path / "findings.yaml"
    entry.write_text(
        "findings:\n  - {id: x, impl: torch_bag, module: torch, cases: [], title: t, why: w, code: c}\n",
        encoding="utf-8",
    )
    with pytest.raises(ValueError, match="names the requirements it breaks"):
        load_findings(entry)
