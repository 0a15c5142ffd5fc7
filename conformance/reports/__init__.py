"""Reports of a run, all derived from its record: for people (console) and for CI (JSON lines, JUnit XML).

Rooms: ``console`` (progress, by requirement, verdict, failures), ``json_report`` (the JSON report written as
JSON lines as the run goes), ``saved`` (a saved report read back as untrusted input: bounded, streamed a line at a
time) and ``entries`` (its lines typed, field by field), ``junit``, ``targets`` (where ``embconf run`` writes them,
checked first). ``embconf report FILE``, a saved report rendered again, is the run feature's (:mod:`embconf.run.report`).
"""
