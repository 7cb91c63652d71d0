"""Calls that are not torch's API: methods of this project's classes, ``self.<attr>(...)``,
``super()``, local functions, other files' functions, batches and dicts; and the device and dtype
a call's arguments name.

The part of ``evaluate.Evaluator`` that follows calls through the project (a mixin: it uses the
evaluator's ``infer``, ``returns_at``, ``method``, ``self_attr`` and ``_ref``).
"""

from __future__ import annotations

from typing import Optional

import libcst as cst

from torchsync_lint.inference import torch_facts as facts
from torchsync_lint.inference import named_tuples
from torchsync_lint.inference.torch_api import DISTRIBUTION_PREFIX
from torchsync_lint.inference.defs import class_level, torch_dim_keyword
from torchsync_lint.inference.index import ClassInfo, FunctionInfo, any_base
from torchsync_lint.inference.lambdas import Lambdas
from torchsync_lint.inference.receiver_methods import ReceiverMethods
from torchsync_lint.inference.roots import names_tensor_base
from torchsync_lint.inference.scope import Scope
from torchsync_lint.inference.signatures import placeholder
from torchsync_lint.inference.values import (
    BATCH,
    CPU,
    CUDA,
    DEVICE_REF,
    DEVICE,
    DICT,
    EVENT,
    FUNC,
    LIST,
    MODULE,
    NDARRAY,
    NUMBER,
    OBJECT,
    SELF,
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
    operands_device,
    tensor,
)
from torchsync_lint.inference.tensor_methods import SHAPE_KEEPING
from torchsync_lint.inference.torch_calls import DTYPE_NAMES, EXTERNAL_ROOTS, INT

# references (``inference.project``) to what may be an instance of another file's class: a
# constructor's or function's result, a module moved, a member unpacked, a method's result
INSTANCE_REFS = ("call", "moved", "elt", "invoked")


