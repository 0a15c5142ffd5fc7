"""JUnit XML, one testsuite per spec area (``spec/vocabulary.json``), one testcase per case, for CI dashboards."""

from __future__ import annotations

from typing import Union
from xml.etree import ElementTree as ET

from embconf.model.outcomes import CRASH, ERROR, FAIL, NOT_APPLICABLE, TIMEOUT, XFAIL, XPASS
from embconf.model.record import RunRecord
from embconf.model.vocabulary import operation_area
from embconf.untrusted.write import OutputTarget, PathLike, as_target


def build(run: RunRecord, name: str) -> ET.Element:
    """The ``testsuites`` element of the run."""
    root = ET.Element("testsuites", name=f"embconf {name}")
    verdict = run.verdict
    properties = ET.SubElement(root, "properties")
    ET.SubElement(properties, "property", name="embconf.verdict", value=_clean(verdict.summary))
    suites: dict[str, ET.Element] = {}
    counts: dict[str, dict[str, int]] = {}
    for result in run.results:
        area = operation_area(result.operation)
        if area not in suites:
            suites[area] = ET.SubElement(root, "testsuite", name=f"embconf.{area}")
            counts[area] = {"tests": 0, "failures": 0, "errors": 0, "skipped": 0}
        case = ET.SubElement(
            suites[area], "testcase", classname=f"embconf.{area}", name=result.id, time=f"{result.duration:.6f}"
        )
        counts[area]["tests"] += 1
        text = _clean(result.message)
        if result.outcome in (FAIL, XPASS):
            ET.SubElement(
                case, "failure", message=text.splitlines()[0] if text else result.outcome, type=result.outcome
            ).text = text
            counts[area]["failures"] += 1
        elif result.outcome in (ERROR, CRASH, TIMEOUT):
            ET.SubElement(
                case, "error", message=text.splitlines()[0] if text else result.outcome, type=result.outcome
            ).text = text
            counts[area]["errors"] += 1
        elif result.outcome in (NOT_APPLICABLE, XFAIL):
            ET.SubElement(case, "skipped", message=_clean(f"{result.outcome}: {result.message}")[:500])
            counts[area]["skipped"] += 1
        if result.stderr:
            ET.SubElement(case, "system-err").text = _clean(result.stderr)
    for area, element in suites.items():
        for key, value in counts[area].items():
            element.set(key, str(value))
    return root


def _clean(text: str) -> str:
    """Drop characters XML 1.0 cannot carry (an implementation may print anything)."""
    return "".join(
        ch
        for ch in text
        if ch in "\t\n\r" or ord(ch) >= 0x20 and ord(ch) not in (0xFFFE, 0xFFFF) and not 0xD800 <= ord(ch) <= 0xDFFF
    )  # nor lone surrogates (not encodable)


def write(target: Union[PathLike, OutputTarget], run: RunRecord, name: str) -> None:
    """Write the XML by the rules of :mod:`embconf.untrusted.write` (atomic for a regular file)."""
    root = build(run, name)
    ET.indent(root)
    text = ET.tostring(root, encoding="unicode")
    as_target(target).write_text("<?xml version='1.0' encoding='utf-8'?>\n" + text + "\n")
