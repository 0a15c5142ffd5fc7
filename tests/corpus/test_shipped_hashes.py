"""The corpus a run reads is checked against the hashes this embconf shipped with: an edited golden with a matching
manifest still runs, flagged on the console and in the report."""

from __future__ import annotations

import json

from helpers import ROOT, assert_exit, run_cli, run_report

FORWARD = "lookup.forward.module_example"


def test_a_golden_edited_with_its_manifest_hash_is_flagged_but_still_runs(tmp_path):
    """A deliberate local corpus runs; that it is not the shipped one is a warning and a report flag."""
    import hashlib
    import shutil

    corpus = tmp_path / "fixtures"
    shutil.copytree(ROOT / "fixtures", corpus)
    golden = corpus / "token_lookup.yaml"
    text = golden.read_text()
    right = "0.36081997, 1.3503977, 1.0946784, -0.6954686]"  # the module example's last golden row
    golden.write_text(text.replace(right, "0.36081997, 1.3503977, 1.0946784, 0.5]", 1))
    assert golden.read_text() != text
    manifest = json.loads((corpus / "MANIFEST.json").read_text())
    manifest["files"]["token_lookup.yaml"]["sha256"] = hashlib.sha256(golden.read_bytes()).hexdigest()
    (corpus / "MANIFEST.json").write_text(json.dumps(manifest, indent=2))
    result, report = run_report(tmp_path, "reference", "--fixtures", str(corpus), select=(FORWARD,))
    assert result.returncode == 1  # the reference disagrees with the edited golden
    assert (
        "warning: the fixture files token_lookup.yaml differ from the ones this embconf shipped with" in result.stdout
    )
    assert report["fixtures"]["differs_from_shipped"] == ["token_lookup.yaml"] and report["fixtures"]["modified"] == []
    matrix = tmp_path / "matrix.json"  # every report of the run says it the same way
    assert_exit(
        run_cli("matrix", "--impl", "reference", "--fixtures", str(corpus), "-k", FORWARD, "--json", str(matrix)), 0
    )
    assert json.loads(matrix.read_text())["fixtures"] == {**report["fixtures"], "cases": 1}
    shipped, shipped_report = run_report(tmp_path, "reference", select=(FORWARD,))
    assert shipped.returncode == 0 and "shipped with" not in shipped.stdout
    assert shipped_report["fixtures"]["differs_from_shipped"] == []


def test_the_shipped_hashes_are_the_manifest_s():
    """After a deliberate `embconf regenerate`, run scripts/record_shipped_hashes.py."""
    from embconf.corpus.shipped import SHIPPED_SHA256

    files = json.loads((ROOT / "fixtures" / "MANIFEST.json").read_text())["files"]
    assert SHIPPED_SHA256 == {name: entry["sha256"] for name, entry in files.items()}
