"""The linter's internals that bench scripts time, from whichever layout the checkout on sys.path has:
the stage packages (check/, run/, syntax/) or the older flat one (engine.py, walk.py), so a script can
time an old checkout against this one (``--src``, ``--linter-src``)."""

from __future__ import annotations

from types import SimpleNamespace


def load() -> SimpleNamespace:
    try:
        from torchsync_lint.check import classify, file, positions, report, source, walker
        from torchsync_lint.run import cached_check, files, project_pass, tree
        from torchsync_lint.syntax import walk
    except ImportError:  # a checkout from before the layout by stage
        from torchsync_lint import engine, walk
        from torchsync_lint.positions import positions as _positions
        from torchsync_lint.project_pass import project_pass as _project_pass

        return SimpleNamespace(
            walk=walk, engine_module=engine, Options=engine.Options, RuleWalker=engine.RuleWalker,
            PREFILTER=engine.PREFILTER, places=engine._places, decode=engine.decode,
            module_name_for=engine.module_name_for, check_source=engine.check_source,
            check_file=engine.check_file, classify=engine.classify, lint_paths=engine.lint_paths,
            iter_python_files=engine.iter_python_files, project_pass=_project_pass, positions=_positions)
    return SimpleNamespace(
        walk=walk, engine_module=file, Options=report.Options, RuleWalker=walker.RuleWalker,
        PREFILTER=source.PREFILTER, places=walker.places, decode=source.decode,
        module_name_for=source.module_name_for, check_source=file.check_source,
        check_file=cached_check.check_file, classify=classify.classify, lint_paths=tree.lint_paths,
        iter_python_files=files.iter_python_files, project_pass=project_pass.project_pass,
        positions=positions.positions)
