"""``--explain CODE`` and ``--list-rules``: a rule's documentation page, or every rule on a line.
Imported when one of them is asked for: they read the rules themselves (their docstrings), which
a lint answered from the cache never loads."""

from __future__ import annotations

import sys

from torchsync_lint.check.noqa import META_RULES
from torchsync_lint.cli.docgen import meta_markdown, rule_markdown
from torchsync_lint.cli.report import EXIT_CLEAN, error
from torchsync_lint.rules.registry import all_rules, rule_by_key


def explain(key: str) -> int:
    for meta in META_RULES:  # codes about comments (TSL901): listed by --list-rules, explained here
        if key.upper() == meta.code or key == meta.name:
            sys.stdout.write(meta_markdown(meta))
            return EXIT_CLEAN
    try:
        rule = rule_by_key(key)
    except KeyError:
        return error(f"unknown rule {key!r} (see --list-rules)")
    sys.stdout.write(rule_markdown(rule))
    return EXIT_CLEAN


def list_rules() -> int:
    rules = {**all_rules(), **{r.code: r for r in META_RULES}}
    for code, rule in sorted(rules.items()):
        flag = "" if rule.default_enabled else " (off by default)"
        print(f"{code}  {rule.name:32} {rule.message}{flag}")
    return EXIT_CLEAN
