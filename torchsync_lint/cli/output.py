"""Report formats: text, full (text with the source line and a caret), json, sarif (2.1.0), github
(workflow annotations); plus the summary line and ``--statistics``."""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field
from typing import Callable, Dict, List, Optional, Sequence

from torchsync_lint import __version__
from torchsync_lint.check.noqa import META_RULES
from torchsync_lint.finding import FileError, Finding
from torchsync_lint.run import settings

FORMATS = ("text", "full", "json", "sarif", "github")
DOCS_BASE = "https://github.com/torchsync-lint/torchsync-lint/blob/main/docs/"
DOCS_URL = DOCS_BASE + "rules/{code}.md"
FREQUENCY_ORDER = ("every-step", "periodic", "error-path", "once", "test")
FINGERPRINT_KEY = "torchsyncLint/v1"


@dataclass
class Extras:
    """What a renderer may add around the findings; every part is optional."""

    hidden: Counter = field(default_factory=Counter)  # frequency class -> findings not shown
    baseline: int = 0  # findings the baseline accepted (not shown)
    read_lines: Optional[Callable[[str], Optional[List[str]]]] = None  # for --output-format full
    color: bool = False
    summary: bool = True  # the closing "Found N ..." line (text formats)
    show_fixes: bool = False  # mark findings --fix would fix with [*]
    checked: bool = True  # some file was checked: a clean run says "All checks passed."


def rule_info() -> Dict[str, object]:
    """Code -> rule or meta rule, for names and messages (the rules' table: no rule imported)."""
    out: Dict[str, object] = dict(settings.rule_info())
    out.update({r.code: r for r in META_RULES})
    return out


def _verify_suffix(f: Finding) -> str:
    v = f.verify
    if not v:
        return ""
    status = v.get("status", "?")
    bits = [status]
    if v.get("stall_us") is not None:
        bits.append(f"stall {v['stall_us']:.0f} us")
    if v.get("syncs"):
        bits.append(f"{v['syncs']} sync(s)")
    if v.get("oracles"):
        bits.append("by " + "+".join(v["oracles"]))
    if v.get("reason"):
        bits.append(v["reason"])
    return " [" + ", ".join(bits) + "]"


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def summary_line(findings: Sequence[Finding], errors: Sequence[FileError], extras: Extras) -> str:
    """``Found 3 findings (2 hidden: 1 periodic, 1 once; 4 in the baseline; 1 fixable with --fix).``;
    empty when there is nothing at all to say."""
    hidden = sum(extras.hidden.values())
    if not findings and not hidden and not extras.baseline and not errors:
        return "All checks passed.\n" if extras.checked else ""
    parts = []
    if hidden:
        order = [k for k in FREQUENCY_ORDER if extras.hidden.get(k)] + sorted(
            k for k in extras.hidden if k not in FREQUENCY_ORDER and extras.hidden[k])
        parts.append(f"{hidden} hidden: " + ", ".join(f"{extras.hidden[k]} {k}" for k in order))
    if extras.baseline:
        parts.append(f"{extras.baseline} in the baseline")
    fixes = [f.fix for f in findings if getattr(f, "fix", None) is not None]
    safe = sum(1 for x in fixes if getattr(x, "applicability", "") == "safe")
    if safe:
        parts.append(f"{safe} fixable with --fix")
    if len(fixes) > safe:
        parts.append(f"{len(fixes) - safe} with --unsafe-fixes")
    if errors:
        parts.append(_plural(len(errors), "file error"))
    tail = f" ({'; '.join(parts)})" if parts else ""
    return f"Found {_plural(len(findings), 'finding')}{tail}.\n"


def _label(f: Finding) -> str:
    """`` [periodic]``: how often a finding's line runs, when not every step (see --include-cold)."""
    freq = getattr(f, "frequency", "every-step")
    return "" if freq == "every-step" else f" [{freq}]"


def _fixable(f: Finding, extras: Extras) -> str:
    """`` [*]`` before the message of a finding ``--fix`` would fix (with ``--show-fixes``)."""
    fix = getattr(f, "fix", None)
    return " [*]" if extras.show_fixes and fix is not None and getattr(fix, "applicability", "") == "safe" else ""


def _line(f: Finding, extras: Optional[Extras] = None) -> str:
    mark = _fixable(f, extras) if extras is not None else ""
    return f"{f.path}:{f.line}:{f.col}: {f.code}{mark} {f.message}{_label(f)}{_verify_suffix(f)}"


def text(findings: List[Finding], errors: List[FileError], extras: Extras) -> str:
    lines = [_line(f, extras) for f in findings]
    out = "\n".join(lines) + ("\n" if lines else "")
    return out + (summary_line(findings, errors, extras) if extras.summary else "")


def _paint(s: str, code: str, on: bool) -> str:
    return f"\x1b[{code}m{s}\x1b[0m" if on and s else s


