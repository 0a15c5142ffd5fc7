"""Replies to embedding_backward with one long line under the line limit: ``numbers MB`` writes a JSON list of
MB megabytes of numbers as the gradient, ``base64 MB`` an array of MB megabytes (base64) of the wrong shape.
Either way the case fails; what the runner must not do is hold many times the line in memory."""

import sys

from _peer import backward, raw, serve

FLAVOUR, MEGABYTES = sys.argv[1], float(sys.argv[2])
SIZE = int(MEGABYTES * 2**20)


def hook(message):
    if not backward(message):
        return False
    head = f'{{"seq":{message["seq"]},"outputs":{{"grad_weight":'.encode()
    if FLAVOUR == "numbers":
        body = b"[" + b"0," * (SIZE // 2) + b"0]"
    else:
        count = SIZE // 4 * 3 // 4  # float32 values in SIZE bytes of base64
        body = f'{{"dtype":"float32","shape":[{count}],"base64":"'.encode() + b"AAAA" * (SIZE // 4) + b'"}'
    raw(head + body + b"}}\n")
    return True


serve(hook)
