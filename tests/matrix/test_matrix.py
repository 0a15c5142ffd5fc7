"""``embconf matrix``: several implementations side by side, in JSON (schema), Markdown and HTML.

The HTML is opened in headless Chromium where it is installed: parsed (every link lands on its
target), printed to PDF, and shot at a phone's width.
"""

from __future__ import annotations

import json
import re

import pytest
from browser import chromium, needs_chromium
from helpers import IMPLS, ROOT, assert_exit, read_report, run_cli

from embconf.matrix import html, markdown
from embconf.model.schemas import validator

WRONG = f"tinytorch:{(IMPLS / 'wrong_overwrite.py').relative_to(ROOT)}"


@pytest.fixture(scope="module")
def matrix(tmp_path_factory):
    out = tmp_path_factory.mktemp("matrix")
    result = run_cli(
        "matrix",
        "--impl",
        "reference",
        "--impl",
        WRONG,
        "--select",
        "lookup.*",
        "--select",
        "sin.canonical.l4_d4",
        "--json",
        str(out / "m.json"),
        "--markdown",
        str(out / "m.md"),
        "--html",
        str(out / "m.html"),
    )
    assert_exit(result, 0)
    return out, json.loads((out / "m.json").read_text()), result


def test_the_json_follows_its_schema_and_the_renderers_need_only_it(matrix):
    out, doc, _ = matrix
    validator("matrix").validate(doc)
    assert markdown.render(doc) == (out / "m.md").read_text()
    assert html.render(doc) == (out / "m.html").read_text()
    assert doc["command"].startswith("embconf matrix --impl reference")


def test_cells_by_requirement_and_section(matrix):
    _, doc, _ = matrix
    sections = {s["number"]: s for s in doc["sections"]}
    assert sections[2]["title"] == "Token lookup, backward"
    bwd2 = next(r for r in sections[2]["requirements"] if r["id"] == "EMB-BWD-2")
    ref, wrong = bwd2["cells"]["reference"], bwd2["cells"][WRONG]
    assert ref["status"] == "pass" and ref["failing"] == []
    assert wrong["status"] == "fail" and "lookup.backward.module_example_020" in wrong["failing"]
    fwd4 = next(r for r in sections[1]["requirements"] if r["id"] == "EMB-FWD-4")
    assert (
        fwd4["cells"]["reference"]["status"] == "pass" and fwd4["cells"][WRONG]["status"] == "n/a"
    )  # no float64 claimed
    assert not any(r["id"].startswith("EMB-POS") for s in doc["sections"] for r in s["requirements"])  # none selected


def test_claims_and_deviations(matrix):
    _, doc, result = matrix
    ref, wrong = doc["implementations"]
    assert ref["claim"]["conforms"] and ref["claim"]["error_kinds_verified"] and not ref["deviations"]
    assert not wrong["claim"]["conforms"] and not wrong["claim"]["error_kinds_verified"]  # TinyTorch: coarse errors
    assert "error kinds NOT verified" in wrong["claim"]["statement"]
    causes = [d for d in wrong["deviations"] if d["likely_cause"] == "bwd.overwrite"]
    assert len(causes) == 1 and "EMB-BWD-2" in causes[0]["requirements"]  # stated once, for all its cases
    assert sum(len(d["cases"]) for d in wrong["deviations"]) == len(wrong["failing"])
    assert "does not conform" in result.stdout and "conforms to spec" in result.stdout


def test_markdown_links_each_failing_cell_to_its_cases(matrix):
    out, _, _ = matrix
    text = (out / "m.md").read_text()
    links = set(re.findall(r"\]\(#([a-z0-9-]+)\)", text))
    anchors = set(re.findall(r'<a id="([a-z0-9-]+)"></a>', text))
    assert links and links <= anchors


def test_an_implementation_that_cannot_load_is_exit_2():
    result = run_cli(
        "matrix", "--impl", "reference", "--impl", "transformers:nosuch", "--select", "lookup.forward.ids_1d"
    )
    assert result.returncode == 2 and "unknown transformers table" in result.stderr


