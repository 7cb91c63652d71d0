"""The ``torchsync-lint`` command."""

from __future__ import annotations

import argparse
import os
import sys
from typing import List, Optional

from torchsync_lint import __version__
from torchsync_lint.config import Config, ConfigError, find_pyproject, load
from torchsync_lint.engine import lint_paths
from torchsync_lint.finding import LintResult
from torchsync_lint.output import FORMATS, render
from torchsync_lint.registry import all_rules, rule_by_key

EXIT_CLEAN, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2


def _codes(text: str) -> List[str]:
    return [c.strip().upper() for c in text.split(",") if c.strip()]


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
    p.add_argument("--format", choices=FORMATS, default="text", help="output format (default: text)")
    p.add_argument("--config", metavar="PYPROJECT", help="read settings from this pyproject.toml")
    p.add_argument("--isolated", action="store_true", help="ignore pyproject.toml settings")
    p.add_argument("--include-cold", action="store_true", default=None,
                   help="also report findings in code that runs once (module level, __init__, set-up)")
    p.add_argument("--hot-function", action="append", default=[], metavar="NAME",
                   help="treat this function (name or dotted key) as hot; repeatable")
    p.add_argument("--cold-function", action="append", default=[], metavar="NAME",
                   help="treat this function as cold (runs once: set-up code); repeatable")
    p.add_argument("--jobs", "-j", type=_jobs, default=None, help="worker processes (default: all cores)")
    p.add_argument("--explain", metavar="CODE", help="print a rule's documentation and exit")
    p.add_argument("--list-rules", action="store_true", help="list every rule and exit")
    p.add_argument("--exit-zero", action="store_true", help="exit 0 even when there are findings")
    p.add_argument("--version", action="version", version=f"torchsync-lint {__version__}")
    from torchsync_lint.verify.cli_options import add_arguments as add_verify_arguments

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
    from torchsync_lint.docgen import rule_markdown

    sys.stdout.write(rule_markdown(rule))
    return EXIT_CLEAN


def list_rules() -> int:
    for code, rule in all_rules().items():
        flag = "" if rule.default_enabled else " (off by default)"
        print(f"{code}  {rule.name:32} {rule.message}{flag}")
    return EXIT_CLEAN


def configure(args: argparse.Namespace) -> Config:
    """pyproject settings (nearest to the first path), then the command line's. Raises ConfigError."""
    if args.config and not os.path.isfile(args.config):
        raise ConfigError(f"{args.config}: no such file")
    pyproject = None if args.isolated else (args.config or find_pyproject(args.paths[0]))
    config = load(pyproject)
    if args.select is not None:
        config.select = args.select
    if args.extend_select:
        config.select = (config.select or ["TSL"]) + args.extend_select
    if args.ignore is not None:
        config.ignore = config.ignore + args.ignore
    if args.include_cold is not None:
        config.include_cold = args.include_cold
    config.hot_functions = config.hot_functions + args.hot_function
    config.cold_functions = config.cold_functions + args.cold_function
    for code in config.select + config.ignore:
        if not code.startswith("TSL"):
            raise ConfigError(f"{code!r} is not a code prefix like 'TSL' or 'TSL101'")
    return config


def report(args: argparse.Namespace, result: LintResult) -> int:
    """Print findings (stdout) and file errors (stderr); the exit code."""
    for err in result.errors:
        print(str(err), file=sys.stderr)
    sys.stdout.write(render(args.format, result.findings, result.errors))
    if result.errors:
        return EXIT_ERROR
    if result.findings and not args.exit_zero:
        return EXIT_FINDINGS
    return EXIT_CLEAN


def main(argv: Optional[List[str]] = None) -> int:
    parser = build_parser()
    try:
        from torchsync_lint.verify.cli_options import normalize_argv

        args = parser.parse_args(normalize_argv(sys.argv[1:] if argv is None else list(argv)))
    except SystemExit as exc:  # argparse exits 2 on usage errors, 0 for --help/--version
        return exc.code if isinstance(exc.code, int) else EXIT_ERROR
    if args.explain:
        return explain(args.explain)
    if args.list_rules:
        return list_rules()
    if not args.paths:
        parser.print_usage(sys.stderr)
        return _error("no paths given")
    try:
        config = configure(args)
    except ConfigError as exc:
        return _error(str(exc))
    result = lint_paths(args.paths, config, jobs=args.jobs,
                        on_note=lambda msg: print(msg, file=sys.stderr))
    # Steps that add to the result (e.g. runtime verification of the findings) go here.
    from torchsync_lint.verify.cli_options import wanted as verify_wanted

    if verify_wanted(args):  # runs the code in a child process; only that process imports torch
        from torchsync_lint.verify import cli_verify, summary

        code = cli_verify(args, config, result, lambda msg: print(msg, file=sys.stderr))
        if code is not None:
            return code
        status = report(args, result)
        if args.format == "text":
            sys.stdout.write(summary(result.findings))
        return status
    return report(args, result)
