"""Report formats: text, json, sarif (2.1.0), github (workflow annotations)."""

from __future__ import annotations

import json
from typing import List

from torchsync_lint import __version__
from torchsync_lint.finding import FileError, Finding
from torchsync_lint.registry import all_rules

FORMATS = ("text", "json", "sarif", "github")
DOCS_URL = "https://github.com/torchsync-lint/torchsync-lint/blob/main/docs/rules/{code}.md"


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


def text(findings: List[Finding], errors: List[FileError]) -> str:
    lines = [f"{f.path}:{f.line}:{f.col}: {f.code} {f.message}{_verify_suffix(f)}" for f in findings]
    return "\n".join(lines) + ("\n" if lines else "")


def as_json(findings: List[Finding], errors: List[FileError]) -> str:
    return json.dumps([f.to_json() for f in findings], indent=2) + "\n"


def sarif(findings: List[Finding], errors: List[FileError]) -> str:
    rules = all_rules()
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
        if f.verify is not None:
            res["properties"] = {"verify": f.verify}
        results.append(res)
    notifications = [
        {"level": "error", "message": {"text": e.message},
         "locations": [{"physicalLocation": {"artifactLocation": {"uri": e.path},
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
                    "helpUri": DOCS_URL.format(code=code),
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


def github(findings: List[Finding], errors: List[FileError]) -> str:
    out = []
    for f in findings:
        out.append(
            f"::warning file={_gh_escape(f.path, True)},line={f.line},col={f.col},endLine={f.end_line},"
            f"endColumn={f.end_col},title={f.code} {_gh_escape(f.name, True)}::{_gh_escape(f.message + _verify_suffix(f))}"
        )
    for e in errors:
        loc = f",line={e.line}" if e.line else ""
        out.append(f"::error file={_gh_escape(e.path, True)}{loc},title=torchsync-lint::{_gh_escape(e.message)}")
    return "\n".join(out) + ("\n" if out else "")


RENDERERS = {"text": text, "json": as_json, "sarif": sarif, "github": github}


def render(fmt: str, findings: List[Finding], errors: List[FileError]) -> str:
    return RENDERERS[fmt](findings, errors)
