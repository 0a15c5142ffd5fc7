"""The golden cases: loaded from ``fixtures/``, checked against the manifest and the schema, selected, and
the expectations (known failures) applied to them.

Rooms:
- ``fixtures``: :class:`Case` and :func:`load_corpus` (hashes, decoding, one-line problems); a case of calls on
  one instance (spec section 9.7) holds each call as a case of its own.
- ``semantics``: each case (each call of a case of calls) against the schema and the spec's vocabulary.
- ``validate``: ``embconf validate``, every fixture file against the schema and the spec.
- ``select``: choosing cases by id glob, requirement and feature.
- ``conventions``: the cases a run computes for the conventions an implementation declares, through one table of
  computers keyed by area (the session names no family): ``named_conventions`` (EMB-ROPE-V*, EMB-BAG-V*: each case a
  declared convention changes, under every declared one that changes it) and ``sinusoid_point`` (a declared point
  of the sinusoid family that no named profile is, spec 1.2.0, EMB-SIN-6).
- ``coverage``: ``embconf coverage``, the allowed pairs of input boundaries (``reference/cases/domains.py``) the
  goldens cover, family by family.
- ``expectations``: the YAML file of cases known to fail, applied to results.
- ``shipped``: the hashes of the fixture files this version of the suite ships with.
- ``committed``: ``regenerate --check``'s comparison with the committed files, read as untrusted input (bounded,
  before anything is generated).
- ``command``: ``embconf list``, ``show``, ``validate`` and ``regenerate``, and the fixture and selection options
  every command that reads the corpus shares (it needs nothing above the corpus's floor).
"""
