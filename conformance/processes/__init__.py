"""Child processes the runner starts for an implementation: their limits, their process tree, how they
end, what they print, and the runner's own lifetime (a signal ends every descendant). Shared by
``isolation`` (the worker) and ``protocol`` (the peer).

Rooms:
- ``limits``: timeouts and memory limits, checked, and the reply once the run timeout has passed.
- ``options``: the command-line options of those limits (and ``--in-process``), shared by every command that runs
  an implementation.
- ``tree``: finding and ending a process's descendants, reaping orphans, holding a tree to a memory limit.
- ``ending``: ending a child (its whole tree killed, a grace to exit first) and how it ended, in words.
- ``failures``: why no usable answer came from a child (late, gone, out of memory, garbled).
- ``output``: the tail of what a child printed, kept and shown.
- ``lifetime``: the runner's SIGTERM/SIGINT handling, so no process outlives a run, and its quick exit.
- ``threads``: one BLAS thread a process (set by the command before NumPy loads, inherited by its children).
"""
