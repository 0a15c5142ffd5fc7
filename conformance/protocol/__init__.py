"""The wire protocol (``spec/PROTOCOL.md``): an implementation in any language, run as a peer process that
reads JSON lines on stdin and answers on stdout.

Rooms:
- ``lines``: one JSON value a line, out and (bounded) in.
- ``early``: a peer started first thing, before the runner imports NumPy, so that it starts meanwhile.
- ``codec``: the encoding: values to and from the wire, lines out and (bounded) in, ``ProtocolError``.
- ``messages``: the requests and replies as frozen dataclasses, each reply parsed once and checked.
- ``peer``: one running peer process: start, send, receive by a deadline, stderr tail, stop and kill.
- ``adapter``: :class:`SubprocessAdapter`: requests written ahead, restarts, failures turned into replies.
- ``reference_peer``: the reference implementation as a protocol peer (``python -m embconf.protocol.reference_peer``).
"""
