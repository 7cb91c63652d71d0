"""The whole project: every file's interface, and answers to questions that cross files.

A file's evaluator leaves what it cannot see as a symbolic reference (``values.Value.ref``):
``("call", "pkg.losses.assign")``, ``("method", "pkg.heads.Head", "__call__")``,
``("attr", "pkg.base.Model", "anchors")``, ``("value", "pkg.consts.DEVICE")``. ``Project``
resolves them against the interfaces (``inference.interface``), never against syntax trees:
names are followed through import tables (re-exports in ``__init__``, ``import a.b as c``),
classes through their bases in any file, and the value found is resolved in turn. Answers are
memoised; a reference met again while it is being resolved (recursion, import cycles) is UNKNOWN.

Interfaces come from a dict (a CLI run indexes every file first) or, for the flake8 plugin that
sees one file at a time, from a loader that indexes files on demand (see ``inference.ondemand``).
"""

from __future__ import annotations

import itertools
from typing import Callable, Dict, Iterable, List, Optional, Set, Tuple

from torchsync_lint.inference.handed import HANDED, handed_value
from torchsync_lint.inference.project_calls import TEST_CALL, ProjectCalls, test_module  # noqa: F401 (re-exported)
from torchsync_lint.inference.roots import DICT_CLASSES, EXTERNAL_ROOTS, names_tensor_base
from torchsync_lint.inference.stars import exports
from torchsync_lint.inference.values import (
    ITEMS,
    CPU,
    CUDA,
    DEVICE,
    DEVICE_REF,
    DICT,
    FUNC,
    MAX_KEYS,
    MODULE,
    OBJECT,
    STR,
    TENSOR,
    TYPE,
    UNKNOWN,
    UNKNOWN_VALUE,
    Value,
    element_of,
    item_at,
    unpacked,
    from_data,
    join,
    tensor,
)

MODULE_BASE_SUFFIXES = ("Module", "Loss", "LightningModule", "Sequential", "ModuleList", "ModuleDict")
_MAX_DEPTH = 12
# A value still being computed (a cycle): ``join`` ignores NONE, so the cycle's other paths decide.
_BOTTOM = Value("none")


