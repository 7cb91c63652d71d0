"""Snippet mode, parent side: the flagged statement, its names, and what inference knows of them.

For each finding: the innermost statement (or compound-statement header) around it, sliced from
the file so that line and column positions survive; the names it reads that are local to its
function (parameters, assignments, loop targets, local imports), each with a spec built from the
flow-sensitive value static inference gives at that point, richer parameter annotations, and how
the statement uses the name; and for ``self`` its class and the ``__init__`` expressions of the
attributes read. Names the module defines (imports, constants, helpers) are not synthesised: the
child takes them from the imported module. No torch here.
"""

from __future__ import annotations

import ast
import os
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Set, Tuple

import libcst as cst
from libcst.metadata import MetadataWrapper, PositionProvider

from torchsync_lint.check.source import decode, module_name_for
from torchsync_lint.check.walker import RuleWalker
from torchsync_lint.syntax import walk
from torchsync_lint.finding import Finding
from torchsync_lint.inference.context import FileContext
from torchsync_lint.inference.evaluate import Evaluator
from torchsync_lint.inference.index import FileIndex, FunctionInfo
from torchsync_lint.inference.names import dotted
from torchsync_lint.inference.values import Value
from torchsync_lint.verify.attribution import Span, norm

COMPOUND = (cst.If, cst.While, cst.For, cst.With)
LOSS_TARGET_FUNCS = {
    "cross_entropy", "nll_loss", "one_hot", "multi_margin_loss", "multilabel_margin_loss",
    "multilabel_soft_margin_loss", "ctc_loss",
}
SIZE_FACTORIES = {"zeros", "ones", "empty", "full", "rand", "randn", "randint", "arange", "eye", "linspace"}
SIZE_METHODS = {"narrow", "new_zeros", "new_ones", "new_empty", "view", "reshape", "expand", "repeat"}
SEQ_FUNCS = {"cat", "stack", "concat", "concatenate", "hstack", "vstack", "dstack", "block_diag", "cartesian_prod"}
HOST_DATA_FACTORIES = {"torch.tensor", "torch.as_tensor", "torch.Tensor", "torch.LongTensor", "torch.FloatTensor",
                       "torch.IntTensor", "torch.BoolTensor", "torch.asarray", "torch.from_numpy"}


@dataclass
class Extracted:
    span: Span
    stmt: Optional[dict] = None  # {"src", "line", "col", "compound"}
    expr: Optional[dict] = None
    specs: Dict[str, dict] = field(default_factory=dict)
    self_spec: Optional[dict] = None
    failure: Optional[str] = None
    node: Optional[cst.CSTNode] = None  # the flagged node (for rewrites)
    stmt_node: Optional[cst.CSTNode] = None
    notes: List[str] = field(default_factory=list)


def _slice(lines: List[str], start: Tuple[int, int], end: Tuple[int, int]) -> str:
    (l1, c1), (l2, c2) = start, end
    if l1 == l2:
        return lines[l1 - 1][c1:c2]
    parts = [lines[l1 - 1][c1:]] + lines[l1:l2 - 1] + [lines[l2 - 1][:c2]]
    return "".join(parts)


