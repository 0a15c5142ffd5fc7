"""pytest plugin: ``pytest --embconf-impl=KIND:TARGET`` collects every golden case as a test item.

Items are named by case id, so a project's existing pytest run and its
``--junitxml`` gate on the suite. Outcomes map onto pytest's: pass, failed
(fail, error, crash, timeout, and under --embconf-strict an xpass or a case the implementation declined
that no expectation lists), skipped (not_applicable) and xfailed. Without --embconf-impl the plugin does nothing. The implementation
runs through :mod:`embconf.session` as under ``embconf run``: in a worker process (or its own, for
``subprocess:``) with the same case timeout, run timeout, memory limit and hang policy, the calls planned
ahead, and SIGTERM ends the session cleanly. The verdict at the end is the run record's.
"""

from __future__ import annotations

from typing import Any, Iterator, Optional

import pytest


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("embconf", "embedding-conformance")
    group.addoption(
        "--embconf-impl", metavar="KIND:TARGET", help="run the embedding conformance cases against this implementation"
    )
    group.addoption("--embconf-select", action="append", default=[], metavar="GLOB", help="only case ids matching GLOB")
    group.addoption("--embconf-expectations", metavar="FILE", help="YAML file of cases known to fail")
    group.addoption(
        "--embconf-strict", action="store_true", help="an xpass, and a declined case no expectation lists, fail"
    )
    group.addoption(
        "--embconf-allow-modified-fixtures", action="store_true", help="accept fixture files edited by hand"
    )
    group.addoption(
        "--embconf-case-timeout",
        type=float,
        default=None,
        metavar="SECONDS",
        help="seconds each case may take (default 10)",
    )
    group.addoption(
        "--embconf-run-timeout",
        type=float,
        default=None,
        metavar="SECONDS",
        help="seconds the whole session's cases may take (default 1800)",
    )
    group.addoption(
        "--embconf-memory-limit",
        type=int,
        default=None,
        metavar="MB",
        help="resident memory of the implementation's processes in MB, 0 for none (default 4096)",
    )


class EmbconfFailure(Exception):
    """A case that did not conform; its message is the reproduction."""


class Session:
    """One implementation, opened through the pipeline, and one expectations object for the whole pytest session."""

    def __init__(self, config: pytest.Config) -> None:
        from embconf import session
        from embconf.corpus.expectations import Expectations

        self.impl = config.getoption("embconf_impl")
        self.strict = config.getoption("embconf_strict")
        path = config.getoption("embconf_expectations")
        self.expectations = Expectations.load(path) if path else None
        self.options = session.RunOptions(
            options(config), config.getoption("embconf_case_timeout"), expectations=self.expectations
        )
        self.adapter = session.open_implementation(self.impl, self.options)  # as `embconf run` does
        self.capabilities = self.adapter.capabilities()
        self.results: list[Any] = []  # every case's result, for the run's verdict
        self.cases: list[Any] = []
        self._verdict: Any = None  # diagnosed once, when the session ends

    def verdict(self) -> Any:
        """The run record's verdict over the cases run so far (None when none ran)."""
        from embconf.model.record import RunRecord
        from embconf.session import diagnose

        if not self.results:
            return None
        if self._verdict is None:  # asked by the JUnit hook and by the terminal summary: the run is over by then
            record = RunRecord(self.results, self.capabilities, self.adapter.describe(), impl=self.impl)
            self._verdict = diagnose(record, self.cases).verdict
        return self._verdict


def options(config: pytest.Config):
    """The isolation options the plugin's flags give; LimitError (one line) for unusable values."""
    from embconf.isolation import DEFAULT_CASE_TIMEOUT, DEFAULT_MEMORY_LIMIT_MB, DEFAULT_RUN_TIMEOUT, IsolationOptions

    def given(name: str, default: Any) -> Any:
        value = config.getoption(name)
        return default if value is None else value

    return IsolationOptions(
        False,
        given("embconf_case_timeout", DEFAULT_CASE_TIMEOUT),
        given("embconf_run_timeout", DEFAULT_RUN_TIMEOUT),
        given("embconf_memory_limit", DEFAULT_MEMORY_LIMIT_MB),
    )


