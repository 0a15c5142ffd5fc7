"""The edge: everything that comes from outside (files, replies, text) is read, bounded and written here.

Rooms:
- ``read``: fixture, expectations and rubric files read with size and nesting bounds, one-line errors; a file of
  lines (a report) read a bounded line at a time.
- ``fields``: the fields of a JSON object read from outside, each checked against its type, a wrong one named.
- ``emitted``: the fast, exact reader of the YAML subset the fixture writer emits (the shipped fixtures);
  ``read`` falls back on anything else to ``events``, the full safe reader (the only one importing PyYAML).
- ``write``: report files and the console written so that nothing is lost (atomic files, a reader that leaves).
- ``archive``: zip uploads unpacked without trusting them (no member outside its folder, no links or
  devices, bounded members, size and ratio), or refused in one line.
- ``arguments``: the command line's parsed options read into a command's typed values (a dataclass).
- ``text``: untrusted texts cut to size (one line, names, messages, a reply's texts); what a result keeps of
  outputs is :mod:`embconf.judging.kept`.
"""
