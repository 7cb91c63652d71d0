"""Killing a child process group: shared by the fork server and its parent-side handle."""

import os
import signal


def kill_group(pid: int) -> None:
    """SIGKILL the process group ``pid`` leads; the process alone where it leads none; nothing
    where it is gone already."""
    try:
        os.killpg(pid, signal.SIGKILL)
    except OSError:
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass
