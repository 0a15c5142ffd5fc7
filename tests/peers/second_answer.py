"""A peer of protocol minor 4 whose answer to a sinusoid table asked for by rows is not the answer it gives
when the same request comes again whole (issue 34). The first argument says how:

- ``rows_wrong``: the rows asked for are wrong (every value plus one); the whole table is right;
- ``skip_second``: the rows asked for are wrong; asked whole, it answers ``skipped``;
- ``long_rows``: the rows asked for are right but given as rows of a table 7 rows too long; the whole table
  is right;
- ``long_whole``: the rows asked for are wrong; the whole table has 7 rows too many.
"""

import sys

from _peer import serve, write

from embconf.protocol.codec import to_wire
from embconf.reference import sinusoidal_table

MODE = sys.argv[1]


def hook(message):
    if message["operation"] != "sinusoidal_table":
        return False
    rows = message.get("rows", {}).get("table")
    max_len, dim, dtype = (message["inputs"][name] for name in ("max_len", "embed_dim", "dtype"))
    if rows is None:  # asked whole: the second answer
        if MODE == "skip_second":
            write({"seq": message["seq"], "skipped": {"reason": "not this time"}})
            return True
        table = sinusoidal_table(max_len + 7 if MODE == "long_whole" else max_len, dim, dtype)
    elif MODE == "long_rows":
        table = sinusoidal_table(max_len + 7, dim, dtype)
    else:
        table = sinusoidal_table(max_len, dim, dtype)
        table += 1
    write({"seq": message["seq"], "outputs": {"table": to_wire(table, rows)}})
    return True


serve(hook)
