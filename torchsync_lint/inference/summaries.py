"""Summaries of a file's functions and classes: what a function's parameters hold (annotations,
defaults, the values its call sites pass here and in other files), what it returns (to any call,
or to one that passes only host tensors), and what ``self.<attr>`` holds for the other methods.

A mixin of ``evaluate.Evaluator``: it uses the evaluator's ``infer``, scopes, memo tables and
recursion guard.
"""

from __future__ import annotations

from typing import Dict, Optional

import libcst as cst

from torchsync_lint.inference.annotations import without_arraylike
from torchsync_lint.inference.attributes import Attributes
from torchsync_lint.inference.call_sites import CallSites, bound_names
from torchsync_lint.inference.held_sites import all_params
from torchsync_lint.inference.device_defaults import DeviceDefaults
from torchsync_lint.inference.host_evidence import MOVING, HostEvidence, rebound_only_to_itself
from torchsync_lint.inference.collate import collate_names, collates, on_host
from torchsync_lint.inference.docstrings import docstring, parameter_types
from torchsync_lint.inference.index import STEP_HOOKS, FunctionInfo
from torchsync_lint.inference.lightning import device_batch_position, moved_to_device
from torchsync_lint.inference.names import dotted
from torchsync_lint.inference.scope import Scope
from torchsync_lint.inference.signatures import (
    bare_container,
    is_static,
    literal_default,
    placeholder,
    refine_annotation,
    signature_comment,
    vague_tensors,
)
from torchsync_lint.inference.values import (
    BATCH,
    CPU,
    DEVICE,
    DICT,
    DTYPE,
    FUNC,
    GRAD_SCALER,
    LIST,
    MODULE,
    NONE,
    NUMBER,
    OBJECT,
    SELF,
    SIZE,
    STR,
    TENSOR,
    TUPLE,
    UNKNOWN,
    UNKNOWN_VALUE,
    Value,
    join,
    join_maybe,
    tensor,
)


