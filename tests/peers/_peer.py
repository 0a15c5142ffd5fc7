"""The loop every broken peer shares: answer like the reference, except where the peer's hook misbehaves.

A peer script calls ``serve(hook)``; ``hook(message)`` sees every run request
and returns True when it has dealt with the request itself (by writing something
odd, hanging or exiting), False to let the reference answer.
"""

from __future__ import annotations

import json
import sys
from typing import Any, Callable

from embconf.protocol.reference_peer import respond, write

Hook = Callable[[dict[str, Any]], bool]


def serve(hook: Hook, handshake: Callable[[dict[str, Any]], dict[str, Any]] = respond) -> None:
    for line in sys.stdin.buffer:
        message = json.loads(line)
        if message.get("cmd") == "stop":
            return
        if message.get("cmd") == "start":
            write(handshake(message))
        elif not hook(message):
            write(respond(message))


def raw(line: bytes) -> None:
    """Write ``line`` to stdout as it is, and flush."""
    sys.stdout.buffer.write(line)
    sys.stdout.buffer.flush()


def backward(message: dict[str, Any]) -> bool:
    """The request the peers misbehave on: every embedding_backward case."""
    return message["operation"] == "embedding_backward"