class _Names(cst.CSTVisitor):
    """Name and ``self.attr`` reads in a statement, with how each is used."""

    def __init__(self, aliases) -> None:
        self.names: Dict[str, List[cst.Name]] = {}
        self.self_attrs: Dict[str, List[cst.Attribute]] = {}
        self.roles: Dict[str, Set[str]] = {}
        self.aliases = aliases

    def _key(self, node: cst.BaseExpression) -> Optional[str]:
        if isinstance(node, cst.Name):
            return node.value
        if isinstance(node, cst.Attribute) and isinstance(node.value, cst.Name) and node.value.value == "self":
            return "self." + node.attr.value
        return None

    def _role(self, node: cst.BaseExpression, role: str) -> None:
        key = self._key(node)
        if key is not None:
            self.roles.setdefault(key, set()).add(role)

    def visit_Name(self, node: cst.Name) -> None:
        self.names.setdefault(node.value, []).append(node)

    def visit_Attribute(self, node: cst.Attribute) -> bool:
        if isinstance(node.value, cst.Name) and node.value.value == "self":
            self.self_attrs.setdefault(node.attr.value, []).append(node)
        node.value.visit(self)
        return False  # the attribute's own name is not a variable

    def visit_Arg(self, node: cst.Arg) -> bool:
        node.value.visit(self)
        return False  # skip the keyword's name

    def visit_Subscript(self, node: cst.Subscript) -> None:
        self._role(node.value, "subscripted")
        for el in node.slice:
            sl = el.slice
            if isinstance(sl, cst.Index):
                v = sl.value
                items = [e.value for e in v.elements] if isinstance(v, cst.Tuple) else [v]
                for item in items:
                    if isinstance(item, cst.SimpleString):
                        self._role(node.value, "str_key")
                    elif isinstance(item, cst.Subscript):
                        self._role(item.value, "index_values")  # `x[y[mask]]`: y holds indices
                    else:
                        self._role(item, "index")
            elif isinstance(sl, cst.Slice):
                for part in (sl.lower, sl.upper, sl.step):
                    if part is not None:
                        self._mark_all(part, "scalar")

    def _mark_all(self, expr: cst.CSTNode, role: str) -> None:
        """Every name in ``expr`` that is not itself indexed (``t`` in ``t - box[1]``)."""
        outer = self

        class V(cst.CSTVisitor):
            def visit_Subscript(self, node):
                el = node.slice[0].slice if len(node.slice) == 1 else None
                if isinstance(el, cst.Index) and isinstance(el.value, cst.Integer):
                    outer._role(node.value, "int_vector")  # `box[1]` in a size or bound: box holds ints
                return False

            def visit_Attribute(self, node):
                outer._role(node, role)
                return False

            def visit_Call(self, node):
                return False

            def visit_Name(self, node):
                outer._role(node, role)

        expr.visit(V())

    def visit_Call(self, node: cst.Call) -> None:
        self._role(node.func, "called")
        for a in node.args:
            if a.keyword is not None and a.keyword.value == "device":
                self._role(a.value, "device")
        q = self.aliases.qualify(node.func) or ""
        if q in ("builtins.int", "builtins.float", "builtins.bool", "builtins.range") and node.args:
            for a in node.args:
                self._mark_all(a.value, "scalar")
        if q.split(".")[-1] in SIZE_FACTORIES and q.startswith("torch."):
            for a in node.args:
                if a.keyword is None or a.keyword.value == "size":
                    self._mark_all(a.value, "scalar")
        if q.split(".")[-1] in SEQ_FUNCS and q.startswith("torch.") and node.args:
            self._role(node.args[0].value, "seq")
        if isinstance(node.func, cst.Attribute) and node.func.attr.value in SIZE_METHODS:
            for a in node.args:
                self._mark_all(a.value, "scalar")
        last = q.split(".")[-1] if q else (node.func.attr.value if isinstance(node.func, cst.Attribute) else "")
        positional = [a for a in node.args if a.keyword is None]
        if last in LOSS_TARGET_FUNCS or last.lower().endswith("loss"):
            target = next((a.value for a in node.args if a.keyword and a.keyword.value == "target"), None)
            if target is None and len(positional) > 1:
                target = positional[1].value
            if target is not None and last != "one_hot":
                self._role(target, "target")
            if last == "one_hot" and positional:
                self._role(positional[0].value, "target")
        if q in HOST_DATA_FACTORIES and positional:
            self._role(positional[0].value, "host_data")
        if isinstance(node.func, cst.Attribute):
            self._role(node.func.value, "receiver")
            if node.func.attr.value == "item" and not node.args:
                self._mark_all(node.func.value, "scalar")

    def visit_For(self, node: cst.For) -> None:
        self._role(node.iter, "iterated")

    def visit_FormattedStringExpression(self, node: cst.FormattedStringExpression) -> None:
        self._mark_all(node.expression, "formatted")  # `f"{self.target}_id"`: text, most likely

    def visit_CompFor(self, node: cst.CompFor) -> None:
        self._role(node.iter, "iterated")


_LOCALS_CACHE: Dict[int, Tuple[object, Tuple[Set[str], Dict[str, str], Set[str]]]] = {}


