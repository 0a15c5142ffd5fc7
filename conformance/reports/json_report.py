"""The JSON report (schema: spec/schemas/report.schema.json)."""
from __future__ import annotations

import json
import platform
import sys
from typing import Any, Union

from embconf import __version__
from embconf.diagnosis import run_verdict
from embconf.untrusted.write import OutputTarget, PathLike, as_target
from embconf.run.cases import RunResult
from embconf.model.vocabulary import spec_version

REPORT_FORMAT = 1


def build(run: RunResult, impl_spec: str, fixtures: dict[str, Any]) -> dict[str, Any]:
    import numpy

    return {
        "report_format": REPORT_FORMAT,
        "suite": {"name": "embedding-conformance", "version": __version__},
        "spec_version": spec_version(),
        "implementation": {**run.implementation, "impl": impl_spec},
        "adapter": impl_spec.partition(":")[0],
        "capabilities": run.capabilities.to_json(),
        "environment": {"python": platform.python_version(), "numpy": numpy.__version__,
                        "platform": platform.platform(), "executable": sys.executable},
        "fixtures": fixtures,
        "duration_s": round(run.duration, 6),
        "summary": run.summary(),
        "unmatched_expectations": run.unmatched_expectations,
        "verdict": run_verdict(run).to_json(),
        "cases": [result.to_json() for result in run.results],
    }


def write(target: Union[PathLike, OutputTarget], report: dict[str, Any]) -> None:
    """Write the report by the rules of :mod:`embconf.untrusted.write` (atomic for a regular file)."""
    as_target(target).write_text(json.dumps(report, indent=2, default=str) + "\n")
