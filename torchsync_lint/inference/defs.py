"""What the index records about each class and function of a file (``index.FileIndex`` fills
them): plain records, read by the evaluator, the call graph and the rules."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Set, Tuple

import libcst as cst

# An ``open_params`` entry that other files' calls can change only by passing host tensors (an
# annotated tensor parameter whose device they may tell): ``HOST_EVIDENCE + function key``.
HOST_EVIDENCE = "@host "


def item_key(e: cst.BaseExpression, func: Optional["FunctionInfo"]) -> Optional[str]:
    """The key of ``self[key]`` / ``obj[key]``: a string literal's text, or the name of a constant
    (``DATA``, ``keys.DATA``: not a parameter or local of ``func``, so the same name everywhere);
    None for a computed key."""
    if type(e) is cst.SimpleString:
        return string_key(e)
    if type(e) is cst.Attribute and type(e.value) is cst.Name:
        return "." + e.attr.value
    if type(e) is cst.Name and func is not None:
        if e.value in bound_names(func) or any(p.name.value == e.value for p in node_params(func.node)):
            return None
        return "." + e.value
    return None


def string_key(e: Optional[cst.BaseExpression]) -> Optional[str]:
    """The text of a plain string literal used as a dict key, else None."""
    if type(e) is cst.SimpleString:
        text = e.evaluated_value
        return text if isinstance(text, str) else None
    return None


@dataclass(eq=False)
class ClassInfo:
    name: str
    key: str
    node: cst.ClassDef
    bases: List[str]  # qualified or dotted names
    methods: Dict[str, "FunctionInfo"] = field(default_factory=dict)
    # self.<attr> = <expr> assignments, in the method that made them
    attrs: Dict[str, List[Tuple["FunctionInfo", cst.BaseExpression]]] = field(default_factory=dict)
    buffers: Set[str] = field(default_factory=set)  # register_buffer / register_parameter names
    # attributes made under a computed name (read with `getattr(self, name)`): (the name's
    # template, "buffer" / "attr" / "module", the value, the method) (``dynamic_attribute``)
    dynamic_attrs: List[tuple] = field(default_factory=list)
    # attributes some method uses as only a module is used (`self.model.parameters()`)
    module_attrs: Set[str] = field(default_factory=set)
    is_module: bool = False
    # name = <expr> in the class body: what ``self.name`` reads until a method assigns it
    class_attrs: Dict[str, cst.BaseExpression] = field(default_factory=dict)
    class_fields: Dict[str, cst.BaseExpression] = field(default_factory=dict)  # name: annotation
    # what methods put into a container attribute: ``self.x.append(v)`` (the value) and
    # ``self.x["k"] = v`` (the key's text, or None for a computed one; the value)
    attr_appends: Dict[str, List[Tuple["FunctionInfo", cst.BaseExpression]]] = field(default_factory=dict)
    attr_keyed: Dict[str, List[Tuple["FunctionInfo", Optional[str], cst.BaseExpression]]] = field(
        default_factory=dict)
    # ``self[key] = value`` in a method (a dict subclass keeping its data under keys): (the method,
    # the key's expression, the value); read back as the pseudo-attribute ``ITEMS``
    items: List[Tuple["FunctionInfo", cst.BaseExpression, cst.BaseExpression]] = field(default_factory=list)
    # id() of assigned values that a later assignment in the same method always overwrites
    # (same block or an enclosing one): other methods never see them
    overwritten: Set[int] = field(default_factory=set)


@dataclass(eq=False)
class FunctionInfo:
    name: str
    key: str
    node: cst.FunctionDef
    cls: Optional[ClassInfo]
    parent: Optional["FunctionInfo"]
    # Ordered statements that bind names: ("assign", targets, value) / ("for", target, iter) /
    # ("with", target, expr) / ("import", name, None)
    bindings: List[tuple] = field(default_factory=list)
    bound: Optional[frozenset] = None  # the names ``bindings`` bind (call_sites.bound_names)
    returns: List[cst.BaseExpression] = field(default_factory=list)
    # a generator's ``yield`` values (None for a bare ``yield`` or ``yield from``): what it iterates to
    yields: List[Optional[cst.BaseExpression]] = field(default_factory=list)
    calls: Set[str] = field(default_factory=set)  # callee keys (resolved where possible)
    hot_calls: Set[str] = field(default_factory=set)  # callees called inside a hot loop
    hot_loops: Set[int] = field(default_factory=set)  # id() of loops that contain a training step
    makes_step: bool = False  # calls `.backward()` / `.step()` somewhere in its body
    looped_calls: Set[str] = field(default_factory=set)  # callees called inside any loop
    # names of methods called on any receiver (``x.set_timesteps(...)``), outside every loop / in one
    method_names: Set[str] = field(default_factory=set)
    looped_method_names: Set[str] = field(default_factory=set)
    # (callee key, method name, ids of the loops around the call, the Call node) for every call
    # (hotness.summarise tells set-up from per-epoch calls, and calls in once/periodic branches)
    call_loops: List[tuple] = field(default_factory=list)
    # name.append(v) / name.insert(i, v) on a local name: what a list built empty comes to hold
    appends: Dict[str, List[cst.BaseExpression]] = field(default_factory=dict)
    # name["key"] = v on a local name (a str key: a dict, never a tensor): what its values hold
    # (the key's text, or None for a computed one; the value stored)
    keyed: Dict[str, List[Tuple[Optional[str], cst.BaseExpression]]] = field(default_factory=dict)
    # name[key] = v with a key held in a name (``images[name] = image``): a store only where the
    # name is known to hold a dict (a tensor takes such an index too)
    filled: Dict[str, List[cst.BaseExpression]] = field(default_factory=dict)
    # names the body uses as only a tensor can be used: a tensor-only method or attribute
    # (``x.new_ones(...)``, ``x.masked_fill``), or indexed by a comparison of itself (``s[s > 0]``)
    tensor_uses: Set[str] = field(default_factory=set)
    # names read for an array's shape (``x.shape``, ``x.ndim``) and names moved to a device
    # (``x.to(d)``, ``x[i:j].cuda()``): a name both is a tensor (numpy arrays have no ``.to``,
    # modules no ``.shape``), folded into ``tensor_uses`` once the function is read
    array_uses: Set[str] = field(default_factory=set)
    device_moves: Set[str] = field(default_factory=set)
    # parameters among ``tensor_uses`` used so before any statement of the function rebinds them
    # (``s = s[s > 0]``): evidence for what the parameter holds on entry
    early_tensor_uses: Set[str] = field(default_factory=set)
    # names passed where a torch function takes only a tensor (``F.cross_entropy(out, y)``): evidence
    # for a name bound once (a rebound one may be made a tensor by that very binding)
    tensor_arg_uses: Set[str] = field(default_factory=set)
    # names the body uses as only a GradScaler is used (``scaler.scale(loss).backward()``, ``scaler.unscale_(opt)``)
    scaler_uses: Set[str] = field(default_factory=set)
    # names the body uses as only an nn.Module is used (``model.parameters()``, ``model.named_modules()``)
    module_uses: Set[str] = field(default_factory=set)
    # names the body hands to numpy as they are (``x.numpy()``, ``x.detach().numpy()``, ``np.percentile(x, 99)``):
    # a CUDA tensor raises there, so a tensor held by such a name lives on the host (unless the
    # name is tested with isinstance: `np.unique(x) if isinstance(x, np.ndarray) else torch.unique(x)`)
    host_uses: Set[str] = field(default_factory=set)
    has_if: bool = False  # the body (not a nested def) holds an `if` statement
    # names passed as a call's ``device=``: a ``None`` default there means the default device
    device_names: Set[str] = field(default_factory=set)
    # (callee key, call) of calls of functions that are not torch's: what a callee hands to numpy
    arg_calls: List[Tuple[str, cst.Call]] = field(default_factory=list)
    # names the body lists as the data of a new tensor (``x.new_tensor([lo, hi])``): Python numbers
    number_uses: Set[str] = field(default_factory=set)
    # names the body tests with isinstance(): of several types, so no use is evidence of one
    type_tested: Set[str] = field(default_factory=set)
    # names the body copies to a device (``x.to(d)``, ``x["k"].cuda()``), and the targets of
    # comprehensions over a name (``{k: v.to(d) for k, v in batch.items()}``: v -> batch)
    moved: Set[str] = field(default_factory=set)
    comp_sources: Dict[str, str] = field(default_factory=dict)
    comp_targets: Set[str] = field(default_factory=set)  # every name a comprehension of the body binds

    @property
    def is_method(self) -> bool:
        return self.cls is not None and self.parent is None


def any_base(cls: "ClassInfo", index, project, local_test, foreign_test, depth: int = 0) -> bool:
    """Does some base of ``cls`` pass: a class of this file by ``local_test(ClassInfo)`` (its own
    bases walked in turn), one of another file by ``foreign_test(project_class_key)``."""
    for b in cls.bases:
        local = index.classes.get(b.split(".")[-1])
        if local is not None and local is not cls:
            if local_test(local) or (depth < 16 and any_base(local, index, project, local_test, foreign_test,
                                                             depth + 1)):
                return True
        elif local is None and project is not None:
            key = project.class_key(b)
            if key is not None and foreign_test(key):
                return True
    return False


@dataclass
class CallSite:
    caller: Optional[FunctionInfo]
    call: cst.Call
    offset: int  # positional arguments to skip (1 for self.method(...) calls seen as method)


def node_params(node: cst.FunctionDef) -> list:
    """Every parameter of a def, the ``*args`` and ``**kwargs`` ones too."""
    p = node.params
    out = list(p.posonly_params) + list(p.params) + list(p.kwonly_params)
    for star in (p.star_arg, p.star_kwarg):
        if type(star) is cst.Param:
            out.append(star)
    return out


def target_names(target: cst.BaseExpression) -> frozenset:
    """The names an assignment target binds (through tuples, lists and starred parts)."""
    names = set()
    stack = [target]
    while stack:
        n = stack.pop()
        if type(n) is cst.Name:
            names.add(n.value)
        elif type(n) in (cst.Tuple, cst.List):
            stack.extend(el.value for el in n.elements)
        elif type(n) is cst.StarredElement:
            stack.append(n.value)
    return frozenset(names)


def binding_names(bindings: List[tuple]) -> frozenset:
    """The names a list of binding statements (``FunctionInfo.bindings``) binds."""
    names: Set[str] = set()
    for b in bindings:
        for t in b[1] if isinstance(b[1], list) else [b[1]]:
            if isinstance(t, cst.BaseExpression):
                names |= target_names(t)
    return frozenset(names)


def bound_once(func: FunctionInfo, name: str) -> bool:
    """The function's statements bind ``name`` once at most (one assignment, one loop target)."""
    count = 0
    for b in func.bindings:
        for t in b[1] if isinstance(b[1], list) else [b[1]]:
            if isinstance(t, cst.BaseExpression) and name in target_names(t):
                count += 1
    return count <= 1


