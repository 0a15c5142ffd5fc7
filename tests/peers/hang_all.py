"""Hangs (never replies) on every run request."""

import time

from _peer import serve


def hook(message):
    time.sleep(3600)
    return True


serve(hook)
