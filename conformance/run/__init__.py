"""``embconf run`` and ``embconf report``, the feature of one implementation's conformance run and its report.

Rooms:
- ``command``: ``embconf run``: its options, the implementation opened, a :class:`~embconf.session.Session` run with
  the console and the JSON lines report written as it goes, the exit code.
- ``report``: ``embconf report FILE``: a saved run report rendered again (console, JUnit, Markdown, HTML).
The cases are judged by :mod:`embconf.judging`, the reports rendered by :mod:`embconf.reports`.
"""
