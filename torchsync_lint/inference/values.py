"""Abstract values: what inference knows about an expression."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional, Tuple

# kinds
TENSOR = "tensor"
NUMBER = "number"  # Python int/float/bool
LIST = "list"
TUPLE = "tuple"
RANGE = "range"
NDARRAY = "ndarray"
STR = "str"
NONE = "none"
SIZE = "size"  # torch.Size / tuple of Python ints from .shape
DEVICE = "device"
DTYPE = "dtype"
TENSOR_SEQ = "tensor_seq"  # a tuple or list of tensors of unknown length (split, sort, nonzero(as_tuple))
MODULE = "module"  # an nn.Module instance: calling it gives a tensor
SELF = "self"
STREAM = "stream"  # a CUDA/accelerator stream (torch.cuda.Stream, current_stream())
EVENT = "event"  # a CUDA/accelerator event (torch.cuda.Event, stream.record_event())
GRAD_SCALER = "grad_scaler"  # torch.amp / torch.cuda.amp GradScaler (its step() checks for inf/NaN on the host)
DICT = "dict"  # a dict (from annotations: ``dict[str, Tensor]``); ``item`` is the value of its values
UNKNOWN = "unknown"

# devices
CUDA = "cuda"
CPU = "cpu"


@dataclass(frozen=True)
class Value:
    kind: str = UNKNOWN
    device: Optional[str] = None  # tensors: "cuda", "cpu", or None (unknown, possibly on the GPU)
    dtype: Optional[str] = None  # tensors: "bool", "int", "float" or None; numbers: "int"/"float"/"bool"
    elts: Tuple["Value", ...] = ()  # tuples and lists of known members
    host_data: bool = False  # tensors built from Python/numpy data on the host
    # lists and dicts of unknown length whose members (dict: values) share one known value
    # (``list[Tensor]``, ``dict[str, Tensor]`` annotations); None when unknown
    item: Optional["Value"] = None
    # a tensor by convention only (an unannotated `forward` input), not by evidence: rules about
    # Python-level uses (sizes, branches) skip it, since ints and flags are passed to forward too
    assumed: bool = False

    @property
    def is_tensor(self) -> bool:
        return self.kind == TENSOR

    @property
    def maybe_gpu(self) -> bool:
        return self.kind == TENSOR and self.device != CPU

    @property
    def is_host(self) -> bool:
        """A value that lives in Python (not a tensor, and known)."""
        return self.kind not in (TENSOR, UNKNOWN, MODULE, SELF)

    def with_(self, **kw) -> "Value":
        d = dict(kind=self.kind, device=self.device, dtype=self.dtype, elts=self.elts, host_data=self.host_data,
                 item=self.item, assumed=self.assumed)
        d.update(kw)
        return Value(**d)


UNKNOWN_VALUE = Value()


def tensor(device: Optional[str] = None, dtype: Optional[str] = None, host_data: bool = False) -> Value:
    return Value(TENSOR, device=device, dtype=dtype, host_data=host_data)


def number(dtype: Optional[str] = None) -> Value:
    return Value(NUMBER, dtype=dtype)


def join(a: Value, b: Value) -> Value:
    """What a name holds after two branches assign it."""
    if a == b:
        return a
    if a.kind != b.kind:
        if a.kind == NONE:
            return b
        if b.kind == NONE:
            return a
        return UNKNOWN_VALUE
    if a.kind == TENSOR:
        return tensor(
            device=a.device if a.device == b.device else None,
            dtype=a.dtype if a.dtype == b.dtype else None,
            host_data=a.host_data and b.host_data,
        ).with_(assumed=a.assumed or b.assumed)
    if a.elts and len(a.elts) == len(b.elts):  # (t, True) or (t2, False): member by member
        return Value(a.kind, elts=tuple(join(x, y) for x, y in zip(a.elts, b.elts)))
    if a.item is not None and b.item is not None and not a.elts and not b.elts:
        item = join(a.item, b.item)
        return Value(a.kind, item=item if item.kind != UNKNOWN else None)
    return Value(a.kind)
