"""``--verify``'s snippet children, started at the command's first line (before its own imports).

A child's start-up is a serial chain (the torch import, the CUDA context, the linted packages'
import) that the rest of the run waits for; the command's own imports and settings come before the
file selection that ``prestart`` needs, so children started only then lose that time. Here the
command line is read without the parser (only plain forms: ``--verify``, ``--verify=MODE``,
``--verify-mode MODE``, ``--inputs``), and as many children as a run over these paths can use
start at once, each told its packages later (``runner.Started.preload``): ``run.prestart`` adopts
them and closes the ones it does not need. Nothing here imports more than the standard library.
"""

from __future__ import annotations

import os
from typing import List, Optional, Sequence

# the snippet children's settings unless the caller names others (``run.VerifyOptions``); a child
# started with other settings is never given a job (``runner.run_job`` closes it)
SLEEP_MS = 20.0
SHORT_SLEEP_MS = 5.0
REPS = 3
SUBCOMMANDS = ("trace", "catalog", "server")


def children_for(n_files: int, n_tasks: int) -> int:
    """Child processes for snippet mode, by the files and findings of the run (known before the
    extraction). Several share the one GPU: the timing oracle holds under contention, since a sync
    still waits for the child's own queued sleep and a statement that does not sync waits for
    nothing. Each imports torch and the linted packages, so a few files each at least."""
    env = os.environ.get("TORCHSYNC_VERIFY_CHILDREN")
    if env and env.isdigit():
        return max(1, int(env))
    if n_tasks < 40 or n_files < 4:
        return 1
    return max(1, min(8, n_files // 3, (os.cpu_count() or 1) // 2))


def lint_jobs(n_children: int, forked: bool = False) -> int:
    """The lint's worker processes beside ``n_children`` snippet children importing their packages
    (the user's ``--jobs`` wins): the CPUs the children do not use. Children forked from the fork
    server (``forked``) import nothing themselves: the server's one import uses one CPU."""
    return max(1, (os.cpu_count() or 1) - (min(1, n_children) if forked else n_children))


def settings() -> dict:
    return {"sleep_ms": SLEEP_MS, "short_sleep_ms": SHORT_SLEEP_MS, "reps": REPS}


def mode_of(argv: Sequence[str]) -> Optional[str]:
    """The verify mode this command line asks for, or None when it asks for none (or for something
    the children started here could not serve: entry mode, stdin, a subcommand)."""
    args = list(argv)
    if "--" in args:
        args = args[:args.index("--")]
    if not args or args[0] in SUBCOMMANDS or "-" in args:
        return None
    mode = None
    for i, a in enumerate(args):
        if a.startswith("--verify-entry") or a in ("-h", "--help", "--version"):
            return None
        if a in ("--verify", "--inputs") or a.startswith("--inputs="):
            mode = mode or "gpu"
        elif a.startswith("--verify="):
            mode = a.split("=", 1)[1]
        elif a == "--verify-mode" and i + 1 < len(args):
            mode = args[i + 1]
        elif a.startswith("--verify-mode="):
            mode = a.split("=", 1)[1]
    return mode if mode in ("gpu", "predict") else None


def bound(argv: Sequence[str]) -> int:
    """At most how many children a run over these paths uses: as many as the most a run uses when
    a folder is named (its files are not counted here), else by the ``.py`` files named."""
    files = 0
    for a in argv:
        if a.startswith("-"):
            continue
        if os.path.isdir(a):
            return children_for(10 ** 6, 10 ** 6)
        if a.endswith(".py") and os.path.isfile(a):
            files += 1
    return children_for(files, 10 ** 6)


def spawn(argv: Sequence[str]) -> list:
    """Children for the run this command line asks for, started now (``runner.Started``, waiting for
    their packages); [] when it asks for no snippet run, or children are to start later (the fork
    server, ``TORCHSYNC_VERIFY_NO_PRESTART``, ``TORCHSYNC_VERIFY_NO_EARLY``)."""
    if os.environ.get("TORCHSYNC_VERIFY_NO_PRESTART") or os.environ.get("TORCHSYNC_VERIFY_NO_EARLY"):
        return []
    mode = mode_of(argv)
    if mode is None:
        return []
    from torchsync_lint.verify import runner, served

    if served.wanted():
        return []
    try:
        return [runner.start(mode, settings(), preload_later=True) for _ in range(bound(argv))]
    except OSError:
        return []


def adopt(early: List, n: int, mode: str, wanted_settings: dict) -> List:
    """Up to ``n`` of the children ``spawn`` started that fit this mode and these settings, taken out
    of ``early``; the rest of ``early`` is closed (and emptied)."""
    took = []
    for child in list(early):
        if len(took) < n and child.mode == mode and child.settings == wanted_settings and child.alive():
            took.append(child)
        else:
            child.close(wait=False)  # the lint starts now: its end is not waited for
    early.clear()
    return took
