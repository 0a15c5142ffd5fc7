"""A peer of protocol minor 4 whose sinusoid tables are the mutant sin.float16's (computed in
float16): it answers only the rows a request asks for. Each sinusoidal_table request's rows (or "whole") go
to the file named by the first argument, one JSON line each. Options after it: ``unasked``: it also sends
only the first row of every learned_positions_forward output, which no request asks rows of; ``minor3``: it
declares protocol minor 3 (so no request should name rows)."""

import json
import sys

from _peer import serve, write

from embconf.model.vocabulary import named_outputs
from embconf.mutants import implementation
from embconf.protocol.codec import to_wire
from embconf.protocol.reference_peer import hello

LOG, UNASKED, MINOR = sys.argv[1], "unasked" in sys.argv[2:], 3 if "minor3" in sys.argv[2:] else 4
WRONG = implementation("sin.float16")["sinusoidal_table"]


def hook(message):
    if message["operation"] == "learned_positions_forward" and UNASKED:
        from embconf.protocol.reference_peer import respond

        reply = respond(message)
        output = reply["outputs"]["output"]
        reply["outputs"]["output"] = {**output, "rows": [0], "base64": output["base64"][:8]}
        write(reply)
        return True
    if message["operation"] != "sinusoidal_table":
        return False
    rows = message.get("rows", {})
    with open(LOG, "a") as log:
        log.write(json.dumps(rows.get("table", "whole")) + "\n")
    outputs = named_outputs("sinusoidal_table", WRONG(**message["inputs"]))
    write({"seq": message["seq"], "outputs": {name: to_wire(value, rows.get(name)) for name, value in outputs.items()}})
    return True


serve(hook, handshake=lambda message: {**hello(), "protocol_minor": MINOR})
