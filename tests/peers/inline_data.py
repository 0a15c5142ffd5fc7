"""A correct peer of protocol minor 3 that writes every array of its replies inline, as a ``data`` list
(spec/PROTOCOL.md section 2 allows either form): the reference's values, never base64."""

import sys

from _peer import serve, write

from embconf.model.encoding import decode_array, encode_array
from embconf.protocol.reference_peer import hello, respond

INLINE = sys.maxsize  # every array, however large, as a data list


def inline(value):
    """``value`` with each array the reference peer encoded re-encoded as a ``data`` list."""
    if isinstance(value, dict) and "base64" in value:
        return encode_array(decode_array(value), inline_limit=INLINE)
    if isinstance(value, dict):
        return {key: inline(item) for key, item in value.items()}
    return value


def hook(message):
    write(inline(respond({key: item for key, item in message.items() if key != "rows"})))
    return True


def handshake(message):
    reply = hello()
    return {**reply, "protocol_minor": 3, "implementation": {**reply["implementation"], "name": "inline data, minor 3"}}


serve(hook, handshake=handshake)
