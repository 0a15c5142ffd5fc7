"""Replies to embedding_backward with the wrong seq (a correct reply otherwise)."""

from _peer import backward, serve

from embconf.protocol.reference_peer import respond, write


def hook(message):
    if backward(message):
        write({**respond(message), "seq": message["seq"] + 1000})
        return True
    return False


serve(hook)
