"""Crashes (exit status 1) on every run request."""

import sys

from _peer import serve


def hook(message):
    print(f"crash_always: request {message['seq']}", file=sys.stderr, flush=True)
    sys.exit(1)


serve(hook)
