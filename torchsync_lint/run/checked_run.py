"""The part of a run that checks files: the first pass in import order and the project pass
(``project_pass``), the call graph of their summaries, then, with a cache, the interfaces and
the project index stored and the cache pruned. ``tree`` imports it only when the project index
cannot answer the run; with it come the file check, LibCST, the rules and the inference."""

from __future__ import annotations

from typing import List, Optional, Set, Tuple

from torchsync_lint.check.report import FileReport, Options
from torchsync_lint.config import Config
from torchsync_lint.finding import LintResult
from torchsync_lint.inference.callgraph import CallGraph
from torchsync_lint.run import cache_prune, index_write
from torchsync_lint.run.interfaces import store_interfaces
from torchsync_lint.run.kept import Kept
from torchsync_lint.run.project_pass import first_pass, project_pass
from torchsync_lint.run.tracked_project import Waves


def check_files(files: List[str], options: Options, config: Config, jobs: int, cache_dir: Optional[str],
                folders: bool, result: LintResult) -> Tuple[List[FileReport], CallGraph]:
    """Every file's final report and the run's call graph; ``result`` gets what pruning removed."""
    waves = Waves()  # what the projects of this run place, shared (``tracked_project``)
    kept = Kept()  # trees and what each check read, for the project pass (``run.kept``)
    reports = first_pass(files, options, jobs, cache_dir, waves, kept)
    touched: Set[str] = set()
    reports = project_pass(reports, options, jobs, cache_dir, touched, waves, kept)
    kept.drop_trees()
    graph = CallGraph((r.summary for r in reports if r.summary is not None), config.hot_functions)
    if cache_dir is not None:
        interface_keys = store_interfaces(reports, cache_dir)
        # a run over folders (the project, or part of it) keeps an index and prunes the cache
        written = index_write.write(reports, options, graph.hot(), cache_dir, interface_keys, touched,
                                    graph.once_map(), waves) if folders else None
        if written is not None:
            result.cache_pruned = cache_prune.prune(cache_dir, written)  # type: ignore[attr-defined]
    return reports, graph
