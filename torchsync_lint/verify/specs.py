"""Snippet mode, parent side: what the child must synthesise for each name a statement reads.

A spec per name, from what static inference gives at that point (the flow-sensitive value: kind,
dtype, device, elements), richer parameter annotations (``list[int]``, ``Dict[str, Tensor]``),
the statement's use of the name (``scope.Names``' roles), a device parameter's CPU default, and
values recorded from a real run (``--inputs``), which replace what inference left open; for
``self``, its class and the ``__init__`` expressions of the attributes read. ``Probe`` is walked
with the real rules' walker, so each statement sees the values at its own place. No torch here.
"""

from __future__ import annotations

from typing import Dict, List, Optional, Set

import libcst as cst

from torchsync_lint.inference.context import FileContext
from torchsync_lint.inference.index import FunctionInfo
from torchsync_lint.inference.names import dotted
from torchsync_lint.inference.values import BATCH, CUDA, LIST, OBJECT, TUPLE, Value
from torchsync_lint.verify.locate import AstOf
from torchsync_lint.verify.scope import Names, local_names, rebound_before


def value_spec(v: Value, depth: int = 0) -> dict:
    if v.kind == BATCH:
        # a part of a loader's batch: a host tensor until the loop moves it
        return {"kind": "tensor", "device": "cuda" if v.device == CUDA else "cpu"}
    spec: dict = {"kind": v.kind}
    if v.dtype:
        spec["dtype"] = v.dtype
    if v.device:
        spec["device"] = v.device
    if v.kind == OBJECT and v.keys and depth < 4:
        # a dataclass or named-tuple instance whose constructor call inference read: its fields
        # (`sel.keep` a mask, `sel.best` a 0-dim index), not a tensor standing in for the object
        spec["kind"] = "fields"
        spec["fields"] = {k: value_spec(x, depth + 1) for k, x in v.keys}
        return spec
    if v.elts and depth < 4:
        spec["elts"] = [value_spec(e, depth + 1) for e in v.elts]
    elif v.item is not None and depth < 4 and v.kind in (LIST, TUPLE):
        spec["elt"] = value_spec(v.item, depth + 1)  # `labels.append(target)`: what each member is
    return spec


def annotation_spec(ann: Optional[cst.BaseExpression], aliases, depth: int = 0) -> Optional[dict]:
    """A richer spec than inference gives for typing annotations (``list[int]``, ``Dict[str, Tensor]``)."""
    if ann is None or depth > 4:
        return None
    if isinstance(ann, cst.SimpleString):
        try:
            ann = cst.parse_expression(str(ann.evaluated_value))
        except Exception:
            return None
    if isinstance(ann, cst.BinaryOperation) and isinstance(ann.operator, cst.BitOr):
        for side in (ann.left, ann.right):
            if not (isinstance(side, cst.Name) and side.value == "None"):
                return annotation_spec(side, aliases, depth + 1)
        return None
    if isinstance(ann, cst.Subscript):
        head = (aliases.qualify(ann.value) or dotted(ann.value) or "").split(".")[-1]
        inner = [e.slice.value for e in ann.slice if isinstance(e.slice, cst.Index)]
        if head in ("Optional", "Annotated", "Final") and inner:
            return annotation_spec(inner[0], aliases, depth + 1)
        if head == "Union" and inner:
            for i in inner:
                if not (isinstance(i, cst.Name) and i.value == "None"):
                    return annotation_spec(i, aliases, depth + 1)
        if head in ("List", "list", "Sequence", "Iterable", "MutableSequence"):
            elt = annotation_spec(inner[0], aliases, depth + 1) if inner else None
            return {"kind": "list", **({"elt": elt} if elt else {})}
        if head in ("Tuple", "tuple"):
            if len(inner) == 2 and isinstance(inner[1], cst.Ellipsis):
                elt = annotation_spec(inner[0], aliases, depth + 1)
                return {"kind": "tuple", **({"elt": elt} if elt else {})}
            elts = [annotation_spec(i, aliases, depth + 1) or {"kind": "unknown"} for i in inner]
            return {"kind": "tuple", "elts": elts} if elts else {"kind": "tuple"}
        if head in ("Dict", "dict", "Mapping", "MutableMapping", "OrderedDict"):
            val = annotation_spec(inner[1], aliases, depth + 1) if len(inner) > 1 else None
            return {"kind": "dict", **({"value_spec": val} if val else {})}
        return None
    name = aliases.qualify(ann) or dotted(ann) or ""
    last = name.split(".")[-1]
    if last in ("Tensor", "Parameter") or name in ("torch.Tensor",):
        return {"kind": "tensor"}
    if last in ("LongTensor", "IntTensor"):
        return {"kind": "tensor", "dtype": "int"}
    if last == "BoolTensor":
        return {"kind": "tensor", "dtype": "bool"}
    if name in ("builtins.int", "int"):
        return {"kind": "number", "dtype": "int"}
    if name in ("builtins.float", "float"):
        return {"kind": "number", "dtype": "float"}
    if name in ("builtins.bool", "bool"):
        return {"kind": "number", "dtype": "bool"}
    if name in ("builtins.str", "str"):
        return {"kind": "str"}
    if last == "device":
        return {"kind": "device"}
    if last == "dtype":
        return {"kind": "dtype"}
    if last == "Size":
        return {"kind": "size"}
    return None


