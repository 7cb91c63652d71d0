"""The ``torchsync-lint`` command."""

from __future__ import annotations

import argparse
import os
import sys
from typing import List, Optional

from torchsync_lint import __version__
from torchsync_lint.adopt.baseline import BaselineError
from torchsync_lint.check.noqa import META_RULES
from torchsync_lint.cli import add_noqa as add_noqa_command
from torchsync_lint.cli import catalog as catalog_command
from torchsync_lint.cli import fix as fix_command
from torchsync_lint.cli import lint as lint_command
from torchsync_lint.cli import trace as trace_command
from torchsync_lint.cli.docgen import rule_markdown
from torchsync_lint.cli.output import FORMATS, Extras, render, statistics
from torchsync_lint.config import Config, ConfigError, RuleSelection
from torchsync_lint.finding import LintResult
from torchsync_lint.rules.registry import all_rules, rule_by_key
from torchsync_lint.run import workers
from torchsync_lint.run.files import iter_python_files
from torchsync_lint.run.settings import apply_selection, check_code, find_pyproject, load
from torchsync_lint.verify import cli_verify, summary
from torchsync_lint.verify import prestart as verify_prestart
from torchsync_lint.verify.cli_options import add_arguments as add_verify_arguments
from torchsync_lint.verify.cli_options import normalize_argv
from torchsync_lint.verify.cli_options import wanted as verify_wanted

EXIT_CLEAN, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2


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


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="torchsync-lint",
        description="Find host-device synchronisations that stall PyTorch GPUs.",
    )
    p.add_argument("paths", nargs="*", help="files or directories to lint (directories recursively)")
    p.add_argument("--select", type=_codes, help="comma-separated code prefixes to enable (e.g. TSL,TSL101)")
    p.add_argument("--ignore", type=_codes, help="comma-separated code prefixes to disable")
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
    p.add_argument("--version", action="version", version=f"torchsync-lint {__version__}")
    add_verify_arguments(p)
    return p


def _error(message: str) -> int:
    print(f"torchsync-lint: error: {message}", file=sys.stderr)
    return EXIT_ERROR


def explain(key: str) -> int:
    try:
        rule = rule_by_key(key)
    except KeyError:
        return _error(f"unknown rule {key!r} (see --list-rules)")
    sys.stdout.write(rule_markdown(rule))
    return EXIT_CLEAN


def list_rules() -> int:
    rules = {**all_rules(), **{r.code: r for r in META_RULES}}
    for code, rule in sorted(rules.items()):
        flag = "" if rule.default_enabled else " (off by default)"
        print(f"{code}  {rule.name:32} {rule.message}{flag}")
    return EXIT_CLEAN


def configure(args: argparse.Namespace) -> Config:
    """pyproject settings (nearest to the first path), then the command line's. Raises ConfigError."""
    if args.config and not os.path.isfile(args.config):
        raise ConfigError(f"{args.config}: no such file")
    first = args.paths[0] if args.paths and args.paths[0] != "-" else (args.stdin_filename or ".")
    pyproject = None if args.isolated else (args.config or find_pyproject(first))
    config = load(pyproject)
    config.layers.append(RuleSelection(args.select, args.extend_select, args.ignore or []))
    apply_selection(config)
    for flag in ("include_cold", "force_exclude", "respect_gitignore", "cache", "hot_tests"):
        if getattr(args, flag) is not None:
            setattr(config, flag, getattr(args, flag))
    config.hot_functions = config.hot_functions + args.hot_function
    config.cold_functions = config.cold_functions + args.cold_function
    if args.cache_dir:
        config.cache_dir = args.cache_dir
    return config


def report(args: argparse.Namespace, result: LintResult, extras: Optional[Extras] = None) -> int:
    """Print findings (stdout or --output-file) and file errors (stderr); the exit code."""
    for err in result.errors:
        print(str(err), file=sys.stderr)
    extras = extras or Extras()
    if getattr(args, "quiet", False):
        extras.summary = False
    out = (statistics(result.findings, args.format) if getattr(args, "statistics", False)
           else render(args.format, result.findings, result.errors, extras))
    if getattr(args, "output_file", None):
        try:
            with open(args.output_file, "w", encoding="utf-8") as fh:
                fh.write(out)
        except OSError as exc:
            return _error(f"{args.output_file}: cannot write: {exc.strerror or exc}")
    else:
        sys.stdout.write(out)
    if result.errors:
        return EXIT_ERROR
    if result.findings and not args.exit_zero:
        return EXIT_FINDINGS
    return EXIT_CLEAN


def main(argv: Optional[List[str]] = None) -> int:
    """The command. Ctrl-C and SIGTERM end it with one line, exit 130 or 143, and no worker left."""
    try:
        with workers.terminate_as_exception():
            return _main(argv)
    except KeyboardInterrupt:
        print("torchsync-lint: interrupted", file=sys.stderr)
        return 130
    except workers.Terminated:
        print("torchsync-lint: terminated", file=sys.stderr)
        return 143


def _main(argv: Optional[List[str]]) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv[:1] == ["trace"]:  # `torchsync-lint trace ... -- python train.py`
        return trace_command.main(argv[1:])
    if argv[:1] == ["catalog"]:  # `torchsync-lint catalog --module mylib.ops`
        return catalog_command.main(argv[1:])
    parser = build_parser()
    try:
        args = parser.parse_args(normalize_argv(sys.argv[1:] if argv is None else list(argv)))
    except SystemExit as exc:  # argparse exits 2 on usage errors, 0 for --help/--version
        return exc.code if isinstance(exc.code, int) else EXIT_ERROR
    if args.explain:
        return explain(args.explain)
    if args.list_rules:
        return list_rules()
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
    linted: List[str] = []
    started: list = []
    if verify_wanted(args):
        linted = [path for path, _ in iter_python_files(args.paths, config)]
        if lint_command.STDIN not in args.paths:
            started = verify_prestart(args, linted)  # the children's start-up overlaps the lint
    try:
        return _lint_and_report(args, config, known, linted, started)
    finally:
        for child in started:  # the ones --verify never received (an early return, an error)
            child.close()


def _lint_and_report(args: argparse.Namespace, config: Config, known, linted: List[str], started: list) -> int:
    note = (lambda msg: None) if args.quiet else (lambda msg: print(msg, file=sys.stderr))
    try:
        result, sources = lint_command.lint(args, config, note)
    except lint_command.UsageError as exc:
        return _error(str(exc))
    if args.fix or args.diff:  # rewrite the files, then report what is left (or print the diff)
        code = fix_command.run(args, config, result, lambda msg: print(msg, file=sys.stderr))
        if code is not None:
            return code
        result, sources = lint_command.lint(args, config, note)
    if args.add_noqa:
        return add_noqa_command.write_noqa(result)
    try:
        extras = lint_command.finish(args, config, result, sources, known)
    except BaselineError as exc:
        return _error(str(exc))
    # Steps that add to the result (e.g. runtime verification of the findings) go here.
    if verify_wanted(args):  # runs the code in a child process; only that process imports torch
        handed = list(started)
        started.clear()  # cli_verify closes the children it does not use
        code = cli_verify(args, config, result, lambda msg: print(msg, file=sys.stderr), linted, handed)
        if code is not None:
            return code
        status = report(args, result, extras)
        if args.format == "text":
            sys.stdout.write(summary(result.findings))
        return status
    return report(args, result, extras)
