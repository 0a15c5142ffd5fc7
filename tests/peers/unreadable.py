"""Writes replies the runner cannot read, chosen by its argument: ``deep`` (a JSON reply nested 100000
deep on embedding_backward), ``deep_handshake`` (the same as its start reply), ``ndim65`` (a
grad_weight of 65 dimensions on embedding_backward). Correct otherwise."""

import sys

from _peer import backward, raw, serve

from embconf.protocol.reference_peer import respond

MODE = sys.argv[1]
DEEP = b"[" * 100_000 + b"]" * 100_000 + b"\n"


def hook(message):
    if not backward(message):
        return False
    if MODE == "deep":
        raw(DEEP)
    else:
        shape = ",".join(["1"] * 65)
        raw(
            b'{"seq":%d,"outputs":{"grad_weight":{"dtype":"float32","shape":[%s],"data":[0.0]}}}\n'
            % (message["seq"], shape.encode())
        )
    return True


def handshake(message):
    if MODE == "deep_handshake":
        raw(DEEP)
        return respond(message)  # too late: the runner has given up on the handshake
    return respond(message)


serve(hook, handshake)
