"""Keeps, for each instance, the position ids of its first rope call of each length, and answers a later call of
that length on the same instance with them (rotary-embedding-torch #11, over the wire). A request on no instance
is answered as the reference answers it, so every case of one call passes; a new instance starts empty."""

from typing import Any

from _peer import serve

from embconf.protocol.reference_peer import respond, write

kept: dict[str, Any] = {"instance": None, "positions": {}}


def cached(message: dict[str, Any]) -> bool:
    if "instance" not in message or message["operation"] not in ("rope_forward", "rope_backward"):
        return False
    if message["instance"] != kept["instance"]:
        kept.update(instance=message["instance"], positions={})
    positions = message["inputs"]["position_ids"]
    first = kept["positions"].setdefault(positions["shape"][0], positions)
    write(respond({**message, "inputs": {**message["inputs"], "position_ids": first}}))
    return True


serve(cached)
