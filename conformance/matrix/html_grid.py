"""The page's grid (one coloured cell per requirement and implementation, each linking to its cases) and its
filters: radio buttons and a checkbox read by generated CSS rules alone (no script), so the page reads whole
without them and in print.

A filter hides grid columns by their position (``nth-child``), requirement rows by their area's class, and
the summary rows and detail sections of the hidden columns by their kind and language classes. Choosing an
area also hides the columns with nothing applicable in it."""

from __future__ import annotations

import re
from collections import Counter
from html import escape
from typing import Any, Iterable

from embconf.matrix.html_columns import (
    ColumnView,
    anchor_of,
    cell_class,
    cell_title,
    code_text,
    plain,
    share_class,
    share_text,
)
from embconf.matrix.model import slug
from embconf.model.outcomes import PASS

GRID_ID = "grid"
HIDE = "{display:none}"
CHOSEN = "{background:var(--ink);color:#fff;border-color:var(--ink)}"


def _hide_columns(trigger: str, views: Iterable[ColumnView]) -> list[str]:
    """Rules hiding ``views``' grid cells and their summary rows and sections while ``trigger`` is checked."""
    views = list(views)
    if not views:
        return []
    cells = ",".join(f":nth-child({v.nth_child})" for v in views)
    return [f"#{trigger}:checked~.box tr>:is({cells}){HIDE}"]


def _group(name: str, legend: str, options: list[tuple[str, str]]) -> tuple[list[str], str]:
    """A radio group ``name`` with an "all" option first: its inputs and its labels."""
    inputs, labels = [], [f'<span class="group" role="group" aria-label="{escape(legend)}"><b>{escape(legend)}</b>']
    for value, text in [("all", "all"), *options]:
        ident = f"f-{name}-{value}"
        checked = " checked" if value == "all" else ""
        inputs.append(f'<input class="f" type="radio" name="{name}" id="{ident}"{checked}>')
        labels.append(f'<label for="{ident}">{text}</label>')
    labels.append("</span>")
    return inputs, "".join(labels)


def _area_title(title: str) -> str:
    return re.sub(r"\s*\(since [^)]*\)", "", title)


def filters(doc: dict[str, Any], views: list[ColumnView]) -> tuple[str, str]:
    """The filter inputs and labels (HTML, to stand before the grid, the summary and the details as their
    siblings) and the CSS rules that make them work."""
    rules: list[str] = []
    areas = [(str(s["number"]), f"{s['number']} {escape(_area_title(s['title']))}") for s in doc["sections"]]
    area_inputs, area_labels = _group("area", "Area", areas)
    for section in doc["sections"]:
        trigger = f"f-area-{section['number']}"
        rules.append(f"#{trigger}:checked~.box tbody tr:not(.a{section['number']}){HIDE}")
        idle = [v for v in views if not _applies_in(v, section)]
        rules += _hide_columns(trigger, idle)
    groups = [area_labels]
    inputs = area_inputs
    for name, legend, key in (("kind", "Kind", "kind"), ("lang", "Language", "language")):
        counts = Counter(getattr(v, key) for v in views)
        options = [(slug(value), f"{escape(value)} <small>{n}</small>") for value, n in counts.items()]
        group_inputs, labels = _group(name, legend, options)
        inputs += group_inputs
        groups.append(labels)
        for value in counts:
            trigger = f"f-{name}-{slug(value)}"
            rules += _hide_columns(trigger, (v for v in views if getattr(v, key) != value))
            rules.append(f"#{trigger}:checked~* .impl:not(.{name[0]}-{slug(value)}){HIDE}")
    inputs.append('<input class="f" type="checkbox" id="f-failing">')
    groups.append('<span class="group"><label for="f-failing">only requirements with a failure</label></span>')
    rules.append(f"#f-failing:checked~.box tbody tr.ok{HIDE}")
    idents = re.findall(r'id="([^"]+)"', "".join(inputs))
    rules.append(",".join(f"#{i}:checked~.filters label[for={i}]" for i in idents) + CHOSEN)
    rules.append(
        ",".join(f"#{i}:focus-visible~.filters label[for={i}]" for i in idents) + "{outline:2px solid var(--ink)}"
    )
    html = "\n".join(inputs) + '\n<div class="filters">' + "".join(groups) + "</div>"
    return html, "\n".join(rules)


def _applies_in(view: ColumnView, section: dict[str, Any]) -> bool:
    return any(req["cells"][view.impl]["status"] != "n/a" for req in section["requirements"])


LEGEND = (
    '<p class="legend"><span class="sw p">12</span> every applicable case passes (the count)'
    '<span class="sw g">12</span> passes, some decided by the adapter\'s glue'
    '<span class="sw f">3</span> cases fail (the count)'
    '<span class="sw d">3</span> fail, every one the framework\'s documented choice'
    '<span class="sw n"></span> not applicable. '
    "Hover a cell for its counts; a cell links to its failing cases and their deviations, a column name to its "
    "implementation, the % row to its summary.</p>"
)


def grid(doc: dict[str, Any], views: list[ColumnView]) -> str:
    """The grid: a sticky header of column names and pass shares, a sticky requirement column, one row per
    requirement grouped by area."""
    out = [f'<div class="box" id="{GRID_ID}" tabindex="0"><table class="grid"><thead><tr>']
    out.append('<th class="corner" scope="col">Requirement</th>')
    for v in views:
        out.append(
            f'<th class="col" scope="col"><a href="#{v.details_id}" title="{escape(v.title)} (--impl {escape(v.impl)})">'
            f"{escape(v.short)}</a></th>"
        )
    out.append('</tr><tr class="shares"><th class="corner" scope="row">% of applicable cases passed</th>')
    for v in views:
        tip = f"{v.short}: {v.passed} of {v.applicable} applicable cases pass"
        out.append(
            f'<td class="{share_class(v)}"><a href="#{v.summary_id}" title="{escape(tip)}">{share_text(v)}</a></td>'
        )
    out.append("</tr></thead>")
    for section in doc["sections"]:
        area = f"a{section['number']}"
        out.append(f'<tbody><tr class="sec {area}"><th colspan="{len(views) + 1}" scope="rowgroup">')
        out.append(f"<span>{section['number']}. {escape(section['title'])}</span></th></tr>")
        for req in section["requirements"]:
            failing = any(cell["status"] == "fail" for cell in req["cells"].values())
            out.append(f'<tr class="{area}{"" if failing else " ok"}">')
            out.append(
                f'<th class="req" scope="row" title="{escape(req["id"])}: {escape(plain(req["subject"]))}">'
                f"<b>{escape(req['id'])}</b> {code_text(req['subject'])}</th>"
            )
            out.extend(_cell(v, req) for v in views)
            out.append("</tr>")
        out.append("</tbody>")
    out.append("</table></div>")
    return "".join(out)


def _cell(view: ColumnView, req: dict[str, Any]) -> str:
    cell = req["cells"][view.impl]
    kind = cell_class(view, cell)
    if kind == "n":
        return '<td class="n"></td>'
    count = len(cell["failing"]) if cell["status"] == "fail" else cell["counts"].get(PASS, 0)
    target = anchor_of(view, req["id"]) if cell["status"] == "fail" else view.details_id
    return (
        f'<td class="{kind}"><a href="#{target}" title="{escape(cell_title(view, req["id"], cell))}">{count}</a></td>'
    )