class CaseItem(pytest.Item):
    def __init__(self, *, case: Any, state: Session, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.case = case
        self.state = state
        for req in case.requirements:
            self.add_marker(pytest.mark.embconf_requirement(req))

    def runtest(self) -> None:
        from embconf.model.outcomes import NOT_APPLICABLE, PROBLEMS, XFAIL, XPASS
        from embconf.session import run_case

        case, state = self.case, self.state
        result = run_case(state.adapter, case, state.expectations, state.capabilities)
        state.results.append(result)
        state.cases.append(case)
        if result.outcome == NOT_APPLICABLE:
            if result.declined and state.strict and result.expectation is None:
                raise EmbconfFailure(
                    f"[declined] {case.id}: {result.message} (--embconf-strict: a conformance claim cannot rest on "
                    "declined cases)"
                )
            pytest.skip(f"not_applicable: {result.message}")
        if result.outcome == XFAIL:
            pytest.xfail(result.expectation or "expected to fail")
        if result.outcome in PROBLEMS or (result.outcome == XPASS and state.strict):
            from embconf.diagnosis.run import diagnose_case
            from embconf.reports.console import diagnosis_lines

            result.causes = diagnose_case(case, result)
            causes = diagnosis_lines(result).rstrip("\n")
            raise EmbconfFailure(
                f"[{result.outcome}] {result.message}"
                + (f"\n{causes}" if causes else "")
                + (f"\nstderr:\n{result.stderr}" if result.stderr else "")
            )

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> Any:
        if isinstance(excinfo.value, EmbconfFailure):
            return str(excinfo.value)
        return super().repr_failure(excinfo)

    def reportinfo(self) -> tuple[str, Optional[int], str]:
        return self.case.source, None, self.case.id


class CaseCollector(pytest.Collector):
    def __init__(self, *, state: Session, cases: list, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.state, self.cases = state, cases

    def collect(self) -> Iterator[CaseItem]:
        for case in self.cases:
            yield CaseItem.from_parent(self, name=case.id, case=case, state=self.state)


_STATE = pytest.StashKey["Session"]()


@pytest.hookimpl(tryfirst=True)
def pytest_sessionfinish(session: pytest.Session) -> None:
    """The run's verdict as a property of the JUnit file (--junitxml), written after this hook."""
    state = session.config.stash.get(_STATE, None)
    verdict = state.verdict() if state is not None else None
    if verdict is None:
        return
    from _pytest.junitxml import xml_key  # the plugin object record_testsuite_property writes to

    xml = session.config.stash.get(xml_key, None)
    if xml is not None:
        xml.add_global_property("embconf.verdict", verdict.summary)


def pytest_terminal_summary(terminalreporter: Any, config: pytest.Config) -> None:
    state = config.stash.get(_STATE, None)
    verdict = state.verdict() if state is not None else None
    if verdict is not None and verdict.failures:
        terminalreporter.write_sep("=", "embconf verdict")
        terminalreporter.write_line(verdict.summary)


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "embconf_requirement(id): the spec requirement an embconf case pins")


def pytest_collection_modifyitems(session: pytest.Session, config: pytest.Config, items: list[pytest.Item]) -> None:
    if not config.getoption("embconf_impl"):
        return
    from embconf.adapters import ImplementationError
    from embconf.corpus.expectations import ExpectationsError
    from embconf.corpus.fixtures import FixtureError, load_corpus
    from embconf.corpus.select import select
    from embconf.processes.lifetime import terminating_cleanly
    from embconf.processes.limits import LimitError

    try:
        corpus = load_corpus(allow_modified=config.getoption("embconf_allow_modified_fixtures"))
        state = Session(config)
    except (FixtureError, ImplementationError, ExpectationsError, LimitError) as exc:
        raise pytest.UsageError(f"embconf: {exc}") from None
    config.add_cleanup(state.adapter.close)
    config.stash[_STATE] = state
    signals = terminating_cleanly()  # SIGTERM: pytest's interrupt path, which closes the adapter
    signals.__enter__()
    config.add_cleanup(lambda: None if signals.__exit__(None, None, None) else None)
    cases = select(corpus.cases, config.getoption("embconf_select"))
    collector = CaseCollector.from_parent(session, name="embconf", nodeid="embconf", state=state, cases=cases)
    collected = list(collector.collect())
    items.extend(collected)
    from embconf.session import plan

    # run ahead, as `embconf run` does (another order voids it), for whole outputs: each item is diagnosed alone
    plan(state.adapter, [item.case for item in collected], pinned=False)
