"""The ``torchsync-lint`` command."""

from __future__ import annotations

import argparse
import os
import sys
from typing import List, Optional

from torchsync_lint import __version__
from torchsync_lint.config import ConfigError, find_pyproject, load
from torchsync_lint.engine import lint_paths
from torchsync_lint.output import FORMATS, render
from torchsync_lint.registry import all_rules, rule_by_key

EXIT_CLEAN, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2


def _codes(text: str) -> List[str]:
    return [c.strip().upper() for c in text.split(",") if c.strip()]


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
    p.add_argument("--jobs", "-j", type=int, default=None, help="worker processes (default: all cores)")
    p.add_argument("--explain", metavar="CODE", help="print a rule's documentation and exit")
    p.add_argument("--list-rules", action="store_true", help="list every rule and exit")
    p.add_argument("--exit-zero", action="store_true", help="exit 0 even when there are findings")
    p.add_argument("--version", action="version", version=f"torchsync-lint {__version__}")
    return p


def main(argv: Optional[List[str]] = None) -> int:
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # argparse exits 2 on usage errors, 0 for --help/--version
        return int(exc.code or 0)
    if args.explain:
        try:
            rule = rule_by_key(args.explain)
        except KeyError:
            print(f"torchsync-lint: error: unknown rule {args.explain!r}", file=sys.stderr)
            return EXIT_ERROR
        from torchsync_lint.docgen import rule_markdown

        sys.stdout.write(rule_markdown(rule))
        return EXIT_CLEAN
    if args.list_rules:
        for code, rule in all_rules().items():
            flag = "" if rule.default_enabled else " (off by default)"
            print(f"{code}  {rule.name:32} {rule.message}{flag}")
        return EXIT_CLEAN
    if not args.paths:
        parser.print_usage(sys.stderr)
        print("torchsync-lint: error: no paths given", file=sys.stderr)
        return EXIT_ERROR
    try:
        pyproject = None if args.isolated else (args.config or find_pyproject(args.paths[0]))
        if args.config and not os.path.isfile(args.config):
            raise ConfigError(f"{args.config}: no such file")
        config = load(pyproject)
    except ConfigError as exc:
        print(f"torchsync-lint: error: {exc}", file=sys.stderr)
        return EXIT_ERROR
    if args.select is not None:
        config.select = args.select
    if args.extend_select:
        config.select = (config.select or ["TSL"]) + args.extend_select
    if args.ignore is not None:
        config.ignore = config.ignore + args.ignore
    if args.include_cold is not None:
        config.include_cold = args.include_cold
    config.hot_functions = config.hot_functions + args.hot_function
    for code in config.select + config.ignore:
        if not code.startswith("TSL"):
            print(f"torchsync-lint: error: {code!r} is not a code prefix like 'TSL' or 'TSL101'", file=sys.stderr)
            return EXIT_ERROR

    def note(msg: str) -> None:
        print(msg, file=sys.stderr)

    result = lint_paths(args.paths, config, jobs=args.jobs, on_note=note)
    for err in result.errors:
        print(str(err), file=sys.stderr)
    sys.stdout.write(render(args.format, result.findings, result.errors))
    if result.errors:
        return EXIT_ERROR
    if result.findings and not args.exit_zero:
        return EXIT_FINDINGS
    return EXIT_CLEAN
