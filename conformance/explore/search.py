"""One area searched: cases are drawn at random from the input domains (:class:`embconf.explore.draw.Drawer`)
until one fails or the budget (cases, then seconds) is spent; Hypothesis then shrinks the failure to the
fewest boundaries that still fail (:func:`embconf.explore.draw.within`). Each case is run as
``embconf run`` runs it (:func:`embconf.session.plan` and :func:`embconf.session.run_case` on the adapter the run
opened: the worker, its timeouts and the judging), under the conventions the implementation declares (the cases
a run computes for them, :func:`embconf.corpus.conventions.computed_cases`). The same seed draws the same cases;
the time budget only cuts a search short.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from random import Random
from typing import Callable, Optional

from hypothesis import HealthCheck, Phase, Verbosity, find, settings
from hypothesis.errors import NoSuchExample, Unsatisfiable

from embconf.corpus.conventions import computed_cases
from embconf.corpus.fixtures import Case
from embconf.explore.budget import Budget
from embconf.explore.draw import Drawer, Drawn, build, within
from embconf.model.contract import NO_INSTANCE, Adapter, Capabilities
from embconf.model.outcomes import PROBLEMS
from embconf.reference.cases.domains import DOMAINS
from embconf.session import plan, run_case


@dataclass
class SearchTally:
    """What a search did: cases run, draws outside the spec, cases the implementation does not take, and the
    simplest failing case found (with the draw it came from)."""

    area: str
    run: int = 0
    outside: int = 0
    inapplicable: int = 0
    seconds: float = 0.0
    cut_short: bool = False
    failure: Optional[Case] = None
    drawn: Optional[Drawn] = None


Progress = Callable[[SearchTally], None]


def areas() -> list[str]:
    """The areas with input domains to draw from, in the domains' order."""
    return list(DOMAINS)


def applicable(case: Case, caps: Capabilities) -> Optional[Case]:
    """``case`` as the implementation takes it: itself, or the case computed for a convention it declares in
    its place; None when it takes neither."""
    if caps.applies(case.operation, case.features) is None:
        return case
    return next(
        (c for c in computed_cases(caps.conventions, [case]) if caps.applies(c.operation, c.features) is None), None
    )


def search(adapter: Adapter, area: str, budget: Budget, seed: int, progress: Optional[Progress] = None) -> SearchTally:
    """``area`` searched on ``adapter``: the tally, with the simplest failing case found (or none)."""
    caps = adapter.capabilities()
    operations = [op for op in DOMAINS[area] if op in caps.operations]
    tally = SearchTally(area)
    if not operations:
        return tally
    started = time.perf_counter()
    drawer = Drawer(operations, caps.all_features, seed)
    for _ in range(budget.cases):
        if time.perf_counter() - started > budget.seconds:
            tally.cut_short = True
            break
        drawn = drawer.next()
        failed, case = _run(adapter, caps, drawn, tally)
        tally.seconds = time.perf_counter() - started
        if failed:
            tally.failure, tally.drawn = case, drawn
            break
        if progress is not None:
            progress(tally)
    if tally.drawn is not None:
        _shrink(adapter, caps, tally, time.perf_counter() + budget.seconds, progress)
    tally.seconds = time.perf_counter() - started
    return tally


def _shrink(
    adapter: Adapter, caps: Capabilities, tally: SearchTally, deadline: float, progress: Optional[Progress]
) -> None:
    """The failure of ``tally`` shrunk by Hypothesis to the fewest of its boundaries that still fail (until
    ``deadline``: past it, a smaller draw is taken not to fail, and the smallest failing one so far stands)."""
    assert tally.drawn is not None
    seen: dict[Drawn, bool] = {tally.drawn: True}

    def fails(drawn: Drawn) -> bool:
        if drawn not in seen:
            seen[drawn] = time.perf_counter() < deadline and _run(adapter, caps, drawn, tally)[0]
            if progress is not None:
                progress(tally)
        return seen[drawn]

    chosen = settings(
        max_examples=SHRINK_EXAMPLES,
        database=None,
        deadline=None,
        phases=(Phase.generate, Phase.shrink),
        suppress_health_check=list(HealthCheck),
        verbosity=Verbosity.quiet,
    )
    try:
        smallest = find(within(tally.drawn), fails, settings=chosen, random=Random(0))
    except (NoSuchExample, Unsatisfiable):
        return
    case = _case_of(smallest, caps)
    if case is not None:
        tally.failure, tally.drawn = case, smallest


SHRINK_EXAMPLES = 50  # draws inside a failure before it is shrunk (the failure itself is among the first)


def _case_of(drawn: Drawn, caps: Capabilities) -> Optional[Case]:
    built = build(drawn)
    return None if built is None else applicable(built, caps)


def _run(adapter: Adapter, caps: Capabilities, drawn: Drawn, tally: SearchTally) -> tuple[bool, Optional[Case]]:
    """Whether the case of ``drawn`` fails on the adapter (run and judged as ``embconf run`` does)."""
    built = build(drawn)
    if built is None:
        tally.outside += 1
        return False, None
    case = applicable(built, caps)
    if case is None:
        tally.inapplicable += 1
        return False, None
    tally.run += 1
    plan(adapter, [case])
    result = run_case(adapter, case, None, caps, NO_INSTANCE)
    return result.outcome in PROBLEMS, case