def _local_names(func: Optional[FunctionInfo]) -> Tuple[Set[str], Dict[str, str], Set[str]]:
    """Names local to the function and its enclosing functions; local imports; nested defs.
    Cached per function node (several findings in one function share the walk)."""
    if func is None:
        return set(), {}, set()
    got = _LOCALS_CACHE.get(id(func.node))
    if got is not None and got[0] is func.node:
        return got[1]
    out = _collect_local_names(func)
    if len(_LOCALS_CACHE) > 4096:
        _LOCALS_CACHE.clear()
    _LOCALS_CACHE[id(func.node)] = (func.node, out)
    return out


def _collect_local_names(func: Optional[FunctionInfo]) -> Tuple[Set[str], Dict[str, str], Set[str]]:
    names: Set[str] = set()
    imports: Dict[str, str] = {}
    nested: Set[str] = set()
    scope = func
    while scope is not None:
        collector = _Locals()
        scope.node.params.visit(collector)
        scope.node.body.visit(collector)
        names |= collector.names
        for k, v in collector.imports.items():
            imports.setdefault(k, v)
        nested |= collector.defs
        scope = scope.parent
    return names, imports, nested


class _Locals(cst.CSTVisitor):
    def __init__(self) -> None:
        self.names: Set[str] = set()
        self.imports: Dict[str, str] = {}
        self.defs: Set[str] = set()
        self._module = cst.Module([])

    def visit_Param(self, node: cst.Param) -> None:
        self.names.add(node.name.value)

    def _targets(self, t: cst.BaseExpression) -> None:
        if isinstance(t, cst.Name):
            self.names.add(t.value)
        elif isinstance(t, (cst.Tuple, cst.List)):
            for el in t.elements:
                self._targets(el.value)
        elif isinstance(t, cst.StarredElement):
            self._targets(t.value)

    def visit_AssignTarget(self, node: cst.AssignTarget) -> None:
        self._targets(node.target)

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        self._targets(node.target)

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        self._targets(node.target)

    def visit_NamedExpr(self, node: cst.NamedExpr) -> None:
        self._targets(node.target)

    def visit_For(self, node: cst.For) -> None:
        self._targets(node.target)

    def visit_AsName(self, node: cst.AsName) -> None:
        self._targets(node.name)

    def visit_ExceptHandler(self, node: cst.ExceptHandler) -> None:
        if node.name is not None:
            self._targets(node.name.name)

    def visit_Import(self, node: cst.Import) -> None:
        for alias in node.names:
            name = alias.asname.name.value if alias.asname else (dotted(alias.name) or "").split(".")[0]
            if name:
                self.names.add(name)
                self.imports[name] = self._module.code_for_node(node).strip()

    def visit_ImportFrom(self, node: cst.ImportFrom) -> None:
        if isinstance(node.names, cst.ImportStar):
            return
        for alias in node.names:
            name = alias.asname.name.value if alias.asname else (dotted(alias.name) or "")
            if name:
                self.names.add(name)
                self.imports[name] = self._module.code_for_node(node).strip()

    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
        self.names.add(node.name.value)
        self.defs.add(node.name.value)
        return False  # its body is another scope

    def visit_ClassDef(self, node: cst.ClassDef) -> bool:
        self.names.add(node.name.value)
        self.defs.add(node.name.value)
        return False

    def visit_Lambda(self, node: cst.Lambda) -> bool:
        return False

    def visit_CompFor(self, node: cst.CompFor) -> bool:
        return True  # comprehension targets are their own scope; walrus inside still binds


# ---------------------------------------------------------------------------------------------
# specs


def value_spec(v: Value, depth: int = 0) -> dict:
    spec: dict = {"kind": v.kind}
    if v.dtype:
        spec["dtype"] = v.dtype
    if v.device:
        spec["device"] = v.device
    if v.host_data and v.kind == "tensor":
        spec["device"] = v.device or "cpu"
    if v.elts and depth < 4:
        spec["elts"] = [value_spec(e, depth + 1) for e in v.elts]
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


