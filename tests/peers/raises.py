"""Correct, except that every embedding_backward request fails with an exception that names no error kind,
reported with the ``exception`` reply of protocol minor 2; the peer keeps running. Each process it is started
as appends its pid to the file named by its argument (one line: it was never restarted)."""

import os
import sys

from _peer import backward, serve

from embconf.protocol.reference_peer import write

with open(sys.argv[1], "a") as started:
    started.write(f"{os.getpid()}\n")


def hook(message):
    if not backward(message):
        return False
    trace = "  at scatter_add (embeddings.rs:42)\n  at backward (embeddings.rs:7)"
    body = {"type": "ZeroDivisionError", "message": "division by zero", "traceback": trace}
    write({"seq": message["seq"], "exception": body})
    return True


serve(hook)