def bound_names(func: FunctionInfo) -> frozenset:
    """Names a function's own statements bind (assignments, loops, with, walrus), memoised."""
    if func.bound is None:
        func.bound = binding_names(func.bindings)
    return func.bound


def torch_dim_keyword(call: cst.Call) -> bool:
    """``x.mean(dim=0)`` / ``x.argmax(-1, keepdim=True)``: torch's spelling (numpy and pandas say
    ``axis`` / ``keepdims``), so the receiver is a tensor."""
    return any(a.keyword is not None and a.keyword.value in ("dim", "keepdim") for a in call.args)


def positional_params(func: FunctionInfo) -> List[Tuple[Optional[int], str]]:
    """(position as callers count it, name) of each named parameter: ``self`` not counted for a
    method, None for keyword-only ones."""
    p = func.node.params
    names: List[Tuple[Optional[int], str]] = list(
        enumerate(q.name.value for q in list(p.posonly_params) + list(p.params)))
    static = any(getattr(d.decorator, "value", None) == "staticmethod" for d in func.node.decorators)
    if func.is_method and names and not static:
        names = [(i - 1, n) for i, n in names[1:]]
    return names + [(None, q.name.value) for q in p.kwonly_params]


def param_named(node: cst.FunctionDef, name: str) -> Optional[cst.Param]:
    """The parameter of a def called ``name`` (None when it has none)."""
    return next((p for p in node_params(node) if p.name.value == name), None)


