"""Pass one over a file, evidence that a name holds a tensor (a mixin of ``index.FileIndex``): a
method only a tensor has (``x.masked_fill(...)``, ``loss.backward()``), a boolean mask made from
the value itself (``s[s > 0]``, ``k = (t >= 0) & (t < n); t[k]``), or a torch function's argument
where it takes only a tensor (``F.cross_entropy(out, y)``). Read by ``summaries.params`` for
unannotated parameters, and by the evaluator for a name bound to a value it cannot see or a loop's
item (``FunctionInfo.tensor_uses``)."""

from __future__ import annotations

import functools

import libcst as cst

from torchsync_lint import catalog
from torchsync_lint.inference import torch_facts
from torchsync_lint.inference import torch_api as api
from torchsync_lint.inference.defs import binding_names, param_named


# methods only an nn.Module has (an optimizer has `state_dict`, `zero_grad`, `load_state_dict`;
# many objects `train`, `eval`, `apply`)
MODULE_ONLY = frozenset(("parameters", "named_parameters", "buffers", "named_buffers", "modules", "named_modules",
                         "children", "named_children", "register_buffer", "register_parameter",
                         "register_forward_hook", "register_forward_pre_hook", "register_full_backward_hook"))


class TensorUses:
    """Mixin of ``index.FileIndex``."""

    # inside an `except` handler: a fallback path (`except AttributeError: np.fft.fftn(x)`), whose
    # hand-offs to numpy say nothing of what the normal path is given
    _handlers = 0

    def visit_ExceptHandler(self, node: cst.ExceptHandler) -> None:
        self._handlers += 1

    def leave_ExceptHandler(self, node: cst.ExceptHandler) -> None:
        self._handlers -= 1

    def visit_Attribute(self, node: cst.Attribute) -> None:
        if not self._func_stack:
            return
        if type(node.value) is cst.Name and (
                node.attr.value in _TENSOR_ONLY() or node.attr.value == "backward"):  # `loss.backward()`
            self._tensor_use(node.value.value)
        elif type(node.value) is cst.Name and node.attr.value in ("shape", "ndim"):
            self._func_stack[-1].array_uses.add(node.value.value)
        elif type(node.value) is cst.Name and node.attr.value in MODULE_ONLY:
            self._func_stack[-1].module_uses.add(node.value.value)
        elif (node.attr.value in MODULE_ONLY and type(node.value) is cst.Attribute
              and type(node.value.value) is cst.Name and node.value.value.value == "self"
              and self._func_stack[-1].cls is not None):
            self._func_stack[-1].cls.module_attrs.add(node.value.attr.value)  # `self.model.parameters()`
        elif type(node.value) is cst.Name and node.attr.value == "unscale_":
            self._func_stack[-1].scaler_uses.add(node.value.value)  # only a GradScaler unscales
        elif node.attr.value == "backward" and type(node.value) is cst.Call:
            scaled = node.value.func  # `scaler.scale(loss).backward()`: what scales a loss to backpropagate
            if type(scaled) is cst.Attribute and scaled.attr.value == "scale" and type(scaled.value) is cst.Name:
                self._func_stack[-1].scaler_uses.add(scaled.value.value)

    def visit_Subscript(self, node: cst.Subscript) -> None:
        # `s[s > 0]`, `e[:, e[0] != e[1]]`: a boolean mask made from the value itself (beside
        # whole-dimension slices)
        indices = [el.slice for el in node.slice if type(el.slice) is cst.Index
                   and type(el.slice.value) is not cst.Ellipsis]
        if (self._func_stack and type(node.value) is cst.Name and len(indices) == 1
                and all(type(el.slice) is not cst.Slice or _whole(el.slice) for el in node.slice)):
            sl = indices[0]
            test = sl.value
            while type(test) is cst.UnaryOperation and type(test.operator) is cst.BitInvert:
                test = test.expression
            if type(test) is cst.Name:
                # `k = (t >= 0) & (t < n); t[k]`: the mask a name holds, bound earlier here
                # (near it: the last 32 bindings, so a long function's subscripts stay linear)
                test = next((b[2] for b in reversed(self._func_stack[-1].bindings[-32:]) if b[0] == "assign"
                             and len(b[1]) == 1 and type(b[1][0]) is cst.Name and b[1][0].value == test.value), None)
            if _self_mask(test, node.value.value):
                self._tensor_use(node.value.value)

    def _tensor_use(self, name: str) -> None:
        """A use of ``name`` as only a tensor is used; of a parameter not yet rebound before this
        statement (`s = s[s > 0]`), evidence for what the callers pass even though it is rebound."""
        func = self._func_stack[-1]
        func.tensor_uses.add(name)
        if (name not in func.early_tensor_uses and param_named(func.node, name) is not None
                and name not in binding_names(func.bindings[:self._stmt_mark])):
            func.early_tensor_uses.add(name)

    def device_keywords(self, node: cst.Call) -> None:
        """Names passed as a call's ``device=``: torch's (``torch.as_tensor(x, device=device)``) or a
        helper's that hands it on (``cls._to_tensor(data, device=device)``)."""
        if self._func_stack:
            for a in node.args:
                if a.keyword is not None and a.keyword.value == "device" and type(a.value) is cst.Name:
                    self._func_stack[-1].device_names.add(a.value.value)

    def tensor_arguments(self, node: cst.Call, key) -> None:
        """``F.cross_entropy(out, y)``: names passed where every overload of a torch function takes
        only a tensor (numbers, lists and numpy arrays are refused there)."""
        if not self._func_stack or key is None or not key.startswith("torch.") or not node.args:
            return
        positional = 0
        for a in node.args:
            if a.star:
                return
            held = _tensor_method_receiver(a.value)
            if held is not None and _tensor_only_parameter(
                    key, a.keyword.value if a.keyword is not None else positional):
                self._func_stack[-1].tensor_arg_uses.add(held)
            if a.keyword is None:
                positional += 1


