"""Answers the handshake with protocol version 99."""
from _peer import serve
from embconf.reference.serve import hello

serve(lambda message: False, handshake=lambda message: {**hello(), "protocol": 99})
