"""The reference implementation over the wire protocol (spec/PROTOCOL.md).

    embconf run --impl subprocess:'python -m embconf.protocol.reference_peer'

Reads one JSON request per line on stdin and writes one reply per line on
stdout. A spec error (EmbeddingError) is an error reply; any other exception
raised by an operation is an ``exception`` reply (protocol minor 2: the case's
outcome is ``error``) and the peer goes on serving.
"""

from __future__ import annotations

import json
import os
import sys
import traceback
from collections.abc import Mapping
from typing import IO, Any

from embconf.model.convention import canonical_features
from embconf.model.dtypes import have_bfloat16
from embconf.model.encoding import decode_array, is_array
from embconf.model.exits import OK
from embconf.model.version import __version__
from embconf.model.vocabulary import named_outputs
from embconf.protocol.codec import PROTOCOL_MINOR, PROTOCOL_VERSION, to_wire
from embconf.protocol.lines import dump_line
from embconf.reference import OPERATIONS
from embconf.reference.errors import EmbeddingError


def hello() -> dict[str, Any]:
    """The start reply: every operation, every feature of the canonical answers (bfloat16 where ml_dtypes is)."""
    claimed = [f for f in canonical_features() if f != "bfloat16" or have_bfloat16()]
    capabilities = {"operations": sorted(OPERATIONS), "features": sorted(claimed), "sinusoid_convention": "interleaved"}
    return {
        "protocol": PROTOCOL_VERSION,
        "protocol_minor": PROTOCOL_MINOR,
        "implementation": {
            "name": "embconf reference",
            "version": __version__,
            "language": "python",
            "capabilities": capabilities,
        },
    }


def run(message: Mapping[str, Any]) -> dict[str, Any]:
    """The reply to one run request."""
    seq, operation = message["seq"], message["operation"]
    if operation not in OPERATIONS:
        return {"seq": seq, "skipped": {"reason": f"unknown operation {operation!r}"}}
    inputs = {name: decode_array(value) if is_array(value) else value for name, value in message["inputs"].items()}
    try:
        result = OPERATIONS[operation](**inputs)
    except EmbeddingError as exc:
        return {"seq": seq, "error": {"kind": exc.kind, "message": str(exc)}}
    except Exception as exc:  # untyped: reported, and the peer keeps running (minor 2)
        return {"seq": seq, "exception": exception_reply(exc)}
    rows = message.get("rows") or {}  # protocol minor 4: only these rows of an output are judged
    outputs = named_outputs(operation, result)
    return {"seq": seq, "outputs": {name: to_wire(value, rows.get(name)) for name, value in outputs.items()}}


def exception_reply(exc: BaseException) -> dict[str, str]:
    """The body of an ``exception`` reply: the exception's type, message and traceback."""
    return {"type": type(exc).__name__, "message": str(exc), "traceback": traceback.format_exc(limit=8)}


def respond(message: Mapping[str, Any]) -> dict[str, Any]:
    """The reply to a start or run message."""
    if message.get("cmd") == "start":
        return hello()
    if message.get("cmd") == "run":
        return run(message)
    raise ValueError(f"unknown command {message.get('cmd')!r}")


def write(message: Mapping[str, Any], stdout: IO[bytes] = sys.stdout.buffer) -> None:
    """One reply line, flushed at once."""
    stdout.write(dump_line(message))
    stdout.flush()


def serve(stdin: IO[bytes] = sys.stdin.buffer, stdout: IO[bytes] = sys.stdout.buffer) -> int:
    """Answer requests until stop (or the end of stdin); the exit status."""
    for line in stdin:
        message = json.loads(line)
        if message.get("cmd") == "stop":
            break
        write(respond(message), stdout)
    return OK


if __name__ == "__main__":
    status = serve()
    sys.stdout.flush()
    os._exit(status)  # nothing to release: skip the interpreter's teardown (tens of ms with NumPy loaded)
