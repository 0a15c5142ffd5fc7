"""The matrix as Markdown (GitHub-flavoured): implementations, the table by spec section, deviations."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from embconf.matrix.model import (
    anchor,
    capabilities_text,
    cell_text,
    environment_text,
    failing_by_requirement,
    short_names,
    title,
)

MARK = {"pass": "✅", "fail": "❌", "n/a": "·"}


def _escape(text: str) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def _cases(count: int) -> str:
    return f"{count} case" + ("s" if count != 1 else "")


def render(doc: dict[str, Any]) -> str:
    columns = doc["implementations"]
    env = doc["environment"]
    lines = [
        "# Embedding conformance matrix",
        "",
        f"Measured {doc['generated']} with embconf {doc['suite']['version']} against spec {doc['spec_version']} "
        f"({doc['fixtures']['cases']} cases, fixtures manifest `{doc['fixtures']['manifest_sha256'][:16]}`), "
        f"Python {env['python']}, NumPy {env['numpy']}, {env['platform']}.",
        "",
    ]
    if doc.get("command"):
        lines += ["This file is generated; regenerate it with:", "", "```", doc["command"], "```", ""]
    if doc.get("sources"):
        lines += [
            f"Merged from {len(doc['sources'])} column files, each measured in its own environment "
            "(a column measured elsewhere says where): " + ", ".join(f"`{name}`" for name in doc["sources"]) + ".",
            "",
        ]
    lines += [
        "Cells: ✅ pass N (every applicable case passed; `glue`: decided by the adapter's own checks, not the "
        "implementation), ❌ fail F/N (F of N applicable cases did not pass; the link lists them), · not applicable.",
        "",
        "## Implementations",
        "",
        "| Column | Implementation (`--impl`) | Capabilities | Claim |",
        "|---|---|---|---|",
    ]
    short = short_names(columns)
    for c in columns:
        where = "; ".join(part for part in (capabilities_text(c), environment_text(c, doc)) if part)
        named = f"{title(c)} (`{c['impl']}`)" if short[c["impl"]] != c["impl"] else title(c)
        lines.append(
            f"| `{short[c['impl']]}` | {_escape(named)} | {_escape(where)} | {_escape(c['claim']['statement'])} |"
        )
    header = "| Requirement | " + " | ".join(f"`{short[c['impl']]}`" for c in columns) + " |"
    rule = "|---|" + "---|" * len(columns)
    for section in doc["sections"]:
        lines += ["", f"## {section['number']}. {section['title']}", "", header, rule]
        for req in section["requirements"]:
            cells = []
            for c in columns:
                cell = req["cells"][c["impl"]]
                text = f"{MARK[cell['status']]} {cell_text(cell)}"
                cells.append(f"[{text}](#{anchor(c, req['id'])})" if cell["status"] == "fail" else text)
            lines.append(f"| **{req['id']}** {_escape(req['subject'])} | " + " | ".join(cells) + " |")
    lines += [
        "",
        "## Deviations",
        "",
        "Each implementation's distinct deviations, stated once, with their likely cause "
        "(a known mistake of the mutant catalogue, `embconf explain MUTANT`, or a measured symptom, `symptom:KEY`) where one "
        "matches: the causes `embconf run` names for the same run. Deviations the framework documents as its "
        "design are listed last, each with its documentation: they are still deviations. "
        "`embconf show CASE` prints a case; `embconf run --impl IMPL --select CASE` reproduces it.",
    ]
    for c in columns:
        lines += ["", f"### `{short[c['impl']]}`: {_escape(title(c))}", ""]
        if not c["deviations"]:
            lines.append("No deviation: every applicable case passed.")
            continue
        for d in c["deviations"]:
            cause = f" Likely cause: `{d['likely_cause']}`." if d["likely_cause"] else ""
            shown = ", ".join(f"`{case}`" for case in d["cases"][:6]) + (
                f" and {len(d['cases']) - 6} more" if len(d["cases"]) > 6 else ""
            )
            documented = d.get("documented")
            why = (
                f" Documented choice of the framework: {_escape(documented['sentence'])} ([documentation]({documented['link']}))."
                if documented
                else ""
            )
            lines.append(
                f"- **{_escape(d['summary'])}** ({', '.join(d['requirements'])}; {_cases(len(d['cases']))}: {shown}).{cause}{why}"
            )
        lines += ["", "Failing cases by requirement:", ""]
        for req, cases in failing_by_requirement(c):
            listed = "; ".join(f"`{case['id']}` ({case['outcome']})" for case in cases)
            lines.append(f'- <a id="{anchor(c, req)}"></a>**{req}**: {listed}')
    return "\n".join(lines) + "\n"


def write(path: Path, doc: dict[str, Any]) -> None:
    Path(path).write_text(render(doc), encoding="utf-8")
