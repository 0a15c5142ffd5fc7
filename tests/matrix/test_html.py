"""The matrix page (issue 35 item 8): a compact grid first, sticky header row and requirement column, filters by
area, kind and language in CSS alone, a summary row per implementation, every cell linking to its cases; it fits
a 1400-pixel window with 30 columns and with 46, measured in headless Chromium."""

from __future__ import annotations

import copy
import json
import re
from html.parser import HTMLParser
from typing import Any

import pytest
from browser import chromium, measure, needs_chromium
from helpers import ROOT

from embconf.matrix import html
from embconf.matrix.html_columns import cell_class, column_views
from embconf.matrix.model import slug

PUBLISHED = ROOT / "docs" / "matrix.json"


@pytest.fixture(scope="module")
def published() -> dict[str, Any]:
    return json.loads(PUBLISHED.read_text())


def wider(doc: dict[str, Any], columns: int) -> dict[str, Any]:
    """``doc`` with its columns repeated under new names up to ``columns`` columns (a matrix of the future)."""
    doc = copy.deepcopy(doc)
    originals = list(doc["implementations"])
    while len(doc["implementations"]) < columns:
        n = len(doc["implementations"])
        source = originals[n % len(originals)]
        impl = f"copy{n}:{source['impl']}"
        doc["implementations"].append({**source, "impl": impl, "slug": slug(impl)})
        for section in doc["sections"]:
            for req in section["requirements"]:
                req["cells"][impl] = req["cells"][source["impl"]]
    return doc


class Page(HTMLParser):
    """The ids, in-page links and grid cells of a page."""

    def __init__(self, text: str) -> None:
        super().__init__()
        self.ids: list[str] = []
        self.links: list[str] = []
        self.cells: list[tuple[str, str]] = []  # (class, href) of every grid cell
        self.external: list[str] = []
        self._cell: list[str] | None = None
        self._in_grid = False
        self.feed(text)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        if a.get("id"):
            self.ids.append(str(a["id"]))
        href = a.get("href") or ""
        if href.startswith("#"):
            self.links.append(href[1:])
        elif href:
            self.external.append(href)
        if tag == "table":
            self._in_grid = a.get("class") == "grid"
        if tag == "td" and self._in_grid:
            self._cell = [str(a.get("class")), ""]
        elif tag == "a" and self._cell is not None:
            self._cell[1] = href

    def handle_endtag(self, tag: str) -> None:
        if tag == "table":
            self._in_grid = False
        if tag == "td" and self._cell is not None:
            self.cells.append((self._cell[0], self._cell[1]))
            self._cell = None


RENDER = 'python -c \'import json; from embconf.matrix import html; html.write("docs/matrix.html", json.load(open("docs/matrix.json")))\''


def test_the_published_page_is_the_render_of_the_published_json(published):
    """Generated, never edited; re-rendered from the saved JSON (not re-measured) with RENDER."""
    page = (ROOT / "docs" / "matrix.html").read_text(encoding="utf-8")
    assert page == html.render(published), f"docs/matrix.html differs from docs/matrix.json; run {RENDER}"


