"""A forked worker whose parent died before the worker asked to die with it (``PR_SET_PDEATHSIG`` comes a moment
after the fork) was handed to an ancestor (the runner, a child subreaper) and went on to load the implementation,
whose ``os.getppid()`` then named the runner: a submission stopped ``embconf grade`` itself that way. It now ends
before it loads anything."""

from __future__ import annotations

import os

import pytest

from embconf.isolation import worker
from embconf.processes import tree


@pytest.mark.skipif(not hasattr(os, "fork"), reason="forked workers only")
def test_a_worker_whose_parent_is_gone_ends_before_loading():
    pid = os.fork()
    if pid == 0:  # the worker, as if the process that forked it had died and another had adopted it
        try:
            tree._FORKER = os.getppid() + 1 if os.getppid() + 1 != os.getpid() else os.getppid() + 2
            worker._confine(os.open(os.devnull, os.O_WRONLY), 0)
        finally:
            os._exit(0)  # reached only when _confine let it go on
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == worker.WORKER_FAILED, status
