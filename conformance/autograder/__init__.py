"""The Gradescope autograder, generated: ``embconf autograder`` writes the zip Gradescope takes (``setup.sh``,
``run_autograder``, the suite pinned as a wheel or a requirement, the base package and the rubric), checked
before it is written, so a TA's mistake is one line at their desk, not every student's zero.

Rooms: :mod:`.build` (what goes into the zip, and the two scripts), :mod:`.wheel` (the suite as the zip ships it),
:mod:`.stub` (what stands in the graded module's place) and :mod:`.command` (the CLI's side).
"""
