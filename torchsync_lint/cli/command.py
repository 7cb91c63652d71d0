"""The ``torchsync-lint`` command."""

from __future__ import annotations

import argparse
import errno
import gc
import json
import os
import sys
from typing import List, Optional

from torchsync_lint import __version__
from torchsync_lint.adopt.baseline import BaselineError
from torchsync_lint.cli import lint as lint_command
from torchsync_lint.cli.output import FORMATS
from torchsync_lint.cli.report import (EXIT_CLEAN, EXIT_ERROR, EXIT_FINDINGS, error as _error, on_fix as _on_fix,
                                       report, stdout_failed as _stdout_failed, write_stdout)
from torchsync_lint.config import Config, ConfigError, RuleSelection
from torchsync_lint.run import interrupt
from torchsync_lint.run.files import iter_python_files
from torchsync_lint.run.roots import project_root
from torchsync_lint.run.settings import apply_selection, check_code, find_pyproject, load
from torchsync_lint.verify import cli_verify, summary
from torchsync_lint.verify import prestart as verify_prestart
from torchsync_lint.verify.early import lint_jobs as verify_lint_jobs
from torchsync_lint.verify.cli_options import add_arguments as add_verify_arguments
from torchsync_lint.verify.cli_options import normalize_argv
from torchsync_lint.verify.cli_options import wanted as verify_wanted

# Each command's own module (``trace``, ``catalog``, ``server``, ``explain``, ``fix``,
# ``add_noqa``) is imported when that command runs, as Ruff keeps a file per command: a lint
# answered from the cache imports neither the parser nor a rule (tests/test_startup.py).

__all__ = ["EXIT_CLEAN", "EXIT_ERROR", "EXIT_FINDINGS", "build_parser", "main", "report", "write_stdout"]


def _codes(text: str) -> List[str]:
    try:
        return [check_code(c, "code") for c in text.split(",") if c.strip()]
    except ConfigError as exc:
        raise argparse.ArgumentTypeError(str(exc)[len("code: "):]) from None


def _jobs(text: str) -> int:
    try:
        n = int(text)
    except ValueError:
        n = 0
    if n < 1:
        raise argparse.ArgumentTypeError(f"expected a positive number of processes, got {text!r}")
    return n


SUBCOMMANDS = """\
subcommands (each has its own --help):
  torchsync-lint server                  the language server for editors (LSP over stdio)
  torchsync-lint trace [...] -- CMD ...  run a program and report the syncs it really makes
  torchsync-lint catalog --module M      measure which callables of your module sync (on a GPU)
"""


class _Parser(argparse.ArgumentParser):
    """argparse, but a usage error is one line (the message), not the usage block before it."""

    def error(self, message: str):
        self.exit(EXIT_ERROR, f"{self.prog}: error: {message}\n")


