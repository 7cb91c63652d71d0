"""Expressions other than names, literals and calls: attributes, subscripts, comprehensions,
dict literals, lists filled by ``append``, arithmetic and comparisons.

The part of ``evaluate.Evaluator`` that computes what an operator, an index or an attribute
gives (a mixin: it uses the evaluator's ``infer``, ``bind``, ``iter_element``, ``self_attr``).
"""

from __future__ import annotations

from typing import List, Optional

import libcst as cst

from torchsync_lint.inference import containers
from torchsync_lint.inference import torch_api as api
from torchsync_lint.inference import torch_facts as facts
from torchsync_lint.inference import named_tuples
from torchsync_lint.inference.defs import item_key, string_key
from torchsync_lint.inference.host_evidence import path_assigned, placed_on_host
from torchsync_lint.inference.scope import Scope
from torchsync_lint.inference.signatures import refine_annotation
from torchsync_lint.inference.values import (
    ITEMS,
    BATCH,
    CPU,
    CUDA,
    DEVICE,
    DICT,
    DTYPE,
    FUNC,
    LIST,
    MAX_KEYS,
    MODULE,
    NDARRAY,
    NONE,
    NUMBER,
    OBJECT,
    SELF,
    SELF_ATTR,
    SIZE,
    STR,
    TENSOR,
    TENSOR_SEQ,
    TUPLE,
    UNKNOWN,
    UNKNOWN_VALUE,
    Value,
    item_at,
    join,
    join_members,
    number,
    operands_device,
    tensor,
)
from torchsync_lint.inference.torch_calls import EXTERNAL_ROOTS, BOOL, DTYPE_NAMES, INT, SHAPE_ATTRS