def test_one_coloured_cell_per_requirement_and_implementation_linking_to_its_cases(published):
    text = html.render(published)
    page = Page(text)
    views = column_views(published)
    requirements = [req for section in published["sections"] for req in section["requirements"]]
    grid = page.cells[len(views) :]  # after the row of pass shares
    assert len(grid) == len(requirements) * len(views)
    for i, (css, href) in enumerate(grid):
        req, view = requirements[i // len(views)], views[i % len(views)]
        cell = req["cells"][view.impl]
        assert css == cell_class(view, cell)
        if cell["status"] == "fail":  # the cell's list item names exactly its failing cases
            item = re.search(rf'<li id="{re.escape(href[1:])}">(.*?)</li>', text).group(1)
            assert set(re.findall(r"<code>([^<]+)</code> \(", item)) == set(cell["failing"]), href
        else:
            assert href == ("" if cell["status"] == "n/a" else f"#{view.details_id}")
    assert {"f", "d", "p", "g", "n"} <= {css for css, _ in grid}  # every kind of cell occurs in the published page


def test_a_failing_cell_is_a_documented_choice_only_when_every_failing_case_is():
    column = {"impl": "x", "slug": "x", "deviations": [{"cases": ["a", "b"], "documented": {"link": "l"}}]}
    (view,) = column_views({"implementations": [column]})
    cell = {"status": "fail", "failing": ["a"], "counts": {"fail": 1}, "glue": 0}
    assert cell_class(view, cell) == "d"
    assert cell_class(view, {**cell, "failing": ["a", "c"]}) == "f"
    assert cell_class(view, {**cell, "status": "pass", "failing": [], "glue": 1}) == "g"


def test_the_page_is_self_contained_and_has_no_script(published):
    text = html.render(published)
    assert "<script" not in text and not re.search(r"""\bsrc=|<link\b|url\(|@import""", text)
    documentation = {
        d["documented"]["link"] for c in published["implementations"] for d in c["deviations"] if d["documented"]
    }
    assert set(Page(text).external) <= documentation  # the only links out: the frameworks' documentation


FIT = """(() => {
  const box = document.getElementById('grid'), root = document.documentElement, r = box.getBoundingClientRect();
  const first = box.querySelector('tbody tr:not(.sec) td').getBoundingClientRect();
  const out = {page: root.scrollWidth, window: root.clientWidth, top: r.top, right: r.right, firstRow: first.bottom,
               inner: box.scrollWidth - box.clientWidth};
  box.scrollIntoView();
  box.scrollTop = 700; box.scrollLeft = 500;
  const at = box.getBoundingClientRect(), head = box.querySelector('thead').getBoundingClientRect();
  const side = box.querySelectorAll('tbody th.req')[30].getBoundingClientRect();
  return {...out, headerAt: head.top - at.top, sideAt: side.left - at.left, scrolled: [box.scrollLeft, box.scrollTop]};
})()"""


@needs_chromium
@pytest.mark.parametrize("columns", [0, 46])
def test_the_grid_fits_a_1400_pixel_window_and_keeps_its_headers_in_view(published, columns, tmp_path):
    doc = wider(published, columns) if columns else published
    got = measure(html.render(doc), FIT, tmp_path)
    assert got["page"] <= got["window"] and got["right"] <= got["window"], got  # the page never scrolls sideways
    assert got["top"] < 300 and got["firstRow"] < 900, got  # it opens on the grid
    assert got["scrolled"][1] == 700 and abs(got["headerAt"]) <= 4, got  # the header row stays at the box's top
    assert abs(got["sideAt"]) <= 4, got  # ... and the requirement column at its left
    if columns:  # 46 columns scroll inside the box (the page does not), under the requirement column
        assert got["inner"] > 0 and got["scrolled"][0] > 0, got
    shot = tmp_path / "grid.png"
    done = chromium(
        tmp_path / "shot", "--window-size=1400,900", f"--screenshot={shot}", (tmp_path / "measured.html").as_uri()
    )
    assert done.returncode == 0 and shot.read_bytes()[16:24] == (1400).to_bytes(4, "big") + (900).to_bytes(4, "big")


@needs_chromium
def test_every_link_of_the_published_page_lands_on_an_element(published, tmp_path):
    page = tmp_path / "matrix.html"
    page.write_text(html.render(published), encoding="utf-8")
    dom = chromium(tmp_path / "profile", "--dump-dom", page.as_uri())
    assert dom.returncode == 0, dom.stderr[-2000:]
    parsed = Page(dom.stdout)
    assert len(parsed.ids) == len(set(parsed.ids))  # no id twice
    assert parsed.links and set(parsed.links) <= set(parsed.ids)


FILTERED = """(() => {
  const shown = e => e.getClientRects().length > 0;
  const state = {};
  for (const id of IDS) {
    document.getElementById(id).checked = true;
    state[id] = {
      columns: [...document.querySelectorAll('thead th.col')].filter(shown).map(e => e.textContent),
      rows: [...document.querySelectorAll('#grid tbody tr:not(.sec)')].filter(shown).map(e => e.querySelector('b').textContent),
      summary: [...document.querySelectorAll('#summary tr.impl')].filter(shown).map(e => e.querySelector('code').textContent),
    };
    document.getElementById(id).checked = false;
    for (const all of ['f-area-all', 'f-kind-all', 'f-lang-all']) document.getElementById(all).checked = true;
  }
  return state;
})()"""


@needs_chromium
def test_the_filters_show_an_area_a_kind_or_a_language_by_css_alone(published, tmp_path):
    views = column_views(published)
    names = [v.short for v in views]
    every = [req["id"] for s in published["sections"] for req in s["requirements"]]
    rope = next(s for s in published["sections"] if s["number"] == 14)
    ids = ["f-area-14", "f-kind-transformers", "f-lang-javascript", "f-failing"]
    got = measure(html.render(published), FILTERED.replace("IDS", json.dumps(ids)), tmp_path)
    applicable = [v.short for v in views if any(r["cells"][v.impl]["status"] != "n/a" for r in rope["requirements"])]
    assert got["f-area-14"]["rows"] == [r["id"] for r in rope["requirements"]]
    assert got["f-area-14"]["columns"] == applicable and len(applicable) < len(names)
    transformers = [v.short for v in views if v.kind == "transformers"]
    assert got["f-kind-transformers"]["columns"] == got["f-kind-transformers"]["summary"] == transformers
    javascript = [v.short for v in views if v.language == "javascript"]
    assert got["f-lang-javascript"]["columns"] == got["f-lang-javascript"]["summary"] == javascript
    failing = [
        r["id"]
        for s in published["sections"]
        for r in s["requirements"]
        if any(c["status"] == "fail" for c in r["cells"].values())
    ]
    assert got["f-failing"]["rows"] == failing and len(failing) < len(every)
    assert got["f-failing"]["columns"] == names
