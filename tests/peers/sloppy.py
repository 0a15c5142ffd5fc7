"""Correct answers, but every run reply carries an extra field the protocol does not define."""

from _peer import serve, write

from embconf.protocol.reference_peer import respond


def hook(message):
    write({**respond(message), "elapsed_ms": 0.1})
    return True


serve(hook)