class _Probe:
    """A pseudo-rule walked with the real rules' walker: at each target statement, read the scope."""

    def __init__(self, ctx: FileContext, targets: Dict[int, List[int]], module: cst.Module,
                 extracted: Dict[int, Extracted], codes: Dict[int, str], recorded: List[dict] = ()) -> None:
        self.recorded = list(recorded)
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
        collector = _Names(ctx.aliases)
        for part in self._header_parts(node):
            part.visit(collector)
        func = ctx.function
        local, imports, nested = _local_names(func)
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
            if roles:
                spec["roles"] = sorted(roles)
            specs[name] = spec
        # a device parameter whose default means the CPU (None, "cpu"): callers that keep the
        # default run on the CPU, so the snippet does too (inferred, not guessed as CUDA)
        defaults = _param_defaults(func, self.module) if func is not None else {}
        for name, spec in specs.items():
            if name in defaults and device_like(name, spec.get("roles", ())) and _cpu_default(defaults[name]) \
                    and spec.get("kind") in ("unknown", "device", "none", "str") and not spec.get("device"):
                specs[name] = {"kind": "expr", "src": defaults[name], "fallback": spec, "default": True}
        # values recorded from a real run (--inputs) replace what inference left open
        rec = _record_for(self.recorded, func, ex.stmt["line"] if ex.stmt else 0)
        if rec is not None:
            for name, spec in list(specs.items()):
                desc = (rec.get("args") or {}).get(name)
                if desc is None or spec.get("kind") in ("import", "unavailable", "self"):
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


