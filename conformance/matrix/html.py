"""The matrix as one self-contained HTML page (no script, no external resource): a compact grid first (one
coloured cell per requirement and implementation, its header row and requirement column kept in view while it
scrolls in its own box), filters by area, kind and language (CSS alone), a summary row per implementation, then
each implementation's description, deviations and failing cases. Fits a 1400-pixel window with 40 columns,
reads on a phone, prints in landscape with its colours."""

from __future__ import annotations

from html import escape
from pathlib import Path
from typing import Any

from embconf.matrix.html_columns import column_views
from embconf.matrix.html_details import details, summary
from embconf.matrix.html_grid import LEGEND, filters, grid
from embconf.matrix.html_style import STYLE


def render(doc: dict[str, Any]) -> str:
    env = doc["environment"]
    views = column_views(doc)
    controls, rules = filters(doc, views)
    out = [
        '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>Embedding conformance matrix (spec {escape(doc['spec_version'])})</title>",
        f"<style>{STYLE}{rules}\n</style></head><body>",
        "<h1>Embedding conformance matrix</h1>",
        f'<p class="meta">{len(views)} implementations measured {escape(doc["generated"])} with embconf '
        f"{escape(doc['suite']['version'])} against spec {escape(doc['spec_version'])} "
        f"({doc['fixtures']['cases']} cases), Python {escape(env['python'])}, NumPy {escape(env['numpy'])}, "
        f"{escape(env['platform'])}.",
    ]
    if doc.get("command"):
        out.append(f" Regenerate with <code>{escape(doc['command'])}</code>.")
    if doc.get("sources"):
        out.append(
            f" Merged from {len(doc['sources'])} column files, each measured in its own environment (a column "
            "measured elsewhere says where): "
            + ", ".join(f"<code>{escape(name)}</code>" for name in doc["sources"])
            + "."
        )
    out += ["</p>", "<main>", controls, LEGEND, grid(doc, views), summary(views), details(doc, views), "</main>"]
    out.append("</body></html>")
    return "\n".join(out) + "\n"


def write(path: Path, doc: dict[str, Any]) -> None:
    Path(path).write_text(render(doc), encoding="utf-8")
