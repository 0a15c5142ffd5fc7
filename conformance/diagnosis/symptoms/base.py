"""What every symptom detector shares: the :func:`symptom` constructor and the limits of measuring."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Optional, Union

import numpy as np

from embconf.model.record import Cause, CauseKind
from embconf.model.symptom import SymptomKey

Symptom = Cause  # a measured symptom (CauseKind.SYMPTOM)
MAX_ELEMENTS = 1 << 20  # larger outputs are not analysed element by element
ROW_SEARCH_BUDGET = 5e7  # ids x table elements compared when finding which row each output row is

OWNER = {
    "grad_weight": "the table",
    "grad_token_weight": "the token table",
    "grad_table": "the position table",
    "grad_position_table": "the learned position table",
    "grad_x": "x",
    "values": "the row-sparse gradient",
}
PARAMETER = {  # which parameter a gradient output belongs to, whatever the operation calls it
    "grad_weight": "token_table",
    "grad_token_weight": "token_table",
    "grad_table": "position_table",
    "grad_position_table": "position_table",
}


def symptom(
    key: Union[str, SymptomKey],
    summary: str,
    hint: str = "",
    alternatives: Optional[Union[Mapping[str, str], Mapping[SymptomKey, str]]] = None,
    title: Optional[str] = None,
    complete: bool = True,
    mistake: str = "",
    **measured: Any,
) -> Symptom:
    """One stated symptom; ``key`` identifies it across cases (for the run's verdict), typed
    (:class:`~embconf.model.symptom.SymptomKey`) wherever it is read back.

    ``summary`` is what was measured on this case; ``title`` (default: the summary) says the mistake without
    naming the case, as the verdict shows it once for every case it explains. ``alternatives`` ({key: title})
    are equally true readings of the same measurement (a factor that equals both 1/D and 1/B here); the
    verdict keeps the one most cases share. ``mistake`` is its identity when one mistake shows as this symptom in
    several operations (the verdict lists them once). ``complete`` is False for a symptom that is one mistake of two on its
    case (a dtype not cast back, with values that differ as well): it does not explain the case on its own.
    """
    return Cause(
        CauseKind.SYMPTOM,
        str(key),
        title or summary,
        summary,
        hint,
        {k: plain(v) for k, v in measured.items()},
        {str(key): title for key, title in (alternatives or {}).items()},
        complete=complete,
        mistake=mistake,
    )


def plain(value: Any) -> Any:
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    return value
