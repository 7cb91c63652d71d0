"""Abstract evaluation of expressions: is it a tensor, on which device, of which dtype.

Names resolve through scopes: a function's parameters (annotations, defaults, the values passed
at its call sites in the same file, and ``forward`` inputs, which are tensors), then its
assignments, then enclosing functions, then module globals. Results of same-file functions and
``self.<attr>`` set anywhere in the class are summarised lazily, once, with a recursion guard.

The evaluator is put together from mixins, each in its own module: ``summaries`` (parameters,
returns, ``self`` attributes), ``annotations`` (what an annotation says), ``torch_calls`` (torch's
API); this module keeps the scopes, references to other files and the expressions.
"""

from __future__ import annotations

from typing import Dict, List, Optional, Set

import libcst as cst

from torchsync_lint.inference import torch_api as api
from torchsync_lint.inference import torch_facts as facts
from torchsync_lint.inference.annotations import Annotations
from torchsync_lint.inference.index import ClassInfo, FileIndex, FunctionInfo, any_base
from torchsync_lint.inference.scope import Scope
from torchsync_lint.inference.signatures import refine_annotation, vague_tensors
from torchsync_lint.inference.summaries import Summaries
from torchsync_lint.inference.values import (
    BATCH,
    CPU,
    CUDA,
    DEVICE,
    DICT,
    DTYPE,
    EVENT,
    FUNC,
    LIST,
    MODULE,
    NDARRAY,
    NONE,
    NUMBER,
    OBJECT,
    RANGE,
    SELF,
    SELF_ATTR,
    SIZE,
    STR,
    STREAM,
    TENSOR,
    TENSOR_SEQ,
    TUPLE,
    UNKNOWN,
    UNKNOWN_VALUE,
    Value,
    join,
    number,
    tensor,
)

from torchsync_lint.inference.torch_calls import (  # noqa: F401 (re-exported)
    BOOL,
    DTYPE_NAMES,
    EXTERNAL_ROOTS,
    FULL_REDUCTIONS,
    INT,
    MODULE_SELF_METHODS,
    SHAPE_ATTRS,
    TorchCalls,
    TYPED_TENSORS,
)


