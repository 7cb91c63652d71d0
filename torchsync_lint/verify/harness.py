"""Run user code under the oracles (child process; ``torch`` is passed in).

A ``Snippet`` is one flagged statement compiled as the body of a function, at its real file name,
line and columns, so that stacks, line tracing and the parent's attribution see the user's file.
Its free names become the function's parameters (bound to synthesised values); everything else
resolves in the real module's globals (imports, constants, helper functions).
"""

from __future__ import annotations

import ast
import builtins
import gc
import symtable
import time
import types
from typing import Any, Callable, Dict, List, Optional, Tuple

from torchsync_lint.verify import oracles, timing
from torchsync_lint.verify import predict as predict_mode
from torchsync_lint.verify.synth import Plan, Synth, build_self, plans

WRAPPER = "__tsl_snippet__"


class SnippetError(Exception):
    pass


SYSTEM_ERROR = "error return without exception set"


def hook_artifact(exc: BaseException) -> bool:
    """CPython's ``SystemError: error return without exception set``: a C function returned an error
    with no exception, which happens to torch's bindings under a Python torch-function mode (the
    verifier's per-call timer, the CPU search's device redirect). Not the user's error: the run is
    repeated without that mode."""
    return isinstance(exc, SystemError) and SYSTEM_ERROR in str(exc)