@needs_chromium
def test_the_html_in_headless_chromium(matrix, tmp_path):
    out, doc, _ = matrix
    page = (out / "m.html").as_uri()
    text = (out / "m.html").read_text()
    assert not re.search(r"""(src|href)=["'](?!#)""", text) and "<script" not in text  # self-contained
    dom = chromium(tmp_path / "p1", "--dump-dom", page)
    assert dom.returncode == 0, dom.stderr[-2000:]
    ids = set(re.findall(r'id="([^"]+)"', dom.stdout))
    links = set(re.findall(r'href="#([^"]+)"', dom.stdout))
    assert links and links <= ids
    assert dom.stdout.count('<td class="f">') + dom.stdout.count('<td class="d">') == sum(
        cell["status"] == "fail" for s in doc["sections"] for r in s["requirements"] for cell in r["cells"].values()
    )
    pdf = tmp_path / "m.pdf"
    printed = chromium(tmp_path / "p2", f"--print-to-pdf={pdf}", "--no-pdf-header-footer", page)
    assert printed.returncode == 0 and pdf.read_bytes().startswith(b"%PDF") and pdf.stat().st_size > 5000
    shot = tmp_path / "phone.png"
    phone = chromium(tmp_path / "p3", "--window-size=390,844", f"--screenshot={shot}", page)
    assert phone.returncode == 0 and shot.read_bytes().startswith(b"\x89PNG") and shot.stat().st_size > 5000


def test_run_and_matrix_name_the_same_causes_for_the_same_implementation(tmp_path):
    """One pipeline, one record: the causes a column lists are the verdict `embconf run` reports."""
    student = f"tinytorch:{(ROOT / 'tests' / 'students' / 'grad_buffer_reused.py').relative_to(ROOT)}"
    for impl in (WRONG, student, f"functions:{(IMPLS / 'clamping_lookup.py').relative_to(ROOT)}"):
        report = tmp_path / "r.json"
        run_cli("run", "--impl", impl, "-q", "--report-json", str(report))
        run_cli("matrix", "--impl", impl, "--json", str(tmp_path / "m.json"))
        verdict = read_report(report)["verdict"]
        column = json.loads((tmp_path / "m.json").read_text())["implementations"][0]
        named = {d["likely_cause"] for d in column["deviations"] if d["likely_cause"]}
        assert verdict["mistakes"] and named == {m["id"] for m in verdict["mistakes"]}, impl
        explained = {case for m in verdict["mistakes"] for case in m["cases"]}
        grouped = {case for d in column["deviations"] if d["likely_cause"] for case in d["cases"]}
        assert grouped <= explained, impl


def test_every_section_of_the_matrix_is_a_spec_section(matrix):
    from embconf.model.vocabulary import sections

    _, doc, _ = matrix
    assert all(sections()[s["number"]] == s["title"] for s in doc["sections"])
    assert "Other" not in (ROOT / "docs" / "matrix.md").read_text().split("## Deviations")[0]
    published = json.loads((ROOT / "docs" / "matrix.json").read_text())
    assert [s["title"] for s in published["sections"]] == [sections()[s["number"]] for s in published["sections"]]


def test_long_column_names_are_short_in_the_grid_and_whole_in_the_legend():
    from embconf.matrix import markdown
    from embconf.matrix.model import short_names

    columns = [{"impl": impl} for impl in ("torch", "subprocess:node examples/tfjs/embconf_tfjs.js layer")]
    columns += [{"impl": "tinytorch:a/one/embeddings.py"}, {"impl": "tinytorch:b/two/embeddings.py"}]
    short = short_names(columns)
    assert (
        short["torch"] == "torch"
        and short["subprocess:node examples/tfjs/embconf_tfjs.js layer"] == "embconf_tfjs layer"
    )
    assert short["tinytorch:a/one/embeddings.py"] == "tinytorch:a/one/embeddings.py"  # ambiguous when shortened
    doc = json.loads((ROOT / "docs" / "matrix.json").read_text())
    text = markdown.render(doc)
    peer = next(c["impl"] for c in doc["implementations"] if c["impl"].startswith("subprocess:"))
    grid = next(line for line in text.splitlines() if line.startswith("| Requirement |"))
    assert peer not in grid and f"`{short_names(doc['implementations'])[peer]}`" in grid
    assert f"(`{peer}`)" in text  # the legend keeps the whole --impl
