"""The parts of grading on their own: notebook export, rubric scoring rules, the report in a real
browser (headless Chromium), and embconf.check."""

from __future__ import annotations

import csv
import json
import re
import struct
import subprocess
import sys
import zlib
from pathlib import Path

import numpy as np
import pytest
from browser import CHROME_FLAGS, CHROMIUM

sys.path.insert(0, str(Path(__file__).resolve().parent))
import grading_samples as samples  # noqa: E402

import embconf  # noqa: E402
from embconf.grading.notebook import NotebookError, export  # noqa: E402
from embconf.grading.rubric import load  # noqa: E402
from embconf.grading.score import score  # noqa: E402


@pytest.mark.parametrize("form", ["percent", "ipynb"])
def test_a_notebook_exports_only_its_export_cells(tmp_path, form):
    path = samples.write(tmp_path, "nb", form)
    exported = export(path)
    assert samples.NEVER_RUN not in exported.source
    compile(exported.source, "embeddings.py", "exec")
    body = [line for line in exported.source.splitlines() if line.strip() and not line.startswith("#")]
    module = [line for line in samples.module_text().splitlines() if line.strip() and not line.startswith("#")]
    assert body == module  # the module's code, in order, and nothing else
    assert exported.default_exp == "core.embeddings"


def test_cells_exported_elsewhere_are_left_out(tmp_path):
    path = tmp_path / "nb.py"
    path.write_text(
        "# %%\n#| default_exp core.tensor\n\n# %%\n#| export\nx = 1\n\n# %%\n#| export core.embeddings\ny = 2\n",
        encoding="utf-8",
    )
    assert "y = 2" in export(path).source and "x = 1" not in export(path).source
    path.write_text("# %%\n#| default_exp core.tensor\n\n# %%\n#| export\nx = 1\n", encoding="utf-8")
    with pytest.raises(NotebookError, match="no exported cells.*default_exp is 'core.tensor'"):
        export(path)


def _record(outcomes: dict[str, str], provided: bool = True) -> dict:
    return {
        "name": "s",
        "entry": "s.py",
        "kind": "module",
        "status": "graded",
        "reason": "",
        "verdict": {"summary": "", "mistakes": []},
        "cases": [
            {
                "id": cid,
                "requirements": ["EMB-FWD-1"],
                "operation": "embedding_forward",
                "outcome": outcome,
                "provided": provided,
                "message": "",
                "cause": None,
            }
            for cid, outcome in outcomes.items()
        ],
    }


@pytest.mark.parametrize(
    "settings, outcomes, provided, points",
    [
        ("credit: partial", {"a": "pass", "b": "fail", "c": "pass", "d": "fail"}, True, 5.0),
        ("credit: all_or_nothing", {"a": "pass", "b": "fail"}, True, 0.0),
        ("credit: all_or_nothing", {"a": "pass", "b": "pass"}, True, 10.0),
        ("not_applicable: exclude", {"a": "pass", "b": "not_applicable"}, True, 10.0),
        ("not_applicable: fail", {"a": "pass", "b": "not_applicable"}, True, 5.0),
        ("not_applicable: pass", {"a": "fail", "b": "not_applicable"}, True, 5.0),
        ("not_applicable: exclude", {"a": "not_applicable"}, True, 0.0),  # nothing counted: nothing earned
        ("missing: fail", {"a": "not_applicable", "b": "not_applicable"}, False, 0.0),
        ("missing: exclude\n    not_applicable: pass", {"a": "not_applicable"}, False, 0.0),
        ("credit: partial", {"a": "error", "b": "crash", "c": "timeout", "d": "xpass"}, True, 2.5),
    ],
)
def test_rubric_credit_rules(tmp_path, corpus, settings, outcomes, provided, points):
    path = tmp_path / "rubric.yaml"
    path.write_text(
        f"rubric_format: 1\nitems:\n  - id: fwd\n    points: 10\n    cases: ['*']\n    {settings}\n", encoding="utf-8"
    )
    result = score(_record(outcomes, provided), load(path, corpus.cases))
    assert result.total == points