def _better(inferred: dict, annotated: Optional[dict]) -> dict:
    if annotated is None:
        return inferred
    kind = inferred.get("kind")
    if kind == "unknown":
        return annotated
    if kind in ("list", "tuple") and annotated.get("kind") in ("list", "tuple") and not inferred.get("elts"):
        return dict(annotated, kind=kind)
    if kind == "tensor" and annotated.get("kind") == "tensor" and annotated.get("dtype") and not inferred.get("dtype"):
        return dict(inferred, dtype=annotated["dtype"])
    return inferred


# rule hints: what the rule assumed about untyped operands when it flagged the statement
RULE_ROLES = {
    "TSL103": "mask",
    "TSL104": "mask",
    "TSL201": "host_index",
    "TSL202": "host_data",
}


def _rule_shapes(code: str, kind, roles) -> set:
    """What a rule's report says about a known kind of operand: TSL412 moves a module built on the
    host; an index TSL303 reads as a Python int has no dimensions; TSL414's loss reaches a leaf on
    the host that requires grad."""
    if code == "TSL412" and kind in ("module", "unknown"):
        return {"host_module"}
    if code == "TSL303" and "index" in roles and kind in ("tensor", "unknown"):
        return {"int_index"}
    if code == "TSL414" and kind in ("tensor", "unknown"):
        # `loss.backward()`, `torch.autograd.backward(loss)`, `scaler.scale(loss).backward()`: the
        # tensors of the statement are the loss, whose graph reaches a host leaf
        return {"host_grad_loss"}
    return set()


DEVICE_NAME = ("device", "dev")


def device_like(name: str, roles) -> bool:
    leaf = name.split(".")[-1]
    return "device" in roles or leaf in DEVICE_NAME or leaf.endswith("_device") or leaf.startswith("device_")


def _record_for(recorded: List[dict], func: Optional[FunctionInfo], line: int) -> Optional[dict]:
    """The innermost recorded function entry of this function holding ``line``."""
    if not recorded or func is None:
        return None
    best = None
    for r in recorded:
        if r.get("name") != func.name or not (r.get("first_line", 0) <= line <= r.get("last_line", 0)):
            continue
        if best is None or r["last_line"] - r["first_line"] < best["last_line"] - best["first_line"]:
            best = r
    return best


def _param_defaults(func: FunctionInfo, module: cst.Module) -> Dict[str, str]:
    out: Dict[str, str] = {}
    p = func.node.params
    for param in list(p.posonly_params) + list(p.params) + list(p.kwonly_params):
        if param.default is not None:
            out[param.name.value] = module.code_for_node(param.default).strip()
    return out


def _cpu_default(src: str) -> bool:
    """A device default that means the CPU: None (torch's default device), "cpu", torch.device("cpu")."""
    text = src.replace(" ", "").replace("'", '"')
    return text in ("None", '"cpu"') or text.endswith('device("cpu")')


