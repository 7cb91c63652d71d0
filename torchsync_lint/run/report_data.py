"""A file's report as plain data, for the cache (JSON: nothing in a cache folder is executed), and
the report read back from a cache entry (``from_cache``).

Everything ``check.report.FileReport`` holds, the ``# noqa`` table of a file with findings included
(it follows from the source alone, which is part of the key; tokenizing the file again on every
hit cost a tenth of a warm run). Nothing here imports the parser or the rules: a run answered from
the cache never loads them.
"""

from __future__ import annotations

import dataclasses
import json
from typing import Any, Dict, Optional

from torchsync_lint.check.noqa import Suppressions
from torchsync_lint.check.report import FileReport
from torchsync_lint.finding import FileError, Finding, Fix, Hoist
from torchsync_lint.inference.callgraph import summary_from_data, summary_to_data
from torchsync_lint.inference.values import Value, from_data, to_data
from torchsync_lint.run.cache import ReportCache

FORMAT = 3
_FINDING_FIELDS = ("path", "line", "col", "end_line", "end_col", "code", "name", "message", "function",
                   "temperature", "frequency")


_DECODED: Dict[str, Value] = {}  # a value's JSON text -> the value (frozen: shared safely)
_ENCODE = json.JSONEncoder(separators=(",", ":")).encode


def _value(d: dict) -> Value:
    """``from_data(d)``, memoised by its JSON text: a run's cached reports repeat a few hundred
    values thousands of times (a leaf edit's re-run on torchvision read 2,073 resolved
    references, 349 distinct values: 0.11 s decoded one by one, 0.02 s so)."""
    k = _ENCODE(d)
    got = _DECODED.get(k)
    if got is None:
        if len(_DECODED) >= 65536:  # a long-lived process (the language server) stays bounded
            _DECODED.clear()
        got = _DECODED[k] = from_data(d)
    return got


def _ref_to_data(ref: tuple) -> list:
    # a reference may hold another one (a handed function's target) with values inside it
    return [to_data(x) if isinstance(x, Value) else _ref_to_data(x) if isinstance(x, tuple) else x for x in ref]


def _ref_from_data(items: list) -> tuple:
    # JSON gave back the tuples inside a reference (a handed function's target) as lists: a
    # list left in would make the reference unhashable and the whole entry unreadable
    return tuple(_value(x) if isinstance(x, dict) else _ref_from_data(x) if isinstance(x, list) else x
                 for x in items)


def _fix_to_data(fix: Any) -> Optional[dict]:
    return dataclasses.asdict(fix) if fix is not None and dataclasses.is_dataclass(fix) else None


def _fix_from_data(d: Optional[dict]) -> Any:
    if d is None:
        return None
    d = dict(d)
    hoist = d.pop("hoist", None)
    d["imports"] = tuple(d.get("imports", ()))
    return Fix(**d, hoist=Hoist(**hoist) if hoist else None)


def to_json(report) -> Dict[str, Any]:
    return {
        "format": FORMAT,
        "path": report.path,
        "findings": [dict({k: getattr(f, k) for k in _FINDING_FIELDS}, fix=_fix_to_data(f.fix))
                     for f in report.findings],
        "hot_only": report.hot_only,
        "cold_only": report.cold_only,
        "cold": report.cold,
        "loop_hot": report.loop_hot,
        "frequency": report.frequency,
        "summary": summary_to_data(report.summary) if report.summary is not None else None,
        "error": dataclasses.asdict(report.error) if report.error is not None else None,
        "note": report.note,
        "noqa": report.noqa.to_data() if report.noqa is not None else None,
        "interface": report.interface,
        "refs": [_ref_to_data(r) for r in sorted(report.refs, key=repr)],
        "open_params": sorted(report.open_params),
        "ref_values": [[_ref_to_data(r), to_data(v)] for r, v in sorted(report.ref_values.items(), key=repr)],
    }


def from_json(d: Dict[str, Any], report_class, final: bool = False):
    """The report, or ValueError for data of another format (the caller checks the file again).
    ``final``: for a run that only reports it (``project_index.stored_run``): without what the
    project pass reads (references met, what they resolved to, open parameters, interface)."""
    if not isinstance(d, dict) or d.get("format") != FORMAT:
        raise ValueError("not a report of this version")
    findings = []
    for f in d["findings"]:
        fix = _fix_from_data(f.get("fix"))
        findings.append(Finding(**{k: f[k] for k in _FINDING_FIELDS}, fix=fix))
    return report_class(
        path=d["path"],
        findings=findings,
        hot_only=dict(d["hot_only"]),
        cold_only=dict(d.get("cold_only") or {}),
        cold=list(d["cold"]),
        loop_hot=list(d["loop_hot"]),
        frequency=list(d["frequency"]),
        summary=summary_from_data(d["summary"]) if d["summary"] is not None else None,
        error=FileError(**d["error"]) if d["error"] is not None else None,
        note=d["note"],
        noqa=Suppressions.from_data(d["noqa"]) if d["noqa"] is not None else None,
        interface=None if final else d["interface"],
        refs=set() if final else {_ref_from_data(r) for r in d["refs"]},
        open_params=set() if final else set(d["open_params"]),
        ref_values={} if final else {_ref_from_data(r): _value(v) for r, v in d["ref_values"]},
    )


def from_cache(store: ReportCache, k: str, project=None, final: bool = False) -> Optional[FileReport]:
    """The report stored under ``k``; an entry kept with its dependencies is valid only where
    ``project`` (a ``tracked_project.TrackedProject``) answers them alike (without a project: read
    by a caller that checked otherwise)."""
    hit = store.get(k)
    if hit is None:
        return None
    try:
        if "deps" in hit:
            if project is not None and not project.matches(hit["deps"]):
                return None
            hit = hit["report"]
        report = from_json(hit, FileReport, final)
        report.cache_key = k
        return report
    except Exception:  # a corrupt entry: check the file again and overwrite it
        return None
