"""The bench as an ungraded column of ``embconf grade --bench``: one size (``small``), uniform ids,
three repeats, reduced to three numbers a gradebook can show beside the score."""

from __future__ import annotations

from typing import Any

from embconf.bench.measure import MEASURED, BenchOptions, run_bench
from embconf.isolation import IsolationOptions
from embconf.model.impl import Impl

COLUMNS = ("bench_forward_roof", "bench_backward_roof", "bench_backward_allocated")


def grade_column(impl: Impl, isolation: IsolationOptions) -> dict[str, Any]:
    """{column: value} for one submission: each operation's fraction of the memcpy roof, and the backward's
    peak extra memory over the gradient; a column whose row was not measured holds its reason. Never raises
    for what the submission does (its conformance is the grade's business, so it is not checked again)."""
    try:
        result = run_bench(
            impl,
            BenchOptions(("small",), warmup=1, repeats=3, isolation=isolation),
            check=lambda adapter, operations: {},
        )
    except Exception as exc:  # cannot load, cannot measure: the column says why, the grade stands
        return {name: f"not measured: {exc}"[:200] for name in COLUMNS}
    rows = {r.operation: r for r in result.rows if r.workload.distribution == "uniform"}

    def cell(operation: str, value: Any) -> Any:
        row = rows[operation]
        return value(row) if row.status == MEASURED else f"{row.status}: {row.reason}"[:200]

    return {
        "bench_forward_roof": cell("embedding_forward", lambda r: round(r.roof_ratio, 4)),
        "bench_backward_roof": cell("embedding_backward", lambda r: round(r.roof_ratio, 4)),
        "bench_backward_allocated": cell(
            "embedding_backward", lambda r: None if r.peak_ratio is None else round(r.peak_ratio, 2)
        ),
    }