def test_sections_select_the_requirements_of_a_spec_section(tmp_path, corpus):
    path = tmp_path / "rubric.yaml"
    path.write_text("rubric_format: 1\nitems:\n  - {id: s, points: 1, sections: [4]}\n", encoding="utf-8")
    item = load(path, corpus.cases).items[0]
    assert "EMB-SIN-2" in item.requirements and not any(r.startswith("EMB-FWD") for r in item.requirements)


def test_the_default_rubric_has_100_points_and_grades_the_example_student_fully(corpus):
    rubric = load(None, corpus.cases)
    assert rubric.max_points == 100 and len(rubric.items) == 7


# ----- the class report in a real browser --------------------------------------------------------


def _png_pixels(data: bytes) -> np.ndarray:
    """The pixels of an 8-bit, non-interlaced RGB or RGBA PNG (what Chromium writes), unfiltered."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    position, chunks, header = 8, [], None
    while position < len(data):
        length, kind = struct.unpack(">I4s", data[position : position + 8])
        body = data[position + 8 : position + 8 + length]
        if kind == b"IHDR":
            header = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            chunks.append(body)
        position += 12 + length
    width, height, depth, colour, _, _, interlace = header
    assert depth == 8 and colour in (2, 6) and interlace == 0
    channels = 3 if colour == 2 else 4
    raw = np.frombuffer(zlib.decompress(b"".join(chunks)), np.uint8).reshape(height, 1 + width * channels)
    out = np.zeros((height, width * channels), np.int32)
    for y in range(height):
        kind, row = raw[y, 0], raw[y, 1:].astype(np.int32)
        up = out[y - 1] if y else np.zeros_like(row)
        if kind in (0, 2):
            out[y] = (row + (up if kind == 2 else 0)) % 256
        else:  # Sub, Average, Paeth: sequential in x
            line = np.zeros_like(row)
            for x in range(row.size):
                left = line[x - channels] if x >= channels else 0
                upleft = up[x - channels] if x >= channels else 0
                if kind == 1:
                    pred = left
                elif kind == 3:
                    pred = (left + up[x]) // 2
                else:
                    p = left + up[x] - upleft
                    pa, pb, pc = abs(p - left), abs(p - up[x]), abs(p - upleft)
                    pred = left if pa <= pb and pa <= pc else (up[x] if pb <= pc else upleft)
                line[x] = (row[x] + pred) % 256
            out[y] = line
    return out.reshape(height, width, channels)


@pytest.fixture(scope="module")
def class_report(tmp_path_factory):
    from embconf.cli import main

    folder = tmp_path_factory.mktemp("subs")
    for name, form, mistake in [
        ("ann", "package", None),
        ("ben", "module", "overwrite"),
        ("cat", "module", "overwrite"),
        ("dan", "percent", "sin_cos_swapped"),
        ("eve", "module", "syntax_error"),
        ("fox", "ipynb", "start_pos_ignored"),
    ]:
        samples.write(folder, name, form, mistake)
    out = tmp_path_factory.mktemp("out")
    assert main(["grade", str(folder), "--out", str(out), "--jobs", "2"]) == 0
    return out


@pytest.mark.skipif(
    CHROMIUM is None, reason="chromium is not installed (Debian package 'chromium'; .ci/run installs it)"
)
def test_the_report_renders_in_chromium_and_its_figures_match_the_gradebook(class_report, tmp_path):
    page = (class_report / "report.html").as_uri()
    profile = tmp_path / "profile"
    dom = subprocess.run(
        [CHROMIUM, *CHROME_FLAGS, f"--user-data-dir={profile}", "--dump-dom", page],
        capture_output=True,
        text=True,
        timeout=120,
    ).stdout
    with open(class_report / "gradebook.csv", newline="", encoding="utf-8") as handle:
        book = list(csv.DictReader(handle))
    bars = [
        (float(low), int(count))
        for count, low in re.findall(r'class="bar" data-count="(\d+)" data-low="([\d.]+)"', dom)
    ]
    assert len(bars) == 10 and sum(count for _, count in bars) == len(book) == 6
    for low, count in bars:
        assert count == sum(
            low <= float(row["score"]) < low + 10 or (low == 90 and float(row["score"]) == 100) for row in book
        )
    overwrite = [
        m
        for m in re.findall(r'<tr class="mistake" data-count="(\d+)">(.*?)</tr>', dom, re.S)
        if "indexed assignment" in m[1]
    ]
    assert (
        overwrite
        and overwrite[0][0] == "2"
        and 'href="#s-ben"' in overwrite[0][1]
        and 'href="#s-cat"' in overwrite[0][1]
    )
    rates = dict(
        (req, (int(p), int(o)))
        for req, p, o in re.findall(r'data-requirement="([\w-]+)" data-passed="(\d+)" data-of="(\d+)"', dom)
    )
    graded = [row for row in book if not row["reason"]]
    assert {of for _, of in rates.values()} == {len(graded)} == {5}
    full_backward = sum(row["backward"] == "20" for row in graded)  # ben and cat overwrite repeated rows (EMB-BWD-2)
    assert rates["EMB-BWD-2"] == (full_backward, 5) == (3, 5) and rates["EMB-FWD-2"] == (5, 5)
    assert re.search(r'id="s-eve" class="student problem"', dom)
    shot = tmp_path / "shot.png"
    subprocess.run(
        [
            CHROMIUM,
            *CHROME_FLAGS,
            f"--user-data-dir={tmp_path / 'profile2'}",
            "--window-size=900,700",
            f"--screenshot={shot}",
            page,
        ],
        capture_output=True,
        timeout=120,
    )
    pixels = _png_pixels(shot.read_bytes())
    colours = {tuple(p) for p in pixels[::7, ::7, :3].reshape(-1, 3)}
    assert pixels.shape[:2] == (700, 900) and len(colours) > 20  # text and bars, not a blank page
    blue = np.all(np.abs(pixels[..., :3] - [0x3B, 0x6F, 0xB6]) < 8, axis=-1).sum()
    assert blue > 1000  # the histogram's bars are drawn


def test_the_report_is_self_contained(class_report):
    text = (class_report / "report.html").read_text(encoding="utf-8")
    assert "<script" not in text and "http://" not in text and "https://" not in text.replace("https://json-schema", "")
    assert "<svg" in text and "default-src 'none'" in text


# ----- embconf.check ---------------------------------------------------------------------------


def test_check_a_file_shows_the_verdict_and_the_likely_cause(tmp_path):
    path = samples.write(tmp_path, "mine", "module", "overwrite")
    result = embconf.check(path)
    assert 0 < result.score.total < 100 and not result.passed
    html = result._repr_html_()
    assert "indexed assignment" in html and result.verdict.split("; ")[0] in html  # the counts, then each mistake
    assert "<details" in html and "lookup.backward" in html
    text = str(result)
    assert text.startswith(f"embconf check {path}: {result.score.total:g} / 100") and len(text) < 5000
    assert "Mistakes, in the order to fix them:\n1. indexed assignment" in text and "hint: use np.add.at" in text


def test_check_a_notebook_namespace_and_a_notebook_file(tmp_path):
    folder = samples.EXAMPLE
    sys.path.insert(0, str(folder))
    try:
        import tinytorch.core.embeddings as module
    finally:
        sys.path.remove(str(folder))
    namespace = dict(vars(module))  # what globals() is in the student's notebook
    result = embconf.check(namespace)
    assert result.passed and result.score.total == 100 and "all" in result.verdict
    notebook = samples.write(tmp_path, "nb", "ipynb", "exponent_sign")
    broken = embconf.check(notebook)
    assert broken.score.items[3].points < 15 and not broken.passed and "exp(-log(10000)" in str(broken)
    bad = embconf.check(samples.write(tmp_path, "bad", "module", "syntax_error"))
    assert bad.problem.startswith("does not import: SyntaxError at line") and bad.score.total == 0
    assert str(bad).splitlines()[1] == bad.problem and not bad.passed


def test_results_of_a_class_validate_as_json(class_report):
    for path in (class_report / "results").iterdir():
        assert isinstance(json.loads(path.read_text(encoding="utf-8"))["tests"], list)


def test_feedback_names_one_mistake_once_with_the_causes_embconf_run_names(corpus):
    """A gradient buffer kept across calls fails many cases: the feedback says so once per item, in words that
    name no case, and the gradebook's verdict is the run record's."""
    from embconf.grading.feedback import feedback
    from embconf.grading.job import run_fields, run_submission
    from embconf.isolation import IsolationOptions

    student = Path(__file__).resolve().parents[1] / "students" / "grad_buffer_reused.py"
    run = run_submission(f"tinytorch:{student}", corpus.cases, IsolationOptions())
    record = {
        "name": "s",
        "entry": student.name,
        "kind": "module",
        "status": "graded",
        "reason": "",
        "note": "",
        **run_fields(run),
    }
    assert [m["id"] for m in record["verdict"]["mistakes"] if m["id"]] == [c.id for c in run.verdict.causes]
    text = feedback(score(record, load(None, corpus.cases)), "title")
    bullets = [line for line in text.splitlines() if line.startswith("- Likely mistake")]
    assert bullets and all("buffer kept across calls" in line for line in bullets)
    for section in text.split("### ")[1:]:
        assert sum(line.startswith("- Likely mistake") for line in section.splitlines()) <= 1
    assert not any(case.id in line for line in bullets for case in corpus.cases)


def test_pass_rate_bars_are_labelled_with_what_the_requirement_asks(class_report):
    from embconf.grading.report import _label

    report = (class_report / "report.html").read_text(encoding="utf-8")
    assert ">bit-exact row copy · EMB-FWD-2</text>" in report
    assert _label("EMB-GEN-2", "determinism (SHOULD)") == "determinism (SHOULD) · EMB-GEN-2"
    assert len(_label("EMB-X-1", "a" * 80)) == 46 and _label("EMB-X-1", "a" * 80).endswith("… · EMB-X-1")


def test_feedback_pages_escape_what_submissions_say():
    from embconf.grading.feedback_html import page

    html = page("# s: 0 / 100\n\n- `x` (error): <script>alert(1)</script> **bold**\n\n  ```\n  <img src=x>\n  ```\n")
    assert "<script>" not in html and "&lt;script&gt;alert(1)&lt;/script&gt;" in html and "&lt;img src=x&gt;" in html
    assert "<li><code>x</code> (error):" in html and "<b>bold</b>" in html and "<title>s: 0 / 100</title>" in html


@pytest.mark.parametrize("kind, where", [("module", "`forward`, line 147 of embeddings.py"), ("ipynb", "`forward`\n")])
def test_feedback_says_where_to_look_when_a_traceback_says(corpus, kind, where):
    from embconf.grading.feedback import feedback

    case = corpus.by_id()["pos.forward.batch1"]
    message = (
        "pos.forward.batch1 [EMB-POS-1] learned_positions_forward: raised NotImplementedError: TODO\n"
        'Traceback (most recent call last):\n  File "tinytorch/core/autograd.py", line 12, in apply\n'
        '  File "tinytorch/core/embeddings.py", line 147, in forward\n    raise NotImplementedError("TODO")\n'
    )
    cause = {"id": "symptom:todo", "title": "raised NotImplementedError", "hint": "write it"}
    record = {
        "name": "s",
        "entry": "s.py",
        "kind": kind,
        "status": "graded",
        "reason": "",
        "verdict": {"summary": "1 of 1 fail", "mistakes": [{**cause, "cases": [case.id]}]},
        "cases": [
            {
                "id": case.id,
                "requirements": list(case.requirements),
                "operation": case.operation,
                "outcome": "error",
                "provided": True,
                "message": message,
                "cause": cause,
            }
        ],
    }
    text = feedback(score(record, load(None, corpus.cases)), "title")
    assert f"  Where to look: {where}" in text + "\n"