class Expressions:
    """Mixin of ``evaluate.Evaluator``."""

    def _appended(self, name: str, v: Value, scope: Scope) -> Value:
        """``feats = []`` ... ``feats.append(f.cpu())``: a list holds what the function appends to
        it (``torch.cat(feats)`` is then on the host)."""
        exprs = scope.func.appends.get(name)
        item = self._stored_join(("appended", id(scope.func), name), exprs or (), scope)
        if item is None:
            return v
        return v.with_(item=item if v.item is None else refine_annotation(v.item, item))

    def _keyed(self, name: str, v: Value, scope: Scope) -> Value:
        """``out = {}`` (or a value of unknown kind) ... ``out["loss"] = loss``: a dict whose values
        hold what the function stores under string keys (a tensor takes no string index), each
        key what is stored under it (``state["step"] = 0`` ... ``state["avg"] = t``)."""
        stores = scope.func.keyed.get(name, [])
        if v.kind == DICT:
            stores = stores + [(None, e) for e in scope.func.filled.get(name, ())]
        item = self._stored_join(("keyed", id(scope.func), name), [e for _, e in stores], scope)
        if item is None:
            return v
        by_key: dict = {}
        for key, e in stores:
            by_key.setdefault(key, []).append(e)
        if None in by_key:  # `out[f"loss_{i}"] = ...`: any key may be there
            return Value(DICT, item=item)
        named = []
        for key, exprs in list(by_key.items())[:MAX_KEYS]:
            got = self._stored_join(("keyed", id(scope.func), name, key), exprs, scope)
            named.append((key, got if got is not None else UNKNOWN_VALUE))
        # keys stored elsewhere (the dict came in, or another method fills it) stay unknown
        return Value(DICT, item=item, keys=tuple(named))

    def _stored_join(self, key: tuple, exprs, scope: Scope):
        """The join of what a function stores into a container (``exprs``), or None when nothing
        is known; ``key`` guards against the recursion of a store that reads the container."""
        if not exprs or key in self._busy:
            return None
        self._busy.add(key)
        try:
            item = None
            for e in exprs:
                got = self.infer(e, scope)
                item = got if item is None else join_members(item, got)
        finally:
            self._busy.discard(key)
        return None if item is None or item.kind == UNKNOWN else item

    def join_rebound(self, scope: Scope) -> None:
        """A module-level name assigned more than once (`device = torch.device("cuda:0")` in one
        branch of an `if`, `torch.device("cpu")` in the other) holds what any of them gave: the
        join, not the last one in the file's order."""
        rows: dict = {}
        for b in self.index.module_bindings:
            if b[0] == "assign" and len(b[1]) == 1 and type(b[1][0]) is cst.Name:
                rows.setdefault(b[1][0].value, []).append(b[2])
        for name, exprs in rows.items():
            if len(exprs) > 1 and name in scope.values:
                out = None
                for e in exprs:
                    v = self.infer(e, scope)
                    out = v if out is None else join(out, v)
                scope.values[name] = out

    def _narrow_to_class(self, test: cst.BaseExpression, scope: Scope) -> None:
        """``assert isinstance(x, Image)`` (or ``if not isinstance(x, Image): continue``): an ``x``
        of unknown kind is an instance of that class past it."""
        if not (type(test) is cst.Call and type(test.func) is cst.Name and test.func.value == "isinstance"
                and len(test.args) == 2 and type(test.args[0].value) is cst.Name
                and type(test.args[1].value) in (cst.Name, cst.Attribute)):
            return
        name = test.args[0].value.value
        held = scope.lookup(name)
        if held is not None and (held.kind != UNKNOWN or held.ref is not None):
            return
        v = self.annotation_value(test.args[1].value)
        if v.kind in (OBJECT, MODULE) and v.cls is not None:
            scope.values[name] = v.with_(assumed=False)
        elif v.kind == UNKNOWN and v.ref is not None:
            scope.values[name] = v  # another file's class: the project resolves it

    def _comprehension(self, e, scope: Scope) -> Value:
        """``[torch.linspace(-1, 1, s) for s in size]``: a list whose members are the element's value;
        ``{k: v[keep] for k, v in params.items()}``: a dict whose values are the value's."""
        inner = Scope(scope.func, scope, {})
        comp = e.for_in
        while comp is not None:
            self.bind(comp.target, self.iter_element(comp.iter, inner), inner)
            for cond in comp.ifs:  # `[im for im in xs if isinstance(im, Image) and ...]`
                test = cond.test
                while type(test) is cst.BooleanOperation and type(test.operator) is cst.And:
                    self._narrow_to_class(test.right, inner)
                    test = test.left
                self._narrow_to_class(test, inner)
            comp = comp.inner_for_in
        v = self.infer(e.value if type(e) is cst.DictComp else e.elt, inner)
        # a member another file's interface will tell (`[Batch.padded(s) for s in chunks]`) stays a
        # reference for the project to resolve
        return Value(DICT if type(e) is cst.DictComp else LIST, item=v if v.kind != UNKNOWN or v.ref is not None else None)

    def _dict_literal(self, e: cst.Dict, scope: Scope) -> Value:
        """``{"a": (torch.linspace(0, 1, 5), True), ...}``: a dict whose values share one value,
        and the value of each string key (``{"loss": t, "n": 3}["n"]`` is an int)."""
        if any(type(el) is not cst.DictElement for el in e.elements):
            return Value(DICT)  # **splat
        return self._dict_of([(string_key(el.key), el.value) for el in e.elements], scope)

    def _dict_of(self, pairs, scope: Scope) -> Value:
        """A dict of these (key text or None, value expression) pairs."""
        item: Optional[Value] = None
        members: List[Value] = []
        keys: Optional[dict] = {}
        for key, expr in pairs:
            v = self.infer(expr, scope)
            if v.kind != UNKNOWN:
                members.append(v)
            if item is None or item.kind != UNKNOWN:
                item = v if item is None else join_members(item, v)
            if keys is not None and key is not None and len(keys) < MAX_KEYS:
                keys[key] = v
            else:
                keys = None  # a computed key: any key may be there
        named = tuple(keys.items()) if keys else ()
        if item is not None and item.kind != UNKNOWN:
            return Value(DICT, item=item, keys=named)
        # values of different kinds (a checkpoint: a state dict, an epoch, a config): no value of
        # its values, but what it holds is known (``torch.save`` of it copies the tensors)
        return Value(DICT, elts=tuple(members[:8]), keys=named)

    def _attribute(self, e: cst.Attribute, scope: Scope) -> Value:
        v = self._attribute_value(e, scope)
        placed = placed_on_host(v) if scope.func is not None and type(e.value) is cst.Name else None
        if (placed is not None and e.value.value + "." + e.attr.value in self.host_names(scope.func)
                and not path_assigned(scope.func, e.value.value, e.attr.value)):
            return placed  # `image.data`, which the body hands to numpy as it is
        return v

    def _attribute_value(self, e: cst.Attribute, scope: Scope) -> Value:
        attr = e.attr.value
        q = self.aliases.qualify(e)
        if q is not None:
            if q.startswith("torch.") and attr in DTYPE_NAMES:
                return Value(DTYPE)
            if q in facts.float_constants() or q in api.HOST_FLOAT_CONSTANTS:
                return number("float")
            if type(e.value) is cst.Name and q.split(".")[0] not in EXTERNAL_ROOTS and e.value.value in self.aliases.map:
                return self._ref(("value", q))  # `consts.MEAN` of a module imported from the project
            return _function_reference(q)
        base = self.infer(e.value, scope)
        named = named_tuples.field(base, attr)
        if named is not None:
            return named
        if base.kind == SELF:
            local = scope.lookup(SELF_ATTR + attr)
            return local if local is not None else self.self_attr(scope.cls, attr)
        if containers.is_container(base):
            return containers.property_value(base, attr)
        if base.kind == BATCH:
            if attr in SHAPE_ATTRS or attr in api.ATTR_NUMBER or attr in ("dtype", "device"):
                # a part's `.shape`, `.ndim`, `.dtype`, `.device`: Python-side values, as a tensor's
                return self._attribute_of(tensor(base.device), attr)
            return base  # batch.images (a dataclass or named tuple of host tensors)
        if base.kind in (MODULE, OBJECT) and base.cls is not None and attr not in SHAPE_ATTRS:
            # `meter.total`, `out.loss`: what the class stores there (here, or in another file)
            local = self._local_class(base.cls)
            declared = None
            if local is not None:
                declared = self.self_attr(local, attr)
            elif base.cls.split(".")[0] not in EXTERNAL_ROOTS:
                declared = self._ref(("attr", base.cls, attr))
            stored = next((v for k, v in base.keys if k == attr), None)  # what the constructor stored
            if stored is not None and (stored.kind == TENSOR or declared is None or declared.kind in (UNKNOWN, NONE)):
                return stored
            if declared is not None:
                return declared
        if base.kind == UNKNOWN and base.ref is not None and base.ref[0] == "type" and attr not in SHAPE_ATTRS:
            # `self.scheduler.timesteps` where `scheduler: DDIMScheduler` names another file's class
            return self._ref(("attr", base.ref[1], attr))
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
        if base.kind == TENSOR_SEQ and attr in ("values", "indices"):
            # `x.max(-1).values`, `s.topk(k).indices`: torch.return_types' fields, each a member
            return tensor(base.device, "int" if attr == "indices" else None).with_(
                ndim=base.ndim, zero_dim=base.ndim == 0)
        return UNKNOWN_VALUE

    def _subscript(self, e: cst.Subscript, scope: Scope) -> Value:
        base = self.infer(e.value, scope)
        if base.kind == MODULE and base.elts and len(e.slice) == 1 and type(e.slice[0].slice) is cst.Index:
            i = _int_literal(e.slice[0].slice.value)  # `self.model[-1]` of an nn.Sequential built here
            return base.elts[i] if i is not None and -len(base.elts) <= i < len(base.elts) else UNKNOWN_VALUE
        if base.kind == BATCH:
            return base  # batch["image"], batch[0]
        if base.kind in (SELF, OBJECT) and len(e.slice) == 1 and type(e.slice[0].slice) is cst.Index:
            kept = self._kept_item(base, e.slice[0].slice.value, scope)
            if kept is not None:
                return kept
        if base.kind == OBJECT and (base.cls is not None or base.elts):
            # `dataset[i]`: an instance of a class of the project runs its `__getitem__`
            return self._method_result(base, "__getitem__")
        if base.kind == TENSOR:
            if any(type(el.slice) is cst.Index and type(el.slice.value) is cst.SimpleString for el in e.slice):
                return UNKNOWN_VALUE  # `obj["key"]`: no tensor takes a str index, so `obj` was mis-typed
            ndim = self._indexed_ndim(base.ndim, e, scope)
            return tensor(base.device, base.dtype).with_(assumed=base.assumed, ndim=ndim, zero_dim=ndim == 0)
        if base.kind == TENSOR_SEQ:
            if len(e.slice) == 1 and type(e.slice[0].slice) is cst.Slice:
                return base
            return tensor(base.device, base.dtype).with_(ndim=base.ndim, zero_dim=base.ndim == 0)
        if base.kind == NDARRAY and all(type(el.slice) is cst.Slice for el in e.slice):
            return base  # `idx[start:start + bs]` of a permutation: still an array
        if base.kind == SIZE:
            if len(e.slice) == 1 and type(e.slice[0].slice) is cst.Slice:
                return Value(SIZE)
            return INT
        if containers.is_container(base):
            return containers.subscript(base, e, lambda x: self.infer(x, scope))
        if base.kind == DICT and base.keys and len(e.slice) == 1 and type(e.slice[0].slice) is cst.Index:
            key = string_key(e.slice[0].slice.value)
            if key is not None:
                return base.keyed(key) or UNKNOWN_VALUE
            if type(e.slice[0].slice.value) not in (cst.Integer, cst.Float):
                # `metrics[self.monitor]`: one of the named values, whichever the key picks
                out = base.keys[0][1]
                for _k, v in base.keys[1:]:
                    out = join_members(out, v)
                return out
        if base.kind in (TUPLE, LIST, DICT) and base.item is not None and not base.elts and len(e.slice) == 1:
            if type(e.slice[0].slice) is cst.Slice:
                return base if base.kind != DICT else UNKNOWN_VALUE
            return base.item
        if base.kind in (TUPLE, LIST) and base.elts and len(e.slice) == 1:
            idx = e.slice[0].slice
            if type(idx) is cst.Index:
                i = _int_literal(idx.value)
                if i is not None and -len(base.elts) <= i < len(base.elts):
                    return base.elts[i]
        if base.kind == UNKNOWN and len(e.slice) == 1 and type(e.slice[0].slice) is cst.Index:
            # only a tensor takes a device boolean mask (a list cannot, numpy cannot read a GPU one)
            mask = self.infer(e.slice[0].slice.value, scope)
            if mask.kind == TENSOR and mask.dtype == "bool" and mask.device != CPU and not mask.assumed:
                return tensor(mask.device)
            # nor a tensor of positions with dimensions (`out[pos]`, `pos = searchsorted(...)`); a
            # 0-dim one may be read as an int (`items[i]`)
            if (mask.kind == TENSOR and mask.dtype == "int" and mask.device != CPU and not mask.assumed
                    and not mask.zero_dim and mask.ndim != 0):
                return tensor(mask.device)
        return UNKNOWN_VALUE

    def _kept_item(self, base: Value, key: cst.BaseExpression, scope: Scope) -> Optional[Value]:
        """``self[DATA]`` / ``image[DATA]`` of a class (a dict subclass) without a ``__getitem__`` of
        its own: what its methods keep under that key (``self[DATA] = t``); None where that is not
        the question (a ``__getitem__`` runs, or nothing is kept)."""
        cls = scope.cls if base.kind == SELF else self._local_class(base.cls) if base.cls is not None else None
        if cls is not None:
            if self.method(cls, "__getitem__") is not None:
                return None
            items = self.self_attr(cls, ITEMS)
            return item_at(items, item_key(key, scope.func)) if items.kind == DICT else None
        if base.kind == OBJECT and base.cls is not None and base.cls.split(".")[0] not in EXTERNAL_ROOTS:
            # another file's class: its `__getitem__`, else what it keeps (``Project``, "item")
            return self._ref(("item", base.cls, item_key(key, scope.func)))
        return None

    def _indexed_ndim(self, ndim: Optional[int], e: cst.Subscript, scope: Scope) -> Optional[int]:
        """Dimensions left after ``x[0, :, None]``: Python integers take one each, slices none,
        ``None`` adds one; an ellipsis or a tensor index leaves it unknown."""
        if ndim is None:
            return None
        for el in e.slice:
            s = el.slice
            if type(s) is cst.Slice:
                continue
            if type(s.value) is cst.Name and s.value.value == "None":
                ndim += 1
                continue
            if type(s.value) is cst.Ellipsis:
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
            device = operands_device([v for v in (a, b) if v.kind == TENSOR])
            if type(e.operator) is cst.Divide:
                dtype = "float"
            elif type(e.operator) in (cst.BitAnd, cst.BitOr, cst.BitXor) and (
                    {a.dtype, b.dtype} <= {"bool"}
                    or a.kind == b.kind == TENSOR and "bool" in (a.dtype, b.dtype) and None in (a.dtype, b.dtype)):
                dtype = "bool"  # `mask[i] & (ids >= 0)`: a comparison combined with a mask is a mask
            elif a.kind == b.kind == TENSOR:
                dtype = a.dtype if a.dtype == b.dtype else None
            else:
                t = a if a.kind == TENSOR else b
                dtype = t.dtype if t.dtype != "bool" else None
            # `n // 2` of an assumed input is as much a guess as `n`
            out = tensor(device, dtype).with_(assumed=all(v.assumed for v in (a, b) if v.kind == TENSOR))
            if device is None and other.kind != TENSOR and (a if a.kind == TENSOR else b).cpu_at_init:
                out = out.with_(cpu_at_init=True)  # `t - 1` of timesteps a method moves: where they are
            dims = [v.ndim if v.kind == TENSOR else 0 if v.kind == NUMBER else None for v in (a, b)]
            if None not in dims:  # broadcasting: the larger rank
                out = out.with_(ndim=max(dims), zero_dim=max(dims) == 0)
            return out
        if a.kind == NUMBER and b.kind == NUMBER:
            return number()
        if a.kind == SIZE and b.kind in (SIZE, TUPLE) and type(e.operator) is cst.Add:
            return Value(SIZE)
        if a.kind == STR or (a.kind == b.kind and a.kind in (LIST, TUPLE)):
            return Value(a.kind)
        if type(e.operator) is cst.Multiply and {a.kind, b.kind} & {LIST, TUPLE} and NUMBER in (a.kind, b.kind):
            seq = a if a.kind in (LIST, TUPLE) else b  # `[i] * n`: a list of what it repeats
            item = seq.item
            for x in seq.elts:
                item = x if item is None else join_members(item, x)
            return Value(seq.kind, item=item if item is not None and item.kind != UNKNOWN else None)
        if {a.kind, b.kind} <= {NUMBER, SIZE} and type(e.operator) is cst.Multiply:
            return Value(SIZE) if SIZE in (a.kind, b.kind) else number()
        if a.kind == NDARRAY or b.kind == NDARRAY:
            return Value(NDARRAY)
        return UNKNOWN_VALUE

    def _comparison(self, e: cst.Comparison, scope: Scope) -> Value:
        if all(type(c.operator) in (cst.Is, cst.IsNot, cst.In, cst.NotIn) for c in e.comparisons):
            return BOOL
        vals = [self.infer(e.left, scope)] + [self.infer(c.comparator, scope) for c in e.comparisons]
        vals = [_device_batch_member(v) for v in vals]
        tensors = [v for v in vals if v.kind == TENSOR]
        if tensors:
            return tensor(operands_device(tensors), "bool").with_(assumed=all(v.assumed for v in tensors))
        if any(v.kind in (UNKNOWN, TENSOR_SEQ, MODULE, SELF) for v in vals):
            return UNKNOWN_VALUE
        if any(v.kind == NDARRAY for v in vals):
            return Value(NDARRAY)
        return BOOL


def _int_literal(e: cst.BaseExpression) -> Optional[int]:
    if type(e) is cst.Integer:
        return int(e.evaluated_value)
    if type(e) is cst.UnaryOperation and type(e.operator) is cst.Minus and type(e.expression) is cst.Integer:
        return -int(e.expression.evaluated_value)
    return None


def _device_batch_member(v: Value) -> Value:
    """Arithmetic and comparisons on a part of a batch already on the device are on a GPU tensor
    (default_collate made its numbers tensors)."""
    return tensor(CUDA) if v.kind == BATCH and v.device == CUDA else v


def _function_reference(q: str) -> Value:
    """``torch.hamming_window`` named, not called: a value that calls it (functions only: a class
    or module name stays unknown)."""
    if q.startswith("torch.") and q.split(".")[-1][:1].islower():
        f = facts.function(q)
        if (f is not None and f.kind == "function") or q in api.FACTORIES:
            return Value(FUNC, cls=q)
    return UNKNOWN_VALUE
