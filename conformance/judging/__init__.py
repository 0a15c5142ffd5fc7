"""Judging cases: one call per case (or a case's calls on one instance), judged against its golden values into
one outcome.

Rooms:
- ``alone``: failing cases run again alone on a fresh instance (state carried across calls, measured).
- ``cases``: :func:`run_case` and :func:`judge` (a reply becomes a case result).
- ``sequence``: a case of calls on one instance (spec section 9.7): each call judged, the first that does not pass
  deciding, a repeated call held to the first one's bits.
- ``compare``: values against expected values under the case's tolerance.
- ``messages``: a failure as a reproduction a person can act on (the row story).
- ``kept``: what a result keeps of outputs (whole, or a row sample with a digest).
- ``repeat``: ``--repeat N``, cases whose result changes between runs, and a whole output that is not the
  answer first judged on pinned rows.
The pipeline that opens an implementation, plans, runs, repeats, diagnoses and closes is
:class:`embconf.session.Session`; the input guard (copies in, mutations and views caught) wraps the adapter
(:mod:`embconf.adapters.guard`).
"""
