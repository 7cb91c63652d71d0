"""Snippet mode's schedule: how many children, and the extraction feeding them file by file.

The extraction runs in worker processes (forked before any thread of ours starts), the largest
files first; each file's tasks go into one feed as soon as the file is done, and whichever child is
up and idle takes the next file (``runner.run_job(feed=, shared=True)``): a child that started
sooner, or drew smaller files, takes more. A file's tasks stay together (its module imported once,
in one child), but for a package module with more than half a child's fair share of the run, which
goes in parts (``items``): its package was imported ahead, so another child's import is cheap.
"""

from __future__ import annotations

import concurrent.futures as cf
import multiprocessing as mp
import os
from typing import Callable, Dict, Iterable, Iterator, List, Optional, Sequence, Tuple

from torchsync_lint.finding import Finding
from torchsync_lint.verify import early, snippet

FileJob = Tuple[str, List[Tuple[int, Finding]], tuple, List[dict]]  # extract_file's arguments


def n_children(n_files: int, n_tasks: int) -> int:
    """Child processes for snippet mode (``early.children_for``: known before the extraction)."""
    return early.children_for(n_files, n_tasks)


def extraction_workers(n_files: int, busy: int = 0) -> int:
    """Worker processes for the extraction: up to one per two files, leaving ``busy`` CPUs to the
    snippet children (importing their packages, or running tasks, meanwhile)."""
    if n_files < 4 or os.environ.get("TORCHSYNC_VERIFY_SERIAL"):
        return 1
    cpus = os.cpu_count() or 1
    return max(1, min(n_files // 2, cpus - busy if cpus > busy else 1, 16))


def extract_plain(job: FileJob) -> Dict[int, "snippet.Extracted"]:
    """One file's extraction in a worker process, without the syntax nodes (they are for rewrites)."""
    out = snippet.extract_file(*job)
    for ex in out.values():
        ex.node = ex.stmt_node = None
    return out


class Extraction:
    """The files' extractions, as each is done. ``start()`` forks the workers (call it before any
    thread starts: forking a process with threads may deadlock the child)."""

    def __init__(self, jobs: Sequence[FileJob], nodes: bool = False, busy: int = 0) -> None:
        self.jobs = list(jobs)
        self.nodes = nodes
        self.busy = busy  # CPUs the snippet children use meanwhile
        self._pool = None
        self._futures: Dict[cf.Future, FileJob] = {}

    def start(self) -> None:
        workers = extraction_workers(len(self.jobs), self.busy)
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


def items(tasks: List[dict], limit: int = 0) -> List[List[dict]]:
    """What one child takes from the feed at a time (one file's ``tasks``): a package module's tasks
    in parts of at most ``limit`` (0: all of them), so that no child runs a long file alone while
    the others wait (the package was imported ahead: another child's import of the module is
    cheap); a plain script's tasks all together (its import runs its top-level code: once, in one
    child). ``TORCHSYNC_VERIFY_ITEM=file`` keeps every file's tasks together."""
    if not tasks:
        return []
    module = str((tasks[0].get("file") or {}).get("module", ""))
    if limit <= 0 or len(tasks) <= limit or "." not in module or os.environ.get("TORCHSYNC_VERIFY_ITEM") == "file":
        return [list(tasks)]
    parts = -(-len(tasks) // limit)
    size, extra = divmod(len(tasks), parts)
    out, at = [], 0
    for i in range(parts):
        n = size + (1 if i < extra else 0)
        out.append(list(tasks[at:at + n]))
        at += n
    return out


def item_limit(n_tasks: int, n_children: int) -> int:
    """The most tasks of one file a child takes at once: a file larger than half a child's fair share
    of the run is split (the feed then ends with parts small enough to even out the children)."""
    return max(1, -(-n_tasks // (2 * max(1, n_children))))


def by_file(findings: Iterable[Finding]) -> Dict[str, List[Tuple[int, Finding]]]:
    out: Dict[str, List[Tuple[int, Finding]]] = {}
    for i, f in enumerate(findings):
        out.setdefault(f.path, []).append((i, f))
    return out
