"""A file's interface: what other files may ask of it, as plain data (cached as JSON).

Computed once per file from its index and an evaluator with no project (what it cannot see
stays a reference, resolved later by ``project.Project``):

- ``aliases``: the import table (re-exports, ``import a.b as c``);
- ``stars`` and ``all``: the modules it star-imports and its literal ``__all__`` (``inference.stars``);
- ``functions``: key -> the value each function or method returns;
- ``classes``: key -> bases (qualified), methods (name -> key), values stored on ``self``;
- ``values``: module-level names -> values;
- ``calls``: what this file passes to functions and classes it imports ([name, args, kwargs]),
  so a parameter left unannotated takes the join of its call sites in every file;
- ``summary``: the call-graph facts for hot paths (``hotness.FileSummary``).
"""

from __future__ import annotations

from typing import Dict, List, Optional

import libcst as cst

from torchsync_lint.inference import by_name
from torchsync_lint.inference import torch_facts as facts
from torchsync_lint.inference.evaluate import EXTERNAL_ROOTS, Evaluator
from torchsync_lint.inference.dispatch import dispatched_calls
from torchsync_lint.inference.callgraph import FileSummary, summary_from_data, summary_to_data  # noqa: F401
from torchsync_lint.inference.switches import own_log_prob, turns_validation_off
from torchsync_lint.inference.defs import bound_names, declared_all, generated_fields, is_property, positional_params
from torchsync_lint.inference.index import FileIndex
from torchsync_lint.inference.values import (
    ITEMS,
    DEVICE,
    DTYPE,
    MODULE,
    NDARRAY,
    NONE,
    NUMBER,
    OBJECT,
    SELF,
    STR,
    TENSOR,
    UNKNOWN,
    Value,
    to_data,
)

FORMAT = 1
_MAX_CALL_ARGS = 12


# returns that tensors in the parameters do not change (a count, a name, a device, an object)
_SETTLED = frozenset((NUMBER, STR, NONE, DEVICE, DTYPE, SELF, NDARRAY, OBJECT, MODULE))


def _keep(v: Value) -> bool:
    return (v.kind != UNKNOWN or v.ref is not None) and v.kind != SELF


def extract(index: FileIndex, evaluator: Evaluator, summary: Optional[FileSummary]) -> dict:
    functions: Dict[str, dict] = {}
    variants = {}  # evaluators that assume tensors in unknown parameters, made when needed
    for key, f in index.functions.items():
        ret = evaluator.returns(f)
        entry = functions[key] = {"returns": to_data(ret)} if _keep(ret) or ret.kind == NONE else {}
        handed = _param_calls(index, evaluator, f)
        if handed:
            entry["param_calls"] = handed
        host = evaluator.host_params(f)
        if host:
            entry["host_params"] = [list(p) for p in host]  # handed to numpy: callers' arguments too
        if not f.returns or ret.kind in _SETTLED or not any(v.kind == UNKNOWN for v in evaluator.params(f).values()):
            continue
        # a tensor result only needs the host variant, and only while its device is open
        flags = (("cpu", "cpu"),) if ret.kind == TENSOR else (("t", "any"), ("cpu", "cpu"))
        if ret.kind == TENSOR and ret.device is not None:
            flags = ()
        for flag, assume in flags:
            if flag not in variants:
                variants[flag] = evaluator.host_variant() if assume == "cpu" else Evaluator(
                    index, evaluator.hot_functions, project=evaluator.project, assume_params=assume)
            alt = variants[flag].returns(f)
            if alt != ret and _keep(alt):
                entry["returns_" + flag] = to_data(alt)
    classes: Dict[str, dict] = {}
    for cls in index.classes.values():
        attrs = {}
        # what instances hold: attributes methods assign, buffers, and the class body's fields and
        # values (`loss: Tensor` of a dataclass, `weights = torch.linspace(...)`)
        body = sorted((set(cls.class_fields) | set(cls.class_attrs)) - set(cls.attrs) - set(cls.buffers))
        # and properties, which read as what they return
        props = sorted(n for n, m in cls.methods.items() if n not in cls.attrs and is_property(m, index.aliases.qualify))
        kept = [ITEMS] if cls.items else []  # `self[DATA] = t` of a dict subclass
        for name in list(cls.attrs) + sorted(cls.buffers) + body + props + kept:
            v = evaluator.self_attr(cls, name)
            if _keep(v):
                attrs[name] = to_data(v)
        classes[cls.key] = {
            "bases": [_base_key(index, b) for b in cls.bases],
            "methods": {n: m.key for n, m in cls.methods.items()},
            "attrs": attrs,
        }
        fields = generated_fields(cls, index.aliases.qualify)
        if fields:
            classes[cls.key]["fields"] = list(fields)
    values = {}
    for name, v in evaluator.module_scope().values.items():
        if _keep(v):
            values[name] = to_data(v)
    calls: List[list] = []
    for q, caller, call in index.ext_calls:
        if q.split(".")[0] in EXTERNAL_ROOTS or len(call.args) > _MAX_CALL_ARGS:
            continue
        calls.append([q, *_call_data(evaluator, caller, call)])
    calls.extend(_method_calls(index, evaluator))
    calls.extend(dispatched_calls(index, evaluator))
    calls.extend(_handed_on_calls(index, evaluator))
    return {
        "format": FORMAT,
        "module": index.module_name,
        "aliases": dict(index.aliases.map),
        "stars": list(index.aliases.stars),
        "all": declared_all(index.module_bindings),
        "functions": functions,
        "classes": classes,
        "values": values,
        "calls": calls,
        "sets_default_device": evaluator.sets_default_device(),
        "validation_off": turns_validation_off(index),
        "own_log_prob": own_log_prob(index),
        "summary": summary_to_data(summary) if summary is not None else None,
    }


