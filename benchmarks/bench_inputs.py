"""Untrusted input at scale: a 10 MB expectations file, and what the runner keeps of large wrong outputs.

    python benchmarks/bench_inputs.py [--entries N] [--sample N] [--outputs N] [--mb N]

1. Expectations: a file of ``--entries`` entries (about 10 MB: exact ids, one glob at the end) applied to
   the 239 case ids, side by side: the previous way (the safe loader, then every case matched against
   every entry with ``fnmatch``, which compiles nothing it can reuse across calls on this many patterns)
   and today's (:class:`embconf.corpus.expectations.Expectations`: event-built YAML, exact ids in a dict,
   globs compiled once). The previous matching is timed on the first ``--sample`` case ids (default
   10, about 30 s each on a busy machine: fnmatch's pattern cache thrashes) and scaled to all of them
   (printed as "scaled"); everything else is measured whole.
2. Kept outputs: ``--outputs`` wrong outputs of ``--mb`` MB each, as a failing run keeps them in
   ``CaseResult.actual``: previously the whole arrays, today :func:`embconf.untrusted.text.kept_outputs`.
   The arrays are made one at a time; the bytes kept are summed.
"""

from __future__ import annotations

import argparse
import fnmatch
import tempfile
import time
from pathlib import Path

import numpy as np
import yaml


def bench_expectations(entries: int, sampled: int) -> None:
    from embconf.corpus.expectations import Expectations
    from embconf.corpus.fixtures import load_corpus

    ids = [case.id for case in load_corpus().cases]
    items = [{"case": f"no.such.case.{i:07d}", "reason": "listed to make the file large " * 3} for i in range(entries)]
    items += [{"case": ids[0], "reason": "known"}, {"case": "sin.*", "reason": "a glob at the end"}]
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "expectations.yaml"
        path.write_text(yaml.safe_dump({"expectations": items}, width=4096))
        size = path.stat().st_size

        started = time.perf_counter()
        document = yaml.load(path.read_text(), Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
        old_load = time.perf_counter() - started
        patterns = [entry["case"] for entry in document["expectations"]]
        sample = ids[:sampled]
        started = time.perf_counter()
        for case_id in sample:
            next((p for p in patterns if fnmatch.fnmatchcase(case_id, p)), None)
        old_match = (time.perf_counter() - started) * len(ids) / len(sample)

        started = time.perf_counter()
        expectations = Expectations.load(path)
        new_load = time.perf_counter() - started
        started = time.perf_counter()
        for case_id in ids:
            expectations.match(case_id)
        new_match = time.perf_counter() - started
    old, new = old_load + old_match, new_load + new_match
    print(f"expectations file: {size / 2**20:.1f} MB, {len(items)} entries, {len(ids)} case ids")
    print(
        f"  previous: load {old_load:8.2f} s + match {old_match:8.2f} s (scaled from {len(sample)} ids) = {old:8.2f} s"
    )
    print(f"  today:    load {new_load:8.2f} s + match {new_match:8.2f} s                    = {new:8.2f} s")
    print(f"  ratio previous/today: {old / new:.1f}x")


def bench_kept(outputs: int, megabytes: int) -> None:
    from embconf.judging.compare import compare_value
    from embconf.judging.kept import RowSample, kept_outputs

    rows = megabytes * 2**20 // (4 * 256)
    expected = np.zeros((rows, 256), dtype=np.float32)
    kept_before = kept_today = 0
    started = time.perf_counter()
    for number in range(outputs):
        wrong = np.full((rows, 256), float(number + 1), dtype=np.float32)
        mismatch = compare_value("table", expected, wrong, {"kind": "exact"})
        kept = kept_outputs({"table": wrong}, [mismatch])["table"]
        kept_before += wrong.nbytes
        kept_today += kept.values.nbytes if isinstance(kept, RowSample) else kept.nbytes
    elapsed = time.perf_counter() - started
    print(f"kept outputs: {outputs} wrong outputs of {megabytes} MB")
    print(f"  previous: {kept_before / 2**20:10.1f} MB kept")
    print(
        f"  today:    {kept_today / 2**20:10.1f} MB kept ({elapsed / outputs:.2f} s per output to compare, sample and hash)"
    )
    print(f"  ratio previous/today: {kept_before / kept_today:.0f}x")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--entries", type=int, default=90_000)
    parser.add_argument("--sample", type=int, default=10, help="case ids the previous matching is timed on")
    parser.add_argument("--outputs", type=int, default=24)
    parser.add_argument("--mb", type=int, default=100)
    args = parser.parse_args()
    bench_expectations(args.entries, args.sample)
    bench_kept(args.outputs, args.mb)


if __name__ == "__main__":
    main()
