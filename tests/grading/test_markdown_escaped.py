"""Whatever a submission controls is escaped in the Markdown a student or TA opens: Gradescope's results.json and
feedback/NAME.md carry a raised ``<script>`` and ``javascript:`` link as text, never markup, and the HTML page
shows the same characters."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import grading_samples as samples  # noqa: E402

from embconf.cli import main  # noqa: E402
from embconf.grading.feedback_html import page  # noqa: E402
from embconf.grading.markdown import block, code, text  # noqa: E402

HOSTILE = "<script>alert(1)</script> [click](javascript:alert(1)) ![x](javascript:y) <javascript:z> ```"
ACCUMULATE = "        np.add.at(grad_weight, self.ids, grad_output)  # repeated ids accumulate"


def _unsafe(markdown: str) -> list[str]:
    """Markup that is not backslash-escaped, outside fenced code (closed by its own fence only): raw HTML, a
    javascript: link or autolink."""
    markdown = re.sub(r"(?ms)^ *(`{3,}) *$.*?^ *\1 *$", "", markdown)
    return re.findall(r"(?<!\\)<script|(?<!\\)\]\(javascript:|(?<!\\)<javascript:", markdown)


def test_results_json_and_feedback_carry_a_submissions_markup_as_text(tmp_path):
    submission = tmp_path / "submission"
    submission.mkdir()
    raising = f"        raise RuntimeError({HOSTILE!r})"
    (submission / "embeddings.py").write_text(samples.module_text().replace(ACCUMULATE, raising), encoding="utf-8")
    results = tmp_path / "results.json"
    args = ["gradescope", "--submission", str(submission), "--results", str(results), "--run-timeout", "120"]
    assert main(args) == 0
    data = json.loads(results.read_text(encoding="utf-8"))
    outputs = [data["output"], *(test["output"] for test in data["tests"])]
    assert any("alert(1)" in output for output in outputs)  # the message is shown ...
    assert [output for output in outputs if _unsafe(output)] == []  # ... as text


def test_a_reason_the_submission_raised_at_import_is_text(tmp_path):
    folder = tmp_path / "subs"
    folder.mkdir()
    (folder / "ada.py").write_text(f"raise RuntimeError({HOSTILE!r})\n", encoding="utf-8")
    out = tmp_path / "out"
    assert main(["grade", str(folder), "--out", str(out), "--jobs", "1"]) == 0
    feedback = (out / "feedback" / "ada.md").read_text(encoding="utf-8")
    results = json.loads((out / "results" / "ada.json").read_text(encoding="utf-8"))
    assert "alert(1)" in feedback and not _unsafe(feedback) and not _unsafe(results["output"])
    shown = (out / "feedback" / "ada.html").read_text(encoding="utf-8")
    assert "&lt;script&gt;alert(1)&lt;/script&gt; [click](javascript:alert(1))" in shown and "<script" not in shown


def test_escaped_markdown_reads_back_as_the_same_characters():
    rendered = page("\n".join(["# t", "", f"- {code('a`b')}: {text(HOSTILE)}", "", *block(["```", "<b>"], "  ")]))
    assert "<code>a`b</code>: &lt;script&gt;alert(1)&lt;/script&gt; [click](javascript:alert(1))" in rendered
    assert "<pre>\n```\n&lt;b&gt;\n</pre>" in rendered