def _method_calls(index: FileIndex, evaluator: Evaluator) -> List[list]:
    """``obj.method(args)`` and ``self.sub(args)`` where the receiver is an instance of a class of
    another file (or a reference the project resolves): ["@method", receiver, name, args, kwargs],
    so that method's parameters take what this file passes; where the receiver is of unknown kind,
    ["@name", name, args, kwargs] (the project's methods of that name, ``by_name``)."""
    out: List[list] = []
    for key, sites in index.call_sites.items():
        tensor_method = False
        if key.startswith("."):
            name = key[1:]
            tensor_method = facts.method(name) is not None  # never a project class's, but through super()
        elif key.startswith("self."):
            name = "__call__"
        else:
            continue
        for site in sites:
            call = site.call
            if not call.args or len(call.args) > _MAX_CALL_ARGS or any(a.star for a in call.args):
                continue
            base = _super_base(index, site) if key.startswith(".") else None
            if base is not None:
                # `super().__init__(table, device="cuda")` into a class of another file
                args, kwargs = _arguments(evaluator, site.caller, call)
                if any(_informative_argument(v) for v in list(args) + list(kwargs.values())):
                    out.append(["@method", to_data(Value(OBJECT, cls=base)), name, [to_data(v) for v in args],
                                {k: to_data(v) for k, v in kwargs.items()}])
                continue
            if tensor_method:
                continue
            recv_expr = call.func.value if key.startswith(".") else call.func
            scope = evaluator.summary_scope(site.caller) if site.caller is not None else evaluator.module_scope()
            recv = evaluator.infer(recv_expr, scope)
            own = site.caller.cls if site.caller is not None else None
            if (key.startswith("self.") and own is not None and recv.kind not in (MODULE, OBJECT)
                    and key[5:] not in own.attrs):
                # `self.process(batch)`: a method of the class, which subclasses in other files
                # may override; the project hands the arguments to every override
                args, kwargs = _arguments(evaluator, site.caller, call)
                if any(_informative_argument(v) for v in list(args) + list(kwargs.values())):
                    out.append(["@self", own.key, key[5:], [to_data(v) for v in args],
                                {k: to_data(v) for k, v in kwargs.items()}])
                continue
            if (recv.kind == SELF and key.startswith(".") and own is not None and name not in own.methods
                    and type(recv_expr) is cst.Name and recv_expr.value in ("cls", "self")):
                # `cls._to_tensor(data, device=device)` of a method a base class in another file defines
                args, kwargs = _arguments(evaluator, site.caller, call)
                out.append(["@method", to_data(Value(OBJECT, cls=own.key)), name, [to_data(v) for v in args],
                            {k: to_data(v) for k, v in kwargs.items()}])
                continue
            # an instance of one of several classes (`for cb in self.callbacks`): placed by name too
            unplaced = recv.kind == UNKNOWN and recv.ref is None or recv.kind in (MODULE, OBJECT) and recv.cls is None
            if recv.kind in (MODULE, OBJECT) and recv.cls is not None:
                if recv.cls.startswith("torch."):
                    # declared as torch's base class (`processor: nn.Module`) and asked for a method
                    # the base lacks: one of the project's subclasses runs, found by name
                    if not by_name.eligible(name):
                        continue
                    unplaced = True
                elif evaluator._local_class(recv.cls) is not None:
                    continue
            elif not (recv.kind == UNKNOWN and recv.ref is not None
                      or unplaced and by_name.eligible(name) and not name.endswith(".setter")):
                continue
            arg_values, kw_values = _arguments(evaluator, site.caller, call)
            if unplaced and not any(_informative_argument(v) for v in arg_values + list(kw_values.values())):
                continue  # placed by name only: worth it where it passes something
            args = [to_data(v) for v in arg_values]
            kwargs = {k: to_data(v) for k, v in kw_values.items()}
            # a receiver of unknown kind: the project's methods of that name (``by_name``)
            out.append(["@name", name, args, kwargs] if unplaced else ["@method", to_data(recv), name, args, kwargs])
    return out


