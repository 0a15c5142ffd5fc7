"""Answers like the reference, but its handshake declares both sinusoid_stored and sinusoid_computed."""

from _peer import serve

from embconf.protocol.reference_peer import hello


def contradictory(message):
    reply = hello()
    reply["implementation"]["capabilities"]["features"] = ["sinusoid_stored", "sinusoid_computed"]
    return reply


serve(lambda message: False, handshake=contradictory)
