"""Answers like the reference, but its start reply has one field replaced: ``start_reply.py PATH JSON`` sets the
field at the dotted PATH (``implementation.capabilities.rope_conventions``; a number indexes a list) to the JSON
value given."""

import json
import sys

from _peer import serve

from embconf.protocol.reference_peer import hello


def replaced(message):
    reply = hello()
    *parents, last = [int(key) if key.isdigit() else key for key in sys.argv[1].split(".")]
    holder = reply
    for key in parents:
        holder = holder.setdefault(key, {}) if isinstance(holder, dict) else holder[key]
    holder[last] = json.loads(sys.argv[2])
    return reply


serve(lambda message: False, handshake=replaced)
