"""The bench's results as a reader sees them: one console line per row, the JSON document
(spec/schemas/bench.schema.json) and an SVG chart of achieved bandwidth against problem size with the
memory-copy roof drawn (written by hand: no plotting dependency)."""

from __future__ import annotations

import math
import statistics
from typing import Any, Optional
from xml.sax.saxutils import escape

from embconf.bench.measure import MEASURED, BenchResult, Row

FORMAT = "embconf-bench/1"
GB = 1e9


def output_name(operation: str) -> str:
    return "gradient" if operation == "embedding_backward" else "output"


def summary(row: Row) -> str:
    """The row in words: bandwidth against the roof, then memory against the output."""
    if row.status != MEASURED:
        said = f"{row.status.replace('_', ' ')}: {row.reason}"
    else:
        said = f"{row.bandwidth / GB:.3g} GB/s = {row.roof_ratio:.2g} of the memcpy roof"
        if row.peak_ratio is not None:
            said += (
                f"; allocated {row.peak_ratio:.1f}x the {output_name(row.operation)} "
                f"({_mb(row.peak_extra)} for {_mb(row.output_bytes)}, {row.peak_method})"
            )
        if row.transfer:
            share = min(row.transfer["seconds"] / row.median, 1.0)
            said += (
                f" end to end; the protocol's encoding and transfer of {_mb(row.transfer['bytes'])} are about "
                f"{share:.0%} of it (estimated); memory not measured over the protocol"
            )
    return f"{said}; {row.conformance}" if row.conformance else said


def console(result: BenchResult) -> str:
    lines = [
        f"embconf bench {result.impl} (timed in {result.where}); memcpy roof {result.roof_bandwidth / GB:.2f} GB/s"
    ]
    for row in result.rows:
        timing = (
            f"{row.median * 1e3:8.2f} ms [{min(row.times) * 1e3:.2f}..{max(row.times) * 1e3:.2f}] x{len(row.times)}"
            if row.times
            else f"{'-':>8}"
        )
        lines.append(f"  {row.workload.name:<18} {row.operation:<19} {timing:<28} {summary(row)}")
    return "\n".join(lines)


def to_json(result: BenchResult) -> dict[str, Any]:
    roof_median = statistics.median(result.roof["times"])
    return {
        "format": FORMAT,
        "impl": result.impl,
        "where": result.where,
        "roof": {"bytes": result.roof["bytes"], "median_seconds": roof_median, "gb_per_s": result.roof_bandwidth / GB},
        "rows": [_row_json(row) for row in result.rows],
    }


def _row_json(row: Row) -> dict[str, Any]:
    measured = row.status == MEASURED
    times = (
        {"median": row.median, "min": min(row.times), "max": max(row.times), "repeats": len(row.times)}
        if measured
        else None
    )
    memory = None
    if measured and row.peak_extra is not None:
        memory = {
            "peak_extra_bytes": row.peak_extra,
            "method": row.peak_method,
            "output_bytes": row.output_bytes,
            "ratio": row.peak_ratio,
            "traced_peak": row.traced_peak,
            "resident_peak": row.resident_peak,
        }
    return {
        "workload": row.workload.to_json(),
        "operation": row.operation,
        "status": row.status,
        "reason": row.reason,
        "conforms": not row.conformance,
        "conformance": row.conformance,
        "times": times,
        "minimum_bytes": row.minimum_bytes,
        "gb_per_s": row.bandwidth / GB if measured else None,
        "roof_ratio": row.roof_ratio if measured else None,
        "memory": memory,
        "transfer": row.transfer,
        "summary": summary(row),
    }


def _mb(n: Optional[int]) -> str:
    return "?" if n is None else f"{n / 2**20:.1f} MB"


# ----- the chart ---------------------------------------------------------------------------------------

WIDTH, HEIGHT = 720, 440
LEFT, RIGHT, TOP, BOTTOM = 70, 180, 40, 60
COLOURS = {"embedding_forward": "#1f77b4", "embedding_backward": "#d62728"}


