"""The JSON report (schema: spec/schemas/report.schema.json): the run record's own JSON form, written."""

from __future__ import annotations

import json
from typing import Union

from embconf.model.record import RunRecord
from embconf.untrusted.write import OutputTarget, PathLike, as_target


def write(target: Union[PathLike, OutputTarget], record: RunRecord) -> None:
    """Write the report by the rules of :mod:`embconf.untrusted.write` (atomic for a regular file)."""
    as_target(target).write_text(json.dumps(record.to_json(), indent=2, default=str) + "\n")