class Probe:
    """A pseudo-rule walked with the real rules' walker: at each target statement, read the scope."""

    def __init__(self, ctx: FileContext, targets: Dict[int, List[int]], module: cst.Module,
                 extracted: Dict[int, object], codes: Dict[int, str], recorded: List[dict] = (),
                 ast_of: Optional[AstOf] = None, source: str = "") -> None:
        self.recorded = list(recorded)
        self.ast_of, self.source = ast_of, source
        self.ctx = ctx
        self.targets = targets  # id(statement node) -> finding keys
        self.module = module
        self.extracted = extracted
        self.codes = codes

    def _visit(self, node: cst.CSTNode) -> None:
        keys = self.targets.get(id(node))
        if keys:
            for key in keys:
                self._specs(node, key)

    visit_Expr = visit_Assign = visit_AugAssign = visit_AnnAssign = visit_Return = _visit
    visit_Assert = visit_Raise = visit_Del = _visit
    visit_If = visit_While = visit_For = visit_With = _visit

    def _header_parts(self, node: cst.CSTNode) -> List[cst.CSTNode]:
        if isinstance(node, (cst.If, cst.While)):
            return [node.test]
        if isinstance(node, cst.For):
            return [node.target, node.iter]
        if isinstance(node, cst.With):
            return list(node.items)
        return [node]

    def _specs(self, node: cst.CSTNode, key: int) -> None:
        ex = self.extracted[key]
        ctx = self.ctx
        collector = Names(ctx.aliases)
        for part in self._header_parts(node):
            part.visit(collector)
        func = ctx.function
        local, imports, nested = local_names(func, self.ast_of, self.source)
        params = _param_annotations(func, ctx) if func is not None else {}
        rule_role = RULE_ROLES.get(self.codes.get(key, ""))
        specs: Dict[str, dict] = {}
        for name, nodes in collector.names.items():
            if name not in local:
                continue
            if name in imports:
                specs[name] = {"kind": "import", "src": imports[name]}
                continue
            if name in nested:
                specs[name] = {"kind": "unavailable", "reason": f"{name!r} is a function or class defined locally"}
                continue
            value = ctx.value(nodes[0])
            if value.kind == "self":
                specs[name] = {"kind": "self"}
                continue
            spec = _better(value_spec(value), params.get(name))
            roles = set(collector.roles.get(name, ()))
            if rule_role and (spec.get("kind") == "unknown" or rule_role == "mask") and roles & {"index", "host_data"}:
                roles.add(rule_role)
            if spec.get("dtype") == "bool" and "index" in roles:
                roles.add("mask")
            roles |= _rule_shapes(self.codes.get(key, ""), spec.get("kind"), roles)
            if roles:
                spec["roles"] = sorted(roles)
            specs[name] = spec
        # a device parameter whose default means the CPU (None, "cpu") that inference could not place
        # (callers it cannot see, or that pass what it cannot name): the snippet keeps the default,
        # a guess (where every call leaves it out, inference says the CPU and this does not apply)
        defaults = _param_defaults(func, self.module) if func is not None else {}
        for name, spec in specs.items():
            if name in defaults and device_like(name, spec.get("roles", ())) and _cpu_default(defaults[name]) \
                    and spec.get("kind") in ("unknown", "device", "none", "str") and not spec.get("device"):
                specs[name] = {"kind": "expr", "src": defaults[name], "fallback": spec, "default": True, "guess": True}
        # values recorded from a real run (--inputs) replace what inference left open
        rec = _record_for(self.recorded, func, ex.stmt["line"] if ex.stmt else 0)
        if rec is not None:
            # a parameter the function binds again before the statement holds another value there
            stale = rebound_before(func, set(rec.get("args") or {}) & set(specs),
                                   ex.stmt["line"] if ex.stmt else 0, self.ast_of)
            for name, spec in list(specs.items()):
                desc = (rec.get("args") or {}).get(name)
                if desc is None or name in stale or spec.get("kind") in ("import", "unavailable", "self"):
                    continue
                obs = {"kind": "observed", "desc": desc, "fallback": spec}
                if spec.get("roles"):
                    obs["roles"] = spec["roles"]
                specs[name] = obs
        # a real run put every tensor this function received on one device (the CPU, say): the
        # tensors it makes from them, whose device inference could not tell, are there too
        moved: List[str] = []
        only = _observed_device(rec)
        if only is not None:
            for name, spec in specs.items():
                if spec.get("kind") in ("tensor", "device") and not spec.get("device"):
                    specs[name] = dict(spec, device=only)
                    moved.append(name)
        ex.specs = specs
        if func is not None and func.cls is not None and (
                any(s.get("kind") == "self" for s in specs.values()) or collector.self_attrs):
            ex.self_spec = _self_spec(ctx, func, collector, self.module, rule_role)
            observed = ((rec or {}).get("args") or {}).get("self", {}).get("attrs") or {}
            for attr, entry in ex.self_spec["attrs"].items():
                if attr in observed:
                    entry["observed"] = observed[attr]
                elif only is not None and entry["spec"].get("kind") in ("tensor", "device") and \
                        not entry["spec"].get("device"):
                    entry["spec"] = dict(entry["spec"], device=only)
                    moved.append("self." + attr)
        if moved:
            ex.notes.append(f"the device of {', '.join(moved)} taken from the observed inputs (all on "
                            f"{'the CPU' if only == 'cpu' else only})")