# Decorators that turn a method into an attribute: reading `obj.name` runs the method.
PROPERTY_DECORATORS = frozenset(("builtins.property", "functools.cached_property", "abc.abstractproperty"))


def is_property(func: FunctionInfo, qualify) -> bool:
    """``@property`` / ``@functools.cached_property`` (however imported): ``obj.name`` is what the
    method returns (a setter, ``@name.setter``, is not)."""
    for d in func.node.decorators:
        expr = d.decorator.func if type(d.decorator) is cst.Call else d.decorator
        if qualify(expr) in PROPERTY_DECORATORS or (type(expr) is cst.Name and expr.value == "property"):
            return True
    return False


def setter_name(node: cst.FunctionDef) -> Optional[str]:
    """``name.setter`` for a property's setter or deleter (``@name.setter``), else None: a name no
    identifier has, so the method table keeps the getter under ``name``."""
    for d in node.decorators:
        e = d.decorator
        if type(e) is cst.Attribute and e.attr.value in ("setter", "deleter") and type(e.value) is cst.Name \
                and e.value.value == node.name.value:
            return f"{node.name.value}.{e.attr.value}"
    return None


def generated_fields(cls: ClassInfo, qualify) -> Tuple[str, ...]:
    """The fields, in order, of a class whose ``__init__`` Python writes from them: a
    ``@dataclass`` or a ``typing.NamedTuple`` subclass without an ``__init__`` of its own
    (``Out(loss, mask=m)`` stores ``loss`` and ``m`` there); else ()."""
    if "__init__" in cls.methods or not cls.class_fields:
        return ()
    made = any((qualify(d.decorator.func if type(d.decorator) is cst.Call else d.decorator) or "").split(".")[-1]
               == "dataclass" for d in cls.node.decorators)
    if not made and not any(b.split(".")[-1] == "NamedTuple" for b in cls.bases):
        return ()
    return tuple(n for n, ann in cls.class_fields.items()
                 if not (type(ann) in (cst.Subscript, cst.Name, cst.Attribute) and "ClassVar" in _head(ann)))


