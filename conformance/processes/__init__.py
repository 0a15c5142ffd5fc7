"""Child processes the runner starts for an implementation: their limits, their process tree, and the
runner's own lifetime (a signal ends every descendant). Shared by ``isolation`` and ``protocol``.

Rooms:
- ``limits``: timeouts and memory limits, checked, and how a stopped child is described.
- ``tree``: finding and ending a process's descendants, reaping orphans.
- ``lifetime``: the runner's SIGTERM/SIGINT handling, so no process outlives a run.
"""
