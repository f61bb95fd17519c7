"""Busy loops that keep every core of this machine loaded while a test runs,
so that the ranks, the node servers and srun get descheduled at awkward
moments (how races show up on a busy cluster)."""

import os
import signal


class CpuLoad:
    """`with CpuLoad(3):` runs 3 busy processes for the duration."""

    def __init__(self, processes):
        self.processes = processes
        self.pids = []

    def __enter__(self):
        for _ in range(self.processes):
            pid = os.fork()
            if pid == 0:
                # A tight loop in a forked child: no Python work, no exit.
                os.setsid()
                while True:
                    pass
            self.pids.append(pid)
        return self

    def __exit__(self, *exc):
        for pid in self.pids:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        for pid in self.pids:
            try:
                os.waitpid(pid, 0)
            except ChildProcessError:
                pass
        self.pids = []
        return False
