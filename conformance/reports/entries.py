"""The lines of a report file, typed: each field of a header, a case and a footer checked against the type the run
record holds (spec/schemas/report.schema.json, and what the schema cannot say: a requirement id of this spec, a
finite duration), before the record is built from it. Each check returns the line's entry without its ``record``
key; :class:`~embconf.untrusted.fields.Malformed` (one line, naming the field) otherwise."""

from __future__ import annotations

import re
from typing import Any

from embconf.model.contract import Capabilities
from embconf.model.outcomes import OUTCOMES
from embconf.model.vocabulary import requirement_subjects
from embconf.untrusted.fields import Fields, Malformed

SHA256 = re.compile(r"[0-9a-f]{64}")


def check_header(entry: Any) -> dict[str, Any]:
    """A header line: the suite, the implementation, its capabilities, the environment, the fixtures, planned."""
    fields = Fields(entry)
    fields.count("report_format", minimum=1)
    suite = fields.object("suite", required=True)
    assert suite is not None
    suite.text("name", required=True, choices=("embedding-conformance",))
    suite.text("version", required=True)
    fields.text("spec_version", required=True)
    implementation = fields.object("implementation", required=True)
    assert implementation is not None
    for key in ("name", "version", "language", "impl"):
        implementation.text(key, required=key == "name")
    fields.text("adapter")
    fields.text_mapping("environment")
    _check_fixtures(fields.object("fixtures"))
    fields.count("planned")
    _check_capabilities(fields)
    return _without_kind(entry)


def _check_fixtures(fixtures: Fields | None) -> None:
    if fixtures is None:
        return
    fixtures.text("manifest_sha256")
    if fixtures.present("manifest_sha256") and not SHA256.fullmatch(fixtures.entry["manifest_sha256"]):
        raise Malformed("fixtures.manifest_sha256", "must be 64 hexadecimal digits")
    fixtures.texts("modified")
    fixtures.texts("differs_from_shipped")
    fixtures.count("cases")


def _check_capabilities(fields: Fields) -> None:
    """The capabilities as the record reads them (:meth:`Capabilities.from_plain`), each problem one line."""
    capabilities = fields.mapping("capabilities", required=True)
    try:
        Capabilities.from_plain(capabilities)
    except (ValueError, TypeError) as exc:
        raise Malformed("capabilities", f"cannot be read: {str(exc)[:200]}") from None


def check_case(entry: Any) -> dict[str, Any]:
    """A case line: one case's result and its diagnosis."""
    fields = Fields(entry)
    fields.text("id", required=True)
    fields.texts("requirements", required=True, known=requirement_subjects(), what="requirement of this spec")
    fields.texts("features", required=True)
    fields.text("operation")
    fields.text("outcome", required=True, choices=[outcome.value for outcome in OUTCOMES])
    for key in ("message", "expectation", "stderr", "error_kind", "decided_by"):
        fields.text(key, required=key == "message")
    fields.duration("duration_s")
    fields.flag("declined")
    fields.flag("returned")
    fields.count("call", minimum=1)
    documented = fields.object("documented")
    if documented is not None:
        documented.text("link", required=True)
        documented.text("sentence", required=True)
        documented.texts("cases")
        documented.texts("requirements")
    for cause in fields.objects("diagnosis"):
        _check_cause(cause)
    return _without_kind(entry)


def _check_cause(cause: Fields) -> None:
    if cause.present("mutant") == cause.present("symptom"):
        raise Malformed(cause.path, "must name one 'mutant' or one 'symptom'")
    for key in ("mutant", "symptom", "summary", "description", "hint", "mistake"):
        cause.text(key)
    cause.mapping("measured")
    cause.text_mapping("alternatives")


def check_footer(entry: Any) -> dict[str, Any]:
    """A footer line: the counts, the verdict and whether the run finished."""
    fields = Fields(entry)
    fields.flag("complete")
    fields.duration("duration_s")
    summary = fields.object("summary")
    if summary is not None:
        for outcome in OUTCOMES:
            summary.count(outcome.value)
    fields.count("declined")
    fields.texts("unmatched_expectations")
    fields.text_mapping("nondeterministic")
    verdict = fields.object("verdict")
    if verdict is not None:
        verdict.text("summary", required=True)
        verdict.count("explained")
        verdict.count("failures")
        for mistake in verdict.objects("mistakes"):
            mistake.text("id", required=True)
            for key in ("title", "summary", "hint", "mistake"):
                mistake.text(key)
            mistake.texts("cases")
            mistake.texts("also")
    return _without_kind(entry)


def _without_kind(entry: dict[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in entry.items() if key != "record"}