class Evaluator(TorchCalls, Annotations, Summaries):
    def __init__(self, index: FileIndex, hot_functions: Set[str] = frozenset(), project=None,
                 assume_params: Optional[str] = None) -> None:
        self.index = index
        # interfaces only: summarise functions as if their unknown parameters held tensors
        # ("any": anywhere, "cpu": on the host), for call sites that pass tensors
        self.assume_params = assume_params
        self._host_variant: Optional["Evaluator"] = None  # assume_params="cpu", made on demand
        self._annotation_memo: Dict[int, tuple] = {}  # id(annotation node) -> (node, value)
        # other files' interfaces (``inference.project.Project``); None: references stay symbolic
        self.project = project
        self.refs: Set[tuple] = set()  # references met while no project was there to resolve them
        # with a project that is still growing (files checked in import order): what each
        # reference resolved to, so the project pass can tell whether the final project answers
        # differently (``project_pass``); None: not recorded
        self.recorded: Optional[Dict[tuple, Value]] = None
        self.open_params: Set[str] = set()  # functions whose parameters only other files could tell
        self.device_blocks: List[Optional[str]] = []  # `with torch.device(d):` blocks around the walk
        self._sets_default: Optional[bool] = None
        self.aliases = index.aliases
        self.hot_functions = hot_functions  # extra names whose unannotated inputs are tensors
        self._params: Dict[int, Dict[str, Value]] = {}
        self._returns: Dict[int, Value] = {}
        self._summary: Dict[int, Scope] = {}
        self._attrs: Dict[tuple, Value] = {}
        self._busy: Set[tuple] = set()
        # summaries cut short because they were asked for while being computed (recursion): a
        # result computed under a cut of an enclosing summary is partial and is not memoised
        self._cuts: List[tuple] = []
        # partial summaries are memoised for the rest of the computation that made them (no
        # blow-up), then forgotten so the next question computes them again with what is known
        # by then; after a number of rounds they are kept (the walk of big files stays linear)
        self._tentative: List[tuple] = []
        self._rounds_left = 64
        self._module_scope: Optional[Scope] = None
        self._declared: Dict[int, Dict[str, Value]] = {}

    def default_device(self) -> Optional[str]:
        """Where a factory without ``device=`` puts its tensor: the CPU, unless this file or any
        file of the project calls ``torch.set_default_device`` with another device, or the call
        sits inside ``with torch.device(...)`` (then: that device)."""
        if self.device_blocks:
            return self.device_blocks[-1]
        if self.sets_default_device():
            return None
        if self.project is not None:
            if self.recorded is not None:
                self.recorded[("default_device",)] = self.project.resolve(("default_device",))
            if self.project.sets_default_device:
                return None
        else:
            self.refs.add(("default_device",))  # another file may set it: the project will tell
        return CPU

    def sets_default_device(self) -> bool:
        """This file calls ``torch.set_default_device`` with something other than the CPU."""
        if self._sets_default is None:
            self._sets_default = False  # device_of below may ask for the default again
            self._sets_default = any(
                self.device_of(c.args[0].value, self.module_scope()) != CPU
                for c in self.index.torch_calls.get("torch.set_default_device", ()) if c.args)
        return self._sets_default

    # -- other files -------------------------------------------------------------------------
    def _ref(self, ref: tuple) -> Value:
        """What another file says: resolved through the project, else a symbolic unknown."""
        if self.project is not None:
            v = self.project.resolve(ref)
            if self.recorded is not None:
                self.recorded[ref] = v
            return v
        self.refs.add(ref)
        return Value(UNKNOWN, ref=ref)

    def _instance(self, cls: ClassInfo) -> Value:
        """``Cls(...)`` of a class of this file (its bases may live elsewhere)."""
        if self.project is not None and self.recorded is not None:
            # a growing project does not hold this file yet: ask it about the foreign bases only
            v = Value(MODULE if cls.is_module or self._module_by_bases(cls) else OBJECT, cls=cls.key)
            self.recorded[("call", cls.key)] = v
            return v
        if self.project is not None:
            return self.project.instance(cls.key)
        if cls.is_module:
            return Value(MODULE, cls=cls.key)
        if all(self.index.classes.get(b.split(".")[-1]) is not None or b.split(".")[0] in ("builtins", "object")
               for b in cls.bases):
            return Value(OBJECT, cls=cls.key)  # every base is known here: no nn.Module among them
        return self._ref(("call", cls.key))

    def _module_by_bases(self, cls: ClassInfo) -> bool:
        """Some base, here or (through the project) in another file, is an ``nn.Module``."""
        return any_base(cls, self.index, self.project, lambda local: local.is_module,
                        lambda key: self.project.is_module(key))

    def _local_class(self, key: Optional[str]) -> Optional[ClassInfo]:
        if key is None:
            return None
        cls = self.index.classes.get(key.split(".")[-1])
        return cls if cls is not None and cls.key == key else None

    def _foreign_bases(self, cls: ClassInfo) -> list:
        return [b for b in cls.bases if self.index.classes.get(b.split(".")[-1]) is None
                and b.split(".")[0] not in EXTERNAL_ROOTS and b != "object"]

    def _call_flag(self, call: Optional[cst.Call], scope: Optional[Scope]) -> tuple:
        """How a call's arguments look to the callee's summary: ("t",) some tensor anywhere, ("cpu",)
        only host tensors, ("ta",) tensors by convention only, () none."""
        if call is None or scope is None:
            return ()
        tensors = [v for v in (self.infer(a.value, scope) for a in call.args) if v.kind == TENSOR]
        if not tensors:
            return ()
        if all(v.device == CPU for v in tensors):
            return ("cpu",)
        return ("ta",) if all(v.assumed for v in tensors) else ("t",)

    def _method_result(self, recv: Value, name: str, call: Optional[cst.Call] = None,
                       scope: Optional[Scope] = None) -> Value:
        """``obj.name(...)`` for an instance of a known class."""
        if recv.kind == MODULE and name in MODULE_SELF_METHODS:
            return recv
        if recv.kind == MODULE and name == "state_dict":
            return Value(DICT, item=tensor())  # its parameters and buffers, where the module is
        local = self._local_class(recv.cls)
        if local is not None:
            m = self.method(local, name)
            if m is not None:
                return self.returns_at(m, call, scope)
            if name == "__call__" and recv.kind == MODULE:
                m = self.method(local, "forward")
                if m is not None:
                    return self.returns_at(m, call, scope)
            if not self._foreign_bases(local):
                return tensor() if recv.kind == MODULE and name in ("forward", "__call__") else UNKNOWN_VALUE
        if recv.cls == "torch.nn.Module":
            return UNKNOWN_VALUE  # `model: nn.Module`: any module, which may return a tuple or a dict
        if recv.cls is None or recv.cls.startswith("torch."):  # a torch.nn layer: its output is a tensor
            return tensor() if recv.kind == MODULE and name in ("forward", "__call__") else UNKNOWN_VALUE
        return self._ref(("method", recv.cls, name) + self._call_flag(call, scope))

    # -- scopes ------------------------------------------------------------------------------
    def module_scope(self) -> Scope:
        if self._module_scope is None:
            self._module_scope = Scope(None, None, {})
            for b in self.index.module_bindings:
                self.replay(b, self._module_scope)
        return self._module_scope

    def summary_scope(self, func: FunctionInfo) -> Scope:
        """The function's names after all its assignments, in order (flow-insensitive)."""
        got = self._summary.get(id(func))
        if got is not None:
            return got
        parent = self.summary_scope(func.parent) if func.parent is not None else self.module_scope()
        partial = ("params", id(func)) in self._busy  # asked while its own parameters are computed
        mark = len(self._cuts)
        scope = Scope(func, parent, dict(self.params(func)))
        partial = partial or not self._complete(("summary", id(func)), mark)
        # published before replay: recursion sees a partial scope
        self._memo(self._summary, id(func), scope, not partial)
        for b in func.bindings:
            self.replay(b, scope)
        self._forget_cuts()
        return scope

    def replay(self, binding: tuple, scope: Scope) -> None:
        kind = binding[0]
        if kind == "assign":
            value = self.infer(binding[2], scope)
            for target in binding[1]:
                self.bind(target, value, scope)
        elif kind == "annassign":
            target, value, ann = binding[1][0], binding[2], binding[3]
            self.bind(target, self.annotated(ann, value, scope), scope)
        elif kind == "for":
            self.bind(binding[1], self.iter_element(binding[2], scope), scope)
        elif kind == "with":
            self.bind(binding[1], UNKNOWN_VALUE, scope)

    def annotated(self, ann: cst.BaseExpression, value: Optional[cst.BaseExpression], scope: Scope) -> Value:
        """``name: ann = value``: the annotation, unless the value says more (``m: Tensor = x > 0`` is bool)."""
        v = self.annotation_value(ann)
        if value is not None and (v.kind == UNKNOWN or (v.kind == TENSOR and v.device is None and v.dtype is None)):
            got = self.infer(value, scope)
            if v.kind == UNKNOWN or got.kind == TENSOR:
                v = got
        return v

    def bind(self, target: cst.BaseExpression, value: Value, scope: Scope) -> None:
        if isinstance(target, cst.Name):
            if value.kind == UNKNOWN and scope.func is not None:
                # a parameter keeps its declared type (as a type checker reads it) when
                # reassigned from something we cannot see: ``images, targets = self.transform(...)``
                value = self.declared(scope.func).get(target.value, value)
            scope.values[target.value] = value
        elif isinstance(target, cst.Attribute) and isinstance(target.value, cst.Name) and scope.func is not None:
            if (scope.lookup(target.value.value) or UNKNOWN_VALUE).kind == SELF:
                # `self.x = ...`: what this method reads back until the next assignment
                scope.values[SELF_ATTR + target.attr.value] = value
        elif isinstance(target, (cst.Tuple, cst.List)):
            elements = target.elements
            starred = any(isinstance(e, cst.StarredElement) for e in elements)
            for i, el in enumerate(elements):
                if isinstance(el, cst.StarredElement):
                    self.bind(el.value, Value(LIST), scope)
                    continue
                if value.kind in (TUPLE, LIST) and len(value.elts) == len(elements) and not starred:
                    v = value.elts[i]
                elif value.kind in (TUPLE, LIST) and starred and len(value.elts) >= len(elements) - 1:
                    # `a, *rest, b = t`: the names before the star count from the front, after it from the back
                    before = next(j for j, x in enumerate(elements) if isinstance(x, cst.StarredElement)) > i
                    v = value.elts[i] if before else value.elts[len(value.elts) - (len(elements) - i)]
                elif value.kind == SIZE:
                    v = INT
                elif value.kind in (LIST, TUPLE) and value.item is not None and not value.elts:
                    v = value.item
                elif value.kind in (TENSOR, TENSOR_SEQ):
                    v = tensor(value.device, value.dtype).with_(assumed=value.assumed)  # TENSOR_SEQ keeps a common dtype (nonzero: int)
                elif value.kind == BATCH:
                    v = value  # `images, targets = batch`
                else:
                    v = UNKNOWN_VALUE
                self.bind(el.value, v, scope)

    def iter_element(self, it: cst.BaseExpression, scope: Scope) -> Value:
        if isinstance(it, cst.Call):
            q = self.aliases.qualify(it.func)
            if q == "builtins.enumerate" and it.args:
                return Value(TUPLE, elts=(INT, self.iter_element(it.args[0].value, scope)))
            if q == "builtins.zip" and it.args:
                return Value(TUPLE, elts=tuple(self.iter_element(a.value, scope) for a in it.args))
            if q in api.PASS_THROUGH_ITERABLES and it.args:
                return self.iter_element(it.args[0].value, scope)  # tqdm(loader), iter(loader)
            if isinstance(it.func, cst.Attribute) and it.func.attr.value in ("items", "values"):
                base = self.infer(it.func.value, scope)
                if base.kind == BATCH:  # a dict batch: its values are batches too
                    return base if it.func.attr.value == "values" else Value(TUPLE, elts=(UNKNOWN_VALUE, base))
        v = self.infer(it, scope)
        if v.kind == OBJECT and v.cls == "torch.utils.data.DataLoader":
            return Value(BATCH, pinned=v.pinned, assumed=v.assumed)
        if v.kind == BATCH:
            return v
        if v.kind == RANGE:
            return INT
        if v.kind == SIZE:
            return INT
        if v.kind in (TENSOR, TENSOR_SEQ):
            return tensor(v.device, v.dtype).with_(assumed=v.assumed)
        if v.kind in (LIST, TUPLE) and v.item is not None and not v.elts:
            return v.item
        if v.kind in (LIST, TUPLE) and v.elts:
            out = v.elts[0]
            for e in v.elts[1:]:
                out = join(out, e)
            return out
        return UNKNOWN_VALUE

    # -- expressions -------------------------------------------------------------------------
    def infer(self, e: cst.BaseExpression, scope: Scope) -> Value:
        if isinstance(e, cst.Name):
            name = e.value
            if name in ("True", "False"):
                return BOOL
            if name == "None":
                return Value(NONE)
            v = scope.lookup(name)
            if v is not None:
                if (v.kind == LIST and not v.elts and scope.func is not None
                        and (v.item is None or vague_tensors(v.item))):  # `boxes: list[Tensor] = []`
                    return self._appended(name, v, scope)
                return v
            q = self.aliases.map.get(name)
            if q is not None and q.split(".")[0] not in EXTERNAL_ROOTS and "." in q:
                return self._ref(("value", q))  # a module-level value imported from another file
            return UNKNOWN_VALUE
        if isinstance(e, cst.Integer):
            return INT
        if isinstance(e, (cst.Float, cst.Imaginary)):
            return number("float")
        if isinstance(e, cst.SimpleString):
            if "cpu" not in e.value and "cuda" not in e.value:
                return Value(STR)  # no device name: skip evaluating the literal (ast.literal_eval)
            text = e.evaluated_value
            if isinstance(text, str) and text.startswith(("cpu", "cuda")):
                return Value(STR, device=CPU if text.startswith("cpu") else CUDA)
            return Value(STR)
        if isinstance(e, (cst.ConcatenatedString, cst.FormattedString)):
            return Value(STR)
        if isinstance(e, (cst.List, cst.Tuple)):
            kind = LIST if isinstance(e, cst.List) else TUPLE
            if any(isinstance(el, cst.StarredElement) for el in e.elements):
                return Value(kind)
            return Value(kind, elts=tuple(self.infer(el.value, scope) for el in e.elements))
        if isinstance(e, (cst.ListComp, cst.GeneratorExp)):
            return self._comprehension(e, scope)
        if isinstance(e, cst.Dict):
            return self._dict_literal(e, scope)
        if isinstance(e, cst.Attribute):
            return self._attribute(e, scope)
        if scope.func is None and scope.cls is None and isinstance(e, (cst.Subscript, cst.BinaryOperation, cst.Call)):
            alias = self.type_expression(e)  # `NdarrayOrTensor = np.ndarray | torch.Tensor`
            if alias is not None:
                return alias
        if isinstance(e, cst.Subscript):
            return self._subscript(e, scope)
        if isinstance(e, cst.Call):
            return self._call(e, scope)
        if isinstance(e, cst.BinaryOperation):
            return self._binary(e, scope)
        if isinstance(e, cst.Comparison):
            return self._comparison(e, scope)
        if isinstance(e, cst.UnaryOperation):
            v = self.infer(e.expression, scope)
            if isinstance(e.operator, cst.Not):
                return BOOL if v.kind != UNKNOWN else UNKNOWN_VALUE
            return v if v.kind in (TENSOR, NUMBER) else UNKNOWN_VALUE
        if isinstance(e, cst.BooleanOperation):
            a, b = self.infer(e.left, scope), self.infer(e.right, scope)
            if a.kind == b.kind and a.kind in (TENSOR, NUMBER):
                return join(a, b)
            return UNKNOWN_VALUE
        if isinstance(e, cst.IfExp):
            return join(self.infer(e.body, scope), self.infer(e.orelse, scope))
        if isinstance(e, cst.NamedExpr):
            return self.infer(e.value, scope)
        return UNKNOWN_VALUE

    def _appended(self, name: str, v: Value, scope: Scope) -> Value:
        """``feats = []`` ... ``feats.append(f.cpu())``: a list holds what the function appends to
        it (``torch.cat(feats)`` is then on the host)."""
        exprs = scope.func.appends.get(name)
        key = ("appended", id(scope.func), name)
        if not exprs or key in self._busy:
            return v
        self._busy.add(key)
        try:
            item = None
            for e in exprs:
                got = self.infer(e, scope)
                item = got if item is None else join(item, got)
        finally:
            self._busy.discard(key)
        if item is None or item.kind == UNKNOWN:
            return v
        return v.with_(item=item if v.item is None else refine_annotation(v.item, item))

    def _comprehension(self, e, scope: Scope) -> Value:
        """``[torch.linspace(-1, 1, s) for s in size]``: a list whose members are the element's value."""
        inner = Scope(scope.func, scope, {})
        comp = e.for_in
        while comp is not None:
            self.bind(comp.target, self.iter_element(comp.iter, inner), inner)
            comp = comp.inner_for_in
        v = self.infer(e.elt, inner)
        return Value(LIST, item=v if v.kind != UNKNOWN else None)

    def _dict_literal(self, e: cst.Dict, scope: Scope) -> Value:
        """``{"a": (torch.linspace(0, 1, 5), True), ...}``: a dict whose values share one value."""
        item: Optional[Value] = None
        for el in e.elements:
            if not isinstance(el, cst.DictElement):
                return Value(DICT)  # **splat
            v = self.infer(el.value, scope)
            item = v if item is None else join(item, v)
            if item.kind == UNKNOWN:
                return Value(DICT)
        return Value(DICT, item=item)

    def _attribute(self, e: cst.Attribute, scope: Scope) -> Value:
        attr = e.attr.value
        q = self.aliases.qualify(e)
        if q is not None:
            if q.startswith("torch.") and attr in DTYPE_NAMES:
                return Value(DTYPE)
            if q in facts.float_constants() or q in api.HOST_FLOAT_CONSTANTS:
                return number("float")
            return _function_reference(q)
        base = self.infer(e.value, scope)
        if base.kind == SELF:
            local = scope.lookup(SELF_ATTR + attr)
            return local if local is not None else self.self_attr(scope.cls, attr)
        if base.kind == BATCH:
            if attr in SHAPE_ATTRS or attr in api.ATTR_NUMBER or attr in ("dtype", "device"):
                # a part's `.shape`, `.ndim`, `.dtype`, `.device`: Python-side values, as a tensor's
                return self._attribute_of(tensor(base.device), attr)
            return base  # batch.images (a dataclass or named tuple of host tensors)
        return self._attribute_of(base, attr)

    @staticmethod
    def _attribute_of(base: Value, attr: str) -> Value:
        if attr in SHAPE_ATTRS and base.kind not in (NDARRAY,):
            return Value(SIZE)  # `.shape`, a distribution's `batch_shape`: Python ints, whatever holds them
        if base.kind == TENSOR:
            if attr == "shape":
                return Value(SIZE)
            if attr == "device":
                return Value(DEVICE, device=base.device)
            if attr == "dtype":
                return Value(DTYPE)
            if attr in api.ATTR_NUMBER:
                return number()
            if attr in api.ATTR_TENSOR:
                return tensor(base.device, base.dtype if attr != "grad" else None)
        return UNKNOWN_VALUE

    def _subscript(self, e: cst.Subscript, scope: Scope) -> Value:
        base = self.infer(e.value, scope)
        if base.kind == BATCH:
            return base  # batch["image"], batch[0]
        if base.kind == TENSOR:
            if any(isinstance(el.slice, cst.Index) and isinstance(el.slice.value, cst.SimpleString) for el in e.slice):
                return UNKNOWN_VALUE  # `obj["key"]`: no tensor takes a str index, so `obj` was mis-typed
            ndim = self._indexed_ndim(base.ndim, e, scope)
            return tensor(base.device, base.dtype).with_(assumed=base.assumed, ndim=ndim, zero_dim=ndim == 0)
        if base.kind == TENSOR_SEQ:
            if len(e.slice) == 1 and isinstance(e.slice[0].slice, cst.Slice):
                return base
            return tensor(base.device, base.dtype).with_(ndim=base.ndim, zero_dim=base.ndim == 0)
        if base.kind == SIZE:
            if len(e.slice) == 1 and isinstance(e.slice[0].slice, cst.Slice):
                return Value(SIZE)
            return INT
        if base.kind in (TUPLE, LIST, DICT) and base.item is not None and not base.elts and len(e.slice) == 1:
            if isinstance(e.slice[0].slice, cst.Slice):
                return base if base.kind != DICT else UNKNOWN_VALUE
            return base.item
        if base.kind in (TUPLE, LIST) and base.elts and len(e.slice) == 1:
            idx = e.slice[0].slice
            if isinstance(idx, cst.Index):
                i = _int_literal(idx.value)
                if i is not None and -len(base.elts) <= i < len(base.elts):
                    return base.elts[i]
        if base.kind == UNKNOWN and len(e.slice) == 1 and isinstance(e.slice[0].slice, cst.Index):
            # only a tensor takes a device boolean mask (a list cannot, numpy cannot read a GPU one)
            mask = self.infer(e.slice[0].slice.value, scope)
            if mask.kind == TENSOR and mask.dtype == "bool" and mask.device != CPU and not mask.assumed:
                return tensor(mask.device)
        return UNKNOWN_VALUE

    def _indexed_ndim(self, ndim: Optional[int], e: cst.Subscript, scope: Scope) -> Optional[int]:
        """Dimensions left after ``x[0, :, None]``: Python integers take one each, slices none,
        ``None`` adds one; an ellipsis or a tensor index leaves it unknown."""
        if ndim is None:
            return None
        for el in e.slice:
            s = el.slice
            if isinstance(s, cst.Slice):
                continue
            if isinstance(s.value, cst.Name) and s.value.value == "None":
                ndim += 1
                continue
            if isinstance(s.value, cst.Ellipsis):
                return None
            v = self.infer(s.value, scope)
            if v.kind != NUMBER or v.dtype not in ("int", None):
                return None
            ndim -= 1
        return ndim if ndim >= 0 else None

    def _binary(self, e: cst.BinaryOperation, scope: Scope) -> Value:
        a, b = _device_batch_member(self.infer(e.left, scope)), _device_batch_member(self.infer(e.right, scope))
        if TENSOR in (a.kind, b.kind):
            other = b if a.kind == TENSOR else a
            if other.kind not in (TENSOR, NUMBER, SIZE, NDARRAY, LIST, UNKNOWN):
                return UNKNOWN_VALUE
            devices = {v.device for v in (a, b) if v.kind == TENSOR}
            device = CUDA if CUDA in devices else (CPU if devices == {CPU} else None)
            if isinstance(e.operator, (cst.Divide,)):
                dtype = "float"
            elif isinstance(e.operator, (cst.BitAnd, cst.BitOr, cst.BitXor)) and {a.dtype, b.dtype} <= {"bool"}:
                dtype = "bool"
            elif a.kind == b.kind == TENSOR:
                dtype = a.dtype if a.dtype == b.dtype else None
            else:
                t = a if a.kind == TENSOR else b
                dtype = t.dtype if t.dtype != "bool" else None
            # `n // 2` of an assumed input is as much a guess as `n`
            out = tensor(device, dtype).with_(assumed=all(v.assumed for v in (a, b) if v.kind == TENSOR))
            dims = [v.ndim if v.kind == TENSOR else 0 if v.kind == NUMBER else None for v in (a, b)]
            if None not in dims:  # broadcasting: the larger rank
                out = out.with_(ndim=max(dims), zero_dim=max(dims) == 0)
            return out
        if a.kind == NUMBER and b.kind == NUMBER:
            return number()
        if a.kind == SIZE and b.kind in (SIZE, TUPLE) and isinstance(e.operator, cst.Add):
            return Value(SIZE)
        if a.kind == STR or (a.kind == b.kind and a.kind in (LIST, TUPLE)):
            return Value(a.kind)
        if isinstance(e.operator, cst.Multiply) and {a.kind, b.kind} & {LIST, TUPLE} and NUMBER in (a.kind, b.kind):
            seq = a if a.kind in (LIST, TUPLE) else b  # `[i] * n`: a list of what it repeats
            item = seq.item
            for x in seq.elts:
                item = x if item is None else join(item, x)
            return Value(seq.kind, item=item if item is not None and item.kind != UNKNOWN else None)
        if {a.kind, b.kind} <= {NUMBER, SIZE} and isinstance(e.operator, (cst.Multiply,)):
            return Value(SIZE) if SIZE in (a.kind, b.kind) else number()
        if a.kind == NDARRAY or b.kind == NDARRAY:
            return Value(NDARRAY)
        return UNKNOWN_VALUE

    def _comparison(self, e: cst.Comparison, scope: Scope) -> Value:
        if all(isinstance(c.operator, (cst.Is, cst.IsNot, cst.In, cst.NotIn)) for c in e.comparisons):
            return BOOL
        vals = [self.infer(e.left, scope)] + [self.infer(c.comparator, scope) for c in e.comparisons]
        vals = [_device_batch_member(v) for v in vals]
        tensors = [v for v in vals if v.kind == TENSOR]
        if tensors:
            devices = {v.device for v in tensors}
            device = CUDA if CUDA in devices else (CPU if devices == {CPU} else None)
            return tensor(device, "bool").with_(assumed=all(v.assumed for v in tensors))
        if any(v.kind in (UNKNOWN, TENSOR_SEQ, MODULE, SELF) for v in vals):
            return UNKNOWN_VALUE
        if any(v.kind == NDARRAY for v in vals):
            return Value(NDARRAY)
        return BOOL

    # -- calls -------------------------------------------------------------------------------
    def device_arg(self, call: cst.Call, scope: Scope) -> Optional[str]:
        """The device a factory call names: "cpu", "cuda", None (none given) or "?" (a variable)."""
        for a in call.args:
            if a.keyword is not None and a.keyword.value == "device":
                return self.device_of(a.value, scope)
        return None

    def device_of(self, e: cst.BaseExpression, scope: Scope) -> str:
        if isinstance(e, cst.SimpleString):
            text = str(e.evaluated_value)
            return CPU if text.startswith("cpu") else CUDA if text.startswith("cuda") else "?"
        if isinstance(e, cst.Call) and self.aliases.qualify(e.func) == "torch.device" and e.args:
            return self.device_of(e.args[0].value, scope)
        if isinstance(e, cst.Attribute) and e.attr.value == "device":
            base = self.infer(e.value, scope)
            if base.kind == TENSOR:
                return base.device or "?"
        if isinstance(e, (cst.Name, cst.Attribute)):
            v = self.infer(e, scope)  # a variable holding "cpu" or torch.device("cuda")
            if v.kind in (STR, DEVICE) and v.device in (CPU, CUDA):
                return v.device
        return "?"

    def dtype_arg(self, call: cst.Call) -> Optional[str]:
        for a in call.args:
            if a.keyword is not None and a.keyword.value == "dtype":
                name = (self.aliases.qualify(a.value) or "").split(".")[-1]
                return DTYPE_NAMES.get(name)
        return None

    def _first_tensor_device(self, call: cst.Call, scope: Scope) -> Optional[str]:
        devices = set()
        numbers_only = any(a.keyword is None for a in call.args)
        for a in call.args:
            if a.keyword is None:
                v = self.infer(a.value, scope)
                numbers_only = numbers_only and v.kind == NUMBER
                if v.kind in (TENSOR, TENSOR_SEQ):
                    devices.add(v.device)
                elif v.kind in (LIST, TUPLE):
                    devices.update(x.device for x in v.elts if x.kind == TENSOR)
                    if v.item is not None and v.item.kind == TENSOR:
                        devices.add(v.item.device)
        if CUDA in devices:
            return CUDA
        if numbers_only and self.device_arg(call, scope) is None:
            return CPU  # `torch.div(n, 2)` of Python numbers wraps them in CPU tensors
        return CPU if devices == {CPU} else None

    def _call(self, call: cst.Call, scope: Scope) -> Value:
        func = call.func
        q = self.aliases.qualify(func)
        if q is None and isinstance(func, cst.Name):
            ref = scope.lookup(func.value)  # `window_fn(n)` with `window_fn=torch.hamming_window`
            q = ref.cls if ref is not None and ref.kind == FUNC else None
        if q is not None:
            v = self._qualified_call(q, call, scope)
            if v is not None:
                return v
        if isinstance(func, cst.Attribute):
            recv = self.infer(func.value, scope)
            name = func.attr.value
            if recv.kind == TENSOR:
                return self.tensor_method(name, recv, call, scope)
            if recv.kind == SELF:
                m = self.method(scope.cls, name)
                if m is not None:
                    return self.returns_at(m, call, scope)
                attr = self.self_attr(scope.cls, name)
                if (attr.kind == MODULE and self._local_class(attr.cls) is None and attr.cls is not None
                        and not attr.cls.startswith("torch.")):
                    return self._method_result(attr, "__call__", call, scope)  # a module class of another file
                if attr.kind == MODULE and attr.cls == "torch.nn.Module":
                    return UNKNOWN_VALUE  # annotated `nn.Module` only: any module, any output
                if attr.kind == MODULE:
                    return self._submodule_call(scope.cls, name)
                if attr.kind == OBJECT:
                    return self._method_result(attr, "__call__", call, scope)
                if attr.kind == FUNC and attr.cls is not None:
                    return self._qualified_call(attr.cls, call, scope) or UNKNOWN_VALUE
                if attr.kind == UNKNOWN and scope.cls is not None and name not in scope.cls.attrs:
                    for base in self._foreign_bases(scope.cls):
                        # a method inherited from another file
                        got = self._ref(("method", base, name) + self._call_flag(call, scope))
                        if got.kind != UNKNOWN or got.ref is not None:
                            return got
                return UNKNOWN_VALUE
            if recv.kind in (MODULE, OBJECT):
                return self._method_result(recv, name, call, scope)
            if (isinstance(func.value, cst.Call) and self.aliases.qualify(func.value.func) == "builtins.super"
                    and scope.cls is not None):
                return self._super_call(scope.cls, name, call, scope)
            if recv.kind == STREAM and name == "record_event":
                return Value(EVENT)
            if recv.kind == SIZE:
                return INT if name in ("numel", "index", "count") else UNKNOWN_VALUE
            if recv.kind == NDARRAY:
                if name == "tolist":
                    return Value(LIST)
                if name == "item":
                    return number()
                return Value(NDARRAY)
            if recv.kind in (LIST, TUPLE) and name in ("index", "count"):
                return INT
            if recv.kind == DICT:
                return self._dict_method(recv, name)
            if recv.kind == BATCH:
                return self._batch_method(recv, name, call, scope)
            if recv.kind == UNKNOWN and name in facts.tensor_only_methods():
                return self.tensor_method(name, tensor(), call, scope)  # only a tensor has this method
            if recv.kind == UNKNOWN and name == "cpu" and not call.args:
                return tensor(CPU)  # whatever it was, its copy is on the host (what it holds is not known)
            return UNKNOWN_VALUE
        if isinstance(func, cst.Name):
            local = scope.lookup(func.value)
            if local is not None:
                if local.kind == SELF and scope.cls is not None and scope.cls.is_module:
                    return tensor()  # self(x) in an nn.Module runs forward
                if local.kind in (MODULE, OBJECT):
                    return self._method_result(local, "__call__", call, scope)
                return UNKNOWN_VALUE
            f = self._local_function(func.value, scope)
            if f is not None:
                return self.returns_at(f, call, scope)
            cls = self.index.classes.get(func.value)
            if cls is not None:
                return self._instance(cls)
        return UNKNOWN_VALUE

    def _batch_method(self, recv: Value, name: str, call: cst.Call, scope: Scope) -> Value:
        """Methods of a batch from a DataLoader: moves to the device give device tensors; a dict
        batch's values stay batches."""
        on_device = recv.device == CUDA  # already moved (a Lightning step's batch)
        if name in ("to", "cuda"):
            if on_device:
                return recv
            moved = self.tensor_method(name, tensor(CPU), call, scope)
            return moved if moved.device != CPU else recv
        if name in ("get", "pop", "__getitem__", "values", "float", "long", "half", "contiguous"):
            return recv
        if name == "items":
            return Value(LIST, item=Value(TUPLE, elts=(UNKNOWN_VALUE, recv)))
        if name == "pin_memory":
            return recv.with_(pinned=True)
        if on_device and facts.method(name):
            # any other Tensor method: default_collate made every number and array a tensor
            return self.tensor_method(name, tensor(CUDA), call, scope)
        return UNKNOWN_VALUE

    @staticmethod
    def _dict_method(recv: Value, name: str) -> Value:
        if recv.item is None:
            return UNKNOWN_VALUE
        if name in ("get", "pop", "setdefault", "__getitem__"):
            return recv.item
        if name == "values":
            return Value(LIST, item=recv.item)
        if name == "items":
            return Value(LIST, item=Value(TUPLE, elts=(UNKNOWN_VALUE, recv.item)))
        return UNKNOWN_VALUE

    def _super_call(self, cls: ClassInfo, name: str, call: cst.Call, scope: Scope) -> Value:
        """``super().name(...)``: the first base class that defines it, here or in another file."""
        for base in cls.bases:
            local = self.index.classes.get(base.split(".")[-1])
            if local is not None and local is not cls:
                m = self.method(local, name)
                if m is not None:
                    return self.returns(m)
            elif local is None and base.split(".")[0] not in EXTERNAL_ROOTS:
                got = self._ref(("method", base, name) + self._call_flag(call, scope))
                if got.kind != UNKNOWN or got.ref is not None:
                    return got
            elif base.startswith("torch.nn.") and name in ("forward", "__call__"):
                return tensor()
        return UNKNOWN_VALUE

    def _submodule_call(self, cls: Optional[ClassInfo], name: str) -> Value:
        """``self.<name>(...)``: what the forward of the module class assigned there returns, when
        that class is in this file (``return x, n, w`` unpacks to a tensor and two ints); else a tensor."""
        out: Optional[Value] = None
        for _, expr in (cls.attrs.get(name, []) if cls is not None else []):
            sub = self.index.classes.get(expr.func.value) if (
                isinstance(expr, cst.Call) and isinstance(expr.func, cst.Name)) else None
            forward = self.method(sub, "forward") if sub is not None and sub.is_module else None
            if forward is None:
                return tensor()
            got = self.returns(forward)
            out = got if out is None else join(out, got)
        return out if out is not None and out.kind != UNKNOWN else tensor()

    def _local_function(self, name: str, scope: Scope) -> Optional[FunctionInfo]:
        s: Optional[Scope] = scope
        while s is not None:
            if s.func is not None:
                f = self.index.functions.get(f"{s.func.key}.<locals>.{name}")
                if f is not None:
                    return f
            s = s.parent
        return self.index.module_functions.get(name)


def _int_literal(e: cst.BaseExpression) -> Optional[int]:
    if isinstance(e, cst.Integer):
        return int(e.evaluated_value)
    if isinstance(e, cst.UnaryOperation) and isinstance(e.operator, cst.Minus) and isinstance(e.expression, cst.Integer):
        return -int(e.expression.evaluated_value)
    return None


def _function_reference(q: str) -> Value:
    """``torch.hamming_window`` named, not called: a value that calls it (functions only: a class
    or module name stays unknown)."""
    if q.startswith("torch.") and q.split(".")[-1][:1].islower():
        f = facts.function(q)
        if (f is not None and f.kind == "function") or q in api.FACTORIES:
            return Value(FUNC, cls=q)
    return UNKNOWN_VALUE


def _device_batch_member(v: Value) -> Value:
    """Arithmetic and comparisons on a part of a batch already on the device are on a GPU tensor
    (default_collate made its numbers tensors)."""
    return tensor(CUDA) if v.kind == BATCH and v.device == CUDA else v