def _observed_devices(desc, depth: int = 0) -> Set[str]:
    """Device types of the tensors (and modules) in one recorded description."""
    if not isinstance(desc, dict) or depth > 4:
        return set()
    kind = desc.get("kind")
    if kind in ("tensor", "module") and desc.get("device"):
        return {str(desc["device"]).split(":")[0]}
    out: Set[str] = set()
    for sub in list(desc.get("elts") or []) + list((desc.get("items") or {}).values()) + \
            list((desc.get("attrs") or {}).values()):
        out |= _observed_devices(sub, depth + 1)
    return out


def _observed_device(rec: Optional[dict]) -> Optional[str]:
    """The one device type every tensor of a recorded function entry was on, else None."""
    if not rec:
        return None
    found: Set[str] = set()
    for desc in (rec.get("args") or {}).values():
        found |= _observed_devices(desc)
    return next(iter(found)) if len(found) == 1 else None


def _param_annotations(func: FunctionInfo, ctx: FileContext) -> Dict[str, dict]:
    out: Dict[str, dict] = {}
    scope: Optional[FunctionInfo] = func
    while scope is not None:
        p = scope.node.params
        for param in list(p.posonly_params) + list(p.params) + list(p.kwonly_params):
            if param.annotation is not None and param.name.value not in out:
                spec = annotation_spec(param.annotation.annotation, ctx.aliases)
                if spec is not None:
                    out[param.name.value] = spec
        scope = scope.parent
    return out


def _class_qualname(func: FunctionInfo, module_name: str) -> Optional[str]:
    key = func.cls.key
    if "<locals>" in key:
        return None
    prefix = module_name + "." if module_name else ""
    return key[len(prefix):] if prefix and key.startswith(prefix) else key


def _self_spec(ctx: FileContext, func: FunctionInfo, collector: Names, module: cst.Module,
               rule_role: Optional[str]) -> dict:
    cls = func.cls
    spec: dict = {"class": _class_qualname(func, ctx.index.module_name), "attrs": {}}
    init = cls.methods.get("__init__")
    if init is not None:
        required = {}
        p = init.node.params
        for i, param in enumerate(list(p.posonly_params) + list(p.params) + list(p.kwonly_params)):
            if i == 0 or param.default is not None:
                continue
            ann = annotation_spec(param.annotation.annotation, ctx.aliases) if param.annotation else None
            required[param.name.value] = ann or {"kind": "unknown"}
        spec["init_params"] = required
    for attr, nodes in collector.self_attrs.items():
        value = ctx.value(nodes[0])
        aspec = value_spec(value)
        roles = set(collector.roles.get("self." + attr, ()))
        if rule_role and aspec.get("kind") == "unknown" and roles & {"index", "host_data"}:
            roles.add(rule_role)
        if roles:
            aspec["roles"] = sorted(roles)
        if aspec.get("kind") == "unknown" and device_like(attr, roles):
            aspec = dict(aspec, kind="device")  # `self.device`: a device, never a tensor
        elif aspec.get("kind") == "unknown" and attr == "dtype":
            aspec = dict(aspec, kind="dtype")
        inits = []
        for where, expr in cls.attrs.get(attr, []):
            inits.append(_init_expr(ctx, where, expr, module))
        if inits and aspec.get("kind") == "unknown":
            # `self.x = x` in __init__: the parameter's annotation says more than inference
            for where, expr in cls.attrs.get(attr, []):
                if isinstance(expr, cst.Name):
                    ann = _param_annotations(where, ctx).get(expr.value)
                    if ann:
                        aspec = dict(ann, **({"roles": aspec["roles"]} if "roles" in aspec else {}))
                        break
        spec["attrs"][attr] = {"spec": aspec, "init": inits}
    return spec


def _init_expr(ctx: FileContext, where: FunctionInfo, expr: cst.BaseExpression, module: cst.Module) -> dict:
    src = module.code_for_node(expr).strip()
    if "\n" in src:
        src = "(" + src + ")"
    collector = Names(ctx.aliases)
    expr.visit(collector)
    params: Dict[str, dict] = {}
    annotations = _param_annotations(where, ctx)
    p = where.node.params
    all_params = {prm.name.value: prm for prm in list(p.posonly_params) + list(p.params) + list(p.kwonly_params)}
    for name in collector.names:
        prm = all_params.get(name)
        if prm is None or name == "self":
            continue
        if prm.default is not None:
            params[name] = {"kind": "expr", "src": module.code_for_node(prm.default).strip(),
                            "fallback": annotations.get(name) or {"kind": "unknown"}}
        else:
            params[name] = annotations.get(name) or {"kind": "unknown"}
    return {"src": src, "params": params}
