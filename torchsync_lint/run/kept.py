"""What a whole run's first pass keeps for its project pass, in the process that checks: parsed
trees (bounded) and, per file checked with a growing project, the entries that check read.

- **Trees.** The project pass checks again a third of a big project's files, and LibCST's parse
  was a third of each check again. LibCST trees are immutable, so the tree of a file's first check
  serves its later ones (the same text: compared before use). Only files that may be checked
  again are kept, while their text stays under ``budget`` characters in all (a tree takes about 25
  bytes per character of source: the default, 16 M characters, holds about 400 MB). Files whose
  functions take parameters other files may pass come first (on transformers' first 1,100 files
  half of them are checked again): a tree of a file that only met references the whole project
  may answer otherwise (one in sixteen is checked again) gives its room to them, oldest first.
- **Indexes.** With its tree, a kept file keeps the index its first check built
  (``inference.index.FileIndex``): a function of the tree and the file's module name alone, read
  by every evaluator of the file (its per-file answers, ``plain_annotations`` and the like, are
  those no evaluator's state or project changes), so a later check of the same text reads the same
  index it would build again. It is released (``FileIndex.release``) when its tree goes. With
  them, a memo of answers that follow from the text and tree alone (``check.file``: the ``# noqa``
  table, the positions of a list of reported nodes), shared by the checks of that text.
- **What a check read.** ``read`` keeps, for a file checked with an import wave's project
  (``project_pass.first_pass``), every entry its check looked up (``tracked_project``) and what the
  entry was there (the data, shared with the interfaces, not copied). The project pass compares them
  with the whole project (``second_pass``): where every entry is the same, the rules would take
  the same path and report the same findings.

Workers of a pool keep nothing (their trees would not outlive the wave): a run of several
processes checks again as before.
"""

from __future__ import annotations

from typing import Dict, Optional, Set, Tuple

from torchsync_lint.check.report import FileReport
from torchsync_lint.run.tracked_project import Dep, TrackedProject

DEFAULT_BUDGET = 16_000_000  # characters of source whose trees are kept


class Kept:
    def __init__(self, budget: int = DEFAULT_BUDGET) -> None:
        self.budget = budget
        self.used = 0
        self._trees: Dict[str, Tuple[str, object, object, dict]] = {}  # path -> (source, tree, index or None, memo)
        self._refs_only: Dict[str, int] = {}  # kept trees that may give their room (path -> size), oldest first
        self._walked: Set[str] = set()  # checked by the rule walk with a project, not read yet
        self._read: Dict[str, Dict[Dep, object]] = {}
        self.reused = 0  # trees served (for bench/ and tests)

    # -- trees (``check.file.check_source``'s ``trees``) ---------------------------------------------
    def take(self, path: str, source: str) -> Optional[object]:
        got = self.taken(path, source)
        return got[0] if got is not None else None

    def taken(self, path: str, source: str) -> Optional[Tuple[object, object, dict]]:
        """The kept tree of that very text, its index (None where none was kept with it) and the
        memo of its checks."""
        got = self._trees.get(path)
        if got is None or got[0] != source:
            return None
        self.reused += 1
        return got[1], got[2], got[3]

    def offer(self, path: str, source: str, module: object, report: FileReport,
              index: object = None) -> Optional[dict]:
        """Told of a tree (and its index) just parsed for ``path``; where it is kept (its index
        then stays unreleased until the tree goes), the memo kept with it, else None."""
        self._walked.add(path)
        if path in self._trees or not (report.open_params or report.refs):
            return None  # no answer of the whole project can be new to it: never checked again
        if report.open_params:
            while self.used + len(source) > self.budget and self._refs_only:
                old = next(iter(self._refs_only))
                self.used -= self._refs_only.pop(old)
                _release(self._trees.pop(old)[2])
        if self.used + len(source) > self.budget:
            return None
        memo: dict = {}
        self._trees[path] = (source, module, index, memo)
        self.used += len(source)
        if not report.open_params:
            self._refs_only[path] = len(source)
        return memo

    def drop_trees(self) -> None:
        for _source, _module, index, _memo in self._trees.values():
            _release(index)
        self._trees.clear()
        self._refs_only.clear()
        self.used = 0

    # -- what a check read ----------------------------------------------------------------------------
    def read(self, path: str, deps: Set[Dep], project: TrackedProject) -> None:
        """The entries the check of ``path`` just made against ``project`` (a growing one) looked up."""
        if path in self._walked:
            self._walked.discard(path)
            self._read[path] = {d: project.data(d) for d in deps}

    def entries(self, path: str) -> Optional[Dict[Dep, object]]:
        """What the first check of ``path`` read (entry -> data), or None where it was not recorded
        (no project, a prefiltered file, a report from the cache or a worker)."""
        return self._read.get(path)


def _release(index: object) -> None:
    if index is not None:
        index.release()  # type: ignore[attr-defined]