class Summaries(CallSites, Attributes, HostEvidence, DeviceDefaults):
    def params(self, func: FunctionInfo) -> Dict[str, Value]:
        got = self._params.get(id(func))
        if got is not None:
            return got
        key = ("params", id(func))
        if key in self._busy:
            self._cuts.append(key)
            return {}
        mark = len(self._cuts)
        self._busy.add(key)
        try:
            out: Dict[str, Value] = {}
            p = func.node.params
            positional = list(p.posonly_params) + list(p.params)
            is_static = any(
                type(d.decorator) is cst.Name and d.decorator.value == "staticmethod" for d in func.node.decorators
            )
            takes_tensors = (
                func.is_method and func.cls is not None and (
                    func.name == "forward" or (func.name == "__call__" and func.cls.is_module)
                )
            ) or func.name in STEP_HOOKS or func.name in self.hot_functions
            on_device = device_batch_position(func, self.index, self.project) if func.cls is not None else 0
            for i, param in enumerate(positional + list(p.kwonly_params)):
                name = param.name.value
                if i == 0 and func.is_method and not is_static and param in positional:
                    out[name] = Value(SELF)
                    continue
                if on_device and i == on_device:
                    # the trainer moves the batch to the device before the hook runs
                    out[name] = moved_to_device(self.declared(func).get(name, UNKNOWN_VALUE))
                    continue
                v = self.declared(func).get(name, UNKNOWN_VALUE)
                if v.kind in (UNKNOWN, STR, DEVICE) and v.device is None and param.default is not None:
                    d = self.infer(param.default, self.module_scope())
                    if d.kind == NONE and name in func.device_names and name not in bound_names(func):
                        pos = i - (1 if func.is_method and not is_static else 0)
                        v = self._device_left_out(func, name, pos if param in positional else None, v)
                    elif (d.kind in (STR, DEVICE) and d.device is not None) or d.kind == FUNC:
                        # `device: str = "cpu"`, `window_fn=torch.hann_window`: callers in this file
                        # may pass the GPU's device or another function instead
                        # (the default counts only where some call leaves the argument out)
                        pos = i - (1 if func.is_method and not is_static else 0)
                        omitted: list = []
                        passed = self._passed(func, name, pos if param in positional else None, omitted)
                        v = d if passed is None else join(d, passed) if omitted else passed
                        if passed is None and not omitted and d.device == CPU and d.kind != FUNC:
                            v = self._entry_device(func, name, pos if param in positional else None, d)
                    elif v.kind == UNKNOWN:
                        v = d if d.kind != NONE else UNKNOWN_VALUE
                elif (v.kind == UNKNOWN and takes_tensors and func.name not in STEP_HOOKS
                      and not self._names_a_class(param)):
                    # `forward(self, x, ...)`: the first input is the data, a tensor; later unannotated
                    # ones are tensors by convention only (flags and sizes come in too)
                    first = i == (1 if func.is_method and not is_static else 0)
                    v = Value(TENSOR, assumed=not first)
                    # what the callers pass says more: a bool mask, a host tensor, a Python int
                    pos = i - (1 if func.is_method and not is_static else 0)
                    at = pos if param in positional else None
                    passed = self._passed(func, name, at)
                    if passed is None and func.parent is None:
                        # other files' calls (`super().forward(x, m)` in a subclass there): open,
                        # so that the project pass checks this file again once they are known
                        got = self._other_files_pass(func, name, at)
                        passed = got if got is not None and got.kind != UNKNOWN else None
                    if passed is not None and not passed.assumed and (
                            passed.kind == TENSOR or (not first and passed.kind in (NUMBER, NONE))):
                        v = passed
                if v.kind == NUMBER and not self.assume_params:
                    # `size: int` (or a docstring's int) that a caller passes a tensor (`lengths.max()`):
                    # Python does not check it, so the tensor arrives; maybe a tensor
                    pos = i - (1 if func.is_method and not is_static else 0)
                    at = pos if param in positional else None
                    passed = self._passed_tensor(func, name, at)
                    if passed is None and func.parent is None and (
                            not func.is_method or func.name == "__init__"):
                        passed = self._other_files_pass(func, name, at, tensors_only=True)
                    if passed is not None and passed.kind == TENSOR and not passed.assumed:
                        v = join_maybe(v, passed)
                if (v.kind == TENSOR and v.device is None and not v.maybe and not self.assume_params
                        and name in self.declared(func)):
                    v = self._host_from_callers(func, name, i, param in positional, is_static, v)
                if v.kind in (DICT, LIST, TUPLE) and v.item is None and not v.elts and not self.assume_params:
                    # `sample : dict` (a docstring's word) says less than a training loop that passes
                    # it a batch from its loader
                    pos = i - (1 if func.is_method and not is_static else 0)
                    at = pos if param in positional else None
                    passed = self._passed(func, name, at)
                    if passed is None and func.parent is None and v.keys:  # a TypedDict: from other files too
                        passed = self._other_files_pass(func, name, at)
                    if passed is not None and (passed.kind == BATCH or passed.kind == DICT == v.kind and passed.keys):
                        v = passed  # a batch, or a dict whose keys the callers name (`dict(valid=mask)`)
                if (v.kind in (MODULE, OBJECT) and v.assumed and v.cls is not None and not v.cls.startswith("torch.")
                        and not self.assume_params):
                    v = self._declared_class(func, name, i, param in positional, is_static, v)
                # `transform: nn.Module` says less than the call sites, which pass a known class
                generic = v if v.kind == MODULE and v.cls == "torch.nn.Module" else None
                if generic is not None:
                    v = UNKNOWN_VALUE
                if v.kind == UNKNOWN:
                    ref = v if v.ref is not None else None  # a declared class of another file
                    pos = i - (1 if func.is_method and not is_static else 0)
                    v = self._from_call_sites(func, name, pos if param in positional else None)
                    if v.kind == UNKNOWN and func.parent is None:
                        # what other files pass (functions and constructors they import, methods
                        # of instances they hold)
                        got = self._other_files_pass(func, name, pos if param in positional else None)
                        v = got if got is not None else v
                    if ref is not None and v.kind == UNKNOWN and v.ref is None:
                        v = ref  # what the project resolves the annotation to
                if generic is not None and v.kind != MODULE:
                    v = generic
                if (v.kind == UNKNOWN and v.ref is None and param.annotation is None
                        and (param.default is None or _is_none(param.default)) and self._used_as_tensor(func, name)):
                    v = tensor()  # the body uses it as only a tensor can be used
                elif (v.kind == UNKNOWN and v.ref is None and param.annotation is None and name in func.scaler_uses
                      and name not in bound_names(func) and name not in func.type_tested):
                    v = Value(GRAD_SCALER)  # `scaler.scale(loss).backward()`: only a GradScaler is used so
                elif (v.kind == UNKNOWN and v.ref is None and param.annotation is None and name in func.module_uses
                      and rebound_only_to_itself(func, name) and name not in func.type_tested
                      and name not in func.tensor_uses):
                    # `model.parameters()`: some nn.Module, whose output is not known (as `model: nn.Module`)
                    v = Value(MODULE, cls="torch.nn.Module")
                elif (v.kind == UNKNOWN and v.ref is None and param.annotation is None and param.default is None
                        and name in func.number_uses and name not in func.tensor_uses and name not in func.tensor_arg_uses
                        and name not in bound_names(func)):
                    v = Value(NUMBER)  # listed as the data of a new tensor: a Python number
                if v.kind == UNKNOWN and v.ref is None and self.assume_params is not None:
                    v = tensor(CPU if self.assume_params == "cpu" else None)
                elif v.kind == TENSOR and v.device is None and self.assume_params == "cpu":
                    v = v.with_(device=CPU)  # `betas: Tensor` called with host tensors
                if collates(func, self._collate_names()):
                    v = on_host(v)  # a DataLoader's collate function: samples on the host
                elif (v.kind == TENSOR and v.device is None and name in self.host_names(func)
                      and name not in func.type_tested and rebound_only_to_itself(func, name, MOVING)):
                    v = v.with_(device=CPU)  # handed to numpy as it is (`x.numpy()`): a CUDA tensor would raise
                out[name] = v
            if type(p.star_arg) is cst.Param:
                out[p.star_arg.name.value] = Value(TUPLE)
            if p.star_kwarg is not None:
                out[p.star_kwarg.name.value] = UNKNOWN_VALUE
            self._memo(self._params, id(func), out, self._complete(key, mark))
            return out
        finally:
            self._busy.discard(key)
            self._forget_cuts()

    def _collate_names(self) -> set:
        got = getattr(self, "_collate_memo", None)
        if got is None:
            got = self._collate_memo = collate_names(self.index)
        return got

    def _used_as_tensor(self, func: FunctionInfo, name: str) -> bool:
        """An unannotated parameter that the function never rebinds and uses as only a tensor can
        be used (``x.new_ones(...)``, ``s[s > 0]``); or, failing that, a parameter of that name
        that two functions of this file use so (a file's functions share their names'
        meanings: ``sigmas`` indexed by ``sigmas > 0`` in one sampler is a tensor in the next)."""
        if name in func.type_tested:
            return False  # tested with isinstance: a use under the test is no evidence
        if name in func.early_tensor_uses:
            return True  # used as a tensor before any rebinding (`s = s[s > 0]`)
        if name in bound_names(func):
            return False  # rebound: a use may read the new value
        if name in func.tensor_uses or name in func.tensor_arg_uses:
            return True
        names = getattr(self, "_tensor_param_names", None)
        if names is None:
            seen: Dict[str, int] = {}
            for f in self.index.functions.values():
                if not f.tensor_uses and not f.tensor_arg_uses:
                    continue
                p = f.node.params
                for prm in list(p.posonly_params) + list(p.params) + list(p.kwonly_params):
                    n = prm.name.value
                    if ((n in f.tensor_uses or n in f.tensor_arg_uses) and prm.annotation is None
                            and n not in bound_names(f)
                            and n not in f.type_tested
                            and (prm.default is None or _is_none(prm.default))):
                        seen[n] = seen.get(n, 0) + 1
            # a convention of the file: the evidence in two functions at least
            names = {n for n, count in seen.items() if count >= 2}
            self._tensor_param_names = names
        return name in names

    def _complete(self, key: tuple, mark: int) -> bool:
        """No summary that encloses ``key``'s computation was cut short while it ran."""
        return not any(k in self._busy and k != key for k in self._cuts[mark:])

    def _memo(self, memo: dict, key: int, value, complete: bool) -> None:
        memo[key] = value
        if not complete:
            self._tentative.append((memo, key))

    def _forget_cuts(self) -> None:
        if self._busy:
            return
        self._cuts.clear()
        if self._tentative and self._rounds_left > 0:
            self._rounds_left -= 1
            for memo, key in self._tentative:
                memo.pop(key, None)
        self._tentative.clear()

    def _names_a_class(self, param: cst.Param) -> bool:
        """``session: InferenceSession``: a parameter declared as some class other than a tensor."""
        ann = param.annotation.annotation if param.annotation is not None else None
        if type(ann) is cst.SimpleString:
            try:
                ann = cst.parse_expression(str(ann.evaluated_value))
            except Exception:
                return False
        name = (self.aliases.qualify(ann) or dotted(ann) or "") if ann is not None else ""
        last = name.split(".")[-1]
        return last[:1].isupper() and last not in ("Any", "Tensor") and not name.startswith("torch.")

    def declared(self, func: FunctionInfo) -> Dict[str, Value]:
        """Parameters' declared types: annotations, else a PEP 484 ``# type: (...) -> ...`` comment;
        and locals declared with an annotation."""
        got = self._declared.get(id(func))
        if got is not None:
            return got
        plain = self.index.plain_declared.get(id(func))  # another evaluator of the file made it
        if plain is not None and plain[0] is func:
            self._declared[id(func)] = plain[1]
            return plain[1]
        out: Dict[str, Value] = {}
        self._declared[id(func)] = out
        mark = self._context_reads
        p = func.node.params
        params = list(p.posonly_params) + list(p.params) + list(p.kwonly_params)
        comment = signature_comment(func.node)
        if comment is not None and comment[0] is not None:
            skip = 1 if func.is_method and not is_static(func.node) and params else 0
            if len(comment[0]) == len(params) - skip:
                for param, ann in zip(params[skip:], comment[0]):
                    v = self.annotation_value(ann)
                    if v.kind != UNKNOWN:
                        out[param.name.value] = v
        for param in params:
            if param.annotation is not None:
                v = self.annotation_value(param.annotation.annotation)
                # `scheduler: DDIMScheduler` of another file: a reference the project resolves
                if v.kind != UNKNOWN or v.ref is not None:
                    out[param.name.value] = v
        # a literal default (`mask_shape="targets"`) outweighs a docstring that says Tensor
        untyped = [q.name.value for q in params
                   if q.annotation is None and q.name.value not in out and not literal_default(q)]
        if untyped:  # `x : torch.Tensor` in the docstring (of the class, for `__init__`)
            docs = [docstring(func.node)]
            if func.is_method and func.name == "__init__":
                docs.append(docstring(func.cls.node))
            typed = parameter_types(*docs)
            for name in untyped:
                if name in typed:
                    out[name] = typed[name]
        for b in func.bindings:  # `img_np: np.ndarray` declares a local the same way
            if b[0] == "annassign" and type(b[1][0]) is cst.Name and b[1][0].value not in out:
                v = self.annotation_value(b[3])
                if v.kind != UNKNOWN:
                    out[b[1][0].value] = v
        if self._context_reads == mark:
            self.index.plain_declared[id(func)] = (func, out)
        return out

    def returns_at(self, func: FunctionInfo, call: Optional[cst.Call], scope: Optional[Scope]) -> Value:
        """What ``func`` returns to this call. A summary that cannot place its tensor result (it
        follows its parameters) is asked again with host tensors for the parameters when every
        argument here is a host tensor or a plain Python value: ``rescale(betas)`` of a CPU table
        stays on the CPU."""
        out = self.returns(func)
        if out.kind == UNKNOWN and out.ref is None and call is not None and scope is not None:
            out = self._handed_return(func, call, scope) or out
        if (call is None or scope is None or out.kind != TENSOR or out.device is not None
                or self.assume_params is not None or not call.args or not self._host_arguments(call, scope)):
            return out
        alt = self.host_variant().returns(func)
        return alt if alt.kind == TENSOR and alt.device == CPU else out

    def _handed_return(self, func: FunctionInfo, call: cst.Call, scope: Scope) -> Optional[Value]:
        """``apply(loss_fn, a, b)`` where ``apply`` returns ``fn(a, b)`` of its parameter ``fn``:
        what the function this call hands it returns (a function or ``self.<method>`` here)."""
        key = ("handed_return", id(func))
        if not func.returns or key in self._busy or any(a.star for a in call.args):
            return None
        params = [q.name.value for q in all_params(func)]
        if func.is_method and not is_static(func.node):
            params = params[1:]
        positional = [a.value for a in call.args if a.keyword is None]
        keywords = {a.keyword.value: a.value for a in call.args if a.keyword is not None}
        self._busy.add(key)
        try:
            out = None
            for r in func.returns:
                name = r.func.value if type(r) is cst.Call and type(r.func) is cst.Name else None
                if name not in params or name in bound_names(func):
                    return None
                i = params.index(name)
                arg = keywords.get(name, positional[i] if i < len(positional) else None)
                target = self._handed_function(arg, scope) if arg is not None else None
                if target is None:
                    return None
                got = self.returns(target)
                out = got if out is None else join(out, got)
            return out if out is not None and out.kind != UNKNOWN else None
        finally:
            self._busy.discard(key)

    def _handed_function(self, arg: cst.BaseExpression, scope: Scope) -> Optional[FunctionInfo]:
        """The function of this file an argument names: ``f`` or ``self.f``."""
        if type(arg) is cst.Name:
            return self._local_function(arg.value, scope)
        if (type(arg) is cst.Attribute and type(arg.value) is cst.Name
                and (scope.lookup(arg.value.value) or UNKNOWN_VALUE).kind == SELF):
            return self.method(scope.cls, arg.attr.value)
        return None

    def host_variant(self):
        """This file's evaluator that summarises with host tensors in the open parameters (made
        once; the interface's ``returns_cpu`` comes from it too)."""
        if self._host_variant is None:
            self._host_variant = type(self)(self.index, self.hot_functions, project=self.project, assume_params="cpu")
        return self._host_variant

    def _host_arguments(self, call: cst.Call, scope: Scope) -> bool:
        seen_tensor = False
        for a in call.args:
            if a.star:
                return False
            v = self.infer(a.value, scope)
            if v.kind == TENSOR:
                if v.device != CPU:
                    return False
                seen_tensor = True
            elif v.kind not in (NUMBER, STR, NONE, SIZE, DTYPE) or v.device is not None:
                return False
        return seen_tensor

    def returns(self, func: FunctionInfo) -> Value:
        got = self._returns.get(id(func))
        if got is not None:
            return got
        key = ("returns", id(func))
        if key in self._busy:
            self._cuts.append(key)
            return Value(NONE)  # recursion: ``join`` ignores it, so the other returns decide
        mark = len(self._cuts)
        self._busy.add(key)
        try:
            ann = func.node.returns
            out = self.annotation_value(ann.annotation) if ann is not None else UNKNOWN_VALUE
            comment = signature_comment(func.node) if ann is None else None
            if comment is not None:
                out = self.annotation_value(comment[1])
            out = without_arraylike(out)
            if func.yields:
                if out.kind == UNKNOWN:  # a generator: iterated, it gives what it yields (if known)
                    item = self._yielded(func)
                    out = Value(LIST, item=item) if item is not None else UNKNOWN_VALUE
            elif func.returns and (out.kind == UNKNOWN or vague_tensors(out) or bare_container(out)
                                   or _contradicted(out, func.returns)):
                scope = self.summary_scope(func)
                vals = [self.infer(r, scope) for r in func.returns]
                body = vals[0]
                for v in vals[1:]:
                    body = join(body, v)
                # `-> tuple[Tensor, float]` says what; `return torch.randperm(4), f` says where
                out = body if out.kind == UNKNOWN or _contradicted(out, func.returns) else refine_annotation(out, body)
            elif out.kind == UNKNOWN and not func.returns and not placeholder(func.node):
                out = Value(NONE)
            # partial when its parameters or a caller were not known yet
            self._memo(self._returns, id(func), out,
                       ("params", id(func)) not in self._busy and self._complete(key, mark))
            return out
        finally:
            self._busy.discard(key)
            self._forget_cuts()

    def _yielded(self, func: FunctionInfo) -> Optional[Value]:
        """The join of a generator's ``yield`` values; None where one is unknown."""
        if any(y is None for y in func.yields):
            return None
        scope = self.summary_scope(func)
        out = None
        for y in func.yields:
            v = self.infer(y, scope)
            out = v if out is None else join(out, v)
        return out if out is not None and out.kind != UNKNOWN else None


def _contradicted(declared: Value, returns: list) -> bool:
    """``-> torch.LongTensor`` (or ``-> dict[...]``) over a body whose every ``return`` builds a
    tuple (``return ids, len(new)``): what callers unpack is the tuple."""
    return declared.kind not in (UNKNOWN, TUPLE) and all(type(r) is cst.Tuple for r in returns)


def _is_none(e: cst.BaseExpression) -> bool:
    return type(e) is cst.Name and e.value == "None"
