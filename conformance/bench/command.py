"""``embconf bench``: its options, and the command (the CLI dispatches here)."""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Optional

from embconf.bench.workloads import DEFAULT_SIZES, SIZES
from embconf.model import exits
from embconf.model.errors import UserError
from embconf.model.impl import Impl
from embconf.untrusted.arguments import typed


class BenchUsageError(UserError):
    """Bad input: one line, exit code 2."""


def register(sub: Any) -> None:
    parser = sub.add_parser(
        "bench", help="time lookup and scatter-add against this machine's memory-copy roof; peak memory"
    )
    add_bench(parser)
    parser.set_defaults(handler=lambda args: bench(BenchArguments.read(args)))


@dataclass(frozen=True)
class BenchArguments:
    """``embconf bench``'s options as given (``impl`` parsed)."""

    impl: Impl
    sizes: tuple[str, ...]
    json: Optional[Path]
    plot: Optional[Path]
    warmup: int
    repeats: int
    timeout: float
    memory_limit: int
    in_process: bool

    @classmethod
    def read(cls, args: argparse.Namespace) -> BenchArguments:
        from embconf.adapters import parse_impl

        return typed(cls, args, impl=parse_impl(args.impl), sizes=tuple(args.sizes))  # --impl parsed once, here


def add_bench(parser: argparse.ArgumentParser) -> None:
    from embconf.adapters import kinds_help

    parser.add_argument(
        "--impl",
        required=True,
        help=kinds_help(),
    )
    parser.add_argument(
        "--sizes",
        nargs="+",
        default=list(DEFAULT_SIZES),
        metavar="NAME",
        help=f"problem sizes ({', '.join(f'{k}: {v} x {d}, N {n}' for k, (v, d, n, _) in SIZES.items())}); default: {' '.join(DEFAULT_SIZES)}",
    )
    parser.add_argument(
        "--json",
        type=Path,
        metavar="FILE",
        help="write the results as JSON (spec/schemas/bench.schema.json; - for stdout)",
    )
    parser.add_argument(
        "--plot",
        type=Path,
        metavar="FILE.svg",
        help="write an SVG chart of achieved bandwidth against problem size, with the memcpy roof",
    )
    parser.add_argument("--warmup", type=int, default=2, metavar="N", help="untimed calls before timing (default 2)")
    parser.add_argument(
        "--repeats",
        type=int,
        default=7,
        metavar="N",
        help="timed calls per row, at least 3 (default 7; fewer after 3 s)",
    )
    parser.add_argument(
        "--timeout",
        type=float,
        default=120.0,
        metavar="SECONDS",
        help="seconds one row's measurement may take (default 120)",
    )
    parser.add_argument(
        "--memory-limit",
        type=int,
        default=4096,
        metavar="MB",
        help="resident memory the worker may hold (default 4096); larger sizes are skipped",
    )
    parser.add_argument(
        "--in-process", action="store_true", help="time inside the runner rather than in a worker (no protection)"
    )


def bench(given: BenchArguments) -> int:
    """Run the bench; BenchUsageError (one line) for bad input, before anything runs."""
    from embconf.adapters import ImplementationError
    from embconf.bench import render
    from embconf.bench.measure import BenchError, BenchOptions, run_bench
    from embconf.bench.workloads import UnknownSize, workloads
    from embconf.isolation import IsolationOptions
    from embconf.processes.limits import LimitError
    from embconf.untrusted.write import OutputError, OutputTarget

    try:
        workloads(tuple(given.sizes))
        if given.warmup < 0 or given.repeats < 3:
            raise BenchUsageError("--warmup must be at least 0 and --repeats at least 3")
        isolation = IsolationOptions(given.in_process, max(given.timeout, 10.0), memory_limit_mb=given.memory_limit)
        json_target = OutputTarget.check(given.json) if given.json else None
        plot_target = OutputTarget.check(given.plot) if given.plot else None
    except (UnknownSize, LimitError, OutputError) as exc:
        raise BenchUsageError(str(exc)) from None
    out = sys.stderr if json_target is not None and json_target.is_stdout else sys.stdout
    options = BenchOptions(tuple(given.sizes), given.warmup, given.repeats, given.timeout, isolation)
    try:
        result = run_bench(
            given.impl,
            options,
            progress=lambda row: print(
                f"  {row.workload.name} {row.operation}: {render.summary(row)}", file=sys.stderr, flush=True
            ),
        )
    except (ImplementationError, BenchError) as exc:
        raise BenchUsageError(str(exc)) from None
    print(render.console(result), file=out)
    try:
        if json_target is not None:
            json_target.write_text(json.dumps(render.to_json(result), indent=2) + "\n")
        if plot_target is not None:
            plot_target.write_text(render.svg(result))
    except OutputError as exc:
        raise BenchUsageError(str(exc)) from None
    return exits.OK
