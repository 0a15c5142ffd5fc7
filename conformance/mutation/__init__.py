"""Mutation analysis, the feature behind ``embconf mutants`` and ``embconf explain``: the catalogue of known
mistakes (:mod:`embconf.mutants`) run against the golden cases and against the diagnosis.

Rooms:
- ``measure``: how good the diagnosis is, measured (``embconf mutants --diagnosis``): the right mutant ranked first,
  a corpus of wrong student modules, correct implementations with no diagnosis.
"""
