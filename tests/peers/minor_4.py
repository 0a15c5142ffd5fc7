"""The reference, declaring protocol minor 4 (before calls on one instance): it lists the feature stateful, which a
peer of minor 4 cannot have, so the runner sends it no case of calls on one instance (PROTOCOL.md section 8)."""

from _peer import serve

from embconf.protocol.reference_peer import hello

serve(lambda message: False, handshake=lambda message: {**hello(), "protocol_minor": 4})
