"""Mutation analysis, the feature behind ``embconf mutants`` and ``embconf explain``: the catalogue of known
mistakes (:mod:`embconf.mutants`) run against the golden cases and against the diagnosis.

Rooms:
- ``kills``: which golden cases kill which mutant, each mutant run through a session; the kill rate.
- ``report``: the text of ``embconf mutants`` (the catalogue and its kill rate) and of ``embconf explain ID``.
- ``measure``: how good the diagnosis is, measured (``embconf mutants --diagnosis``): the right mutant ranked first,
  a corpus of wrong student modules, correct implementations with no diagnosis.
- ``command``: the two commands' options and handlers.
"""
