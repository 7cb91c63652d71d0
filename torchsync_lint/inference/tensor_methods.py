"""Tensor methods: what ``x.method(...)`` returns, with which device, dtype and rank.

The part of ``evaluate.Evaluator`` that knows ``torch.Tensor``'s methods (a mixin, like
``torch_calls.TorchCalls``, whose ``_from_facts`` it asks where the cases below say nothing).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Optional

import libcst as cst

from torchsync_lint.inference import torch_api as api
from torchsync_lint.inference import torch_facts
from torchsync_lint.inference.names import dotted
from torchsync_lint.inference.torch_calls import (
    DTYPE_NAMES,
    FLOAT_METHODS,
    FULL_REDUCTIONS,
    INT,
    _kwarg_true,
    _reduced_ndim,
    reduced_dtype,
)
from torchsync_lint.inference.values import (
    CPU,
    CUDA,
    DEVICE,
    DTYPE,
    LIST,
    NDARRAY,
    NUMBER,
    SIZE,
    STR,
    TENSOR,
    TENSOR_SEQ,
    TUPLE,
    UNKNOWN,
    UNKNOWN_VALUE,
    Value,
    number,
    tensor,
)

if TYPE_CHECKING:
    from torchsync_lint.inference.scope import Scope


class TensorMethods:
    def tensor_method(self, name: str, recv: Value, call: cst.Call, scope: Scope) -> Value:
        out = self._tensor_method(name, recv, call, scope)
        if out.kind == TENSOR and not call.args and name in FULL_REDUCTIONS:
            return out.with_(zero_dim=True, ndim=0,
                             dtype=reduced_dtype(name, out.dtype))
        if out.kind == TENSOR and _flattens(name, call):
            return out.with_(ndim=1)
        ndim = _reduced_ndim(recv, call) if out.kind == TENSOR and name in FULL_REDUCTIONS else None
        if ndim is not None and name not in ("max", "min", "median"):
            # `scores.argmax(0)` of a 1-D tensor: one dimension fewer (0-dim from a vector)
            return out.with_(ndim=ndim, zero_dim=ndim == 0,
                             dtype=reduced_dtype(name, out.dtype))
        if out.kind == TENSOR and name in SHAPE_KEEPING and recv.ndim is not None:
            return out.with_(ndim=recv.ndim, zero_dim=recv.zero_dim)
        return out

    def _tensor_method(self, name: str, recv: Value, call: cst.Call, scope: Scope) -> Value:
        device, dtype = recv.device, recv.dtype
        nargs = len(call.args)
        if name in api.NOT_TENSOR_METHODS:
            return UNKNOWN_VALUE
        if name in api.METHOD_NUMBER:
            return number("bool" if name.startswith("is_") or name in ("equal", "allclose") else None)
        if name == "tolist":
            return Value(LIST)
        if name == "numpy":
            return Value(NDARRAY)
        if name in ("size", "stride"):
            return INT if nargs else Value(SIZE if name == "size" else TUPLE)
        if name == "type":
            return Value(STR) if not nargs else tensor(device)
        if name == "cpu":
            return tensor(CPU, dtype, host_data=recv.host_data)
        if name == "cuda":
            return tensor(CUDA, dtype)
        if name == "type_as" and call.args:
            other = self.infer(call.args[0].value, scope)
            if other.kind == TENSOR:  # device and dtype follow the argument
                return tensor(other.device, other.dtype, host_data=recv.host_data and other.device == CPU)
            return tensor(None, None)
        if name == "to":
            return self._to(recv, call, scope)
        if name == "new_tensor":
            return tensor(device, None, host_data=True)
        if name in ("new_zeros", "new_ones", "new_empty", "new_full"):
            return tensor(device, self.dtype_arg(call) or dtype)
        kw = {a.keyword.value for a in call.args if a.keyword is not None}
        if name in api.METHOD_MULTI:
            return Value(TENSOR_SEQ, device=device)
        if name in api.METHOD_MULTI_WITH_DIM and (nargs >= 1 and (
            "dim" in kw or self.infer(call.args[0].value, scope).kind == NUMBER
        )):
            return Value(TENSOR_SEQ, device=device, ndim=_reduced_ndim(recv, call) if name in ("max", "min", "median") else None)
        if name == "nonzero" and _kwarg_true(call, "as_tuple"):
            return Value(TENSOR_SEQ, device=device, dtype="int", ndim=1)
        if name in ("unique", "unique_consecutive") and (kw & {"return_inverse", "return_counts"}):
            return Value(TENSOR_SEQ, device=device)
        if name in api.BOOL_OPS:
            return tensor(device, "bool")
        if name in api.INT_OPS:
            return tensor(device, "int")
        if name in FLOAT_METHODS:
            return tensor(device, "float", host_data=recv.host_data and name in ("float", "half", "double"))
        if name in ("sum", "cumsum", "prod") and dtype in ("bool", "int"):
            return tensor(device, "int")
        if name in api.DTYPE_KEEPING:
            return tensor(device, dtype, host_data=recv.host_data)
        facts = self._from_facts("Tensor." + name, call, scope, device, None, offset=0)
        if facts is None and torch_facts.method(name) is None:
            return UNKNOWN_VALUE  # no Tensor method of torch's: a subclass's own (MetaTensor.peek_pending_rank)
        return facts if facts is not None else tensor(device)

    def _to(self, recv: Value, call: cst.Call, scope: Scope) -> Value:
        device: Optional[str] = recv.device
        dtype = recv.dtype
        for a in call.args:
            kw = a.keyword.value if a.keyword is not None else None
            if kw in ("non_blocking", "copy", "memory_format"):
                continue
            if kw == "dtype":
                dtype = DTYPE_NAMES.get((self.aliases.qualify(a.value) or "").split(".")[-1])
                continue
            v = self.infer(a.value, scope)
            if v.kind == DTYPE or (v.kind == UNKNOWN and "dtype" in (dotted(a.value) or "").split(".")[-1]):
                # `.to(self.dtype)` / `.to(dtype_float)`: a dtype by name, not a device
                name = (self.aliases.qualify(a.value) or "").split(".")[-1]
                dtype = DTYPE_NAMES.get(name)
            elif v.kind == TENSOR:
                device, dtype = v.device, v.dtype
            elif v.kind == STR or type(a.value) in (cst.SimpleString, cst.Call) or kw == "device" or v.kind in (DEVICE, UNKNOWN):
                d = self.device_of(a.value, scope)
                device = None if d == "?" else d
        return tensor(device, dtype, host_data=recv.host_data and device == CPU)


# methods whose result has the receiver's shape (conversions, copies, elementwise maps)
SHAPE_KEEPING = frozenset(
    "long int float double half bfloat16 bool byte short char clone detach contiguous to cpu cuda type_as "
    "abs neg sign sigmoid relu exp log sqrt rsqrt round floor ceil trunc clamp clip requires_grad_ "
    "pin_memory argsort flip fliplr flipud roll cumsum cumprod tanh softmax log_softmax masked_fill sin cos "
    "log1p expm1 reciprocal square nan_to_num logit erf".split()
)

def _flattens(name: str, call: cst.Call) -> bool:
    """``x.flatten()``, ``x.ravel()``, ``x.view(-1)``, ``x.reshape(-1)``: one dimension."""
    if name in ("flatten", "ravel"):
        return not call.args
    if name in ("view", "reshape") and len(call.args) == 1 and call.args[0].keyword is None:
        v = call.args[0].value
        return (type(v) is cst.UnaryOperation and type(v.operator) is cst.Minus
                and type(v.expression) is cst.Integer and v.expression.value == "1")
    return False
