"""What diagnosing a whole run costs: every case of the corpus against implementations that get (almost)
everything wrong, the diagnosis timed apart from the run.

    python benchmarks/bench_diagnosis.py

Runs the reference's cases in-process without diagnosis, then times ``session.diagnose`` on the record, for:
every output perturbed (values scaled and shifted, ids moved, a result where an error is expected), every
output zeros, and the catalogue's sinusoid and lookup mistakes combined. Prints the failures, the seconds of the
diagnosis, its ratio to the target (a whole run diagnosed in under 10 s, issue 17) and the verdict's first line.
"""

from __future__ import annotations

import time
from typing import Any, Callable

import numpy as np

from embconf.corpus.fixtures import load_corpus
from embconf.mutants import get
from embconf.mutants.adapter import ImplementationAdapter
from embconf.mutants.compose import Implementation
from embconf.reference import OPERATIONS
from embconf.session import RunOptions, diagnose, run

TARGET_SECONDS = 10.0
DIRECT = [
    op
    for op in OPERATIONS
    if op not in ("embedding_backward_sparse", "embedding_layer_forward", "embedding_layer_backward")
]


def _each(value: Any, array: Callable[[np.ndarray], np.ndarray], number: Callable[[Any], Any]) -> Any:
    """``value`` with ``array`` applied to every array and ``number`` to every number in it (tuples, dicts)."""
    if isinstance(value, np.ndarray):
        return array(value)
    if isinstance(value, tuple):
        return tuple(_each(v, array, number) for v in value)
    if isinstance(value, dict):
        return {k: _each(v, array, number) for k, v in value.items()}
    return number(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else value


def _perturbed(value: Any) -> Any:
    """Values scaled and shifted, ids and counts moved by one."""
    return _each(
        value,
        lambda a: a + 1 if a.dtype.kind in "iu" else (a.astype(np.float64) * 1.5 + 0.25).astype(a.dtype),
        lambda n: n + 1,
    )


def _zeros(value: Any) -> Any:
    return _each(value, np.zeros_like, lambda n: 0)


def _all_wrong(change: Callable[[Any], Any]) -> Implementation:
    def wrap(fn: Callable[..., Any]) -> Callable[..., Any]:
        def wrong(*args: Any, **kwargs: Any) -> Any:
            try:
                return change(fn(*args, **kwargs))
            except Exception:  # an error was expected: return a result instead
                return np.zeros((1, 1), dtype=np.float32)

        return wrong

    return Implementation({op: wrap(OPERATIONS[op]) for op in DIRECT})


def _combined() -> Implementation:
    overrides: dict[str, Any] = {}
    for mutant_id in ("sin.column_exponent", "bwd.overwrite", "fwd.clamped", "pos.start_ignored", "mem.mib_as_bytes"):
        try:
            overrides.update(get(mutant_id).overrides)
        except KeyError:
            continue
    return Implementation(overrides)


def main() -> None:
    cases = load_corpus().cases
    print(f"{len(cases)} cases; target: a whole run diagnosed in under {TARGET_SECONDS:.0f} s")
    for label, impl in (
        ("every output perturbed", _all_wrong(_perturbed)),
        ("every output zeros", _all_wrong(_zeros)),
        ("five catalogue mistakes at once", _combined()),
    ):
        record = run(ImplementationAdapter(impl, label), cases, RunOptions(diagnose=False))
        failures = len(record.problems)
        start = time.perf_counter()
        diagnose(record, cases)
        seconds = time.perf_counter() - start
        verdict = record.verdict.summary
        print(
            f"{label:<34} {failures:>4} failures  diagnosis {seconds:6.2f} s  "
            f"({seconds / TARGET_SECONDS:.2f}x the target)  {'ok' if seconds < TARGET_SECONDS else 'OVER'}"
        )
        print(f"  {verdict[:200]}")


if __name__ == "__main__":
    main()
