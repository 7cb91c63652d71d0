"""Method calls whose result the receiver's kind decides rather than a class: a loader's batch
(``batch.to(d)``, ``batch.items()``), a dict (``.get``, ``.values``), and the constructor of a
dataclass or NamedTuple (what each field is given). A mixin of ``evaluate.Evaluator`` (through
``calls.Calls``)."""

from __future__ import annotations

import libcst as cst

from torchsync_lint.inference import containers
from torchsync_lint.inference import torch_facts as facts
from torchsync_lint.inference.defs import generated_fields, string_key
from torchsync_lint.inference.scope import Scope
from torchsync_lint.inference.torch_api import RELAYOUTS
from torchsync_lint.inference.values import (
    CPU,
    CUDA,
    LIST,
    MAX_KEYS,
    OBJECT,
    TUPLE,
    UNKNOWN,
    UNKNOWN_VALUE,
    Value,
    tensor,
)


class ReceiverMethods:
    """Mixin of ``evaluate.Evaluator``."""

    def _with_fields(self, v: Value, call: cst.Call, scope: Scope) -> Value:
        """``Out(logits, mask=x > 0)`` of a dataclass or NamedTuple class: the instance, with
        what the call stores in each field (as a dict's keys): a bool mask or a 0-dim index
        that the field's annotation (``Tensor``) does not say."""
        if v.kind != OBJECT or v.cls is None or not call.args:
            return v
        names = self.field_names(v.cls)
        if not names:
            return v
        keys = {}
        positional = 0
        for a in call.args:
            if a.star:
                return v
            if a.keyword is None:
                name = names[positional] if positional < len(names) else None
                positional += 1
            else:
                name = a.keyword.value if a.keyword.value in names else None
            if name is not None:
                got = self.infer(a.value, scope)
                if got.kind != UNKNOWN:
                    keys[name] = got
        return v.with_(keys=tuple(keys.items())[:MAX_KEYS]) if keys else v

    def field_names(self, cls_key: str) -> tuple:
        """The generated constructor's fields of a project class (``defs.generated_fields``),
        those of dataclass bases first."""
        local = self._local_class(cls_key)
        if local is None:
            return self.project.fields(cls_key) if self.project is not None else ()
        own = generated_fields(local, self.aliases.qualify)
        if not own:
            return ()
        for b in local.bases:
            if b.split(".")[-1] != cls_key.split(".")[-1]:
                base = self.index.classes.get(b.split(".")[-1])
                inherited = self.field_names(base.key) if base is not None else ()
                own = inherited + tuple(n for n in own if n not in inherited)
        return own

    def _batch_method(self, recv: Value, name: str, call: cst.Call, scope: Scope) -> Value:
        """Methods of a batch from a DataLoader: moves to the device give device tensors; a dict
        batch's values stay batches."""
        on_device = recv.device == CUDA  # already moved (a Lightning step's batch)
        if name in ("to", "cuda"):
            if on_device:
                return recv
            moved = self.tensor_method(name, tensor(CPU), call, scope)
            return moved if moved.device != CPU else recv
        if name in ("get", "pop", "__getitem__", "values") or name in RELAYOUTS:
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
    def _dict_method(recv: Value, name: str, call: cst.Call) -> Value:
        if containers.is_container(recv):
            return containers.method_result(recv, name)
        if name in ("get", "pop", "setdefault", "__getitem__") and recv.keys and call.args:
            key = string_key(call.args[0].value)
            if key is not None:  # `.get("scale")` of `{"weight": t}`: not what the dict holds
                return recv.keyed(key) or UNKNOWN_VALUE
        if recv.item is None:
            return UNKNOWN_VALUE
        if name in ("get", "pop", "setdefault", "__getitem__"):
            return recv.item
        if name == "values":
            return Value(LIST, item=recv.item)
        if name == "items":
            return Value(LIST, item=Value(TUPLE, elts=(UNKNOWN_VALUE, recv.item)))
        return UNKNOWN_VALUE
