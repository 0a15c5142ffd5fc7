"""The wire protocol (``spec/PROTOCOL.md``): an implementation in any language, run as a peer process that
reads JSON lines on stdin and answers on stdout.

Rooms:
- ``adapter``: the codec, the peer process and the :class:`SubprocessAdapter` that speaks to it.
- ``reference_peer``: the reference implementation as a protocol peer (``python -m embconf.protocol.reference_peer``).
"""
