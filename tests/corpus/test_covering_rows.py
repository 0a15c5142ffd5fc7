"""The pairwise goldens: rows chosen once by scripts/cover_pairs.py (reference/cases/covering_rows.json), each built
with case_at into its area's fixture file; together with the hand-written cases every allowed pair, every triple
where three options meet in one formula and every error boundary has a golden; --check names what is uncovered or
a row no longer as written; a missing pair gets a new row, numbered after the others, none of which changes."""

from __future__ import annotations

import importlib.util
import json
import random
import re
import subprocess
import sys
from itertools import product

import pytest

from embconf.model.bag import MODES
from embconf.model.family import family_of
from embconf.reference.cases.covering import ROWS_PATH, TRIPLES
from embconf.reference.cases.domains import allowed_pairs, calls_at, domain_named
from tests.helpers import ROOT, assert_exit

ROWS = [row for rows in json.loads(ROWS_PATH.read_text(encoding="utf-8"))["rows"].values() for row in rows]


@pytest.fixture(scope="module")
def cover_pairs():
    spec = importlib.util.spec_from_file_location("cover_pairs", ROOT / "scripts" / "cover_pairs.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_each_row_is_a_golden_with_a_readable_id_at_the_boundaries_its_description_names(cases_by_id):
    assert ROWS
    for row in ROWS:
        operation = row["operation"]
        assert re.fullmatch(rf"{family_of(operation).area}\.pairs\.{operation}\.\d{{3}}", row["id"]), row["id"]
        case = cases_by_id[row["id"]]
        at = calls_at(case)[0][1]
        for name, boundary in row["at"].items():
            assert at[name] == boundary, (row["id"], name)
            assert f"{name}={boundary}" in case.description, row["id"]
        assert case.requirements and all(req in case.description for req in case.requirements), row["id"]


def test_every_triple_where_three_options_meet_has_a_golden_with_outputs(corpus):
    met: set[tuple[str, tuple]] = set()
    for case in corpus.cases:
        for call, (operation, at) in zip(case.calls or (case,), calls_at(case)):
            if call.expected_error is None:
                met |= {(operation, tuple(at[n] for n in names)) for names in TRIPLES.get(operation, ())}
    for operation, triples in TRIPLES.items():
        allowed = set(allowed_pairs(operation))
        for names in triples:
            points = [[(n, b.name) for b in domain_named(operation, n).boundaries] for n in names]
            for triple in product(*points):
                pairs = [tuple(sorted((a, b))) for i, a in enumerate(triple) for b in triple[i + 1 :]]
                if all(pair in allowed for pair in pairs):
                    assert (operation, tuple(b for _, b in triple)) in met, (operation, triple)


def test_check_passes_on_the_committed_rows():
    result = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "cover_pairs.py"), "--check"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert_exit(result, 0)
    assert "every allowed pair, triple and error boundary has a golden" in result.stdout


def test_check_names_a_row_whose_features_are_no_longer_those_its_inputs_need(cover_pairs):
    row = next(r for r in ROWS if r["at"].get("mode") == "sum" and r["operation"] == "embedding_bag_forward")
    assert cover_pairs.problems({"bags": [row]}) == []
    changed = {**row, "features": ["bag-max"]}
    assert cover_pairs.problems({"bags": [changed]}) == [f"{row['id']}: its features are now {row['features']}"]


def test_a_pair_no_golden_covers_gets_a_new_row_numbered_after_the_others(cover_pairs):
    from embconf.reference.cases import all_cases

    specs = [spec for _, specs in all_cases() for spec in specs]
    dropped = next(r for r in ROWS if r["operation"] == "embedding_bag_forward")
    open_targets, open_errors = cover_pairs.missing([s for s in specs if s.id != dropped["id"]])
    assert set(open_targets) == {"embedding_bag_forward"} and not open_errors
    taken = [r for r in ROWS if r["operation"] == "embedding_bag_forward"]
    first = 1 + len(taken)
    made, unbuilt = cover_pairs.cover(
        "embedding_bag_forward", open_targets["embedding_bag_forward"], first, random.Random(0)
    )
    assert made and not unbuilt
    assert made[0]["id"] == f"bags.pairs.embedding_bag_forward.{first:03d}"
    rebuilt = [cover_pairs.row_spec(r) for r in made]
    assert cover_pairs.missing([s for s in specs if s.id != dropped["id"]] + rebuilt) == ({}, {})


def test_a_row_in_a_bag_mode_cites_that_modes_requirements_and_no_other_modes():
    in_mode = [row for row in ROWS if row["at"].get("mode") in MODES]
    assert in_mode
    for row in in_mode:
        named = {b.name: set(b.requirements) for b in domain_named(row["operation"], "mode").boundaries}
        own = named[row["at"]["mode"]]
        others = set().union(*named.values()) - own
        assert own and own <= set(row["requirements"]), row["id"]
        assert not others & set(row["requirements"]), row["id"]
    max_rows = [r for r in in_mode if r["operation"] == "embedding_bag_forward" and r["at"]["mode"] == "max"]
    assert max_rows and all("EMB-BAG-2" not in r["requirements"] for r in max_rows)
