"""One snippet task in the child: compile, find inputs on the CPU, measure on the GPU (or predict).

Returns raw evidence (events with stacks, per-line timing, errors); the parent decides the status.
"""

from __future__ import annotations

import json
import os
from typing import Any, Dict, Optional

from torchsync_lint.verify import harness
from torchsync_lint.verify.synth import plans

POISON = ("device-side assert", "CUDA error: an illegal", "CUDA error: unspecified launch failure")


def _compile(task: dict, part: dict, module, extra_specs: Optional[dict] = None):
    specs = dict(task.get("specs") or {})
    specs.update(extra_specs or {})
    return harness.Snippet(part["src"], part["line"], part["col"], bool(part.get("compound")),
                           task["path"], specs, module)


def _has_unknown(snip: harness.Snippet) -> bool:
    for name in snip.params:
        spec = snip.specs.get(name)
        if spec is None or spec.get("kind") == "unknown":
            return True
    return False


def _evidence(child, snip: harness.Snippet, task: dict, plan, seed: int = 0) -> Dict[str, Any]:
    """Measure one snippet under one plan on the GPU, or predict it on the CPU."""
    torch = child.torch
    self_spec = task.get("self")
    cache: dict = {}
    if child.mode == "predict":
        def make_call():
            bound, _ = snip.bindings(torch, plan, "meta", self_spec, {}, seed)
            return lambda: snip.call(bound)
        try:
            return harness.predict(torch, child.roots, make_call)
        except Exception as exc:
            return {"error": harness._error_text(exc), "events": []}

    def prepare():
        bound, _ = snip.bindings(torch, plan, "cuda", self_spec, cache, seed)
        return bound

    reps = int(child.settings.get("reps", 3))
    return harness.measure(torch, child.roots, prepare, snip.call, {task["path"]}, child.clock,
                           reps=reps, warmup=1, span=_span(task, snip), long_clock=child.long_clock)


def _span(task: dict, snip: harness.Snippet):
    """(real path, first line, last line) of the statement: where its own syncs land."""
    stmt = task.get("stmt") or {}
    first = int(stmt.get("line", snip.line))
    return os.path.realpath(task["path"]), first, first + str(stmt.get("src", "")).count("\n")


def _poisoned(out: Dict[str, Any]) -> bool:
    err = out.get("error") or ""
    return any(p in err for p in POISON)


def statement_key(task: dict) -> Optional[str]:
    """What the statement's measurement depends on (its file, the statement, the inputs' specs and
    ``self``): findings of one statement with one key share one measurement (``run_task(shared=)``);
    None for a task with a rewrite to check (``--verify-fixes``: measured per finding)."""
    if task.get("fix"):
        return None
    return json.dumps([task.get("path"), task.get("stmt"), task.get("specs"), task.get("self")], sort_keys=True,
                      default=str)


def run_task(child, module, task: dict, shared: Optional[Dict[str, tuple]] = None) -> Dict[str, Any]:
    """One finding's task. ``shared``: the statements measured before in this child, by
    ``statement_key``: another finding of the same statement (two flagged calls on one line) takes
    that measurement (the parent attributes its events to each finding by column) and measures only
    its own expression, where the statement did not run."""
    key = statement_key(task) if shared is not None else None
    if key is not None and key in shared:
        first, plan, snip = shared[key]
        result = dict(first, shared=True)
    else:
        result, plan, snip, final = _statement(child, module, task)
        if final:
            return result
        if key is not None:
            shared[key] = (dict(result), plan, snip)
    return _rest(child, module, task, result, plan, snip)


def _statement(child, module, task: dict):
    """(result, plan, snippet, final): the statement measured on its inputs; ``final``: nothing
    more to do (it did not compile, no inputs, or the CUDA context broke)."""
    torch = child.torch
    result: Dict[str, Any] = {}
    try:
        snip = _compile(task, task["stmt"], module)
    except SyntaxError as exc:
        return {"failure": f"cannot compile the statement alone: {exc.msg}"}, None, None, True
    try:
        plan, guessed, errors, tried = harness.search_plan(torch, snip, task.get("self"), {}, _has_unknown(snip),
                                                           float(child.settings.get("plan_budget_s", 8.0)))
    except harness.SnippetError as exc:
        return {"failure": str(exc)}, None, snip, True
    result.update(plans_tried=tried, guessed=sorted(set(guessed)), observed=sorted(set(snip.observed)))
    if plan is None:
        result["cpu_error"] = harness.most_common(errors)
    use = plan or plans(_has_unknown(snip))[0]
    result["plan"] = use.describe()
    out = _evidence(child, snip, task, use)
    result.update(out)
    result["ran"] = plan is not None and not out.get("error")
    if child.mode != "predict" and _poisoned(out):
        result["poisoned"] = True
        return result, plan, snip, True
    return result, plan, snip, False


def _rest(child, module, task: dict, result: Dict[str, Any], plan, snip) -> Dict[str, Any]:
    """The flagged expression alone (where the statement did not run) and the rewrite."""
    if not result["ran"] and task.get("expr"):
        result["expr"] = _expression(child, module, task)
        if result["expr"].get("poisoned"):
            result["poisoned"] = True
            return result
    fix = task.get("fix")
    if fix and fix.get("src") and child.mode != "predict" and plan is not None:
        result["fix"] = _fix(child, module, task, snip, plan)
    return result


def _expression(child, module, task: dict) -> Dict[str, Any]:
    """The flagged expression alone: a sync seen here confirms; nothing seen proves nothing."""
    torch = child.torch
    try:
        snip = _compile(task, task["expr"], module)
        plan, x_guessed, errors, tried = harness.search_plan(torch, snip, task.get("self"), {}, _has_unknown(snip),
                                                     float(child.settings.get("plan_budget_s", 8.0)) / 2)
    except (SyntaxError, harness.SnippetError) as exc:
        return {"error": harness._error_text(exc), "events": []}
    if plan is None:
        return {"error": harness.most_common(errors), "events": [], "plans_tried": tried}
    out = _evidence(child, snip, task, plan)
    out["plan"] = plan.describe()
    out["guessed"] = sorted(set(x_guessed))
    out["poisoned"] = child.mode != "predict" and _poisoned(out)
    return out


def _fix(child, module, task: dict, original: harness.Snippet, plan) -> Dict[str, Any]:
    """The rule's rewrite on the same inputs: sync-free (same oracles) and the same values."""
    torch = child.torch
    fix = task["fix"]
    try:
        snip = _compile(task, fix, module, {"torch": {"kind": "import", "src": "import torch"}})
    except SyntaxError as exc:
        return {"error": f"rewrite does not compile: {exc.msg}"}
    out = _evidence(child, snip, task, plan)
    try:
        cache: dict = {}
        a_in, _ = original.bindings(torch, plan, "cuda", task.get("self"), cache, seed=7)
        a = original.call(a_in)
        b_in, _ = snip.bindings(torch, plan, "cuda", task.get("self"), cache, seed=7)
        b = snip.call(b_in)
        torch.cuda.synchronize()
        same, why = harness.same_values(torch, a, b)
        out["same_values"] = same
        if not same:
            out["difference"] = why
    except Exception as exc:
        out["same_values"] = None
        out["difference"] = harness._error_text(exc)
    return out