def _head(ann: cst.BaseExpression) -> str:
    """The last name of an annotation's head (``ClassVar`` of ``typing.ClassVar[int]``)."""
    e = ann.value if type(ann) is cst.Subscript else ann
    return e.attr.value if type(e) is cst.Attribute else e.value if type(e) is cst.Name else ""


def class_level(node: cst.FunctionDef) -> bool:
    """A ``@staticmethod`` or ``@classmethod``: callable through the class's name."""
    return any(type(d.decorator) is cst.Name and d.decorator.value in ("staticmethod", "classmethod")
               for d in node.decorators)


def declared_all(bindings: List[tuple]) -> Optional[List[str]]:
    """A module's ``__all__`` when its module-level bindings spell it out as string literals
    (``__all__ = [...]``, ``+= [...]``, ``(...)``); None when it has none or one not literal."""
    names: Optional[List[str]] = None
    for b in bindings:
        if b[0] not in ("assign", "annassign") or len(b[1]) != 1 or not _is_all(b[1][0]):
            continue
        value = b[2]
        if type(value) is cst.BinaryOperation and type(value.operator) is cst.Add \
                and _is_all(value.left) and names is not None:
            added = _strings(value.right)
            if added is None:
                return None
            names = names + added
            continue
        names = _strings(value)
        if names is None:
            return None
    return names


def _is_all(node) -> bool:
    return type(node) is cst.Name and node.value == "__all__"


def _strings(node) -> Optional[List[str]]:
    if type(node) not in (cst.List, cst.Tuple):
        return None
    out = []
    for el in node.elements:
        v = el.value
        if type(v) is not cst.SimpleString or v.prefix.lower() not in ("", "u"):
            return None
        out.append(v.evaluated_value)
    return out


# how a class makes an attribute under a computed name: the call's method -> what it makes
_DYNAMIC_MAKERS = {"register_buffer": "buffer", "register_parameter": "buffer", "add_module": "module",
                   "register_module": "module"}


def dynamic_attribute(func: cst.BaseExpression, call: cst.Call) -> Optional[tuple]:
    """``self.register_buffer(f"idx_{s}", t)`` / ``setattr(self, "idx_{}".format(s), v)`` /
    ``self.add_module(...)``: (the name's template, what is made, the value); None for a
    literal name (a plain attribute) or a name with no literal part."""
    if type(func) is cst.Attribute and func.attr.value in _DYNAMIC_MAKERS and type(func.value) is cst.Name \
            and func.value.value == "self":
        kind, name, value = _DYNAMIC_MAKERS[func.attr.value], call.args[0].value, call.args[1].value
    elif (type(func) is cst.Name and func.value == "setattr" and len(call.args) == 3
          and type(call.args[0].value) is cst.Name and call.args[0].value.value == "self"):
        kind, name, value = "attr", call.args[1].value, call.args[2].value
    else:
        return None
    template = computed_name_template(name)
    return (template, kind, value) if template else None


def computed_name_template(name: cst.BaseExpression) -> Optional[str]:
    """The template of a computed attribute name, its literal text with ``{}`` for each computed
    part: ``f"idx_{s}"``, ``"idx_{}".format(s)`` and ``"idx_" + s`` give ``"idx_{}"``, ``f"{s}_var"``
    gives ``"{}_var"``; None for a plain string, or a name with no literal text."""
    if type(name) is cst.FormattedString and len(name.parts) > 1:
        text = "".join(p.value if type(p) is cst.FormattedStringText else "{}" for p in name.parts)
    elif (type(name) is cst.Call and type(name.func) is cst.Attribute and name.func.attr.value == "format"
          and type(name.func.value) is cst.SimpleString):
        text = re.sub(r"\{[^{}]*\}", "{}", name.func.value.evaluated_value)
    elif type(name) is cst.BinaryOperation and type(name.operator) is cst.Add and (
            type(name.left) is cst.SimpleString) != (type(name.right) is cst.SimpleString):
        lit = name.left if type(name.left) is cst.SimpleString else name.right
        text = lit.evaluated_value + "{}" if lit is name.left else "{}" + lit.evaluated_value
    else:
        return None
    return text if "{}" in text and text.replace("{}", "") else None
