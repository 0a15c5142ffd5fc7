"""The page below the grid: one summary row per implementation (the share of applicable cases passed, failing
cases, declines, documented choices, glue-decided passes, the claim), then each implementation's description,
distinct deviations and failing cases by requirement: the targets of the grid's links."""

from __future__ import annotations

from html import escape
from typing import Any

from embconf.matrix.html_columns import ColumnView, anchor_of, share_class
from embconf.matrix.html_grid import GRID_ID
from embconf.matrix.model import capabilities_text, environment_text, failing_by_requirement

SUMMARY_HEAD = (
    "<tr><th scope='col'>Implementation</th><th scope='col'>Kind</th><th scope='col'>Language</th>"
    "<th scope='col'>Applicable cases passed</th><th scope='col' class='num'>Failing</th>"
    "<th scope='col' class='num'>Declined</th><th scope='col' class='num'>Documented choices</th>"
    "<th scope='col' class='num'>Glue-decided passes</th><th scope='col'>Claim</th><th scope='col'>Error kinds</th></tr>"
)


def _plural(count: int, noun: str) -> str:
    return f"{count} {noun}{'s' if count != 1 else ''}"


def summary(views: list[ColumnView]) -> str:
    """A row per implementation, in the grid's order, each linking to its details."""
    out = ['<section id="summary"><h2>Implementations at a glance</h2><div class="wide"><table class="summary">']
    out.append(f"<thead>{SUMMARY_HEAD}</thead><tbody>")
    for v in views:
        c = v.column
        percent = f"{int(v.share * 1000) / 10:g} %" if v.applicable else "nothing applicable"
        claim = c["claim"]
        out.append(
            f'<tr class="impl {v.classes}" id="{v.summary_id}"><th scope="row"><a href="#{v.details_id}">'
            f"<code>{escape(v.short)}</code></a> {escape(v.title)}</th><td>{escape(v.kind)}</td>"
            f"<td>{escape(v.language)}</td>"
            f'<td class="share"><span class="bar"><i class="{share_class(v)}" style="width:{v.share * 100:.1f}%"></i></span>'
            f"{v.passed} of {v.applicable} <small>({percent})</small></td>"
            f'<td class="num">{len(c["failing"])}</td><td class="num">{c["declined"]}</td>'
            f'<td class="num">{c["documented"]}</td><td class="num">{len(c["glue_decided"])}</td>'
            f'<td class="claim {"yes" if claim["conforms"] else "no"}" title="{escape(claim["statement"])}">'
            f"{'conforms' if claim['conforms'] else 'does not conform'}</td>"
            f"<td>{'verified' if claim['error_kinds_verified'] else 'not verified'}</td></tr>"
        )
    out.append("</tbody></table></div></section>")
    return "".join(out)


def details(doc: dict[str, Any], views: list[ColumnView]) -> str:
    """Each implementation's description, claim, deviations and failing cases."""
    out = ['<section id="details"><h2>Implementations, their deviations and failing cases</h2>']
    out.extend(_implementation(doc, v) for v in views)
    out.append("</section>")
    return "".join(out)


def _implementation(doc: dict[str, Any], v: ColumnView) -> str:
    c = v.column
    where = "; ".join(part for part in (capabilities_text(c), environment_text(c, doc)) if part)
    out = [
        f'<section class="impl {v.classes}" id="{v.details_id}"><h3><code>{escape(v.short)}</code> '
        f'{escape(v.title)} <a class="up" href="#{GRID_ID}">back to the grid</a></h3>',
        f"<p><code>--impl {escape(v.impl)}</code> · {escape(v.language)} · {escape(where)}.</p>",
        f'<p class="claim {"yes" if c["claim"]["conforms"] else "no"}">{escape(c["claim"]["statement"])}.</p>',
    ]
    if not c["deviations"]:
        out.append("<p>No deviation: every applicable case passed.</p></section>")
        return "".join(out)
    numbers: dict[str, list[int]] = {}
    out.append("<h4>Deviations</h4><ol class='devs'>")
    for number, d in enumerate(c["deviations"], 1):
        for case in d["cases"]:
            numbers.setdefault(case, []).append(number)
        out.append(f'<li id="{v.deviation_id(number)}">{_deviation(d)}</li>')
    out.append("</ol><h4>Failing cases by requirement</h4><ul class='cases'>")
    for req, cases in failing_by_requirement(c):
        listed = "; ".join(f"<code>{escape(case['id'])}</code> ({escape(case['outcome'])})" for case in cases)
        linked = sorted({n for case in cases for n in numbers.get(case["id"], [])})
        devs = ", ".join(f'<a href="#{v.deviation_id(n)}">{n}</a>' for n in linked)
        more = f" · deviation{'s' if len(linked) != 1 else ''} {devs}" if linked else ""
        out.append(f'<li id="{anchor_of(v, req)}"><b>{escape(req)}</b>: {listed}{more}</li>')
    out.append("</ul></section>")
    return "".join(out)


def _deviation(d: dict[str, Any]) -> str:
    cause = f" Likely cause: <code>{escape(d['likely_cause'])}</code>." if d["likely_cause"] else ""
    documented = d.get("documented")
    why = (
        f' <span class="doc">Documented choice of the framework: {escape(documented["sentence"])} '
        f'(<a href="{escape(documented["link"])}">documentation</a>).</span>'
        if documented
        else ""
    )
    return (
        f"<b>{escape(d['summary'])}</b> ({escape(', '.join(d['requirements']))}; "
        f"{_plural(len(d['cases']), 'case')}).{cause}{why}"
    )