def full(findings: List[Finding], errors: List[FileError], extras: Extras) -> str:
    """Ruff's full format: the finding, then its source line with a caret under the reported code."""
    c = extras.color
    out = []
    for f in findings:
        head = (f"{_paint(f.path, '1', c)}:{f.line}:{f.col}: {_paint(f.code, '1;31', c)} "
                f"{f.message}{_verify_suffix(f)}")
        out.append(head)
        lines = extras.read_lines(f.path) if extras.read_lines else None
        if lines and 1 <= f.line <= len(lines):
            src = lines[f.line - 1].rstrip("\r\n").expandtabs(1)
            end = f.end_col if f.end_line == f.line else len(src) + 1
            width = max(1, min(end, len(src) + 1) - f.col)
            gutter = " " * len(str(f.line))
            out.append(f"{gutter} |")
            out.append(f"{_paint(str(f.line), '34', c)} | {src}")
            out.append(f"{gutter} | {' ' * (f.col - 1)}{_paint('^' * width, '1;31', c)}")
        out.append("")
    body = "\n".join(out) + ("\n" if out else "")
    return body + (summary_line(findings, errors, extras) if extras.summary else "")


def as_json(findings: List[Finding], errors: List[FileError], extras: Extras) -> str:
    """One array: findings (``"type": "finding"``) then read/parse errors (``"type": "error"``)."""
    items = [{"type": "finding", **f.to_json()} for f in findings]
    items += [{"type": "error", "path": e.path, "line": e.line, "col": e.col, "message": e.message} for e in errors]
    return json.dumps(items, indent=2) + "\n"


def _help_uri(code: str, rule) -> str:
    page = getattr(rule, "page", None)  # a meta rule (TSL901) is documented on another page
    return DOCS_BASE + page if page else DOCS_URL.format(code=code)


def sarif(findings: List[Finding], errors: List[FileError], extras: Extras) -> str:
    rules = rule_info()
    used = sorted({f.code for f in findings})
    rule_index = {code: i for i, code in enumerate(used)}
    results = []
    for f in findings:
        res = {
            "ruleId": f.code,
            "ruleIndex": rule_index[f.code],
            "level": "warning",
            "message": {"text": f.message},
            "locations": [{
                "physicalLocation": {
                    "artifactLocation": {"uri": f.path.replace("\\", "/")},
                    "region": {"startLine": f.line, "startColumn": f.col,
                               "endLine": f.end_line, "endColumn": f.end_col},
                }
            }],
        }
        if f.fingerprint is not None:
            res["partialFingerprints"] = {FINGERPRINT_KEY: f.fingerprint}
        res["properties"] = {"frequency": f.frequency, "temperature": f.temperature}
        if f.verify is not None:
            res["properties"]["verify"] = f.verify
        results.append(res)
    notifications = [
        {"level": "error", "message": {"text": e.message},
         "locations": [{"physicalLocation": {"artifactLocation": {"uri": e.path.replace("\\", "/")},
                                             **({"region": {"startLine": e.line}} if e.line else {})}}]}
        for e in errors
    ]
    doc = {
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {
                "name": "torchsync-lint",
                "version": __version__,
                "informationUri": "https://github.com/torchsync-lint/torchsync-lint",
                "rules": [{
                    "id": code,
                    "name": rules[code].name if code in rules else code,
                    "shortDescription": {"text": rules[code].message if code in rules else code},
                    "helpUri": _help_uri(code, rules.get(code)),
                } for code in used],
            }},
            "results": results,
            "invocations": [{"executionSuccessful": not errors, "toolExecutionNotifications": notifications}],
        }],
    }
    return json.dumps(doc, indent=2) + "\n"


def _gh_escape(s: str, prop: bool = False) -> str:
    s = s.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")
    if prop:
        s = s.replace(":", "%3A").replace(",", "%2C")
    return s


def github(findings: List[Finding], errors: List[FileError], extras: Extras) -> str:
    out = []
    for f in findings:
        out.append(
            f"::warning file={_gh_escape(f.path, True)},line={f.line},col={f.col},endLine={f.end_line},"
            f"endColumn={f.end_col},title={f.code} {_gh_escape(f.name, True)}::"
            f"{_gh_escape(f.message + _label(f) + _verify_suffix(f))}"
        )
    for e in errors:
        loc = f",line={e.line}" if e.line else ""
        out.append(f"::error file={_gh_escape(e.path, True)}{loc},title=torchsync-lint::{_gh_escape(e.message)}")
    return "\n".join(out) + ("\n" if out else "")


RENDERERS = {"text": text, "full": full, "json": as_json, "sarif": sarif, "github": github}


def render(fmt: str, findings: List[Finding], errors: List[FileError], extras: Optional[Extras] = None) -> str:
    return RENDERERS[fmt](findings, errors, extras or Extras(summary=False))


def statistics(findings: Sequence[Finding], fmt: str = "text") -> str:
    """Findings per code, most frequent first (``--statistics``)."""
    counts = Counter(f.code for f in findings)
    names = {f.code: f.name for f in findings}
    rows = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
    if fmt == "json":
        return json.dumps([{"code": c, "name": names[c], "count": n} for c, n in rows], indent=2) + "\n"
    width = max((len(str(n)) for _, n in rows), default=1)
    return "".join(f"{n:>{width}}\t{c}\t{names[c]}\n" for c, n in rows)
