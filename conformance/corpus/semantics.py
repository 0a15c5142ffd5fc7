"""The checks ``embconf validate`` and a modified fixture file get: every case against the fixture schema and the
spec's vocabulary (its operation's inputs and outputs, features, error kinds, tolerances, decodable arrays), each
call of a case of calls on one instance (section 9.7) on its own, every problem named with its line and case."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from embconf.corpus.fixtures import array_problem, call_records
from embconf.model.dtypes import BFLOAT16_HINT
from embconf.model.encoding import EncodingError, decode_array, is_array
from embconf.model.vocabulary import operations, spec_version


def line_of(text: str, case_id: str) -> int:
    """The line where a case starts, for error messages (0 when not found)."""
    for number, line in enumerate(text.splitlines(), 1):
        if line.startswith("- id:") and case_id in line:
            return number
    return 0


def validate_document(document: Any, text: str) -> list[str]:
    """Schema and semantic problems of a parsed fixture file, each with line and case id."""
    from embconf.model.schemas import validator

    problems: list[str] = []
    for error in validator("fixture").iter_errors(document):
        where = _case_at(document, list(error.absolute_path))
        problems.append(f"{where(text)}{error.message[:200]} at /{'/'.join(map(str, error.absolute_path))}")
    if problems or not isinstance(document, dict):
        return problems or ["not a mapping"]
    if document["spec_version"] != spec_version():
        problems.append(f"spec_version {document['spec_version']} != {spec_version()}")
    seen: set[str] = set()
    for case in document["cases"]:
        prefix = f"line {line_of(text, case['id'])}, case {case['id']}: "
        if case["id"] in seen:
            problems.append(prefix + "duplicate case id")
        seen.add(case["id"])
        records = call_records(case)
        for number, call in enumerate(records, 1):
            where = f"call {number}: " if len(records) > 1 else ""
            problems += [prefix + where + p for p in _semantic_problems(call)]
    return problems


def _case_at(document: Any, path: list[Any]):
    def describe(text: str) -> str:
        if len(path) >= 2 and path[0] == "cases" and isinstance(path[1], int):
            try:
                case_id = document["cases"][path[1]]["id"]
            except (KeyError, IndexError, TypeError):
                return f"case #{path[1]}: "
            return f"line {line_of(text, str(case_id))}, case {case_id}: "
        return ""

    return describe


def _semantic_problems(case: Mapping[str, Any]) -> list[str]:
    from embconf.model.bag import case_feature_problems as bag_feature_problems
    from embconf.model.rope import case_feature_problems
    from embconf.model.vocabulary import error_kinds, features, input_names, optional_inputs

    spec_op = operations()[case["operation"]]
    problems = [
        f"unknown input {name!r} for {case['operation']}"
        for name in case["inputs"]
        if name not in input_names(case["operation"])
    ]
    problems += [
        f"input {name!r} needs feature {feature!r}"
        for name, feature in optional_inputs(case["operation"]).items()
        if name in case["inputs"] and feature not in case["features"]
    ]
    problems += [f"unknown feature {f!r}" for f in case["features"] if f not in features()]
    for check in (case_feature_problems, bag_feature_problems):
        problems += check(case["operation"], case["inputs"], case["features"], case["expected"].get("error"))
    outputs = case["expected"].get("outputs")
    if outputs is not None:
        if set(outputs) != set(spec_op["outputs"]):
            problems.append(f"outputs {sorted(outputs)} != the spec's {sorted(spec_op['outputs'])}")
        missing_tol = set(outputs) - set(case.get("tolerance", {}))
        problems += [f"output {name!r} has no tolerance" for name in sorted(missing_tol)]
    elif case["expected"].get("error") not in error_kinds():
        problems.append(f"unknown error kind {case['expected'].get('error')!r}")
    for where, values in (("input", case["inputs"]), ("output", outputs or {})):
        for name, value in values.items():
            if array_problem(value):
                problems.append(f"{where} {name!r}: {array_problem(value)}")
            elif is_array(value):
                try:
                    decode_array(value)
                except EncodingError as exc:
                    if (
                        str(exc) != BFLOAT16_HINT
                    ):  # without ml_dtypes a bfloat16 payload cannot be decoded: not the fixture's fault
                        problems.append(f"{where} {name!r}: {exc}")
    return problems
