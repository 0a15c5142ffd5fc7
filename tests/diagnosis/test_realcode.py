"""The real-code corpus (tests/realcode/, several mistakes per module) stays caught, and what its modules
declare about their mistakes stays true of the catalogue. How well the verdict names the mistakes is measured by
scripts/measure_realcode.py, not asserted here: the corpus is held out from tuning."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from helpers import ROOT, read_report, run_cli

from embconf.mutants import registry

CORPUS = ROOT / "tests" / "realcode"
MODULES = sorted(CORPUS.glob("[a-z]*.py"))


def _mistakes(path: Path) -> list[dict]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(getattr(t, "id", "") == "MISTAKES" for t in node.targets):
            return ast.literal_eval(node.value)
    raise AssertionError(f"{path.name} lists no MISTAKES")


def _builds_on_tt(path: Path) -> bool:
    """A TinyTorch module: it builds on the corpus's ``_tt`` helper (the example package's correct parts)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return any(
        (isinstance(n, ast.ImportFrom) and n.module == "_tt")
        or (isinstance(n, ast.Import) and any(a.name == "_tt" for a in n.names))
        for n in ast.walk(tree)
    )


@pytest.mark.parametrize("path", MODULES, ids=[p.stem for p in MODULES])
def test_every_real_code_module_is_caught(path: Path, tmp_path: Path) -> None:
    mistakes = _mistakes(path)
    assert len(mistakes) >= 2, "real code has several mistakes"
    unknown = {m for mistake in mistakes for m in mistake["mutants"]} - set(registry())
    assert not unknown, f"MISTAKES names mutants the catalogue lacks: {sorted(unknown)}"
    kind = "tinytorch" if _builds_on_tt(path) else "functions"
    report = tmp_path / "report.json"
    done = run_cli("run", "--impl", f"{kind}:{path}", "-q", "--report-json", str(report))
    assert done.returncode == 1, (done.returncode, done.stderr[-500:])
    verdict = read_report(report)["verdict"]
    assert verdict["failures"] > 0, verdict["summary"]  # exit 1 with failures: loaded, judged and caught