def _param_calls(index: FileIndex, evaluator: Evaluator, f) -> List[list]:
    """The calls ``f``'s body makes of its own parameters (a function handed to it, ``handed``):
    [position (``self`` not counted), name, args, kwargs]; args None where a call unpacks ``*args``."""
    out: List[list] = []
    bound = bound_names(f)
    for i, name in positional_params(f):
        if name in bound:
            continue
        for site in index.call_sites.get(name, ()):
            if site.caller is not f or len(site.call.args) > _MAX_CALL_ARGS:
                continue
            out.append([i, name, *_call_data(evaluator, f, site.call)])
    return out


def _handed_on_calls(index: FileIndex, evaluator: Evaluator) -> List[list]:
    """Functions of other project files that this file hands on rather than calls by name
    (``fn = functools.partial(step, lim=0.5); fn(t)``, ``apply(step, t)`` where ``apply`` calls
    its parameter, ``Runner(step)`` whose ``self.step(t)`` runs it): [qualname, args, kwargs] for
    each call that runs it, ``None`` for the positions a partial binds (passed by its own entry)."""
    out: List[list] = []
    for name in sorted(evaluator._arg_refs()):
        q = index.aliases.map.get(name)
        if q is None or q.split(".")[0] in EXTERNAL_ROOTS or name in index.classes:
            continue
        for site in evaluator.handed_on_sites(name):
            call = site.call
            if len(call.args) > _MAX_CALL_ARGS:
                continue
            data, kwargs = _call_data(evaluator, site.caller, call)
            if data is not None:  # a partial's own call passes what follows the function
                data = data[1:] if site.offset < 0 else [None] * site.offset + data
            out.append([q, data, kwargs])
    return out


def _call_data(evaluator: Evaluator, caller, call) -> tuple:
    """A call's arguments as interface data: (args, kwargs); args None where it unpacks ``*args``."""
    if any(a.star for a in call.args):
        return None, {}
    args, kwargs = _arguments(evaluator, caller, call)
    return [to_data(v) for v in args], {k: to_data(v) for k, v in kwargs.items()}


def _arguments(evaluator: Evaluator, caller, call):
    """What a call passes: the positional arguments' values, and the keywords'."""
    args = [evaluator.argument(caller, call, a.value) for a in call.args if a.keyword is None]
    kwargs = {a.keyword.value: evaluator.argument(caller, call, a.value) for a in call.args if a.keyword is not None}
    return args, kwargs


def _informative_argument(v) -> bool:
    """An argument that can change what a callee's rules decide: not a plain number or string
    (a string naming a device is one: tensors made with it live there)."""
    return v.ref is not None or v.kind not in (UNKNOWN, NUMBER, STR, NONE) or (v.kind == STR and v.device is not None)


def _super_base(index: FileIndex, site) -> Optional[str]:
    """``super().name(...)`` in a method whose class's first base is a project class of another
    file: that base's qualified name; else None."""
    recv = site.call.func.value
    cls = site.caller.cls if site.caller is not None and site.caller.is_method else None
    if (cls is None or not cls.bases or type(recv) is not cst.Call
            or index.aliases.qualify(recv.func) != "builtins.super"):
        return None
    base = cls.bases[0]
    if index.classes.get(base.split(".")[-1]) is not None or base.split(".")[0] in EXTERNAL_ROOTS or "." not in base:
        return None
    return base


def _base_key(index: FileIndex, base: str) -> str:
    local = index.classes.get(base)
    return local.key if local is not None else base