def build_parser() -> argparse.ArgumentParser:
    p = _Parser(
        prog="torchsync-lint",
        description="Find host-device synchronisations that stall PyTorch GPUs.",
        epilog=SUBCOMMANDS,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("paths", nargs="*", help="files or directories to lint (directories recursively)")
    p.add_argument("--select", type=_codes, help="comma-separated code prefixes to enable (e.g. TSL,TSL101)")
    p.add_argument("--ignore", type=_codes, help="comma-separated code prefixes to disable")
    p.add_argument("--extend-ignore", type=_codes, action="extend", default=[], metavar="CODES",
                   help="code prefixes to disable, in addition (as --ignore)")
    p.add_argument("--extend-select", type=_codes, default=[], help="code prefixes to add to the selection")
    p.add_argument("--output-format", "--format", dest="format", choices=FORMATS, default="text",
                   help="output format (default: text; full adds the source line and a caret)")
    p.add_argument("--output-file", "-o", metavar="FILE", help="write the report to FILE instead of stdout")
    p.add_argument("--statistics", action="store_true", help="print the number of findings per code instead")
    p.add_argument("--quiet", "-q", action="store_true", help="print findings only: no summary line, no notes")
    p.add_argument("--stdin-filename", metavar="NAME", help="the path of the file read from stdin (with '-')")
    p.add_argument("--baseline", metavar="FILE", help="report only findings not in this baseline file")
    p.add_argument("--write-baseline", metavar="FILE", help="write the current findings to a baseline file")
    p.add_argument("--add-noqa", action="store_true", help="add '# noqa: CODE' to the line of every finding")
    p.add_argument("--force-exclude", action="store_true", default=None,
                   help="apply exclude patterns to files named on the command line too")
    p.add_argument("--no-respect-gitignore", dest="respect_gitignore", action="store_false", default=None,
                   help="do not skip files that .gitignore lists")
    p.add_argument("--config", metavar="PYPROJECT", help="read settings from this pyproject.toml")
    p.add_argument("--isolated", action="store_true", help="ignore pyproject.toml settings")
    p.add_argument("--include-cold", action="store_true", default=None,
                   help="also report findings in code that runs once (module level, __init__, set-up)")
    p.add_argument("--hot-function", action="append", default=[], metavar="NAME",
                   help="treat this function (name or dotted key) as hot; repeatable")
    p.add_argument("--cold-function", action="append", default=[], metavar="NAME",
                   help="treat this function as cold (runs once: set-up code); repeatable")
    p.add_argument("--jobs", "-j", type=_jobs, default=None, help="worker processes (default: all cores)")
    p.add_argument("--no-cache", dest="cache", action="store_false", default=None,
                   help="check every file again: read and write no cache")
    p.add_argument("--cache-dir", metavar="DIR", help="where per-file results and interfaces are kept "
                   "(default: .torchsync_cache at the project root)")
    p.add_argument("--hot-tests", action="store_true", default=None,
                   help="report findings in test files as every-step code (default: labelled 'test', hidden)")
    p.add_argument("--explain", metavar="CODE", help="print a rule's documentation and exit")
    p.add_argument("--list-rules", action="store_true", help="list every rule and exit")
    p.add_argument("--exit-zero", action="store_true", help="exit 0 even when there are findings")
    p.add_argument("--fix", action="store_true", help="apply safe fixes to the files, then report what is left")
    p.add_argument("--unsafe-fixes", action="store_true",
                   help="with --fix or --diff, also apply unsafe fixes (they can change behaviour)")
    p.add_argument("--diff", action="store_true", help="print the fixes as a unified diff; change no file")
    p.add_argument("--fix-only", action="store_true", help="apply the fixes and report nothing else")
    p.add_argument("--exit-non-zero-on-fix", action="store_true",
                   help="with --fix or --fix-only, exit 1 when a fix was applied, even if nothing is left")
    p.add_argument("--show-fixes", action="store_true",
                   help="mark fixable findings with [*]; with --fix, list the fixes applied")
    p.add_argument("--show-settings", action="store_true", help="print the resolved settings and exit")
    p.add_argument("--show-files", action="store_true", help="print the files that would be checked and exit")
    p.add_argument("--version", action="version", version=f"torchsync-lint {__version__}")
    add_verify_arguments(p)
    return p


def configure(args: argparse.Namespace) -> Config:
    """pyproject settings (nearest to the first path), then the command line's. Raises ConfigError."""
    if args.config and not os.path.isfile(args.config):
        raise ConfigError(f"{args.config}: no such file")
    first = args.paths[0] if args.paths and args.paths[0] != "-" else (args.stdin_filename or ".")
    pyproject = None if args.isolated else (args.config or find_pyproject(first))
    config = load(pyproject)
    config.layers.append(RuleSelection(args.select, args.extend_select, (args.ignore or []) + args.extend_ignore))
    apply_selection(config)
    for flag in ("include_cold", "force_exclude", "respect_gitignore", "cache", "hot_tests"):
        if getattr(args, flag) is not None:
            setattr(config, flag, getattr(args, flag))
    config.hot_functions = config.hot_functions + args.hot_function
    config.cold_functions = config.cold_functions + args.cold_function
    if args.cache_dir:
        config.cache_dir = os.path.abspath(args.cache_dir)  # the user's own choice: anywhere
        config.cache_dir_refused = None
    elif config.cache and config.cache_dir_refused:
        raise ConfigError(config.cache_dir_refused)
    if config.source is None:
        # no pyproject.toml: the project's root (a .git, setup.py, setup.cfg above the first path)
        # roots fingerprints and the cache, so a run from a subfolder agrees with one from the top
        start = first if first != "-" else "."
        config.root = project_root(os.path.join(start, "_") if os.path.isdir(start) else start) or os.path.abspath(".")
    return config


def main(argv: Optional[List[str]] = None, early: Optional[list] = None) -> int:
    """The command. Ctrl-C and SIGTERM end it with one line, exit 130 or 143, and no worker left.
    ``early``: ``--verify``'s children the console script started before this module's imports
    (``cli.entry``); the run uses them or closes them.

    Run as the process's command line (``argv`` None: the console script, ``python -m``), the
    objects it made are frozen out of the cyclic collector before it returns: the interpreter's
    last collection at exit would otherwise traverse every one of them (the run's interfaces,
    reports, call graph) to free memory the process gives back anyway. Objects are still released
    by reference counting and exit handlers still run; an in-process caller (``main([...])``)
    keeps a collector as it was."""
    code = _main_guarded(argv, early if early is not None else [])
    if argv is None:
        gc.freeze()
    return code


def _main_guarded(argv: Optional[List[str]], early: list) -> int:
    try:
        with interrupt.terminate_as_exception():
            code = _main(argv, early)
            sys.stdout.flush()
            return code
    except BrokenPipeError as exc:  # stdout's reader went away while something else was printed
        return _stdout_failed(exc)
    except OSError as exc:
        if exc.errno not in (errno.ENOSPC, errno.EDQUOT, errno.EFBIG, errno.EIO):
            raise
        return _stdout_failed(exc)
    except KeyboardInterrupt:
        print("torchsync-lint: interrupted", file=sys.stderr)
        return 130
    except interrupt.Terminated:
        print("torchsync-lint: terminated", file=sys.stderr)
        return 143


def _main(argv: Optional[List[str]], early: list) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv[:1] == ["trace"]:  # `torchsync-lint trace ... -- python train.py`
        from torchsync_lint.cli import trace as trace_command  # each command's module when it runs (start-up)

        return trace_command.main(argv[1:])
    if argv[:1] == ["catalog"]:  # `torchsync-lint catalog --module mylib.ops`
        from torchsync_lint.cli import catalog as catalog_command  # each command's module when it runs (start-up)

        return catalog_command.main(argv[1:])
    if argv[:1] == ["server"]:  # `torchsync-lint server`: the language server (LSP over stdio)
        from torchsync_lint import server as server_command  # each command's module when it runs (start-up)

        return server_command.main(argv[1:])
    parser = build_parser()
    try:
        args = parser.parse_args(normalize_argv(sys.argv[1:] if argv is None else list(argv)))
    except SystemExit as exc:  # argparse exits 2 on usage errors, 0 for --help/--version
        return exc.code if isinstance(exc.code, int) else EXIT_ERROR
    if args.explain or args.list_rules:
        from torchsync_lint.cli import explain  # reads the rules themselves: only for these two (start-up)

        return explain.explain(args.explain) if args.explain else explain.list_rules()
    if not args.paths and args.stdin_filename:
        args.paths = ["-"]
    if not args.paths:
        parser.print_usage(sys.stderr)
        return _error("no paths given")
    try:
        config = configure(args)
        known = lint_command.load_baseline(args)
    except (ConfigError, BaselineError) as exc:
        return _error(str(exc))
    if args.show_settings:
        return show_settings(args, config)
    if args.show_files:
        return show_files(args, config)
    linted: List[str] = []
    started: list = []
    if verify_wanted(args):
        linted = [path for path, _ in iter_python_files(args.paths, config)]
        if lint_command.STDIN not in args.paths:
            started = verify_prestart(args, linted, early)  # the children's start-up overlaps the lint
            if started and args.jobs is None:  # the lint leaves the children's CPUs to them
                args.jobs = verify_lint_jobs(len(started), forked=_served(started))
    for child in early:  # started at the first line for a run that turned out to need none
        child.close(wait=False)
    early.clear()
    try:
        return _lint_and_report(args, config, known, linted, started)
    finally:
        for child in started:  # the ones --verify never received (an early return, an error)
            child.close()


def _served(started: list) -> bool:
    """Whether ``--verify``'s children came from the fork server (``verify.served``)."""
    from torchsync_lint.verify.served import ServedProc

    return any(isinstance(getattr(child, "proc", None), ServedProc) for child in started)


def _lint_and_report(args: argparse.Namespace, config: Config, known, linted: List[str], started: list) -> int:
    note = (lambda msg: None) if args.quiet else (lambda msg: print(msg, file=sys.stderr))
    if not config.enabled:
        note("torchsync-lint: warning: no rules selected: nothing checked")
        return EXIT_CLEAN
    if args.fix_only:
        args.fix = True
    try:
        result, sources = lint_command.lint(args, config, note)
    except lint_command.UsageError as exc:
        return _error(str(exc))
    err = lambda msg: print(msg, file=sys.stderr)  # noqa: E731
    fixed = None
    if args.fix or args.diff:  # rewrite the files, then report what is left (or print the diff)
        from torchsync_lint.cli import fix as fix_command  # the fixes (and LibCST) only for a fix (start-up)

        if args.paths == [lint_command.STDIN]:
            return fix_command.stdin_command(args, config, result, sources, known, err)
        fixed = fix_command.run(args, config, result, err)
        if fixed.code is not None:
            return fixed.code
        if args.show_fixes:
            fix_command.show_fixes(fixed.applied, err)
        if args.fix_only:
            for e in result.errors:
                err(str(e))
            return EXIT_ERROR if result.errors else _on_fix(args, fixed.total, EXIT_CLEAN)
        result, sources = lint_command.lint(args, config, note)
    if args.add_noqa:
        from torchsync_lint.cli import add_noqa as add_noqa_command  # each command's module when it runs (start-up)

        return add_noqa_command.write_noqa(result)
    if not result.files_checked and not result.errors and not args.quiet and lint_command.STDIN not in args.paths:
        where = ", ".join(args.paths)
        err(f"torchsync-lint: warning: no Python files found in {where}: nothing checked")
    try:
        extras = lint_command.finish(args, config, result, sources, known)
    except BaselineError as exc:
        return _error(str(exc))
    extras.show_fixes = args.show_fixes
    extras.checked = bool(result.files_checked)
    # Steps that add to the result (e.g. runtime verification of the findings) go here.
    if verify_wanted(args):  # runs the code in a child process; only that process imports torch
        handed = list(started)
        started.clear()  # cli_verify closes the children it does not use
        code = cli_verify(args, config, result, err, linted, handed)
        if code is not None:
            return code
        status = report(args, result, extras)
        if args.format == "text":
            write_stdout(summary(result.findings))
        return status
    status = report(args, result, extras)
    return _on_fix(args, fixed.total if fixed is not None else 0, status)


def show_settings(args: argparse.Namespace, config: Config) -> int:
    """``--show-settings``: what the run would use, resolved (JSON with ``--output-format json``)."""
    settings = {
        "source": config.source,
        "root": os.path.abspath(config.root),
        "enabled": sorted(config.enabled or ()),
        "per-file-ignores": config.per_file_ignores,
        "hot-functions": config.hot_functions,
        "cold-functions": config.cold_functions,
        "include-cold": config.include_cold,
        "hot-tests": config.hot_tests,
        "exclude": config.exclude,
        "extend-exclude": config.extend_exclude,
        "respect-gitignore": config.respect_gitignore,
        "force-exclude": config.force_exclude,
        "extra-sync-calls": config.extra_sync_calls,
        "cache-dir": config.cache_path(),
    }
    if args.format == "json":
        text = json.dumps(settings, indent=2) + "\n"
    else:
        width = max(len(k) for k in settings)
        text = "".join(f"{k:{width}} = {json.dumps(v)}\n" for k, v in settings.items())
    try:
        write_stdout(text)
    except OSError as exc:
        return _stdout_failed(exc)
    return EXIT_CLEAN


def show_files(args: argparse.Namespace, config: Config) -> int:
    """``--show-files``: the files a run would check, one a line."""
    files = [path for path, _ in iter_python_files(args.paths, config) if path != lint_command.STDIN]
    try:
        write_stdout("".join(f"{path}\n" for path in dict.fromkeys(files)))
    except OSError as exc:
        return _stdout_failed(exc)
    return EXIT_CLEAN
