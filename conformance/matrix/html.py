"""The matrix as one self-contained HTML file (no scripts, no external resources), readable on a
phone (the table scrolls sideways under a fixed first column) and in print (full width, colours kept)."""

from __future__ import annotations

import re
from html import escape
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

STYLE = """
body{font:15px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;margin:0 auto;padding:1rem;max-width:80rem;color:#111}
h1{font-size:1.5rem}h2{font-size:1.2rem;margin-top:1.6rem}h3{font-size:1.05rem}
.scroll{overflow-x:auto;-webkit-overflow-scrolling:touch}
table{border-collapse:collapse;font-size:.85rem}
th,td{border:1px solid #ccc;padding:.3rem .45rem;text-align:left;vertical-align:top}
thead th{background:#f2f2f2}
th.req{position:sticky;left:0;background:#fff;min-width:9rem;max-width:16rem;font-weight:normal}
tr.section th{background:#e8eef7;text-align:left;position:static}
td.pass{background:#e6f4ea}td.fail{background:#fde7e7}td.na{color:#777}
td a{color:inherit}
code{font-size:.85em;word-break:break-all}
thead code{word-break:normal;white-space:nowrap}
ul{padding-left:1.2rem}
li,p{overflow-wrap:anywhere}
@media (max-width:40rem){body{padding:.5rem;font-size:14px}table{font-size:.78rem}th.req{min-width:6.5rem}}
@media print{body{max-width:none;padding:0;font-size:10pt}.scroll{overflow:visible}th.req{position:static}
 td,th{-webkit-print-color-adjust:exact;print-color-adjust:exact}tr{break-inside:avoid}a{text-decoration:none}}
"""
CLASS = {"pass": "pass", "fail": "fail", "n/a": "na"}


def _text(markdown: str) -> str:
    """Escaped text, with the spec's `code` spans as <code>."""
    return re.sub(r"`([^`]+)`", r"<code>\1</code>", escape(markdown))


def render(doc: dict[str, Any]) -> str:
    columns = doc["implementations"]
    env = doc["environment"]
    out = [
        '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>Embedding conformance matrix (spec {escape(doc['spec_version'])})</title><style>{STYLE}</style></head><body>",
        "<h1>Embedding conformance matrix</h1>",
        f"<p>Measured {escape(doc['generated'])} with embconf {escape(doc['suite']['version'])} against spec "
        f"{escape(doc['spec_version'])} ({doc['fixtures']['cases']} cases), Python {escape(env['python'])}, "
        f"NumPy {escape(env['numpy'])}, {escape(env['platform'])}.</p>",
    ]
    if doc.get("command"):
        out.append(f"<p>Regenerate with <code>{escape(doc['command'])}</code></p>")
    if doc.get("sources"):
        out.append(
            f"<p>Merged from {len(doc['sources'])} column files, each measured in its own environment (a column "
            "measured elsewhere says where): "
            + ", ".join(f"<code>{escape(name)}</code>" for name in doc["sources"])
            + ".</p>"
        )
    out.append("<h2>Implementations</h2><ul>")
    short = short_names(columns)
    for c in columns:
        full = f" (<code>--impl {escape(c['impl'])}</code>)" if short[c["impl"]] != c["impl"] else ""
        out.append(
            f"<li><code>{escape(short[c['impl']])}</code>: <strong>{escape(title(c))}</strong>{full}. "
            f"{escape('; '.join(part for part in (capabilities_text(c), environment_text(c, doc)) if part))}. "
            f"<em>{escape(c['claim']['statement'])}</em>.</li>"
        )
    out.append('</ul><h2>Matrix</h2><div class="scroll"><table><thead><tr><th class="req">Requirement</th>')
    out.extend(f"<th><code>{escape(short[c['impl']])}</code></th>" for c in columns)
    out.append("</tr></thead><tbody>")
    for section in doc["sections"]:
        out.append(
            f'<tr class="section"><th colspan="{len(columns) + 1}">{section["number"]}. {escape(section["title"])}</th></tr>'
        )
        for req in section["requirements"]:
            out.append(f'<tr><th class="req"><strong>{escape(req["id"])}</strong> {_text(req["subject"])}</th>')
            for c in columns:
                cell = req["cells"][c["impl"]]
                text = escape(cell_text(cell))
                if cell["status"] == "fail":
                    text = f'<a href="#{anchor(c, req["id"])}">{text}</a>'
                out.append(f'<td class="{CLASS[cell["status"]]}">{text}</td>')
            out.append("</tr>")
    out.append("</tbody></table></div><h2>Deviations</h2>")
    for c in columns:
        out.append(f"<h3><code>{escape(short[c['impl']])}</code>: {escape(title(c))}</h3>")
        if not c["deviations"]:
            out.append("<p>No deviation: every applicable case passed.</p>")
            continue
        out.append("<ul>")
        for d in c["deviations"]:
            cause = f" Likely cause: <code>{escape(d['likely_cause'])}</code>." if d["likely_cause"] else ""
            documented = d.get("documented")
            why = (
                f" Documented choice of the framework: {escape(documented['sentence'])} "
                f'(<a href="{escape(documented["link"])}">documentation</a>).'
                if documented
                else ""
            )
            out.append(
                f"<li><strong>{escape(d['summary'])}</strong> ({escape(', '.join(d['requirements']))}; "
                f"{len(d['cases'])} case{'s' if len(d['cases']) != 1 else ''}).{cause}{why}</li>"
            )
        out.append("</ul><p>Failing cases by requirement:</p><ul>")
        for req, cases in failing_by_requirement(c):
            listed = "; ".join(f"<code>{escape(case['id'])}</code> ({escape(case['outcome'])})" for case in cases)
            out.append(f'<li id="{anchor(c, req)}"><strong>{escape(req)}</strong>: {listed}</li>')
        out.append("</ul>")
    out.append("</body></html>")
    return "\n".join(out) + "\n"


def write(path: Path, doc: dict[str, Any]) -> None:
    Path(path).write_text(render(doc), encoding="utf-8")
