"""Writes a line that is not JSON in reply to embedding_backward."""

from _peer import backward, raw, serve


def hook(message):
    if backward(message):
        raw(b"this is not json\n")
        return True
    return False


serve(hook)