def _error_text(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    return f"{type(exc).__name__}: {text}"[:300] if text else type(exc).__name__


def _positioned_body(src: str, line: int, col: int, compound: bool) -> List[ast.stmt]:
    """Parse a statement taken from (line, col) of a file so its nodes keep the file's positions."""
    text = src + ("\n" + " " * (col + 4) + "pass" if compound else "")
    if col > 0:
        tree = ast.parse("if True:\n" + " " * col + text)
        body = tree.body[0].body
        shift = line - 2
    else:
        tree = ast.parse(text)
        body = tree.body
        shift = line - 1
    for node in body:
        ast.increment_lineno(node, shift)
    return body


def _needed_names(fn_src: str) -> Tuple[List[str], bool]:
    """Names the statement reads before (or without) binding them, and whether it is a generator."""
    table = symtable.symtable(fn_src, "<snippet>", "exec")
    fn_table = next(t for t in table.get_children() if t.get_name() == WRAPPER)
    # `total += loss.item()`: symtable does not count the target as read, but it is
    out = {t.id for n in ast.walk(ast.parse(fn_src)) if isinstance(n, ast.AugAssign)
           for t in [n.target] if isinstance(t, ast.Name)}
    for sym in fn_table.get_symbols():
        if not sym.is_referenced():
            continue
        if sym.is_global() or sym.is_free() or (sym.is_local() and sym.is_assigned() and not sym.is_parameter()):
            out.add(sym.get_name())

    def nested(t):  # comprehensions and lambdas read the function's names from their own scopes
        for child in t.get_children():
            for sym in child.get_symbols():
                if sym.is_referenced() and (sym.is_global() or sym.is_free()) and not sym.is_declared_global():
                    out.add(sym.get_name())
            nested(child)

    nested(fn_table)
    return sorted(out), False


class Snippet:
    def __init__(self, src: str, line: int, col: int, compound: bool, filename: str,
                 specs: Dict[str, dict], module) -> None:
        self.filename = filename
        self.module = module
        self.line = line
        body = _positioned_body(src, line, col, compound)
        self.is_return = len(body) == 1 and isinstance(body[0], ast.Return)
        end = max(getattr(n, "end_lineno", line) or line for n in body)
        # which names need a value: ask symtable about the statement wrapped in a function
        probe = ast.parse(f"def {WRAPPER}():\n    pass").body[0]
        probe.body = body
        probe_src = ast.unparse(ast.Module(body=[probe], type_ignores=[]))
        needed, _ = _needed_names(probe_src)
        globs = vars(module) if module is not None else {}
        self.params = [n for n in needed
                       if n in specs or (n not in globs and not hasattr(builtins, n))]
        self.specs = specs
        self.observed: List[str] = []
        self.missing_ok = [n for n in needed if n not in self.params]
        header = ast.parse(f"def {WRAPPER}({', '.join(self.params)}):\n    pass").body[0]
        ret = ast.Return(value=ast.Call(func=ast.Name(id="locals", ctx=ast.Load()), args=[], keywords=[]))
        header.body = list(body) + [ret]
        for node in ast.walk(header.args):
            if hasattr(node, "lineno"):
                node.lineno = node.end_lineno = line
        header.lineno = line
        header.end_lineno = end
        ret.lineno = ret.end_lineno = end
        ret.col_offset = ret.end_col_offset = 0
        mod = ast.Module(body=[header], type_ignores=[])
        ast.fix_missing_locations(mod)
        code = compile(mod, filename, "exec")
        fcode = next(c for c in code.co_consts if isinstance(c, types.CodeType))
        self.is_generator = bool(fcode.co_flags & 0x20)
        self.fn = types.FunctionType(fcode, globs if module is not None else {"__builtins__": builtins})

    def bindings(self, torch, plan: Plan, device: str, self_spec: Optional[dict], self_cache: dict,
                 seed: int = 0) -> Tuple[Dict[str, Any], List[str]]:
        synth = Synth(torch, plan, device, seed)
        globs = vars(self.module) if self.module is not None else {}
        out: Dict[str, Any] = {}
        for name in self.params:
            spec = self.specs.get(name)
            if spec and spec.get("kind") == "self":
                out[name] = build_self(torch, self.module, self_spec or {}, synth, self_cache)
            elif spec and spec.get("kind") == "unavailable":
                raise SnippetError(spec.get("reason") or f"no value for {name!r}")
            elif spec and spec.get("kind") == "import":
                ns: Dict[str, Any] = {}
                exec(spec["src"], dict(globs), ns)  # noqa: S102 - the user's own import statement
                out[name] = ns.get(name)
            elif spec and spec.get("kind") == "class":
                from torchsync_lint.verify.synth import resolve_qualname

                out[name] = resolve_qualname(self.module, spec.get("class") or "")
            else:
                out[name] = synth.value(spec, name, globs)
        self.observed = list(synth.observed)
        return out, synth.guessed

    def call(self, bound: Dict[str, Any]):
        result = self.fn(**bound)
        if self.is_generator:
            result = list(result)
        return result


def search_plan(torch, snippet: Snippet, self_spec, self_cache, has_unknown: bool,
                budget_s: float = 8.0) -> Tuple[Optional[Plan], List[str], List[str], int]:
    """The first plan under which the statement runs on the CPU: (plan, guessed, errors, tried)."""
    errors: List[str] = []
    deadline = time.monotonic() + budget_s
    tried = 0
    for plan in plans(has_unknown):
        if time.monotonic() > deadline:
            break
        tried += 1
        # on the CPU, `.cuda()` and device="cuda" in the user's code mean the CPU
        try:
            bound, guessed = _cpu_try(torch, snippet, plan, self_spec, self_cache, redirect=True)
        except SnippetError:
            raise
        except Exception as exc:
            if not hook_artifact(exc):
                errors.append(str(exc) if isinstance(exc, _InputError) else _error_text(exc))
                continue
            try:  # the redirect mode broke a binding: again without it
                bound, guessed = _cpu_try(torch, snippet, plan, self_spec, self_cache, redirect=False)
            except SnippetError:
                raise
            except Exception as exc2:
                errors.append(str(exc2) if isinstance(exc2, _InputError) else _error_text(exc2))
                continue
        return plan, guessed, errors, tried
    return None, [], errors, tried


class _InputError(Exception):
    pass


def _cpu_try(torch, snippet: Snippet, plan, self_spec, self_cache, redirect: bool):
    import contextlib

    ctx = contextlib.ExitStack()
    if redirect:
        ctx.enter_context(predict_mode.make_device_redirect(torch, gpu="cpu"))
    if _default_device_type(torch) != "cpu":
        # the library set a CUDA default device (deepxde does, on import): on the CPU search the
        # factories it reaches without a device must make CPU tensors too (innermost mode: first)
        ctx.enter_context(torch.device("cpu"))
    with ctx:
        try:
            bound, guessed = snippet.bindings(torch, plan, "cpu", self_spec, self_cache)
        except SnippetError:
            raise
        except Exception as exc:
            if hook_artifact(exc):
                raise
            raise _InputError("inputs: " + _error_text(exc)) from exc
        snippet.call(bound)
    return bound, guessed


def _default_device_type(torch) -> str:
    get = getattr(torch, "get_default_device", None)
    try:
        return get().type if get is not None else "cpu"
    except Exception:  # noqa: BLE001
        return "cpu"


def most_common(errors: List[str]) -> str:
    if not errors:
        return "no input plan could be built"
    counts: Dict[str, int] = {}
    for e in errors:
        key = e.split(":")[0]
        counts[key] = counts.get(key, 0) + 1
    top = max(counts, key=counts.get)
    example = next(e for e in errors if e.split(":")[0] == top)
    return example


def _in_span(path: str, line, span) -> bool:
    return path == span[0] and line is not None and span[1] <= line <= span[2]


def events_in_span(events, span) -> bool:
    """Did an event oracle see a sync with a frame on the statement (the child's own quick check)?"""
    return any(_in_span(fr[0], fr[1], span) for e in events for fr in e.get("frames", []))


def timed_in_span(lines, span, sleep_us: float, share: float = 0.4) -> bool:
    return any(_in_span(path, line, span) and any(x > share * sleep_us for x in excess)
               for path, line, excess, *_ in lines)


def measure(torch, roots, prepare: Callable[[], Any], run: Callable[[Any], Any], traced: set, clock,
            reps: int = 3, warmup: int = 1, span=None, long_clock=None) -> Dict[str, Any]:
    """Warm up, observe once with the debug mode, GPU trace and stderr, then time per line.

    ``prepare()`` makes the inputs of one run outside every measurement (fresh values, since a
    statement may change them in place); ``run(inputs)`` is what gets measured.

    With ``span`` (path, first line, last line) and a ``long_clock`` (snippet mode), ``clock`` is a
    short sleep: when the event oracles already saw a sync on the statement one timed repetition
    confirms it; when that repetition does not show the wait (the statement's own host work before
    the sync outlasted the short sleep), all repetitions run again with the long sleep.
    """
    out: Dict[str, Any] = {"error": None}

    def fresh():
        inputs = prepare()
        torch.cuda.synchronize()
        return inputs

    def observe(per_call_timer: bool):
        log = oracles.EventLog()
        inputs = fresh()
        error = None
        try:
            with oracles.Observer(torch, roots, log, per_call_timer=per_call_timer):
                run(inputs)
        except Exception as exc:
            error = exc
        torch.cuda.synchronize()
        return log, error

    for _ in range(warmup):
        try:
            run(fresh())
        except Exception as exc:
            out["error"] = _error_text(exc)
        torch.cuda.synchronize()
    gc_was = gc.isenabled()
    gc.disable()
    try:
        log, error = observe(True)
        if error is not None and hook_artifact(error):
            log, error = observe(False)  # the per-call timer's mode broke a binding: observe without it
            out["observed_without_timer"] = True
        out["error"] = _error_text(error) if error is not None else None
        out["events"] = log.syncs

        def timed(clk, n):
            base_runs, sleep_runs = [], []
            executed = set()
            for _ in range(n):
                for clocked, runs in ((None, base_runs), (clk, sleep_runs)):
                    inputs = fresh()
                    timer = timing.LineTimer(traced, roots, clocked)
                    try:
                        timer.run(lambda: run(inputs))
                    except Exception:
                        pass
                    runs.append(timer.durations)
                    if clocked is None:
                        executed.update(k for k in timer.durations if k[0])
            return timing.line_excess(base_runs, sleep_runs), executed

        seen = span is not None and events_in_span(log.syncs, span)
        lines, executed = timed(clock, 1 if seen and long_clock is not None else reps)
        if seen and long_clock is not None and not timed_in_span(lines, span, clock.sleep_s * 1e6):
            clock = long_clock
            lines, executed = timed(clock, reps)
        out["lines"] = lines
        out["executed"] = sorted([list(k) for k in executed])
        out["sleep_us"] = round(clock.sleep_s * 1e6, 1)
    finally:
        if gc_was:
            gc.enable()
    return out


def predict(torch, roots, make_call: Callable[[], Callable[[], Any]], gpu: str = "meta") -> Dict[str, Any]:
    """Run under FakeTensorMode with the meta device as the GPU; record what would sync.

    Whole entry points (models built with ``.to("cuda")``) run with the CPU standing in for the
    GPU instead: fake parameters cannot move devices, and data-dependent ops raise the same.
    """
    from torch._subclasses.fake_tensor import FakeTensorMode

    log = oracles.EventLog()
    out: Dict[str, Any] = {"error": None}
    fake = FakeTensorMode(allow_non_fake_inputs=True)
    if gpu == "cpu":  # fake parameters cannot be swapped by Module.to: keep modules where they are
        Module = torch.nn.Module
        real_to = Module.to

        def to(self, *args, **kwargs):
            dev = [a for a in args if isinstance(a, (str, torch.device))] + [kwargs.get("device")]
            if any(d is not None and str(d).startswith("cuda") for d in dev) and not any(
                    isinstance(a, torch.dtype) for a in list(args) + [kwargs.get("dtype")]):
                return self
            return real_to(self, *args, **kwargs)

        Module.to = to
        Module.cuda = lambda self, *a, **k: self
    with fake, predict_mode.make_device_redirect(torch, gpu=gpu):
        call = make_call()
        try:
            with predict_mode.make_recorder(torch, roots, log, gpu=gpu):
                call()
        except Exception as exc:
            name = type(exc).__name__
            if name not in ("DataDependentOutputException", "DynamicOutputShapeException"):
                out["error"] = _error_text(exc)
            else:
                out["stopped_at"] = _error_text(exc)
    out["events"] = log.syncs
    return out


# ---------------------------------------------------------------------------------------------
# comparing a statement with its rewrite


def same_values(torch, a, b, depth: int = 0) -> Tuple[bool, str]:
    if depth > 6:
        return True, ""
    if isinstance(a, dict) and isinstance(b, dict):
        for key in a.keys() & b.keys():
            if key.startswith("__"):
                continue
            ok, why = same_values(torch, a[key], b[key], depth + 1)
            if not ok:
                return False, f"{key}: {why}"
        return True, ""
    ta, tb = isinstance(a, torch.Tensor), isinstance(b, torch.Tensor)
    if ta or tb:
        try:
            x = a.detach().cpu() if ta else torch.as_tensor(a)
            y = b.detach().cpu() if tb else torch.as_tensor(b)
            if x.shape != y.shape and x.numel() == y.numel() == 1:
                x, y = x.reshape(()), y.reshape(())
            if x.shape != y.shape:
                return False, f"shape {tuple(x.shape)} vs {tuple(y.shape)}"
            if x.dtype.is_floating_point or y.dtype.is_floating_point:
                ok = torch.allclose(x.double(), y.double(), rtol=1e-5, atol=1e-6, equal_nan=True)
            else:
                ok = torch.equal(x.long(), y.long())
            return ok, "" if ok else "values differ"
        except Exception as exc:
            return False, _error_text(exc)
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        if len(a) != len(b):
            return False, "lengths differ"
        for x, y in zip(a, b):
            ok, why = same_values(torch, x, y, depth + 1)
            if not ok:
                return False, why
        return True, ""
    if isinstance(a, (int, float, bool)) and isinstance(b, (int, float, bool)):
        return abs(float(a) - float(b)) <= 1e-6 * max(1.0, abs(float(a))), "values differ"
    return True, ""
