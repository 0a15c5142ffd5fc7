"""Exceptions whose cause is the line that raised them, whatever the case's input: the same line is one cause.

- a constructor that fails: the first frame of the implementation's own code is an ``__init__`` and the exception
  left it, so the object was never built and nothing after its construction ran (on a valid input and on one the
  spec rejects alike: it is never an input-specific rejection);
- a non-finite float id cast to an integer unchecked (``astype``) that then indexes no row (IndexError): the
  mistake that truncates 0.5 to row 0, shown by NaN or infinity.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, Optional

import numpy as np

from embconf.corpus.fixtures import Case
from embconf.diagnosis.symptoms.base import Symptom, symptom

NAME_ERROR = re.compile(r"name '(\w+)' is not defined")
CONSTRUCTOR_KEY = "constructor:"  # the key of a constructor failure: constructor:EXCEPTION:FILE:LINE
CONSTRUCTOR = "the constructor"  # how a constructor failure names its constructor (a dialect may name the class)
FLOAT_CAST = "fwd.float_truncated"  # the catalogue's identity of a float id cast to an integer unchecked


def constructor_failure(exception: str, detail: str, entered: str, raising: str, where: str) -> Optional[Symptom]:
    """The constructor failed: ``entered`` is the function the implementation's own code was entered in,
    ``raising`` the file:line that raised, ``where`` that frame in words; None unless ``entered`` is ``__init__``."""
    function, _, entered_file = entered.partition(" ")
    if function != "__init__":
        return None
    missing = NAME_ERROR.search(detail) if exception == "NameError" else None
    said = (
        f"{CONSTRUCTOR} raised {exception} at {where}"
        + (f": name '{missing.group(1)}' is not defined" if missing else "")
        + "; the object is never built, so nothing after its construction runs"
    )
    measured: dict[str, Any] = {"exception": exception, "constructor": entered_file, "line": raising}
    if missing:
        measured["missing_name"] = missing.group(1)
    return symptom(
        f"{CONSTRUCTOR_KEY}{exception}:{raising}",
        said,
        f"define {missing.group(1)} where the constructor can see it (import or define it in the module)"
        if missing
        else "",
        title=said,
        mistake=f"{CONSTRUCTOR_KEY}{exception}:{raising}",  # the same line, whatever the input: one entry
        **measured,
    )


def cast_failure(case: Case, inputs: Mapping[str, Any], exception: str, code: str, where: str) -> Optional[Symptom]:
    """A NaN or infinite float id reached an ``astype`` cast unchecked and the cast value indexed no row."""
    ids = inputs.get("ids", inputs.get("tokens"))
    if (
        case.expected_error != "invalid_index"
        or exception != "IndexError"
        or ".astype(" not in code
        or not isinstance(ids, np.ndarray)
        or ids.dtype.kind != "f"
        or np.isfinite(ids).all()
    ):
        return None
    shown = ", ".join(sorted({repr(float(v)) for v in ids[~np.isfinite(ids)].reshape(-1)}))
    said = (
        f"a float id ({shown}) is cast to an integer with astype unchecked, and the cast value indexes no row: "
        f"raised {exception} at {where}"
    )
    return symptom(
        f"cast_unchecked:{exception}",
        said,
        "before casting, check that float ids are finite integers (ids == floor(ids)) and raise invalid_index "
        "(EMB-IDX-4)",
        title=said,
        mistake=FLOAT_CAST,
        exception=exception,
    )
