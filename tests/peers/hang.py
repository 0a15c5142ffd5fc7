"""Hangs (never replies) on embedding_backward; answers everything else."""

import time

from _peer import backward, serve


def hook(message):
    if backward(message):
        time.sleep(3600)
    return False


serve(hook)
