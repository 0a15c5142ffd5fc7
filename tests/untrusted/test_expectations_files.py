"""Expectations files: a bad one is refused in one line (exit 2) before the run, entries match in file order,
exact or glob, and a large one is applied quickly."""

from __future__ import annotations

import os
import time

import pytest
import yaml
from helpers import assert_one_line_error, run_main

ONE_CASE = "lookup.forward.module_example"


EXPECTATION_CORRUPTIONS = [
    ("directory", lambda p: p.mkdir(), "the expectations file is a directory"),
    ("not_utf8", lambda p: p.write_bytes(b"expectations:\n  - case: \xff\xfe\n    reason: x\n"), "is not UTF-8"),
    ("fifo", lambda p: os.mkfifo(p), "not a regular file"),
    ("dev_zero", lambda p: p.symlink_to("/dev/zero"), "not a regular file"),
    ("billion_laughs", lambda p: p.write_text(BILLION_LAUGHS.replace("cases", "expectations")), "anchors and aliases"),
    ("deep", lambda p: p.write_text("expectations: " + "[" * 100_000), "nested more than 32 levels"),
    ("entry_a_string", lambda p: p.write_text("expectations: [lookup.*]\n"), "entry 1 must have exactly"),
    ("missing", lambda p: None, "does not exist"),
]


@pytest.mark.parametrize("name, make, words", EXPECTATION_CORRUPTIONS, ids=[c[0] for c in EXPECTATION_CORRUPTIONS])
def test_a_bad_expectations_file_is_one_line_and_exit_2(tmp_path, capsys, name, make, words):
    path = tmp_path / "expectations.yaml"
    make(path)
    result = run_main(
        capsys, "run", "--impl", "reference", "--in-process", "-q", "-k", ONE_CASE, "--expectations", str(path)
    )
    assert_one_line_error(result, words, max_chars=2500)


def test_expectations_match_the_first_entry_in_file_order_exact_or_glob():
    from embconf.corpus.expectations import Entry, Expectations

    expectations = Expectations(
        [
            Entry("lookup.*", "glob first"),
            Entry("lookup.forward.a", "exact"),
            Entry("sin.x", "exact first"),
            Entry("sin.*", "glob"),
        ]
    )
    assert expectations.match("lookup.forward.a").reason == "glob first"
    assert expectations.match("sin.x").reason == "exact first"
    assert expectations.match("sin.y").reason == "glob"
    assert expectations.match("layer.z") is None
    assert expectations.unmatched() == ["lookup.forward.a (exact)"]  # shadowed by the glob before it, as before


LARGE_REASON = "listed to make the file large " * 3


LAST_ENTRIES = [{"case": ONE_CASE, "reason": "known"}, {"case": "sin.*", "reason": "a glob at the end"}]


def _large_expectations(count: int) -> str:
    """What yaml.safe_dump writes for ``count`` entries naming no case, then LAST_ENTRIES: the entries differ only
    in their number, so one is dumped and repeated (dumping all 90 000 took 20 s)."""
    one = yaml.safe_dump([{"case": "no.such.case.NUMBER", "reason": LARGE_REASON}], width=4096)
    listed = "".join(one.replace("NUMBER", f"{i:07d}") for i in range(count))
    return "expectations:\n" + listed + yaml.safe_dump(LAST_ENTRIES, width=4096)


def test_a_10_mb_expectations_file_is_applied_quickly(tmp_path):
    from embconf.corpus.expectations import Expectations

    entries = [{"case": f"no.such.case.{i:07d}", "reason": LARGE_REASON} for i in range(3)] + LAST_ENTRIES
    assert _large_expectations(3) == yaml.safe_dump({"expectations": entries}, width=4096)
    path = tmp_path / "big.yaml"
    path.write_text(_large_expectations(90_000))
    assert path.stat().st_size > 10 << 20
    started = time.monotonic()
    expectations = Expectations.load(path)
    ids = [ONE_CASE, "sin.canonical.l16_d8"] + [f"other.case.{i}" for i in range(300)]
    found = [expectations.match(case_id) for case_id in ids]
    assert time.monotonic() - started < 60  # before: no answer within 120 s (benchmarks/bench_inputs.py measures it)
    assert found[0].reason == "known" and found[1].reason == "a glob at the end" and found[2] is None
    assert len(expectations.unmatched()) == 90_000


BILLION_LAUGHS = (
    "a: &a [x, x, x, x, x, x, x, x, x, x]\n"
    + "".join(f"{chr(98 + i)}: &{chr(98 + i)} [{', '.join(['*' + chr(97 + i)] * 10)}]\n" for i in range(8))
    + "cases: [*i]\n"
)
