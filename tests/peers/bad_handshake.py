"""Fails at start-up: one line on stderr, exit status 2, no reply."""

import sys

print("bad_handshake: cannot load libembedding.so", file=sys.stderr)
sys.exit(2)
