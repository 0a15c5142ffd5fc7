"""Answers the handshake with protocol version 99."""

from _peer import serve

from embconf.protocol.reference_peer import hello

serve(lambda message: False, handshake=lambda message: {**hello(), "protocol": 99})