class Project(ProjectCalls):
    def __init__(self, interfaces: Dict[str, dict], loader: Optional[Callable[[str], Optional[dict]]] = None,
                 calls: Optional[Dict[str, List[Tuple[list, dict]]]] = None,
                 sets_default_device: Optional[bool] = None, validation_off: Optional[bool] = None,
                 own_log_prob: Optional[bool] = None, tables: Optional["Project"] = None,
                 may_export: Optional[Callable[[str, str], bool]] = None) -> None:
        """``interfaces``: module name -> interface data; ``loader(module)`` finds one not given.
        ``calls``, ``sets_default_device``, ``validation_off`` and ``own_log_prob``: what a whole run found over every file (the project
        index, ``run.project_index``), so a project loaded on demand answers as the whole one.
        ``tables``: a project over the first interfaces of ``interfaces`` (the same objects, in the
        same order: an earlier import wave's), whose key tables are copied, not built again.
        ``may_export(module, name)``: False where ``from module import *`` cannot bind ``name``
        (``run.star_text``, for a loader): such a star import is not expanded to answer for it."""
        self._ifaces: Dict[str, Optional[dict]] = dict(interfaces)
        self._loader = loader
        self._may_export = may_export
        self._functions: Dict[str, Tuple[dict, dict]] = {}  # key -> (interface, function data)
        self._classes: Dict[str, Tuple[dict, dict]] = {}
        self._definers: Optional[Dict[str, List[Tuple[str, str]]]] = None  # method name -> (class, method)
        self._given = len(interfaces)
        rest = iter(interfaces.values())
        if tables is not None and tables._loader is None and _prefix(tables._ifaces, interfaces, tables._given):
            self._functions, self._classes = dict(tables._functions), dict(tables._classes)
            rest = itertools.islice(rest, tables._given, None)
        for iface in rest:
            self._add(iface)
        self._resolved: Dict[tuple, Value] = {}
        self._busy: Set[tuple] = set()
        self._is_module: Dict[str, bool] = {}
        self._calls: Optional[Dict[str, List[Tuple[list, dict]]]] = calls
        self._stored_calls = calls is not None
        self._params: Dict[tuple, Value] = {}
        self._object_informative: Dict[str, bool] = {}
        self._exported: Dict[str, Dict[str, str]] = {}
        self._is_tensor: Dict[str, bool] = {}
        # some file moves the default device off the CPU: factories without device= go anywhere
        self.sets_default_device = any((i or {}).get("sets_default_device") for i in interfaces.values()) \
            if sets_default_device is None else sets_default_device
        # some file turns distribution argument validation off (inference.switches)
        self.validation_off = any((i or {}).get("validation_off") for i in interfaces.values()) \
            if validation_off is None else validation_off
        # some file has a `log_prob` of its own or builds distributions with `validate_args=False`
        self.own_log_prob = any((i or {}).get("own_log_prob") for i in interfaces.values()) \
            if own_log_prob is None else own_log_prob

    # -- interfaces ----------------------------------------------------------------------------
    def _add(self, iface: dict) -> None:
        for key, f in iface.get("functions", {}).items():
            self._functions.setdefault(key, (iface, f))
        for key, c in iface.get("classes", {}).items():
            self._classes.setdefault(key, (iface, c))
        self._definers: Optional[Dict[str, List[Tuple[str, str]]]] = None  # method name -> (class, method)

    def module(self, name: str) -> Optional[dict]:
        if name in self._ifaces:
            return self._ifaces[name]
        if self._loader is None:
            self._ifaces[name] = None
            return None
        iface = self._loader(name)
        if iface is not None:  # a miss is asked again later: the loader may skip a file for now
            self._ifaces[name] = iface
            self._add(iface)
            if not self._stored_calls:
                self._calls = None
        return iface

    def _module_of(self, key: str) -> None:
        """Load the interface that could define ``key`` (on-demand mode)."""
        if self._loader is None:
            return
        parts = key.split(".")
        for i in range(len(parts) - 1, 0, -1):
            if self.module(".".join(parts[:i])) is not None:
                return

    # -- names -----------------------------------------------------------------------------------
    def locate(self, q: str, depth: int = 0) -> Optional[Tuple[str, str]]:
        """("function" | "class" | "value", key) for a qualified name, following import tables."""
        if depth > _MAX_DEPTH:
            return None
        self._module_of(q)
        if q in self._functions:
            return "function", q
        if q in self._classes:
            return "class", q
        parts = q.split(".")
        for i in range(len(parts) - 1, 0, -1):
            iface = self.module(".".join(parts[:i]))
            if iface is None:
                continue
            head, rest = parts[i], parts[i + 1:]
            if not rest and head in iface.get("values", {}):
                return "value", q
            target = iface.get("aliases", {}).get(head) or self._starred(iface, head)
            if target is not None and target != q:
                return self.locate(".".join([target] + rest), depth + 1)
            if rest:  # Class.method / Class.attr of a class defined in that module
                cls_key = ".".join(parts[: i + 1])
                if cls_key in self._classes and len(rest) == 1:
                    m = self.find_method(cls_key, rest[0])
                    if m is not None:
                        return "function", m
            return None
        return None

    def external_module(self, q: str, depth: int = 0) -> Optional[str]:
        """``pkg.compat.torch`` -> ``torch`` where ``pkg/compat.py`` imports torch (or a name of
        it): a module of another package that a project module re-exports; None otherwise."""
        if depth > _MAX_DEPTH:
            return None
        parts = q.split(".")
        for i in range(len(parts) - 1, 0, -1):
            iface = self.module(".".join(parts[:i]))
            if iface is None:
                continue
            target = iface.get("aliases", {}).get(parts[i]) or self._starred(iface, parts[i])
            if target is None or target == q:
                return None
            full = ".".join([target] + parts[i + 1:])
            if target.split(".")[0] in EXTERNAL_ROOTS:
                return full
            return self.external_module(full, depth + 1)
        return None

    def exported(self, module: str, depth: int = 0) -> Dict[str, str]:
        """What ``from module import *`` binds there: name -> qualified target (``inference.stars``)."""
        got = self._exported.get(module)
        if got is not None:
            return got
        if depth > _MAX_DEPTH:
            return {}
        self._exported[module] = {}  # a star-import cycle binds nothing more
        got = self._exports_of(module, depth)
        if got is None:
            del self._exported[module]  # not memoised: an on-demand loader may find it later
            return {}
        self._exported[module] = got
        return got

    def _exports_of(self, module: str, depth: int) -> Optional[Dict[str, str]]:
        iface = self.module(module)
        if iface is None:
            return None
        return exports(module, iface, lambda m: self.exported(m, depth + 1))

    def _starred(self, iface: dict, name: str) -> Optional[str]:
        """``name`` as one of the module's star imports binds it."""
        found = None
        for star in iface.get("stars", ()):
            if star not in self._exported and self._may_export is not None and not self._may_export(star, name):
                continue  # loading what it exports would not find the name (a loader's every file)
            found = self.exported(star).get(name, found)  # the last star import binding it wins
        return found

    def class_key(self, q: str) -> Optional[str]:
        loc = self.locate(q)
        return loc[1] if loc is not None and loc[0] == "class" else None

    def mro(self, cls_key: str) -> List[str]:
        """The class and its project bases, breadth first (enough for single-inheritance code)."""
        out: List[str] = []
        todo = [cls_key]
        while todo and len(out) < 32:
            k = todo.pop(0)
            if k in out or k not in self._classes:
                continue
            out.append(k)
            for b in self._classes[k][1].get("bases", ()):
                bk = self.class_key(b)
                if bk is not None:
                    todo.append(bk)
        return out

    def fields(self, cls_key: str) -> tuple:
        """A dataclass's or NamedTuple's constructor fields, in order (``defs.generated_fields``):
        its project bases' first."""
        out: List[str] = []
        for k in reversed(self.mro(cls_key)):
            out.extend(n for n in self._classes[k][1].get("fields", ()) if n not in out)
        return tuple(out) if cls_key in self._classes and self._classes[cls_key][1].get("fields") else ()

    def bases_in_ancestry(self, cls_key: str) -> List[str]:
        """Every base named by the class or a project class it derives from (qualified names)."""
        return [b for k in self.mro(cls_key) for b in self._classes[k][1].get("bases", ())]

    def has_base_named(self, cls_key: str, suffix: str) -> bool:
        """Some class in the project ancestry names a base ending in ``suffix`` (a framework class)."""
        return any(b.split(".")[-1].endswith(suffix)
                   for k in self.mro(cls_key) for b in self._classes[k][1].get("bases", ()))

    def is_module(self, cls_key: str) -> bool:
        got = self._is_module.get(cls_key)
        if got is not None:
            return got
        self._is_module[cls_key] = False  # cycles in bases
        out = False
        entry = self._classes.get(cls_key)
        for b in entry[1].get("bases", ()) if entry is not None else ():
            if b.startswith("torch.nn.") or b.startswith("torch.jit.ScriptModule"):
                out = True
            else:
                bk = self.class_key(b)
                out = self.is_module(bk) if bk is not None else b.split(".")[-1].endswith(MODULE_BASE_SUFFIXES)
            if out:
                break
        self._is_module[cls_key] = out
        return out

    def find_method(self, cls_key: str, name: str) -> Optional[str]:
        for k in self.mro(cls_key):
            m = self._classes[k][1].get("methods", {}).get(name)
            if m is not None:
                return m
        return None

    def object_informative(self, cls_key: Optional[str], informative: Callable[[Value], bool]) -> bool:
        """Whether knowing a value is an instance of this (non-module) class can change what a
        rule decides: some method (either summary) or attribute of it, here or in a base, holds an
        informative value. A logger or a config object is not."""
        if cls_key is None:
            return False
        got = self._object_informative.get(cls_key)
        if got is not None:
            return got
        self._object_informative[cls_key] = False  # cycles through attributes holding the class
        out = False
        for k in self.mro(cls_key):
            c = self._classes[k][1]
            for m in c.get("methods", {}).values():
                entry = self._functions.get(m)
                data = entry[1] if entry is not None else {}
                if any(informative(self.deep(from_data(data[r]))) for r in ("returns", "returns_t", "returns_cpu")
                       if r in data):
                    out = True
                    break
            if not out:
                out = any(informative(self.deep(from_data(a))) for a in c.get("attrs", {}).values())
            if out:
                break
        self._object_informative[cls_key] = out
        return out

    def instance(self, cls_key: str) -> Value:
        if self.is_tensor_class(cls_key):
            return tensor()  # a subclass of torch.Tensor (a tensor with metadata): where, its data says
        return Value(MODULE if self.is_module(cls_key) else OBJECT, cls=cls_key)

    def is_tensor_class(self, cls_key: str) -> bool:
        """The class or a project class it derives from names a tensor base (``roots.names_tensor_base``)."""
        got = self._is_tensor.get(cls_key)
        if got is None:
            got = self._is_tensor[cls_key] = any(
                names_tensor_base(b) and self.class_key(b) is None
                for k in self.mro(cls_key) for b in self._classes[k][1].get("bases", ()))
        return got

    # -- references -----------------------------------------------------------------------------
    def resolve(self, ref: tuple) -> Value:
        got = self._resolved.get(ref)
        if got is not None:
            return got
        if ref in self._busy:
            return _BOTTOM  # recursion: the other returns of the cycle decide
        if len(self._busy) > 64:
            return UNKNOWN_VALUE
        self._busy.add(ref)
        try:
            out = self.deep(self._resolve(ref))
        finally:
            self._busy.discard(ref)
        self._resolved[ref] = out
        return out

    def deep(self, v: Value) -> Value:
        """``v`` with every reference inside it resolved."""
        if v.ref is not None:
            return self.resolve(v.ref)
        if v.device and v.device[0] == DEVICE_REF:
            named = self.resolve(("value", v.device[1:]))
            v = v.with_(device=named.device if named.kind in (STR, DEVICE) and named.device in (CPU, CUDA) else None)
        if v.elts:
            v = v.with_(elts=tuple(self.deep(e) for e in v.elts))
        if v.item is not None:
            item = self.deep(v.item)
            v = v.with_(item=item if item.kind != UNKNOWN else None)
        if v.keys:
            v = v.with_(keys=tuple((k, self.deep(x)) for k, x in v.keys))
        return v

    def _resolve(self, ref: tuple) -> Value:
        kind = ref[0]
        if kind == "default_device":
            return Value("device") if self.sets_default_device else UNKNOWN_VALUE
        if kind == "validation_off":
            # an informative value (as the default device's), so files that asked are checked again
            return Value("device") if self.validation_off else UNKNOWN_VALUE
        if kind == "defines":  # some class of the project has a method of this name
            return Value("device") if self.defines_method(ref[1]) else UNKNOWN_VALUE
        if kind == "own_log_prob":
            return Value("device") if self.own_log_prob else UNKNOWN_VALUE
        if kind == HANDED:
            return handed_value(self, ref)
        if kind == "join":
            return join(self.deep(ref[1]), self.deep(ref[2]))
        if kind == "iter":  # what iterating another file's value yields
            return element_of(self.resolve(ref[1]))
        if kind == "moved":  # `Model().to(d)` of another file's value: a module returns itself
            v = self.resolve(ref[1])
            if v.kind in (MODULE, OBJECT):
                return v
            if v.kind == TENSOR:  # a tensor's copy: where to is not in the reference
                return v.with_(device=CUDA if ref[2] == "cuda" else CPU if ref[2] == "cpu" else None)
            return UNKNOWN_VALUE
        if kind == "invoked":  # a method (`__call__`: calling it) of what another file's value resolves to
            v = self.resolve(ref[1])
            if v.kind in (MODULE, OBJECT) and v.cls is not None:
                return self.resolve(("method", v.cls, ref[2]) + tuple(ref[3:]))
            return UNKNOWN_VALUE
        if kind == "elt":  # member i of n unpacked from another file's value
            return unpacked(self.resolve(ref[3]), ref[1], ref[2])
        if kind == "call":
            loc = self.locate(ref[1])
            if loc is None:
                return UNKNOWN_VALUE
            if loc[0] == "function":
                return self._returns(loc[1], ref[2] if len(ref) > 2 else None)
            if loc[0] == "class":
                made = self.instance(loc[1])
                # a tensor subclass: the caller places it (``Calls.placed_subclass``) by its class
                return made.with_(cls=loc[1]) if made.kind == TENSOR else made
            return UNKNOWN_VALUE
        if kind == "method":
            cls_key = self.class_key(ref[1])
            if cls_key is None:
                torch_layer = ref[1].startswith("torch.nn.") and ref[2] in ("forward", "__call__")
                return tensor() if torch_layer else UNKNOWN_VALUE
            m = self.find_method(cls_key, ref[2])
            if m is None and ref[2] == "__call__" and self.is_module(cls_key):
                m = self.find_method(cls_key, "forward")
                if m is None:
                    return tensor()  # a torch.nn layer subclass that keeps torch's forward
            return self._returns(m, ref[3] if len(ref) > 3 else None) if m is not None else UNKNOWN_VALUE
        if kind == "item":  # `image[DATA]` of another file's class: its `__getitem__`, else what it keeps
            cls_key = self.class_key(ref[1])
            if cls_key is None:
                return UNKNOWN_VALUE
            m = self.find_method(cls_key, "__getitem__")
            if m is not None:
                return self._returns(m)
            return item_at(self.resolve(("attr", ref[1], ITEMS)), ref[2])
        if kind == "attr":
            cls_key = self.class_key(ref[1])
            for k in self.mro(cls_key) if cls_key is not None else ():
                attrs = self._classes[k][1].get("attrs", {})
                if ref[2] in attrs:
                    return from_data(attrs[ref[2]])
            return UNKNOWN_VALUE
        if kind == "type":  # an annotation naming another file's type alias, or class
            v = self.resolve(("value", ref[1]))
            if v.kind == TYPE and v.item is not None:
                return v.item
            loc = self.locate(ref[1])
            if loc is not None and loc[0] == "class":
                mro = self.mro(loc[1])
                if any(b.split(".")[-1] in DICT_CLASSES for k in mro for b in self._classes[k][1].get("bases", ())):
                    # `batch: Batch` of a TypedDict: a dict whose keys hold what its fields declare
                    fields: Dict[str, Value] = {}
                    for k in reversed(mro):
                        fields.update((n, from_data(d)) for n, d in self._classes[k][1].get("attrs", {}).items())
                    return Value(DICT, keys=tuple(fields.items())[:MAX_KEYS])
                return self.instance(loc[1]).with_(assumed=True)  # `batch: Batch`: an instance, declared
            return UNKNOWN_VALUE
        if kind == "value":
            loc = self.locate(ref[1])
            if loc is not None and loc[0] == "function":
                return Value(FUNC, cls=loc[1])  # a function named, not called: calling the value calls it
            if loc is not None and loc[0] == "value":
                mod, _, name = loc[1].rpartition(".")
                iface = self.module(mod)
                if iface is not None and name in iface.get("values", {}):
                    return from_data(iface["values"][name])
            return UNKNOWN_VALUE
        return UNKNOWN_VALUE

    def function_data(self, key: str) -> Optional[dict]:
        entry = self._functions.get(key)
        return entry[1] if entry is not None else None

    def _returns(self, key: str, flag: Optional[str] = None) -> Value:
        """What a function returns; with a flag, for a call that passes tensors (see
        ``Evaluator._call_flag``): its summary under tensors in its unknown parameters."""
        entry = self._functions.get(key)
        if entry is None:
            return UNKNOWN_VALUE
        data = entry[1]
        if flag is not None:
            alt = data.get("returns_cpu" if flag == "cpu" else "returns_t")
            if alt is not None:
                v = from_data(alt)
                return _assumed(v) if flag == "ta" else v
        return from_data(data["returns"]) if "returns" in data else UNKNOWN_VALUE

    def modules(self) -> Iterable[str]:
        return [m for m, i in self._ifaces.items() if i is not None]


def _prefix(given: Dict[str, Optional[dict]], interfaces: Dict[str, dict], n: int) -> bool:
    """The first ``n`` entries of ``given`` are the first ``n`` of ``interfaces`` (same names, same objects)."""
    return len(interfaces) >= n and all(
        a == b and x is y for (a, x), (b, y) in zip(itertools.islice(given.items(), n), interfaces.items()))


def _assumed(v: Value) -> Value:
    """Tensors derived from tensors that are tensors by convention only are no better."""
    if v.kind == "tensor":
        return v.with_(assumed=True)
    if v.elts:
        return v.with_(elts=tuple(_assumed(e) for e in v.elts))
    if v.keys:
        return v.with_(keys=tuple((k, _assumed(x)) for k, x in v.keys))
    return v