def svg(result: BenchResult) -> str:
    """Achieved GB/s (log) against the minimum bytes moved (log), one point per measured row, the roof dashed."""
    rows = [r for r in result.rows if r.status == MEASURED]
    roof = result.roof_bandwidth / GB
    xs: list[float] = [r.minimum_bytes for r in rows] or [1e6]
    ys = [r.bandwidth / GB for r in rows] + [roof]
    x_lo, x_hi = _decades(min(xs), max(xs))
    y_lo, y_hi = _decades(min(ys), max(ys) * 1.5)

    def px(x: float) -> float:
        return LEFT + (math.log10(x) - x_lo) / (x_hi - x_lo) * (WIDTH - LEFT - RIGHT)

    def py(y: float) -> float:
        return HEIGHT - BOTTOM - (math.log10(y) - y_lo) / (y_hi - y_lo) * (HEIGHT - TOP - BOTTOM)

    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{HEIGHT}" viewBox="0 0 {WIDTH} {HEIGHT}" '
        f'font-family="sans-serif" font-size="12">',
        f'<rect width="{WIDTH}" height="{HEIGHT}" fill="white"/>',
        f'<text x="{LEFT}" y="22" font-size="14">{escape(result.impl)}: achieved bandwidth against problem size</text>',
    ]
    out += _axes(x_lo, x_hi, y_lo, y_hi, px, py)
    out.append(
        f'<line id="roof" x1="{LEFT}" y1="{py(roof):.1f}" x2="{WIDTH - RIGHT}" y2="{py(roof):.1f}" '
        f'stroke="black" stroke-width="2" stroke-dasharray="6 4"/>'
    )
    out.append(
        f'<text x="{WIDTH - RIGHT - 4}" y="{py(roof) - 6:.1f}" text-anchor="end">memcpy roof {roof:.1f} GB/s</text>'
    )
    for row in rows:
        out.append(_marker(row, px(row.minimum_bytes), py(row.bandwidth / GB)))
    out += _legend()
    out.append("</svg>")
    return "\n".join(out) + "\n"


def _decades(lo: float, hi: float) -> tuple[int, int]:
    a, b = math.floor(math.log10(lo)), math.ceil(math.log10(hi))
    return a, max(b, a + 1)


def _axes(x_lo: int, x_hi: int, y_lo: int, y_hi: int, px: Any, py: Any) -> list[str]:
    bottom, right = HEIGHT - BOTTOM, WIDTH - RIGHT
    parts = [
        f'<line x1="{LEFT}" y1="{bottom}" x2="{right}" y2="{bottom}" stroke="black"/>',
        f'<line x1="{LEFT}" y1="{TOP}" x2="{LEFT}" y2="{bottom}" stroke="black"/>',
    ]
    for e in range(x_lo, x_hi + 1):
        x = px(10.0**e)
        parts.append(f'<line x1="{x:.1f}" y1="{TOP}" x2="{x:.1f}" y2="{bottom}" stroke="#ddd"/>')
        parts.append(f'<text x="{x:.1f}" y="{bottom + 16}" text-anchor="middle">{_bytes_label(e)}</text>')
    for e in range(y_lo, y_hi + 1):
        y = py(10.0**e)
        parts.append(f'<line x1="{LEFT}" y1="{y:.1f}" x2="{right}" y2="{y:.1f}" stroke="#ddd"/>')
        parts.append(f'<text x="{LEFT - 6}" y="{y + 4:.1f}" text-anchor="end">{10.0**e:g}</text>')
    parts.append(
        f'<text x="{(LEFT + right) / 2}" y="{HEIGHT - 18}" text-anchor="middle">minimum bytes moved by the call</text>'
    )
    parts.append(
        f'<text x="16" y="{(TOP + bottom) / 2}" text-anchor="middle" transform="rotate(-90 16 {(TOP + bottom) / 2})">'
        f"achieved GB/s</text>"
    )
    return parts


def _bytes_label(exponent: int) -> str:
    for unit, e in (("GB", 9), ("MB", 6), ("kB", 3)):
        if exponent >= e:
            return f"{10 ** (exponent - e)} {unit}"
    return f"{10**exponent} B"


def _marker(row: Row, x: float, y: float) -> str:
    colour = COLOURS[row.operation]
    title = f"<title>{escape(row.workload.name)} {row.operation}: {escape(summary(row))}</title>"
    fill = "none" if row.conformance else colour  # hollow: does not conform
    if row.workload.distribution == "zipf":
        return (
            f'<rect x="{x - 5:.1f}" y="{y - 5:.1f}" width="10" height="10" fill="{fill}" stroke="{colour}" '
            f'stroke-width="2">{title}</rect>'
        )
    return f'<circle cx="{x:.1f}" cy="{y:.1f}" r="5" fill="{fill}" stroke="{colour}" stroke-width="2">{title}</circle>'


def _legend() -> list[str]:
    x = WIDTH - RIGHT + 10
    parts = []
    for i, (label, colour) in enumerate(
        (("forward gather", COLOURS["embedding_forward"]), ("backward scatter-add", COLOURS["embedding_backward"]))
    ):
        parts.append(f'<circle cx="{x + 5}" cy="{TOP + 30 + 18 * i}" r="5" fill="{colour}"/>')
        parts.append(f'<text x="{x + 14}" y="{TOP + 34 + 18 * i}">{label}</text>')
    parts.append(f'<text x="{x}" y="{TOP + 80}">circle: uniform ids</text>')
    parts.append(f'<text x="{x}" y="{TOP + 96}">square: Zipf ids</text>')
    parts.append(f'<text x="{x}" y="{TOP + 112}">hollow: does not conform</text>')
    return parts
