"""Snippet mode's schedule: how many children, and the extraction feeding them file by file.

The extraction runs in worker processes (forked before any thread of ours starts), the largest
files first; each file's tasks go into one feed as soon as the file is done, and whichever child is
up and idle takes the next file (``runner.run_job(feed=, shared=True)``): a child that started
sooner, or drew smaller files, takes more. A file's tasks stay together: its module is imported
once, in one child.
"""

from __future__ import annotations

import concurrent.futures as cf
import multiprocessing as mp
import os
from typing import Callable, Dict, Iterable, Iterator, List, Optional, Sequence, Tuple

from torchsync_lint.finding import Finding
from torchsync_lint.verify import snippet

FileJob = Tuple[str, List[Tuple[int, Finding]], tuple, List[dict]]  # extract_file's arguments


def n_children(n_files: int, n_tasks: int) -> int:
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


def extraction_workers(n_files: int) -> int:
    if n_files < 4 or os.environ.get("TORCHSYNC_VERIFY_SERIAL"):
        return 1
    return max(1, min(n_files // 2, os.cpu_count() or 1, 16))


def extract_plain(job: FileJob) -> Dict[int, "snippet.Extracted"]:
    """One file's extraction in a worker process, without the syntax nodes (they are for rewrites)."""
    out = snippet.extract_file(*job)
    for ex in out.values():
        ex.node = ex.stmt_node = None
    return out


class Extraction:
    """The files' extractions, as each is done. ``start()`` forks the workers (call it before any
    thread starts: forking a process with threads may deadlock the child)."""

    def __init__(self, jobs: Sequence[FileJob], nodes: bool = False) -> None:
        self.jobs = list(jobs)
        self.nodes = nodes
        self._pool = None
        self._futures: Dict[cf.Future, FileJob] = {}

    def start(self) -> None:
        workers = extraction_workers(len(self.jobs))
        if workers <= 1 or self.nodes:
            return
        try:
            self._pool = cf.ProcessPoolExecutor(workers, mp_context=mp.get_context("fork"))
            self._futures = {self._pool.submit(extract_plain, job): job for job in self.jobs}
        except (OSError, ValueError):  # no processes here: one by one, in this process
            self.close()

    def results(self) -> Iterator[Tuple[str, Dict[int, "snippet.Extracted"]]]:
        """(path, extractions of its findings), in the order they are done."""
        done = set()
        if self._pool is not None:
            try:
                for fut in cf.as_completed(self._futures):
                    job = self._futures[fut]
                    got = fut.result()
                    done.add(job[0])
                    yield job[0], got
            except (OSError, cf.process.BrokenProcessPool):
                pass  # a worker died: the rest here, one by one
            finally:
                self.close()
        for job in self.jobs:
            if job[0] not in done:
                yield job[0], snippet.extract_file(*job, nodes=self.nodes)

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=False, cancel_futures=True)
            self._pool = None


def task_for(key: int, ex: "snippet.Extracted", finding: Finding, info: dict,
             rewrite: Optional[Callable] = None) -> dict:
    """What a child runs for one finding (``rewrite``: the rule's rewrite, ``--verify-fixes``)."""
    task = {"id": key, "path": ex.span.path, "file": info, "stmt": ex.stmt, "expr": ex.expr,
            "specs": ex.specs, "self": ex.self_spec, "code": finding.code}
    if rewrite is not None:
        task["fix"] = rewrite(finding.code, ex.stmt_node, ex.node, ex.stmt["line"], ex.stmt["col"])
    return task


def tasks_of(extracted: Dict[int, "snippet.Extracted"], findings: List[Finding],
             rewrite: Optional[Callable] = None) -> List[dict]:
    """The tasks of these extractions (those the extraction did not give up on), in finding order."""
    out: List[dict] = []
    infos: Dict[str, dict] = {}
    for key in sorted(extracted):
        ex = extracted[key]
        if ex.failure is not None or ex.stmt is None:
            continue
        info = infos.get(ex.span.path)
        if info is None:
            info = infos[ex.span.path] = snippet.module_info(ex.span.path)
        out.append(task_for(key, ex, findings[key], info, rewrite))
    return out


def by_file(findings: Iterable[Finding]) -> Dict[str, List[Tuple[int, Finding]]]:
    out: Dict[str, List[Tuple[int, Finding]]] = {}
    for i, f in enumerate(findings):
        out.setdefault(f.path, []).append((i, f))
    return out
