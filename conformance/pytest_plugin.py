"""pytest plugin: ``pytest --embconf-impl=KIND:TARGET`` collects every case as a test item.

The plugin translates its options into ``embconf run``'s and maps each case of one
:class:`embconf.session.Session` to a test item; it runs nothing of its own. The session plans every case
(the computed sinusoid-family cases too), runs, repeats and diagnoses exactly as under ``embconf run``, so
the outcomes and causes are the same. Items are named by case id, so a project's existing pytest run and its
``--junitxml`` gate on the suite. Outcomes map onto pytest's: pass, failed (fail, error, crash, timeout, and
under --embconf-strict an xpass or a case the implementation declined that no expectation lists), skipped
(not_applicable) and xfailed. The session runs when the first item runs and finishes before any item
reports, so each failing item shows the causes of the whole run's diagnosis (under pytest-xdist each worker
would run the whole session). Without --embconf-impl the plugin does nothing. SIGTERM ends the session
cleanly. The verdict at the end is the run record's.
"""

from __future__ import annotations

from typing import Any, Iterator, Optional

import pytest

PREFIX = "embconf_"


def pytest_addoption(parser: pytest.Parser) -> None:
    from embconf.processes.options import REPEAT, limit_options

    group = parser.getgroup("embconf", "embedding-conformance")
    group.addoption(
        "--embconf-impl", metavar="KIND:TARGET", help="run the embedding conformance cases against this implementation"
    )
    group.addoption("--embconf-select", action="append", default=[], metavar="GLOB", help="only case ids matching GLOB")
    group.addoption("--embconf-expectations", metavar="FILE", help="YAML file of cases known to fail")
    group.addoption(
        "--embconf-strict",
        action="store_true",
        help="an xpass, a declined case no expectation lists, and a case whose result changes under "
        "--embconf-repeat fail",
    )
    group.addoption(
        "--embconf-allow-modified-fixtures", action="store_true", help="accept fixture files edited by hand"
    )
    for flags, keywords in [*limit_options(run_scope="the whole session's cases"), REPEAT]:
        group.addoption(
            "--embconf-" + flags[0][2:], **{**keywords, "dest": PREFIX + keywords["dest"]}
        )  # the defaults and help of `embconf run`'s own options


class EmbconfFailure(Exception):
    """A case that did not conform; its message is the reproduction."""


class PluginRun:
    """The session the options give (opened at collection), and its record once the first item asks for it."""

    def __init__(self, config: pytest.Config, cases: list[Any], fixtures: dict[str, Any]) -> None:
        from embconf.adapters import parse_impl
        from embconf.corpus.expectations import Expectations
        from embconf.processes.options import Limits
        from embconf.session import RunOptions, Session

        self.strict = config.getoption("embconf_strict")
        path = config.getoption("embconf_expectations")
        options = RunOptions.of(
            Limits.given(lambda dest: config.getoption(PREFIX + dest)),
            config.getoption(PREFIX + "repeat"),
            self.strict,
            expectations=Expectations.load(path) if path else None,
        )
        self.session = Session.open(parse_impl(config.getoption("embconf_impl")), cases, options, fixtures)
        self._results: Optional[dict[str, Any]] = None
        self.record: Any = None

    def result(self, case_id: str) -> Any:
        """The case's result in the finished record (the session runs and finishes on the first call)."""
        if self._results is None:
            self.record = self.session.run()
            self._results = {result.id: result for result in self.record.results}
        return self._results[case_id]

    def verdict(self) -> Any:
        """The run record's verdict (None when no item ran)."""
        return self.record.verdict if self.record is not None else None


class CaseItem(pytest.Item):
    def __init__(self, *, case: Any, state: PluginRun, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.case = case
        self.state = state
        for req in case.requirements:
            self.add_marker(pytest.mark.embconf_requirement(req))

    def runtest(self) -> None:
        from embconf.model.outcomes import NOT_APPLICABLE, PROBLEMS, XFAIL, XPASS
        from embconf.reports.console import diagnosis_lines

        result, strict = self.state.result(self.case.id), self.state.strict
        if result.outcome == NOT_APPLICABLE:
            if result.declined and strict and result.expectation is None:
                raise EmbconfFailure(
                    f"[declined] {result.id}: {result.message} (--embconf-strict: a conformance claim cannot rest on "
                    "declined cases)"
                )
            pytest.skip(f"not_applicable: {result.message}")
        if result.outcome == XFAIL:
            pytest.xfail(result.expectation or "expected to fail")
        if result.outcome in PROBLEMS or (result.outcome == XPASS and strict):
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
    def __init__(self, *, state: PluginRun, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.state = state

    def collect(self) -> Iterator[CaseItem]:
        for case in self.state.session.cases:
            yield CaseItem.from_parent(self, name=case.id, case=case, state=self.state)


_STATE = pytest.StashKey["PluginRun"]()


def pytest_collection_finish(session: pytest.Session) -> None:
    """The session runs the cases whose items are left after deselection (-k, -m), in their order."""
    state = session.config.stash.get(_STATE, None)
    if state is not None:
        state.session.keep(item.case.id for item in session.items if isinstance(item, CaseItem))


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
    from embconf.corpus.fixtures import load_corpus
    from embconf.corpus.select import select
    from embconf.model.errors import UserError
    from embconf.processes.lifetime import terminating_cleanly

    try:
        corpus = load_corpus(allow_modified=config.getoption("embconf_allow_modified_fixtures"))
        cases = select(corpus.cases, config.getoption("embconf_select"))
        state = PluginRun(config, cases, corpus.report_block(len(cases)))
    except UserError as exc:  # fixtures, the implementation, the expectations, a limit: one line
        raise pytest.UsageError(f"embconf: {exc}") from None
    config.add_cleanup(state.session.close)
    config.stash[_STATE] = state
    signals = terminating_cleanly()  # SIGTERM: pytest's interrupt path, which closes the adapter
    signals.__enter__()
    config.add_cleanup(lambda: None if signals.__exit__(None, None, None) else None)
    collector = CaseCollector.from_parent(session, name="embconf", nodeid="embconf", state=state)
    items.extend(collector.collect())
