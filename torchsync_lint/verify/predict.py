"""Predict mode (``--verify=predict``, no GPU), in the verifier's child; ``torch`` is passed in.

``make_recorder``: a TorchDispatchMode under FakeTensorMode that records data-dependent ops and
host-device copies, with the stack; the meta device stands for the GPU (``make_device_redirect``,
also used by the CPU search for inputs, with the CPU standing for the GPU).
"""

from __future__ import annotations

import sys

from torchsync_lint.verify.oracles import EventLog
from torchsync_lint.verify.stacks import Roots, capture_stack

# ---------------------------------------------------------------------------------------------
# predict mode (CPU): FakeTensor + dispatch recorder

DATA_DEPENDENT = {
    "aten._local_scalar_dense": "copies a value to the host",
    "aten.nonzero": "data-dependent output size",
    "aten.nonzero_static": None,
    "aten.argwhere": "data-dependent output size",
    "aten._unique2": "data-dependent output size",
    "aten.unique_dim": "data-dependent output size",
    "aten.unique_consecutive": "data-dependent output size",
    "aten._unique": "data-dependent output size",
    "aten.masked_select": "data-dependent output size",
    "aten.bincount": "data-dependent output size",
    "aten.histc": None,
    "aten.repeat_interleave": "data-dependent output size",
    "aten._assert_async": None,
    "aten.is_nonzero": "copies a value to the host",
    "aten.equal": "copies a value to the host",
    "aten.allclose": "copies a value to the host",
}


def make_recorder(torch, roots: Roots, log: EventLog, gpu: str = "meta"):
    """A TorchDispatchMode recording ops that make the host wait, with the user's stack."""
    from torch._subclasses.fake_tensor import FakeTensor
    from torch.utils._python_dispatch import TorchDispatchMode

    stopping = ("DataDependentOutputException", "DynamicOutputShapeException")

    def device_of(x):
        return x.device.type if isinstance(x, torch.Tensor) else None

    def tensors(args):
        flat = []
        for a in args:
            if isinstance(a, torch.Tensor):
                flat.append(a)
            elif isinstance(a, (list, tuple)):
                flat.extend(x for x in a if isinstance(x, torch.Tensor))
        return flat

    state = {"scalar": None}

    class Recorder(TorchDispatchMode):
        def _record(self, name, why):
            log.syncs.append({"oracles": ["fake-tensor"], "frames": capture_stack(sys._getframe(2), roots),
                              "count": 1, "stall_us": None, "op": name, "detail": why})

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            kwargs = kwargs or {}
            name = str(func.overloadpacket) if hasattr(func, "overloadpacket") else str(func)
            name = name if name.startswith("aten.") else "aten." + name.split("::")[-1]
            why = None
            if name in DATA_DEPENDENT:
                why = DATA_DEPENDENT[name]
                if name == "aten.repeat_interleave" and kwargs.get("output_size") is not None:
                    why = None
            elif name in ("aten._to_copy", "aten.copy_"):
                src = args[1] if name == "aten.copy_" and len(args) > 1 else (args[0] if args else None)
                dst = kwargs.get("device")
                dst_type = dst.type if hasattr(dst, "type") else (str(dst).split(":")[0] if dst else None)
                if name == "aten.copy_" and args:
                    dst_type = device_of(args[0])
                src_type = device_of(src)
                if src_type and dst_type and src_type != dst_type and gpu in (src_type, dst_type):
                    if dst_type == "cpu" or not kwargs.get("non_blocking", False):
                        why = "host-to-device copy" if dst_type != "cpu" else "device-to-host copy"
            elif name == "aten.index_put_" and len(args) > 2 and args[2] is state["scalar"]:
                indices = [i for i in (args[1] or []) if isinstance(i, torch.Tensor)]
                if indices and not any(i.dtype == torch.bool for i in indices):
                    why = "a Python scalar copied to the device for an integer-index assignment"
            if why is None:
                flat = tensors(args)
                if any(t.device.type == gpu for t in flat):
                    # the indexing code builds tensors from host lists/ranges straight on the device: on
                    # a GPU that is a host-to-device copy (and a CPU operand of more than 0-dim is one too)
                    host = [t for t in flat if not isinstance(t, FakeTensor) and t.device.type == gpu]
                    if gpu != "cpu":
                        host += [t for t in flat if t.device.type == "cpu" and t.dim() > 0]
                    if host:
                        why = "host data copied to the device"
            if why:
                self._record(name, why)
            try:
                out = func(*args, **kwargs)
            except Exception as exc:
                if type(exc).__name__ in stopping and not why:
                    self._record(name, "data-dependent output (" + str(exc).split("(")[0].strip()[:80] + ")")
                raise
            state["scalar"] = out if name == "aten.scalar_tensor" else None
            return out

    return Recorder()


def make_device_redirect(torch, gpu: str = "meta"):
    """In predict mode the meta device plays the GPU: send every cuda device argument there."""
    from torch.overrides import TorchFunctionMode

    def fix(v):
        if isinstance(v, torch.device) and v.type == "cuda":
            return torch.device(gpu)
        if isinstance(v, str) and v.startswith("cuda"):
            return gpu
        return v

    class Redirect(TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            kwargs = dict(kwargs or {})
            name = getattr(func, "__name__", "")
            if "device" in kwargs:
                kwargs["device"] = fix(kwargs["device"])
            if name == "cuda":
                return args[0].to(gpu, **{k: v for k, v in kwargs.items() if k == "non_blocking"})
            if name == "to":
                args = tuple(fix(a) for a in args)
            if name in ("is_cuda",):
                return True
            return func(*args, **kwargs)

    return Redirect()