class Calls(Lambdas, ReceiverMethods):
    """Mixin of ``evaluate.Evaluator``."""

    def _instance(self, cls: ClassInfo) -> Value:
        """``Cls(...)`` of a class of this file (its bases may live elsewhere)."""
        if self._tensor_class(cls):
            return tensor()  # a subclass of torch.Tensor (``placed_subclass`` says where)
        if self.project is not None and self.recorded is not None:
            # a growing project does not hold this file yet: ask it about the foreign bases only
            v = Value(MODULE if self.is_module_class(cls) else OBJECT, cls=cls.key)
            self.recorded[("call", cls.key)] = v
            return v
        if self.project is not None:
            return self.project.instance(cls.key)
        if cls.is_module:
            return Value(MODULE, cls=cls.key)
        if all(self.index.classes.get(b.split(".")[-1]) is not None or b == "object"
               or (b.split(".")[0] in EXTERNAL_ROOTS and b.split(".")[0] != "torch")
               or b.startswith("torch.utils.data.") for b in cls.bases):
            # every base is known here or is no module class (`NamedTuple`, `Generic[T]`, `ABC`,
            # torch's `Dataset` and `Sampler`): no nn.Module
            return Value(OBJECT, cls=cls.key)
        return self._ref(("call", cls.key))

    def _tensor_class(self, cls: ClassInfo) -> bool:
        """Some base, here or in another file, is a tensor's (``roots.names_tensor_base``)."""
        def names_one(c: ClassInfo) -> bool:
            return any(names_tensor_base(b) and self.index.classes.get(b.split(".")[-1]) is None
                       and (self.project is None or self.project.class_key(b) is None) for b in c.bases)
        return names_one(cls) or any_base(cls, self.index, self.project, names_one,
                                          lambda key: self.project.is_tensor_class(key))

    def is_module_class(self, cls: ClassInfo) -> bool:
        """The class is an ``nn.Module``: by its own bases, here or in another file."""
        return cls.is_module or self._module_by_bases(cls)

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
        """``obj.name(...)`` for an instance of a known class (or of one of several)."""
        if recv.kind == OBJECT and recv.cls is None and recv.elts:
            out = None
            for m in recv.elts:
                got = self._method_result(m, name, call, scope)
                out = got if out is None else join(out, got)
            return out
        if recv.kind == MODULE and name in facts.module_self_methods():
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
        if recv.kind == OBJECT and recv.cls is not None and recv.cls.startswith(DISTRIBUTION_PREFIX):
            # `dist.log_prob(a)`, `dist.sample()`, `dist.entropy()`: what torch's Distribution declares
            made = facts.lookup("Distribution." + name)
            if made is not None and made.kind == "method" and made.returns.kind == "tensor":
                return tensor(recv.device)
            return UNKNOWN_VALUE
        if recv.cls is None or recv.cls.startswith("torch."):  # a torch.nn layer: its output is a tensor
            return tensor() if recv.kind == MODULE and name in ("forward", "__call__") else UNKNOWN_VALUE
        return self._ref(("method", recv.cls, name) + self._call_flag(call, scope))

    def placed_subclass(self, made: Value, call: cst.Call, scope: Scope) -> Value:
        """``Mask(data)``, ``MetaTensor(x, device=d)``: a tensor subclass's constructor places its
        data as ``torch.as_tensor`` does: on ``device=``, else where a tensor given is, else (host
        data) on the default device."""
        dev = self.device_arg(call, scope)
        if dev is not None:
            return made.with_(device=None if dev == "?" else dev, cls=None)
        first = next((a.value for a in call.args if a.keyword is None), None)
        v = self.infer(first, scope) if first is not None else None
        if v is not None and v.kind == TENSOR:
            return made.with_(device=v.device, cls=None)
        return made.with_(device=self.default_device(), cls=None)

    def device_arg(self, call: cst.Call, scope: Scope) -> Optional[str]:
        """The device a factory call names: "cpu", "cuda", None (none given) or "?" (a variable)."""
        for a in call.args:
            if a.keyword is not None and a.keyword.value == "device":
                return self.device_of(a.value, scope)
        return None

    def device_of(self, e: cst.BaseExpression, scope: Scope) -> str:
        if type(e) is cst.SimpleString:
            text = str(e.evaluated_value)
            return CPU if text.startswith("cpu") else CUDA if text.startswith("cuda") else "?"
        if type(e) is cst.Call and self.aliases.qualify(e.func) == "torch.device" and e.args:
            return self.device_of(e.args[0].value, scope)
        if type(e) is cst.Attribute and e.attr.value == "device":
            base = self.infer(e.value, scope)
            if base.kind == TENSOR:
                return base.device or "?"
        if type(e) in (cst.Name, cst.Attribute):
            v = self.infer(e, scope)  # a variable holding "cpu" or torch.device("cuda")
            if v.kind in (STR, DEVICE) and v.device in (CPU, CUDA):
                return v.device
            if v.ref is not None and v.ref[0] == "value" and self.project is None:
                # another file's constant (`HOST = torch.device("cpu")`): named, for the project to
                # place what it puts there (``Project.deep``)
                return DEVICE_REF + v.ref[1]
        return "?"

    def dtype_arg(self, call: cst.Call) -> Optional[str]:
        for a in call.args:
            if a.keyword is not None and a.keyword.value == "dtype":
                name = (self.aliases.qualify(a.value) or "").split(".")[-1]
                return DTYPE_NAMES.get(name)
        return None

    def _first_tensor_device(self, call: cst.Call, scope: Scope) -> Optional[str]:
        operands = []
        numbers_only = any(a.keyword is None for a in call.args)
        for a in call.args:
            if a.keyword is None:
                v = self.infer(a.value, scope)
                numbers_only = numbers_only and v.kind == NUMBER
                if v.kind == TENSOR:
                    operands.append(v)
                elif v.kind == TENSOR_SEQ:  # each member has the sequence's rank, not the sequence's
                    operands.append(tensor(v.device))
                elif v.kind in (LIST, TUPLE):
                    operands.extend(x for x in v.elts if x.kind == TENSOR)
                    if v.item is not None and v.item.kind == TENSOR:
                        operands.append(v.item)
                    elif v.item is not None and v.item.kind == BATCH and v.item.device is None:
                        # `labels.append(target)` over a loader: parts of host batches, on the CPU
                        operands.append(tensor(CPU))
        if not operands and numbers_only and self.device_arg(call, scope) is None:
            return CPU  # `torch.div(n, 2)` of Python numbers wraps them in CPU tensors
        return operands_device(operands) if operands else None

    def _call(self, call: cst.Call, scope: Scope) -> Value:
        func = call.func
        q = self.aliases.qualify(func)
        if q is None and type(func) is cst.Name:
            ref = scope.lookup(func.value)  # `window_fn(n)` with `window_fn=torch.hamming_window`
            if ref is not None and ref.kind == FUNC and (ref.cls in self.index.functions or ref.elts):
                return self.call_held(ref, call, scope)  # one of this file's functions, or a choice of them
            q = ref.cls if ref is not None and ref.kind == FUNC else None
        if q in ("typing.cast", "typing_extensions.cast") and len(call.args) == 2:
            # `cast(T, v)`: what a type checker takes it for, else what `v` is
            declared = self.annotation_value(call.args[0].value)
            return declared if declared.kind != UNKNOWN or declared.ref is not None else self.infer(
                call.args[1].value, scope)
        if q in named_tuples.FACTORIES:
            return named_tuples.constructor(call) or UNKNOWN_VALUE
        if q is not None and q.startswith(named_tuples.PREFIX):
            return named_tuples.construct(q, call, lambda e: self.infer(e, scope))
        if q is not None:
            v = self._qualified_call(q, call, scope)
            if (v is not None and v.kind == TENSOR and v.ndim is None and q.startswith("torch.")
                    and q.split(".")[-1] in SHAPE_KEEPING and call.args and call.args[0].keyword is None):
                base = self.infer(call.args[0].value, scope)  # `torch.argsort(scores)`: scores' rank
                if base.kind == TENSOR and base.ndim is not None:
                    v = v.with_(ndim=base.ndim, zero_dim=base.zero_dim)
            if v is not None:
                # the fields a constructor call stores (`Out(logits, mask=m)`); not the arguments of
                # a function that returns an instance (`select(scores, 0.5)`)
                constructed = v.cls is not None and v.cls.split(".")[-1] == q.split(".")[-1]
                return self._with_fields(v, call, scope) if constructed else v
        if type(func) is cst.Attribute:
            recv = self.infer(func.value, scope)
            name = func.attr.value
            m = self._class_level(func, recv, scope)
            if m is not None:
                return self.returns_at(m, call, scope)
            if recv.kind == TENSOR:
                return self.tensor_method(name, recv, call, scope)
            if recv.kind == SELF:
                m = self.method(scope.cls, name)
                if m is not None:
                    if placeholder(m.node):
                        got = self._overrides_return(m, call, scope)
                        if got is not None:
                            return got
                    return self.returns_at(m, call, scope)
                if (name == "state_dict" and scope.cls is not None and name not in scope.cls.attrs
                        and self.is_module_class(scope.cls)):
                    return Value(DICT, item=tensor())  # the module's own parameters and buffers
                attr = self.self_attr(scope.cls, name)
                if (attr.kind == MODULE and self._local_class(attr.cls) is None and attr.cls is not None
                        and not attr.cls.startswith("torch.")):
                    return self._method_result(attr, "__call__", call, scope)  # a module class of another file
                if attr.kind == MODULE and attr.cls == "torch.nn.Module":
                    return UNKNOWN_VALUE  # annotated `nn.Module` only: any module, any output
                if attr.kind == MODULE:
                    local = self._local_class(attr.cls)
                    forward = self.method(local, "forward") if local is not None else None
                    if forward is not None and not any(type(e) is cst.Call for _, e in scope.cls.attrs.get(name, ())):
                        # `self.policy = policy` of a declared module class: what its forward returns
                        got = self.returns(forward)
                        if got.kind != UNKNOWN or got.ref is not None:
                            return got
                    return self._submodule_call(scope.cls, name)
                if attr.kind == OBJECT:
                    return self._method_result(attr, "__call__", call, scope)
                if attr.kind == FUNC and (attr.cls is not None or attr.elts):
                    return self.call_held(attr, call, scope)
                if attr.kind == FUNC and attr.item is not None:
                    return attr.item  # a callable declared `Callable[..., R]`
                if attr.kind == UNKNOWN and attr.ref is not None and attr.ref[0] in INSTANCE_REFS:
                    # `self.model = Model().to(d)` of another file's class: what calling it returns
                    return self._ref(("invoked", attr.ref, "__call__") + self._call_flag(call, scope))
                if attr.kind == UNKNOWN and scope.cls is not None and name not in scope.cls.attrs:
                    for base in self._foreign_bases(scope.cls):
                        # a method inherited from another file
                        got = self._ref(("method", base, name) + self._call_flag(call, scope))
                        if got.kind != UNKNOWN or got.ref is not None:
                            return got
                return UNKNOWN_VALUE
            if recv.kind in (MODULE, OBJECT):
                return self._method_result(recv, name, call, scope)
            if (type(func.value) is cst.Call and self.aliases.qualify(func.value.func) == "builtins.super"
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
                return self._dict_method(recv, name, call)
            if recv.kind == BATCH:
                return self._batch_method(recv, name, call, scope)
            if recv.kind == UNKNOWN and name in facts.tensor_only_methods():
                return self.tensor_method(name, tensor(), call, scope)  # only a tensor has this method
            if recv.kind == UNKNOWN and torch_dim_keyword(call) and facts.method(name) is not None \
                    and name not in facts.framework_methods():
                # `logits.argmax(-1, keepdim=True)`: numpy and pandas say `axis` / `keepdims`
                return self.tensor_method(name, tensor(), call, scope)
            if recv.kind == UNKNOWN and name == "cpu" and not call.args:
                return tensor(CPU)  # whatever it was, its copy is on the host (what it holds is not known)
            if recv.kind == UNKNOWN and recv.ref is not None and recv.ref[0] == "type":
                # `self.scheduler.step(...)` where `scheduler: DDIMScheduler` names another file's class
                return self._ref(("method", recv.ref[1], name) + self._call_flag(call, scope))
            if recv.kind == UNKNOWN and recv.ref is not None and name in facts.module_self_methods():
                # `Model().to("cuda")` of another file's class: the module itself, or a moved tensor
                return self._ref(("moved", recv.ref, name))
            if recv.kind == UNKNOWN and recv.ref is not None and recv.ref[0] in INSTANCE_REFS:
                # `acc = Accuracy(); acc.compute()` of another file's class: what its method returns
                return self._ref(("invoked", recv.ref, name) + self._call_flag(call, scope))
            return UNKNOWN_VALUE
        lambdas = self._lambdas(func, scope)
        if lambdas:
            return self._call_lambdas(lambdas, call, scope)
        if type(func) in (cst.Subscript, cst.Call):
            # `{"lo": torch.lt, "hi": torch.gt}[mode](a, b)`: a value holding torch functions
            held = self.infer(func, scope)
            return self.call_held(held, call, scope) if held.kind == FUNC else UNKNOWN_VALUE
        if type(func) is cst.Name:
            local = scope.lookup(func.value)
            if local is not None:
                if local.kind == SELF and scope.cls is not None and _class_method(scope.func):
                    # `cls(tokens, lengths)` in a classmethod: an alternate constructor's instance
                    return self._with_fields(self._instance(scope.cls), call, scope)
                if local.kind == SELF and scope.cls is not None and scope.cls.is_module:
                    # self(x) in an nn.Module runs forward: what it returns (a tuple, a
                    # distribution), a tensor where the class has none of its own here
                    forward = self.method(scope.cls, "forward")
                    if forward is not None and not placeholder(forward.node):
                        got = self.returns_at(forward, call, scope)
                        if got.kind != UNKNOWN or got.ref is not None:
                            return got
                    return tensor()
                if local.kind in (MODULE, OBJECT):
                    return self._method_result(local, "__call__", call, scope)
                if local.kind == FUNC and local.cls is None and local.item is not None:
                    return local.item  # a parameter declared `Callable[..., R]`
                return UNKNOWN_VALUE
            f = self._local_function(func.value, scope)
            if f is not None:
                return self.returns_at(f, call, scope)
            cls = self.index.classes.get(func.value)
            if cls is not None:
                made = self._instance(cls)
                if made.kind == TENSOR:
                    return self.placed_subclass(made, call, scope)
                return self._with_fields(made, call, scope)
        return UNKNOWN_VALUE

    def _class_level(self, func: cst.Attribute, recv: Value, scope: Scope) -> Optional[FunctionInfo]:
        """``Boxes.mask(x)`` / ``Boxes.build(x)``: a static or class method called through the
        name of a class of this file (``self`` is not passed)."""
        if recv.kind != UNKNOWN or recv.ref is not None or type(func.value) is not cst.Name:
            return None
        cls = self.index.classes.get(func.value.value)
        if cls is None or scope.lookup(func.value.value) is not None:
            return None
        m = self.method(cls, func.attr.value)
        return m if m is not None and class_level(m.node) else None

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
                type(expr) is cst.Call and type(expr.func) is cst.Name) else None
            forward = self.method(sub, "forward") if sub is not None and sub.is_module else None
            if forward is None:
                return tensor()
            got = self.returns(forward)
            out = got if out is None else join(out, got)
        return out if out is not None and out.kind != UNKNOWN else tensor()

    def _overrides_return(self, m: FunctionInfo, call: cst.Call, scope: Scope) -> Optional[Value]:
        """``self.sample_params(...)`` where the method found is a placeholder for subclasses
        (``raise NotImplementedError``, ``pass``): the join of what the file's overrides return to
        this call; None where the file has none."""
        if m.cls is None:
            return None
        out = None
        for cls in self.index.classes.values():
            override = cls.methods.get(m.name)
            if override is None or override is m or placeholder(override.node) or not self._is_class_or_sub(
                    cls.key, m.cls):
                continue
            got = self.returns_at(override, call, scope)
            out = got if out is None else join(out, got)
        return out

    def call_held(self, held: Value, call: cst.Call, scope: Scope) -> Value:
        """Calling a FUNC value: a torch function or a project function it names, or one of several
        (``{"lo": torch.lt, "hi": torch.gt}[mode]``, ``{"robust": robust_stats, ...}[kind]``): the
        join of what each returns to this call."""
        out = None
        for m in (held,) if held.cls is not None else held.elts:
            if m.cls is None:
                return UNKNOWN_VALUE
            local = self.index.functions.get(m.cls)
            got = self.returns_at(local, call, scope) if local is not None else self._qualified_call(m.cls, call, scope)
            if got is None:
                return UNKNOWN_VALUE
            out = got if out is None else join(out, got)
        return out if out is not None else UNKNOWN_VALUE

    def _local_function(self, name: str, scope: Scope) -> Optional[FunctionInfo]:
        s: Optional[Scope] = scope
        while s is not None:
            if s.func is not None:
                f = self.index.functions.get(f"{s.func.key}.<locals>.{name}")
                if f is not None:
                    return f
            s = s.parent
        return self.index.module_functions.get(name)


def _class_method(func) -> bool:
    """A ``@classmethod``: its first parameter is the class."""
    return func is not None and any(type(d.decorator) is cst.Name and d.decorator.value == "classmethod"
                                    for d in func.node.decorators)
