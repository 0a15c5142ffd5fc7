"""What a ``subprocess:`` implementation's time includes besides its work: the protocol's encoding
and transfer of the arrays. Measured here, in the runner, on the same payload: the request encoded
as the runner sends it, and a reply-sized array encoded and decoded. The peer does the mirror image
(decode the request, encode the reply), so the transfer is estimated as twice the runner's share."""

from __future__ import annotations

import json
import time
from typing import Any

import numpy as np

from embconf.bench.workloads import Workload
from embconf.model.encoding import decode_array
from embconf.protocol.lines import dump_line
from embconf.protocol.messages import outputs_reply, run_message


def transfer_cost(workload: Workload, operation: str, repeats: int = 3) -> dict[str, Any]:
    """{'bytes': request + reply line bytes, 'seconds': the estimated encode/transfer/decode time}."""
    inputs = workload.inputs(operation)
    rows = workload.n_ids if operation == "embedding_forward" else workload.vocab
    output = np.zeros((rows, workload.dim), dtype=np.float32)
    best = float("inf")
    size = 0
    for _ in range(repeats):
        start = time.perf_counter()
        request = dump_line(run_message(1, operation, inputs))
        json.loads(request)
        reply = reply_line(output)
        decode_array(json.loads(reply)["outputs"]["output"])
        best = min(best, time.perf_counter() - start)
        size = len(request) + len(reply)
    return {"bytes": size, "seconds": 2 * best}


def reply_line(output: np.ndarray) -> bytes:
    """The reply line a peer sends with ``output``, as the protocol's schema has it."""
    return dump_line(outputs_reply(1, {"output": output}))