def _self_spec(ctx: FileContext, func: FunctionInfo, collector: _Names, module: cst.Module,
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
    collector = _Names(ctx.aliases)
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


# ---------------------------------------------------------------------------------------------
# statements


class _PositionIndex:
    """One pass over a file's positions: its statements (for the innermost one at a point) and its
    expressions by exact range; each finding's look-up is then cheap (many findings per file)."""

    def __init__(self, positions) -> None:
        self.statements: List[Tuple[Tuple[int, int], Tuple[int, int], cst.CSTNode]] = []
        self.by_range: Dict[Tuple[Tuple[int, int], Tuple[int, int]], cst.CSTNode] = {}
        for node, rng in positions.items():
            start, end = (rng.start.line, rng.start.column), (rng.end.line, rng.end.column)
            if isinstance(node, (cst.BaseSmallStatement,) + COMPOUND):
                if isinstance(node, COMPOUND):
                    body = positions.get(node.body)
                    if body is not None:
                        end = (body.start.line, body.start.column)
                self.statements.append((start, end, node))
            if isinstance(node, (cst.BaseExpression, cst.BaseSmallStatement)):
                self.by_range.setdefault((start, end), node)

    def statement_for(self, line: int, col: int) -> Optional[cst.CSTNode]:
        """The innermost small statement or compound header holding (line, col)."""
        best, best_size = None, None
        for start, end, node in self.statements:
            if not (start <= (line, col) < end or start == (line, col)):
                continue
            size = (end[0] - start[0]) * 100_000 + (end[1] - start[1])
            if best_size is None or size < best_size:
                best, best_size = node, size
        return best

    def node_at(self, finding: Finding) -> Optional[cst.CSTNode]:
        return self.by_range.get(((finding.line, finding.col - 1), (finding.end_line, finding.end_col - 1)))


class _Inside(cst.CSTVisitor):
    """Is the flagged node a store target, or inside a lambda / generator expression?"""

    def __init__(self, target: cst.CSTNode) -> None:
        self.target = target
        self.stack: List[str] = []
        self.found: Optional[List[str]] = None

    def on_visit(self, node: cst.CSTNode) -> bool:
        if self.found is not None:
            return False
        if node is self.target:
            self.found = list(self.stack)
            return False
        if isinstance(node, cst.Lambda):
            self.stack.append("lambda")
        elif isinstance(node, cst.GeneratorExp):
            self.stack.append("generator")
        elif isinstance(node, (cst.AssignTarget,)):
            self.stack.append("store")
        elif isinstance(node, (cst.AugAssign, cst.Del)):
            self.stack.append("store?")
        else:
            self.stack.append("")
        return True

    def on_leave(self, node: cst.CSTNode) -> None:
        if self.stack and self.found is None:
            self.stack.pop()


def extract_file(path: str, findings: List[Tuple[int, Finding]], hot_functions=(),
                 recorded: List[dict] = ()) -> Dict[int, Extracted]:
    """Extraction for every finding of one file (keys are the caller's finding keys)."""
    out: Dict[int, Extracted] = {}
    real = norm(path)
    try:
        with open(path, "rb") as fh:
            source = decode(fh.read(), path)
        module = cst.parse_module(source)
    except Exception as exc:
        for key, f in findings:
            out[key] = Extracted(Span(real, f.line, f.col - 1, f.end_line, f.end_col - 1, f.line, f.end_line),
                                 failure=f"cannot read the file again: {exc}")
        return out
    wrapper = MetadataWrapper(module, unsafe_skip_copy=True)
    positions = wrapper.resolve(PositionProvider)
    index = _PositionIndex(positions)
    lines = source.splitlines(keepends=True)
    module_name, is_package = module_name_for(path)
    targets: Dict[int, List[int]] = {}
    codes: Dict[int, str] = {}
    for key, f in findings:
        span = Span(real, f.line, f.col - 1, f.end_line, f.end_col - 1, f.line, f.end_line)
        ex = Extracted(span)
        out[key] = ex
        codes[key] = f.code
        stmt = index.statement_for(f.line, f.col - 1)
        if stmt is None:
            ex.failure = "no statement found at the finding (a decorator, default value or class body?)"
            continue
        rng = positions[stmt]
        start = (rng.start.line, rng.start.column)
        compound = isinstance(stmt, COMPOUND)
        if compound:
            body = positions[stmt.body]
            text = _slice(lines, start, (body.start.line, body.start.column)).rstrip()
            if text.startswith("elif"):
                text = "if  " + text[4:]
            if text.startswith("async"):
                ex.failure = "async statements are not run in snippet mode"
                continue
            end_line = body.start.line if body.start.line == start[0] else _header_end_line(text, start[0])
        else:
            text = _slice(lines, start, (rng.end.line, rng.end.column))
            end_line = rng.end.line
        span.stmt_line, span.stmt_end_line = start[0], max(end_line, f.end_line)
        ex.stmt = {"src": text, "line": start[0], "col": start[1], "compound": compound}
        ex.stmt_node = stmt
        node = index.node_at(f)
        ex.node = node
        if node is not None and node is not stmt and isinstance(node, cst.BaseExpression):
            inside = _Inside(node)
            stmt.visit(inside)
            where = inside.found or []
            if "lambda" in where:
                ex.failure = "the flagged code is inside a lambda: running the statement does not call it"
                continue
            if "generator" in where:
                ex.notes.append("inside a generator expression")
            if not any(w.startswith("store") for w in where):
                expr_text = _slice(lines, (f.line, f.col - 1), (f.end_line, f.end_col - 1))
                try:
                    ast.parse(expr_text)  # the child compiles it as an expression statement
                    ok = True
                except SyntaxError:
                    ok = False
                if ok:
                    ex.expr = {"src": expr_text, "line": f.line, "col": f.col - 1, "compound": False}
        targets.setdefault(id(stmt), []).append(key)
    if targets:
        index = FileIndex(module_name, is_package)
        walk.visit(module, index)
        evaluator = Evaluator(index, frozenset(hot_functions))
        ctx = FileContext(index, evaluator)
        probe = _Probe(ctx, targets, module, out, codes, recorded)
        RuleWalker(ctx, [probe]).run(module)
    return out


def _header_end_line(text: str, first: int) -> int:
    return first + text.count("\n")


def module_info(path: str) -> dict:
    """How the child imports the file: its dotted name and the folder that must be on sys.path."""
    real = os.path.realpath(path)
    name, _ = module_name_for(real)
    depth = name.count(".") + 1
    root = os.path.dirname(real)
    for _ in range(depth - 1):
        root = os.path.dirname(root)
    if os.path.basename(real) == "__init__.py":
        root = os.path.dirname(root)
    return {"path": real, "module": name, "root": root}
