"""On embedding_backward, allocates (and touches) 64 MiB blocks without bound, never replying. Correct elsewhere."""

from _peer import backward, serve


def hook(message):
    if backward(message):
        blocks = []
        while True:
            blocks.append(bytearray(b"x") * 2**26)
    return False


serve(hook)
