"""embconf bench: a correct but wasteful backward shows far below the roof and allocating far more than
the gradient; a wrong one is measured but marked; the JSON, the SVG and bad input."""

from __future__ import annotations

import json
import shlex
import sys
import xml.etree.ElementTree as ET

import pytest
from helpers import IMPLS, assert_exit, run_cli

from embconf.bench import BenchOptions, run_bench
from embconf.bench.measure import MEASURED, SKIPPED
from embconf.bench.render import svg, to_json
from embconf.bench.timing import own_resident
from embconf.isolation import IsolatedAdapter, IsolationOptions
from embconf.model.impl import Impl

FAST = BenchOptions(sizes=("tiny",), warmup=1, repeats=3)


def backward_rows(result):
    rows = [r for r in result.rows if r.operation == "embedding_backward"]
    assert len(rows) == 2 and all(r.status == MEASURED for r in rows), [r.reason for r in rows]
    return rows


@pytest.fixture(scope="module")
def benched():
    return {
        name: run_bench(Impl.parse(impl), FAST)
        for name, impl in (
            ("reference", "reference"),
            ("onehot", f"functions:{IMPLS / 'bench_onehot.py'}"),
            ("loop", f"functions:{IMPLS / 'bench_loop.py'}"),
            ("wrong", f"tinytorch:{IMPLS / 'wrong_overwrite.py'}"),
        )
    }


def test_wasteful_backwards_are_far_below_the_roof_and_say_so(benched):
    reference = min(r.roof_ratio for r in backward_rows(benched["reference"]))
    for name in ("onehot", "loop"):
        for row in backward_rows(benched[name]):
            assert row.conformance == ""  # both are correct
            assert row.roof_ratio < 0.02 and row.roof_ratio < reference / 4, (name, row.roof_ratio, reference)
            assert "of the memcpy roof" in to_json(benched[name])["rows"][1]["summary"]


def test_one_hot_backward_allocates_far_more_than_the_gradient(benched):
    reference = max(r.peak_ratio for r in backward_rows(benched["reference"]))
    for row in backward_rows(benched["onehot"]):
        assert row.peak_ratio > 20 and row.peak_ratio > 4 * reference, (row.peak_ratio, reference)
    summaries = [r["summary"] for r in to_json(benched["onehot"])["rows"] if r["operation"] == "embedding_backward"]
    assert all("x the gradient" in s for s in summaries), summaries


def test_a_wrong_backward_is_measured_and_marked(benched):
    rows = to_json(benched["wrong"])["rows"]
    backward = [r for r in rows if r["operation"] == "embedding_backward"]
    assert all(r["status"] == MEASURED and not r["conforms"] and "does not conform" in r["summary"] for r in backward)
    assert all(r["conforms"] for r in rows if r["operation"] == "embedding_forward")


def test_json_follows_its_schema_and_svg_has_the_roof(benched):
    from embconf.model.schemas import validator

    for result in benched.values():
        validator("bench").validate(to_json(result))
        root = ET.fromstring(svg(result))
        roofs = [e for e in root.iter() if e.get("id") == "roof"]
        assert len(roofs) == 1 and roofs[0].tag.endswith("line")
        assert (
            sum(
                e.tag.endswith(("circle", "rect")) and e.find("{http://www.w3.org/2000/svg}title") is not None
                for e in root.iter()
            )
            == 4
        )  # one marker per measured row


def test_a_size_over_the_memory_limit_is_skipped_with_the_reason():
    limit = own_resident() // 2**20 + 120
    result = run_bench(
        Impl("reference"), BenchOptions(("tiny", "gpt2-small"), 1, 3, isolation=IsolationOptions(memory_limit_mb=limit))
    )
    by_size = {(r.workload.size, r.operation): r for r in result.rows}
    assert all(r.status == MEASURED for (size, _), r in by_size.items() if size == "tiny"), [
        r.reason for r in result.rows
    ]
    skipped = [r for (size, _), r in by_size.items() if size == "gpt2-small"]
    assert skipped and all(r.status == SKIPPED and "MB" in r.reason for r in skipped), [r.reason for r in skipped]


def test_a_failing_measurement_is_a_line_not_a_lost_worker():
    from embconf.bench.timing import copy_bandwidth

    adapter = IsolatedAdapter("reference")
    try:
        ok, why = adapter.apply(copy_bandwidth, (-4,), timeout=30)
        assert not ok and why.startswith("raised ValueError"), why
        ok, result = adapter.apply(copy_bandwidth, (2**20,), timeout=30)  # the same worker goes on
        assert ok and result["bytes"] == 2**21
    finally:
        adapter.close()


@pytest.mark.parametrize(
    "args, says",
    [
        (("--sizes", "gpt3"), "unknown size 'gpt3'"),
        (("--json", "/nonexistent-dir/bench.json"), "bench.json"),
        (("--repeats", "1"), "--repeats"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(args, says):
    done = run_cli("bench", "--impl", "reference", *args, timeout=120)
    assert_exit(done, 2)
    assert done.stderr.count("\n") == 1 and says in done.stderr and not done.stdout, done.stderr


def test_cli_writes_json_and_svg(tmp_path):
    done = run_cli(
        "bench",
        "--impl",
        "reference",
        "--sizes",
        "tiny",
        "--repeats",
        "3",
        "--json",
        str(tmp_path / "b.json"),
        "--plot",
        str(tmp_path / "b.svg"),
        timeout=300,
    )
    assert_exit(done, 0)
    assert "memcpy roof" in done.stdout and "tiny/zipf" in done.stdout
    document = json.loads((tmp_path / "b.json").read_text())
    assert [r["status"] for r in document["rows"]] == [MEASURED] * 4
    ET.fromstring((tmp_path / "b.svg").read_text())


def test_a_protocol_peer_is_timed_end_to_end_with_its_transfer_apart():
    result = run_bench(Impl("subprocess", f"{shlex.quote(sys.executable)} -m embconf.protocol.reference_peer"), FAST)
    assert result.where == "the runner, over the protocol"
    for row in result.rows:
        assert row.status == MEASURED and row.transfer["bytes"] > row.workload.input_bytes(row.operation)
        assert (
            row.peak_extra is None and "memory not measured over the protocol" in to_json(result)["rows"][0]["summary"]
        )


def test_grade_bench_adds_ungraded_columns(tmp_path):
    import csv
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "grading"))
    import grading_samples as samples

    from embconf.bench.column import COLUMNS
    from embconf.cli import main

    folder, out = tmp_path / "in", tmp_path / "out"
    folder.mkdir()
    samples.write(folder, "alice", "module")
    samples.write(folder, "bob", "module", "syntax_error")
    assert main(["grade", str(folder), "--out", str(out), "--jobs", "1", "--bench"]) == 0
    with open(out / "gradebook.csv", newline="", encoding="utf-8") as handle:
        by_name = {row["name"]: row for row in csv.DictReader(handle)}
    assert (
        0 < float(by_name["alice"]["bench_backward_roof"]) < 1
        and float(by_name["alice"]["bench_backward_allocated"]) > 0
    )
    assert all(by_name["bob"][name] == "" for name in COLUMNS)  # not gradable: no bench
    plain = tmp_path / "plain"
    assert main(["grade", str(folder), "--out", str(plain), "--jobs", "1"]) == 0
    assert "bench_" not in (plain / "gradebook.csv").read_text().splitlines()[0]  # the columns only with --bench
