"""Calls into torch, Python's builtins and tensor methods: what they return, on which device.

The part of ``evaluate.Evaluator`` that knows torch's API (a mixin: it uses the evaluator's
``infer``, ``device_of`` and friends). Return kinds come from torch's own stubs through
``torch_facts`` where the hand-written cases below (factories, devices, dtypes, the multi-output
forms of ``max``/``unique``/``nonzero``) say nothing more precise.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Optional

import libcst as cst

from torchsync_lint.inference import containers
from torchsync_lint.inference import torch_api as api
from torchsync_lint.inference import torch_facts
from torchsync_lint.inference import training_utils
from torchsync_lint.inference.defs import computed_name_template, param_named
from torchsync_lint.inference.switches import leaves_validation_on
from torchsync_lint.inference.roots import EXTERNAL_ROOTS  # noqa: F401  (re-exported)
from torchsync_lint.inference.values import (
    CPU,
    CUDA,
    DEVICE,
    DTYPE,
    EVENT,
    GRAD_SCALER,
    LIST,
    MODULE,
    NDARRAY,
    NONE,
    NUMBER,
    OBJECT,
    RANGE,
    SELF,
    SIZE,
    STR,
    STREAM,
    TENSOR,
    TENSOR_SEQ,
    TUPLE,
    UNKNOWN,
    UNKNOWN_VALUE,
    join_maybe,
    Value,
    join,
    number,
    operands_device,
    tensor,
)

if TYPE_CHECKING:
    from torchsync_lint.inference.scope import Scope

BOOL = number("bool")
INT = number("int")

DTYPE_NAMES = {
    "bool": "bool",
    "uint8": "int",
    "int8": "int",
    "int16": "int",
    "short": "int",
    "int32": "int",
    "int": "int",
    "int64": "int",
    "long": "int",
    "float16": "float",
    "half": "float",
    "bfloat16": "float",
    "float32": "float",
    "float": "float",
    "float64": "float",
    "double": "float",
}
TYPED_TENSORS = {"LongTensor": "int", "IntTensor": "int", "ShortTensor": "int", "ByteTensor": "int",
                 "CharTensor": "int", "BoolTensor": "bool", "FloatTensor": "float", "DoubleTensor": "float",
                 "HalfTensor": "float", "BFloat16Tensor": "float", "Tensor": "float"}
FLOAT_METHODS = frozenset("float half double bfloat16 mean softmax log_softmax sigmoid exp log sqrt rsqrt".split())
SELF_NAMES = ("self",)
SHAPE_ATTRS = frozenset(("shape", "batch_shape", "event_shape", "sample_shape"))
# namespaces whose callables are tensor ops even where torch_facts has no entry for them
TENSOR_OP_NAMESPACES = ("torch.nn.functional.", "torch.linalg.", "torch.fft.", "torch.special.", "torch.ops.",
                        "torch.nested.", "torch.sparse.", "torch.masked.")
# called with no argument, these reduce a tensor to one element with no dimensions
FULL_REDUCTIONS = frozenset(
    "sum mean max min argmax argmin prod norm any all amax amin median std var count_nonzero nansum nanmean".split())


# the standard library's copies: a value like the original, on the same device
COPIES = frozenset(("copy.deepcopy", "copy.copy"))


class TorchCalls:
    """Mixin of ``evaluate.Evaluator``."""

    def _qualified_call(self, q: str, call: cst.Call, scope: Scope) -> Optional[Value]:
        last = q.split(".")[-1]
        if q.startswith("builtins."):
            return self._builtin_call(last, call, scope)
        if q.startswith("numpy."):
            return Value(NDARRAY)
        if q.startswith("math."):
            return number()
        if q in COPIES and len(call.args) == 1 and call.args[0].keyword is None:
            return self.infer(call.args[0].value, scope)  # `deepcopy(default)`: the same kind of value, where it was
        if containers.is_container_class(q):
            dev = self.device_arg(call, scope)  # `TensorDict({...}, batch_size=[n], device=d)`
            return containers.container(None if dev in (None, "?") else dev)
        made = training_utils.instance(self, q, call, scope)  # a measured metric or logger class
        if made is not None:
            return made
        if not q.startswith("torch."):
            if q.split(".")[0] in EXTERNAL_ROOTS:
                return None
            if type(call.func) is cst.Attribute and torch_facts.method(last) is not None:
                # `MEAN.to(d)` of another file's tensor constant: a method of a value, not a function
                recv = self.infer(call.func.value, scope)
                if recv.kind == TENSOR or recv.kind == UNKNOWN and recv.ref is not None and recv.ref[0] == "value":
                    return None
            # a class or function imported from another file: what that file's interface says
            got = self._ref(("call", q) + self._call_flag(call, scope))
            if got.kind == TENSOR and got.cls is not None:
                return self.placed_subclass(got, call, scope)  # a tensor subclass's constructor
            return got
        if q == api.DISTRIBUTION_PREFIX + "Independent" and call.args and call.args[0].keyword is None:
            # it delegates `log_prob` and sampling to its base distribution, which validates (or not)
            base = self.infer(call.args[0].value, scope)
            if base.kind == OBJECT and base.cls is not None and base.cls.startswith(api.DISTRIBUTION_PREFIX):
                return base
        if q.startswith(api.DISTRIBUTION_PREFIX) and last in api.VALIDATING_DISTRIBUTIONS:
            validate = _keyword(call, "validate_args")
            # where it draws: where its parameters are (`Beta(torch.tensor([a]), ...)`: the CPU);
            # Python numbers become tensors on the default device (`Beta(0.4, 0.4)`: the CPU)
            given = [self.infer(a.value, scope) for a in call.args
                     if a.keyword is None or a.keyword.value != "validate_args"]
            params = [v for v in given if v.kind == TENSOR]
            where = operands_device(params) if params else (
                self.default_device() if given and all(v.kind == NUMBER for v in given) else None)
            if validate is not None and not leaves_validation_on(validate):
                # `validate_args=False` (or a variable): not known to check, still a distribution
                return Value(OBJECT, cls=api.DISTRIBUTION_PREFIX + last + api.UNCHECKED, device=where)
            return Value(OBJECT, cls=api.DISTRIBUTION_PREFIX + last, device=where)
        if q in api.PAD_PACKED:
            return Value(TUPLE, elts=(tensor(), tensor(CPU, "int").with_(ndim=1)))
        if q in api.HOST_DATA_FACTORIES:
            dev = self.device_arg(call, scope)
            dtype = self.dtype_arg(call) or TYPED_TENSORS.get(last)
            if last in ("tensor", "as_tensor", "asarray") and call.args and not self.dtype_arg(call):
                dtype = self._literal_dtype(call.args[0].value, scope)
            made = tensor(self.default_device() if dev is None else (None if dev == "?" else dev), dtype,
                          host_data=True)
            if last == "tensor" and call.args and call.args[0].keyword is None:
                made = made.with_(ndim=_literal_rank(call.args[0].value))  # `torch.tensor([0, 2])`: 1
            return made
        if q in api.FACTORIES:
            dev = self.device_arg(call, scope)
            dtype = self.dtype_arg(call)
            if dtype is None:
                dtype = "int" if last in ("arange", "randint", "randperm", "tril_indices", "triu_indices") else "float"
                if last == "arange" and any(type(a.value) is cst.Float for a in call.args):
                    dtype = "float"
                if last == "full" and len(call.args) > 1:
                    fill = self.infer(call.args[1].value, scope)
                    dtype = fill.dtype if fill.kind == NUMBER else None
            made = tensor(self.default_device() if dev is None else (None if dev == "?" else dev), dtype)
            return made.with_(ndim=self._factory_ndim(last, call, scope))
        if q in api.LIKE_FACTORIES:
            base = self.infer(call.args[0].value, scope) if call.args else UNKNOWN_VALUE
            dev = self.device_arg(call, scope)
            device = base.device if dev is None else (None if dev == "?" else dev)
            return tensor(device, self.dtype_arg(call) or base.dtype).with_(ndim=base.ndim)
        if q in api.STREAM_FACTORIES:
            return Value(STREAM)
        if q in api.EVENT_FACTORIES:
            return Value(EVENT)
        if q in api.DATA_LOADERS:
            pin = _keyword(call, "pin_memory")
            return Value(OBJECT, cls="torch.utils.data.DataLoader",
                         pinned=type(pin) is cst.Name and pin.value == "True")
        if q in api.GRAD_SCALER_FACTORIES:
            dev = arg_value = None
            for i, a in enumerate(call.args):
                if (a.keyword is None and i == 0) or (a.keyword is not None and a.keyword.value == "device"):
                    arg_value = a.value
            if arg_value is not None:
                dev = self.device_of(arg_value, scope)
            enabled = _keyword(call, "enabled")
            if enabled is not None and not (type(enabled) is cst.Name and (
                    enabled.value == "True" or _default_true(enabled.value, scope))):
                # `GradScaler(enabled=use_amp)`: AMP as an option, off unless asked for (a
                # disabled scaler's step is the optimizer's: no sync); not known to check
                return Value(GRAD_SCALER, device=CPU if dev == CPU else CUDA, maybe=True)
            return Value(GRAD_SCALER, device=CPU if dev == CPU else CUDA)
        if q.startswith("torch.optim.") and last[:1].isupper() and ".lr_scheduler." not in q:
            # an optimizer (`torch.optim.LBFGS(...)`, whose step reads the loss on the host; an
            # instance of one of several where a helper makes them by name), by its public name
            return Value(OBJECT, cls="torch.optim." + last)
        if q == "torch.device" and call.args:
            d = self.device_of(call.args[0].value, scope)
            return Value(DEVICE, device=d if d in (CPU, CUDA) else None)
        if q in api.TORCH_NON_TENSOR:
            kind = api.TORCH_NON_TENSOR[q]
            return BOOL if kind == NUMBER and q not in ("torch.numel",) else (INT if q == "torch.numel" else Value(kind))
        if q == "torch.nn.Parameter" or q == "torch.nn.parameter.Parameter":
            return tensor()
        if q == "torch.jit.annotate" and call.args:
            return self.annotation_value(call.args[0].value)
        if q.startswith(api.TORCH_PREDICATE_PREFIXES):
            return BOOL  # torch.is_grad_enabled(), torch.are_deterministic_algorithms_enabled()
        if last.startswith("_") and q.count(".") >= 2 and not q.startswith("torch.nn.functional."):
            # private helpers of torch's submodules are no tensor ops: torch._C._get_tracing_state(),
            # torch.nn.modules.utils._pair(size) (top-level torch._foo are ATen ops)
            return UNKNOWN_VALUE
        if q.startswith("torch.nn.functional."):
            return tensor(self._first_tensor_device(call, scope), "int" if last == "one_hot" else None)
        if q.startswith(api.TORCH_NON_TENSOR_PREFIXES):
            # torch's own annotations name the few tensors these namespaces return
            # (`torch.nn.utils.clip_grad_norm_`: the total norm, where the gradients are)
            facts = self._from_facts(q, call, scope, None, None) if torch_facts.function(q) else None
            return facts if facts is not None and facts.kind == TENSOR else UNKNOWN_VALUE
        if last[:1].isupper():
            if not q.startswith("torch.nn."):
                return UNKNOWN_VALUE
            members = self._container_members(last, call, scope)
            return Value(MODULE, cls=q, elts=members) if members else Value(MODULE, cls=q)
        if q.count(".") >= 2 and not q.startswith(TENSOR_OP_NAMESPACES) and torch_facts.lookup(q) is None:
            # a helper of some torch submodule that torch's own op data does not list
            # (torch._inductor.ir.is_node_sequence): no evidence of a tensor
            return UNKNOWN_VALUE
        device = self._first_tensor_device(call, scope)
        kw = {a.keyword.value for a in call.args if a.keyword is not None}
        if q in api.TORCH_MULTI:
            return Value(TENSOR_SEQ, device=device)
        if last in ("max", "min", "median") and (len(call.args) >= 2 and "dim" in kw or
                                                  len([a for a in call.args if a.keyword is None]) >= 2
                                                  and self.infer(call.args[1].value, scope).kind == NUMBER):
            # `torch.max(v, 0)`: (values, indices), each one dimension fewer than `v`
            recv = self.infer(call.args[0].value, scope)
            rest = call.with_changes(args=call.args[1:])
            return Value(TENSOR_SEQ, device=device, ndim=_reduced_ndim(recv, rest))
        if last == "nonzero" and _kwarg_true(call, "as_tuple"):
            return Value(TENSOR_SEQ, device=device, dtype="int", ndim=1)  # ndim: of each member
        if last == "where" and len(call.args) == 1:
            return Value(TENSOR_SEQ, device=device, dtype="int", ndim=1)
        if last in ("unique", "unique_consecutive") and (kw & {"return_inverse", "return_counts"}):
            return Value(TENSOR_SEQ, device=device)
        dtype = "bool" if last in api.BOOL_OPS else "int" if last in api.INT_OPS else self.dtype_arg(call)
        facts = self._from_facts(q, call, scope, device, dtype)
        out = facts if facts is not None else tensor(device, dtype)
        if last in FULL_REDUCTIONS and out.kind == TENSOR and q.count(".") == 1:
            out = self._function_reduction(last, out, call, scope)
        return out

    def _function_reduction(self, last: str, out: Value, call: cst.Call, scope: Scope) -> Value:
        """``torch.argmax(scores)`` as ``scores.argmax()``: the input alone reduces to 0-dim;
        ``torch.argmax(v, 0)`` / ``dim=0`` of a 1-D ``v`` too (one dimension fewer)."""
        positional = [a for a in call.args if a.keyword is None and not a.star]
        if not positional or any(a.star for a in call.args):
            return out
        dtype = reduced_dtype(last, out.dtype)
        if len(call.args) == 1:
            return out.with_(zero_dim=True, ndim=0, dtype=dtype)
        if last in ("max", "min", "median"):
            return out  # with a dim: (values, indices)
        ndim = _reduced_ndim(self.infer(positional[0].value, scope), call.with_changes(args=call.args[1:]))
        return out if ndim is None else out.with_(ndim=ndim, zero_dim=ndim == 0, dtype=dtype)

    def _literal_dtype(self, e: cst.BaseExpression, scope: Scope) -> Optional[str]:
        v = self.infer(e, scope)
        vals = v.elts if v.kind in (LIST, TUPLE) else (v,)
        dtypes = {x.dtype for x in vals if x.kind == NUMBER}
        if len(dtypes) == 1 and len(vals) == sum(1 for x in vals if x.kind == NUMBER):
            return dtypes.pop()
        return None

    def _dynamic_attribute(self, call: cst.Call, scope: Scope) -> Value:
        """``getattr(self, f"indices_{s}")`` in a class that makes attributes under computed names of
        the same template (``defs.computed_name_template``): the join of what they hold. A buffer is
        a tensor where the module is (buffers move with it; dtype and rank kept where all agree); a
        plain attribute what its value is; a submodule or a mix says nothing here."""
        if self.infer(call.args[0].value, scope).kind != SELF or call.args[1].keyword is not None:
            return UNKNOWN_VALUE
        template = computed_name_template(call.args[1].value)
        made = [m for m in scope.cls.dynamic_attrs if template and m[0] == template]
        if not made or any(kind != made[0][1] for _s, kind, _v, _f in made) or made[0][1] == "module":
            return UNKNOWN_VALUE
        out = None
        for _template, kind, expr, method in made:
            v = self.infer(expr, self.summary_scope(method))
            if kind == "buffer":
                v = tensor(None, v.dtype).with_(ndim=v.ndim, zero_dim=v.ndim == 0) if v.kind == TENSOR else tensor()
            out = v if out is None else join(out, v)
        return out or UNKNOWN_VALUE

    def _builtin_call(self, name: str, call: cst.Call, scope: Scope) -> Value:
        if name == "len":
            return INT
        if name == "getattr" and len(call.args) == 2 and scope.cls is not None and scope.cls.dynamic_attrs:
            return self._dynamic_attribute(call, scope)
        if name in ("int", "round"):
            return INT
        if name == "float":
            return number("float")
        if name in ("bool", "isinstance", "issubclass", "hasattr", "callable", "any", "all"):
            return BOOL
        if name in ("str", "repr", "format"):
            return Value(STR)
        if name == "range":
            return Value(RANGE)
        if name in ("list", "sorted", "tuple"):
            kind = TUPLE if name == "tuple" else LIST
            if len(call.args) != 1 or call.args[0].keyword is not None:
                return Value(kind)
            v = self.infer(call.args[0].value, scope)
            if v.kind in (RANGE, SIZE):
                return Value(kind, item=INT)  # list(range(n)), tuple(x.shape): Python ints
            if v.kind in (LIST, TUPLE):
                item = v.item
                if item is None and v.elts and all(e == v.elts[0] for e in v.elts):
                    item = v.elts[0]  # sorted([1, 2]): the members' common value, order unknown
                return Value(kind, elts=v.elts if name != "sorted" else (), item=item)
            return Value(kind)
        if name == "dict" and call.args and all(a.keyword is not None for a in call.args):
            # `dict(valid=mask, labels=labels)`: a dict literal spelled with keywords
            return self._dict_of([(a.keyword.value, a.value) for a in call.args], scope)
        if name == "abs" and call.args:
            v = self.infer(call.args[0].value, scope)
            return v if v.kind in (TENSOR, NUMBER) else UNKNOWN_VALUE
        if name in ("max", "min", "sum") and call.args:
            vals = [self.infer(a.value, scope) for a in call.args if a.keyword is None]
            if vals and all(v.kind == NUMBER for v in vals):
                return number()
            if any(v.kind == TENSOR for v in vals) and name == "sum":
                return tensor()
            if name != "sum" and len(vals) >= 2 and all(v.kind in (TENSOR, NUMBER) for v in vals):
                # `max(0, n - t.max())`: one of the arguments, a tensor or maybe one
                out = vals[0]
                for v in vals[1:]:
                    out = join_maybe(out, v)
                return out
            return UNKNOWN_VALUE
        if name == "print":
            return Value(NONE)
        if name == "iter" and call.args:
            return Value(LIST, item=self.iter_element(call.args[0].value, scope))  # what next() gives
        if name == "next" and call.args:
            v = self.infer(call.args[0].value, scope)
            return v.item if v.kind == LIST and v.item is not None else self.iter_element(call.args[0].value, scope)
        return UNKNOWN_VALUE

    def _container_members(self, last: str, call: cst.Call, scope: Scope) -> tuple:
        """``nn.Sequential(A(), B())`` / ``nn.ModuleList([A(), B()])`` of modules: its members, in
        order, for ``self.model[-1].stride``; () when not known."""
        if last == "Sequential" and call.args and all(a.keyword is None and not a.star for a in call.args):
            exprs = [a.value for a in call.args]
        elif (last == "ModuleList" and len(call.args) == 1 and type(call.args[0].value) is cst.List
              and all(type(el) is cst.Element for el in call.args[0].value.elements)):
            exprs = [el.value for el in call.args[0].value.elements]
        else:
            return ()
        if not exprs or len(exprs) > 16:
            return ()
        members = tuple(self.infer(x, scope) for x in exprs)
        return members if all(m.kind in (MODULE, OBJECT) for m in members) else ()

    def _from_facts(self, key: str, call: cst.Call, scope: Scope, device: Optional[str], dtype: Optional[str],
                    offset: int = 0) -> Optional[Value]:
        """What torch's own stubs say the call returns (``torch_facts``), as a value; None when
        they do not know (the caller keeps its default: a tensor on the inputs' device)."""
        positional = [a for a in call.args if a.keyword is None]
        if any(a.star for a in call.args):
            return None
        keywords = tuple(a.keyword.value for a in call.args if a.keyword is not None)
        constants = {}
        for a in call.args:
            if a.keyword is not None and type(a.value) is cst.Name and a.value.value in ("True", "False"):
                constants[a.keyword.value] = a.value.value == "True"
        kinds = tuple(_FACT_KINDS.get((v.kind, v.dtype if v.kind == NUMBER else None), _FACT_KINDS.get((v.kind, None)))
                      for v in (self.infer(a.value, scope) for a in positional))
        r = torch_facts.returns(key, len(positional) + offset, keywords, constants=constants, arg_kinds=kinds)
        return _value_of_returns(r, device, dtype)

    def _factory_ndim(self, last: str, call: cst.Call, scope: Scope) -> Optional[int]:
        """``torch.zeros(1, n, 1)`` / ``torch.ones((3, 3))``: how many dimensions the sizes give."""
        if last in ("arange", "randperm"):
            return 1
        if last == "randint":
            # `torch.randint(low, high, size)` / `(high, size)`: the size is the tuple argument
            size = next((a for a in call.args if (a.keyword is not None and a.keyword.value == "size")
                         or (a.keyword is None and type(a.value) in (cst.Tuple, cst.List))), None)
            return _size_length(self.infer(size.value, scope)) if size is not None else None
        if last not in SIZED_FACTORIES:
            return None
        sizes = [a for a in call.args if a.keyword is None or a.keyword.value == "size"]
        if last == "full":
            sizes = sizes[:1]
        if not sizes or any(a.star for a in sizes):
            return None
        if len(sizes) == 1:
            return _size_length(self.infer(sizes[0].value, scope))
        return len(sizes)  # `torch.ones(n, m)`: sizes spelled one by one are one dimension each

SIZED_FACTORIES = frozenset("zeros ones empty rand randn full".split())  # the size comes first


def _default_true(name: str, scope: Scope) -> bool:
    """``name`` is a parameter of the enclosing function whose default is ``True`` (on unless a
    caller turns it off: ``def make_scaler(enabled=True)``)."""
    func = scope.func if scope is not None else None
    param = param_named(func.node, name) if func is not None else None
    return param is not None and type(param.default) is cst.Name and param.default.value == "True"


def _keyword(call: cst.Call, name: str) -> Optional[cst.BaseExpression]:
    """The value passed as ``name=`` (None when it is not)."""
    return next((a.value for a in call.args if a.keyword is not None and a.keyword.value == name), None)


def _literal_rank(e: cst.BaseExpression) -> Optional[int]:
    """The rank of a tensor made from a literal: 0 for a number, 1 for a list of numbers, more for
    nested lists of one shape; None for anything else."""
    if type(e) in (cst.Integer, cst.Float) or (type(e) is cst.UnaryOperation
                                                    and type(e.expression) in (cst.Integer, cst.Float)):
        return 0
    if type(e) in (cst.List, cst.Tuple) and e.elements \
            and not any(type(el) is cst.StarredElement for el in e.elements):
        ranks = {_literal_rank(el.value) for el in e.elements}
        return None if len(ranks) != 1 or None in ranks else 1 + ranks.pop()
    return None


def _size_length(v: Value) -> Optional[int]:
    if v.kind == NUMBER and v.dtype in ("int", None):
        return 1
    if v.kind in (TUPLE, LIST) and v.elts and all(e.kind == NUMBER for e in v.elts):
        return len(v.elts)
    return None


# our value kinds -> the kinds torch_facts matches parameters with
_FACT_KINDS = {
    (TENSOR, None): "tensor", (NUMBER, "int"): "int", (NUMBER, "bool"): "bool", (NUMBER, "float"): "float",
    (NUMBER, None): "number", (LIST, None): "list", (TUPLE, None): "tuple", (SIZE, None): "size",
    (NONE, None): "none", (STR, None): "str", (DTYPE, None): "dtype", (DEVICE, None): "device",
}
_SCALAR_RETURNS = {"bool": ("bool",), "int": ("int",), "float": ("float",), "number": (None,)}


def _value_of_returns(r, device: Optional[str], dtype: Optional[str]) -> Optional[Value]:
    kind = r.kind
    if kind == "tensor":
        return tensor(device, dtype)
    if kind == "tensor_tuple" and r.n:
        elts = []
        for i in range(r.n):
            ek = r.elts[i] if i < len(r.elts) else "tensor"
            field = r.fields[i] if i < len(r.fields) else ""
            if ek != "tensor":
                elts.append(_value_of_kind(ek) or UNKNOWN_VALUE)
            else:
                elts.append(tensor(device, "int" if field in ("indices", "inverse", "counts", "info") else None))
        return Value(TUPLE, elts=tuple(elts))
    if kind in ("tensor_list", "tensor_tuple"):
        return Value(TENSOR_SEQ, device=device)
    return _value_of_kind(kind)


def _value_of_kind(kind: str) -> Optional[Value]:
    if kind in _SCALAR_RETURNS:
        return number(_SCALAR_RETURNS[kind][0])
    simple = {"size": SIZE, "list": LIST, "tuple": TUPLE, "none": NONE, "dtype": DTYPE, "device": DEVICE, "str": STR}
    return Value(simple[kind]) if kind in simple else None


def _kwarg_true(call: cst.Call, name: str) -> bool:
    for a in call.args:
        if a.keyword is not None and a.keyword.value == name:
            return type(a.value) is cst.Name and a.value.value == "True"
    return False


def reduced_dtype(name: str, dtype: Optional[str]) -> Optional[str]:
    """The dtype of a reduction's result: an index or a count is an integer, the rest keep theirs."""
    return "int" if name in ("argmax", "argmin", "count_nonzero") else dtype


def _reduced_ndim(recv: Value, call: cst.Call) -> Optional[int]:
    """The rank of a reduction of ``recv`` over the one dimension ``call`` names; None if unknown."""
    if recv.ndim is None or not _one_dim_reduction(call):
        return None
    return recv.ndim - 1 if recv.ndim > 0 else 0


def _one_dim_reduction(call: cst.Call) -> bool:
    """``x.argmax(0)`` / ``x.sum(dim=-1)``: one integer dimension, no ``keepdim=True``."""
    dims = [a for a in call.args if a.keyword is None or a.keyword.value == "dim"]
    if len(dims) != 1 or any(a.keyword is not None and a.keyword.value == "keepdim" and not (
            type(a.value) is cst.Name and a.value.value == "False") for a in call.args):
        return False
    v = dims[0].value
    if type(v) is cst.UnaryOperation and type(v.operator) is cst.Minus:
        v = v.expression
    return type(v) is cst.Integer and len(call.args) == 1 + sum(
        1 for a in call.args if a.keyword is not None and a.keyword.value == "keepdim")