def _tensor_method_receiver(e: cst.BaseExpression):
    """The name an argument is, or whose tensor method it calls (``log_probs.transpose(0, 1)``:
    only a tensor's gives a tensor, numpy's gives an array, which the parameter refuses)."""
    if type(e) is cst.Name:
        return e.value
    if (type(e) is cst.Call and type(e.func) is cst.Attribute and type(e.func.value) is cst.Name
            and torch_facts.method(e.func.attr.value) is not None
            and e.func.attr.value not in torch_facts.framework_methods()):
        return e.func.value.value
    return None


TENSOR_ONLY = frozenset(("tensor",))


@functools.lru_cache(maxsize=4096)
def _tensor_only_parameter(qualname: str, at) -> bool:
    """Every overload of a torch function has a parameter there (a position, or a keyword) that
    is typed a tensor and nothing else."""
    f = torch_facts.function(qualname)
    if f is None or f.kind != "function" or not f.overloads or catalog.syncs(qualname):
        return False  # (a syncing function would be the only evidence for its own finding)
    for overload in f.overloads:
        if isinstance(at, int):
            params = [p for p in overload.params if not p.keyword_only and not p.var_keyword]
            found = params[at] if at < len(params) and not params[at].var_positional else None
        else:
            found = next((p for p in overload.params if p.name == at and not p.positional_only), None)
        if found is None or found.accepts != TENSOR_ONLY:
            return False
    return True


def _whole(sl: cst.Slice) -> bool:
    """``:`` (a whole dimension)."""
    return sl.lower is None and sl.upper is None and sl.step is None


def _self_mask(test, name: str) -> bool:
    """A comparison of ``name`` or a part of it (``name > 0``, ``name[:, 4] > t``), or comparisons
    of it joined by ``&`` / ``|``."""
    while type(test) is cst.UnaryOperation and type(test.operator) is cst.BitInvert:
        test = test.expression
    if type(test) is cst.BinaryOperation and type(test.operator) in (cst.BitAnd, cst.BitOr):
        return _self_mask(test.left, name) and _self_mask(test.right, name)
    return (type(test) is cst.Comparison and _rooted_at(test.left, name)
            and all(type(c.operator) not in (cst.In, cst.NotIn, cst.Is, cst.IsNot) for c in test.comparisons))


def _rooted_at(e, name: str) -> bool:
    """``name`` itself, or a part of it: ``name[:, 4]``, ``name.norm(dim=1)``."""
    while type(e) in (cst.Subscript, cst.Attribute, cst.Call):
        e = e.func if type(e) is cst.Call else e.value
    return type(e) is cst.Name and e.value == name


@functools.cache
def _TENSOR_ONLY() -> frozenset:
    """Methods only a tensor has and that were measured not to sync: a use of one is evidence that
    the receiver is a tensor (a syncing one would be the only evidence for its own finding)."""
    return frozenset(m for m in torch_facts.tensor_only_methods() if catalog.syncs("torch.Tensor." + m) is False)


# Tensor methods that keep the device: `x.detach().numpy()` hands `x`'s data to numpy as it is (the
# relayouts, but `type`, which may move it)
KEEPING_METHODS = (api.RELAYOUTS - {"type"}) | {"detach", "clone", "bool", "t"}


def _through_keeping(expr: cst.BaseExpression):
    """The name (or ``name.attr`` path) at the root of ``expr`` through device-keeping method calls,
    or None."""
    while (type(expr) is cst.Call and type(expr.func) is cst.Attribute and expr.func.attr.value in KEEPING_METHODS):
        expr = expr.func.value
    if type(expr) is cst.Attribute and type(expr.value) is cst.Name:
        return expr.value.value + "." + expr.attr.value
    return expr.value if type(expr) is cst.Name else None


def numpy_argument(qualname, call: cst.Call):
    """``x.numpy()``, ``np.percentile(x, 99)``, ``np.asarray(x)``: the name handed to numpy as it is,
    or None (``x.numpy(force=True)`` copies a CUDA tensor to the host: no evidence)."""
    func = call.func
    if type(func) is cst.Attribute and func.attr.value == "numpy":
        return None if call.args else _through_keeping(func.value)
    if qualname is None or not qualname.startswith("numpy.") or not call.args or call.args[0].keyword is not None:
        return None
    return _through_keeping(call.args[0].value)
