"""``embconf bench``: where an implementation's lookup and scatter-add stand on the roofline, and how
much memory each really uses.

- :mod:`.workloads`: the named problem sizes (a small table, BERT-base, GPT-2 small), seeded uniform
  and Zipf ids, and the bytes each operation must move at least;
- :mod:`.timing`: the measurements, run where the implementation runs (inside its isolated worker):
  the timing loop, peak extra memory, the memory-copy roof;
- :mod:`.wire`: the protocol's share of a ``subprocess:`` implementation's time;
- :mod:`.measure`: the bench itself (:func:`run_bench`), sharing adapters and isolation with ``run``;
- :mod:`.render`: the console table, the JSON document (spec/schemas/bench.schema.json) and the SVG chart;
- :mod:`.column`: the bench as an ungraded column of ``embconf grade --bench``;
- :mod:`.command`: ``embconf bench``'s options and command.
"""

from __future__ import annotations

from embconf.bench.measure import BenchError, BenchOptions, BenchResult, Row, run_bench
from embconf.bench.workloads import DEFAULT_SIZES, SIZES, UnknownSize, Workload, workloads

__all__ = [
    "BenchError",
    "BenchOptions",
    "BenchResult",
    "DEFAULT_SIZES",
    "Row",
    "SIZES",
    "UnknownSize",
    "Workload",
    "run_bench",
    "workloads",
]
