"""Abstract evaluation of expressions: is it a tensor, on which device, of which dtype.

Names resolve through scopes: a function's parameters (annotations, defaults, the values passed
at its call sites in the same file, and ``forward`` inputs, which are tensors), then its
assignments, then enclosing functions, then module globals. Results of same-file functions and
``self.<attr>`` set anywhere in the class are summarised lazily, once, with a recursion guard.

The evaluator is put together from mixins, each in its own module: ``summaries`` (parameters,
returns, ``self`` attributes), ``annotations`` (what an annotation says), ``torch_calls`` (torch's
API), ``calls`` (calls into this project and other files: methods, ``self.<attr>(...)``,
``super()``, devices named by arguments), ``expressions`` (attributes, subscripts, containers,
operators); this module keeps the scopes, bindings, references to other files and the dispatch
of ``infer``.
"""

from __future__ import annotations

from typing import Dict, List, Optional, Set

import libcst as cst

from torchsync_lint.inference import torch_api as api
from torchsync_lint.inference.annotations import Annotations
from torchsync_lint.inference.branches import narrowed_by
from torchsync_lint.inference.defs import binding_names, bound_once, param_named, target_names
from torchsync_lint.inference.calls import Calls
from torchsync_lint.inference.containers import CONTAINER
from torchsync_lint.inference.expressions import Expressions
from torchsync_lint.inference.host_evidence import placed_on_host
from torchsync_lint.inference.index import FileIndex, FunctionInfo
from torchsync_lint.inference.scope import Scope
from torchsync_lint.inference.signatures import vague_tensors
from torchsync_lint.inference.summaries import Summaries
from torchsync_lint.inference.values import (
    BATCH,
    CPU,
    CUDA,
    DICT,
    FUNC,
    GRAD_SCALER,
    LIST,
    NONE,
    NUMBER,
    OBJECT,
    SELF,
    SELF_ATTR,
    STR,
    TENSOR,
    TUPLE,
    TYPE,
    UNKNOWN,
    UNKNOWN_VALUE,
    Value,
    element_of,
    unpacked,
    join,
    join_maybe,
    number,
    tensor,
)

from torchsync_lint.inference.tensor_methods import TensorMethods
from torchsync_lint.inference.torch_calls import (  # noqa: F401 (re-exported)
    BOOL,
    DTYPE_NAMES,
    EXTERNAL_ROOTS,
    FULL_REDUCTIONS,
    INT,
    SHAPE_ATTRS,
    TorchCalls,
    TYPED_TENSORS,
)


class Evaluator(Calls, Expressions, TorchCalls, TensorMethods, Annotations, Summaries):
    def __init__(self, index: FileIndex, hot_functions: Set[str] = frozenset(), project=None,
                 assume_params: Optional[str] = None) -> None:
        self.index = index
        # interfaces only: summarise functions as if their unknown parameters held tensors
        # ("any": anywhere, "cpu": on the host), for call sites that pass tensors
        self.assume_params = assume_params
        self._host_variant: Optional["Evaluator"] = None  # assume_params="cpu", made on demand
        self._annotation_memo: Dict[int, tuple] = {}  # id(annotation node) -> (node, value)
        # reads of what differs between the file's evaluators (``annotations``): none while an
        # answer was computed, the answer is shared with them (``FileIndex.plain_annotations``)
        self._context_reads = 0
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
        if project is not None:
            self._rebase_aliases()
        self.hot_functions = hot_functions  # extra names whose unannotated inputs are tensors
        self._params: Dict[int, Dict[str, Value]] = {}
        self._returns: Dict[int, Value] = {}
        self._summary: Dict[int, Scope] = {}
        self._host_memo: Dict[int, frozenset] = {}  # ``host_evidence.HostEvidence.host_names``
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
        self._held_call_list: Optional[list] = None  # ``call_sites._held_calls``
        self._scopes_at: Dict[tuple, Scope] = {}  # (id(func), statement mark) -> names there (``_value_at_call``)
        self._binding_names: Dict[int, list] = {}

    def _rebase_aliases(self) -> None:
        """``from .compat import torch``: the name is torch itself, re-exported by a project
        module (its calls are torch's calls, ``torch.nonzero`` included)."""
        amap = self.aliases.map
        if self.aliases.stars and not self.aliases.stars_taken:
            self._take_starred(amap)
        for name, target in list(amap.items()):
            if "." in target and target.split(".")[0] not in EXTERNAL_ROOTS:
                found = self.project.external_module(target)
                if found is None and target.rsplit(".", 1)[1] == "torch" and self._dynamic(target):
                    found = "torch"  # `from .backend import torch`, set there at run time (setattr)
                if found is not None:
                    amap[name] = found

    def _take_starred(self, amap: Dict[str, str]) -> None:
        """``from .imports import *``: the names this file reads and binds nowhere itself are what
        the star imports bind (``torch``, ``F``, a helper), in order, the last one winning."""
        index = self.index
        wanted = self.aliases.star_uses - amap.keys() - index.module_functions.keys() - index.classes.keys()
        if not wanted:
            return
        wanted -= binding_names(index.module_bindings)
        for star in self.aliases.stars:
            for name, target in self.project.exported(star).items():
                if name in wanted:
                    amap[name] = target
        self.aliases.stars_taken = True  # the file's other evaluators share the map

    def _dynamic(self, q: str) -> bool:
        """No file of the project defines ``q``: not a module, function, class or value of it."""
        return self.project.module(q) is None and self.project.locate(q) is None

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

    # -- scopes ------------------------------------------------------------------------------
    def module_scope(self) -> Scope:
        if self._module_scope is None:
            self._module_scope = Scope(None, None, {})
            for b in self.index.module_bindings:
                self.replay(b, self._module_scope)
            self.join_rebound(self._module_scope)
        return self._module_scope

    def summary_scope(self, func: FunctionInfo) -> Scope:
        """The function's names after all its assignments, in order (flow-insensitive)."""
        key = ("summary", id(func))
        got = self._summary.get(id(func))
        if got is not None:
            if key in self._busy:
                self._cuts.append(key)  # a scope still being replayed: what reads it is tentative
            return got
        parent = self.summary_scope(func.parent) if func.parent is not None else self.module_scope()
        partial = ("params", id(func)) in self._busy  # asked while its own parameters are computed
        mark = len(self._cuts)
        scope = Scope(func, parent, dict(self.params(func)))
        partial = partial or not self._complete(key, mark)
        # published before replay: recursion sees a partial scope
        self._memo(self._summary, id(func), scope, not partial)
        self._busy.add(key)
        try:
            for b in func.bindings:
                self.replay(b, scope)
        finally:
            self._busy.discard(key)
        if not partial and not self._complete(key, mark):
            # the replay read a value that an enclosing computation had cut short (an attribute
            # whose method's parameters were being computed): asked again once that one is done
            self._tentative.append((self._summary, id(func)))
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
            self.bind_for(binding[1], binding[2], scope)
        elif kind == "with":
            self.bind(binding[1], UNKNOWN_VALUE, scope)
        elif kind == "assert":
            for name, v in narrowed_by(binding[2], self.aliases.qualify, scope.lookup):
                scope.values[name] = v
            self._narrow_to_class(binding[2], scope)

    def bind_for(self, target: cst.BaseExpression, iterable: cst.BaseExpression, scope: Scope) -> None:
        """``for target in iterable``: the items; one of unknown kind that the body uses as only a
        tensor is used (``index_uses``: ``for x in preds: x = x[x[:, 4] > t]``) is a tensor."""
        self.bind(target, self.iter_element(iterable, scope), scope)
        if scope.func is not None and (scope.func.tensor_uses or scope.func.tensor_arg_uses or scope.func.scaler_uses):
            for name in target_names(target):
                got = scope.values.get(name)
                evident = evident_value(scope.func, name) if got is None or got.kind == UNKNOWN and got.ref is None else None
                if evident is not None:
                    scope.values[name] = evident

    def annotated(self, ann: cst.BaseExpression, value: Optional[cst.BaseExpression], scope: Scope) -> Value:
        """``name: ann = value``: the annotation, unless the value says more (``m: Tensor = x > 0`` is bool)."""
        if value is not None and scope.func is None and scope.cls is None:
            alias = self.declared_alias(ann, value)
            if alias is not None:
                return alias
        v = self.annotation_value(ann)
        if value is not None and (v.kind == UNKNOWN or (v.kind == TENSOR and v.device is None and v.dtype is None)):
            got = self.infer(value, scope)
            if v.kind == UNKNOWN or got.kind == TENSOR:
                v = got
        return v

    def bind(self, target: cst.BaseExpression, value: Value, scope: Scope) -> None:
        if type(target) is cst.Name:
            if value.kind == UNKNOWN and scope.func is not None:
                # a parameter keeps its declared type (as a type checker reads it) when
                # reassigned from something we cannot see: ``images, targets = self.transform(...)``
                value = self.declared(scope.func).get(target.value, value)
                if value.kind == UNKNOWN and value.ref is None:
                    # `loss = criterion(out, y)` of an unknown criterion, then `loss.backward()`
                    value = evident_value(scope.func, target.value) or value
            placed = placed_on_host(value) if scope.func is not None else None
            if (placed is not None and target.value in self.host_names(scope.func)
                    and target.value not in scope.func.type_tested and _bound_once(scope.func, target.value)
                    and param_named(scope.func.node, target.value) is None):
                # a local that holds one value, handed to numpy as it is (`y.numpy()`,
                # `for row in image.data: np.asarray(row)`): on the host
                value = placed
            elif value.kind == TYPE and scope.func is None and scope.cls is None:
                value = _named_dtype(target.value, value)
            scope.values[target.value] = value
        elif type(target) is cst.Attribute and type(target.value) is cst.Name and scope.func is not None:
            if (scope.lookup(target.value.value) or UNKNOWN_VALUE).kind == SELF:
                # `self.x = ...`: what this method reads back until the next assignment
                scope.values[SELF_ATTR + target.attr.value] = value
        elif type(target) in (cst.Tuple, cst.List):
            elements = target.elements
            starred = any(type(e) is cst.StarredElement for e in elements)
            for i, el in enumerate(elements):
                if type(el) is cst.StarredElement:
                    self.bind(el.value, Value(LIST), scope)
                    continue
                if value.kind in (TUPLE, LIST) and starred and len(value.elts) >= len(elements) - 1:
                    # `a, *rest, b = t`: the names before the star count from the front, after it from the back
                    before = next(j for j, x in enumerate(elements) if type(x) is cst.StarredElement) > i
                    v = value.elts[i] if before else value.elts[len(value.elts) - (len(elements) - i)]
                elif starred and value.kind in (TUPLE, LIST) and value.elts:
                    v = UNKNOWN_VALUE
                elif value.kind == UNKNOWN and value.ref is not None and not starred:
                    # `out, lengths = self.model(x)` of another file's class: that member of what it returns
                    v = Value(UNKNOWN, ref=("elt", i, len(elements), value.ref))
                else:
                    v = unpacked(value, i, len(elements))
                self.bind(el.value, v, scope)

    def iter_element(self, it: cst.BaseExpression, scope: Scope) -> Value:
        if type(it) is cst.Call:
            q = self.aliases.qualify(it.func)
            if q == "builtins.enumerate" and it.args:
                return Value(TUPLE, elts=(INT, self.iter_element(it.args[0].value, scope)))
            if q == "builtins.zip" and it.args:
                # `zip(a, b, strict=True)`: one member per positional argument
                return Value(TUPLE, elts=tuple(self.iter_element(a.value, scope) for a in it.args if a.keyword is None))
            if q in api.PASS_THROUGH_ITERABLES and it.args:
                return self.iter_element(it.args[0].value, scope)  # tqdm(loader), iter(loader)
            if type(it.func) is cst.Attribute and it.func.attr.value in ("items", "values"):
                base = self.infer(it.func.value, scope)
                if base.kind == BATCH:  # a dict batch: its values are batches too
                    return base if it.func.attr.value == "values" else Value(TUPLE, elts=(UNKNOWN_VALUE, base))
                if base.kind == DICT and (base.keys or base.elts or base.item is not None):
                    # `for k, v in {"loss": loss, "acc": acc}.items()`: what its values share (named
                    # keys, or the values of a literal another file passes)
                    member = None
                    for v in [v for _k, v in base.keys] + list(base.elts) + [base.item]:
                        if v is not None:  # a tensor beside numbers: maybe a tensor
                            member = v if member is None else join_maybe(member, v)
                    member = member or UNKNOWN_VALUE
                    return member if it.func.attr.value == "values" else Value(TUPLE, elts=(UNKNOWN_VALUE, member))
        v = self.infer(it, scope)
        if v.kind == OBJECT and v.cls == "torch.utils.data.DataLoader":
            return Value(BATCH, pinned=v.pinned, assumed=v.assumed)
        if v.kind == UNKNOWN and v.ref is None and (self.index.is_batch_iter(it) or self.index.passes_batch(it)):
            # an iterable of unknown type whose items a training loop moves to a device (whether
            # it pins them is not known)
            return Value(BATCH, assumed=True)
        if v.kind == DICT and v.cls == CONTAINER:
            return v  # (a TensorDict iterates over its first batch dimension: containers)
        if v.kind == UNKNOWN and v.ref is not None:
            return self._ref(("iter", v.ref))  # what another file's value yields (`self.sched.timesteps`)
        return element_of(v)

    # -- expressions -------------------------------------------------------------------------
    def _instance_tested(self, e: cst.IfExp) -> Optional[Value]:
        """The value of ``x`` in ``x if isinstance(x, Cls) else ...``: what a ``Cls`` annotation
        gives (a project class's instance, a tensor); None where the test is another one."""
        cls = _tested_class(e)
        if cls is None:
            return None
        v = self.annotation_value(cls)
        return v if v.kind not in (UNKNOWN, NONE) else None

    def infer(self, e: cst.BaseExpression, scope: Scope) -> Value:
        # exact node types (none of LibCST's has a subclass): ``isinstance`` against LibCST's
        # abstract-base metaclass costs ten times a type comparison, and this runs for every
        # expression the rules ask about
        typ = type(e)
        if typ is cst.Name:
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
                if ((v.kind == DICT and v.item is None and not v.elts or v.kind == UNKNOWN and v.ref is None)
                        and scope.func is not None and (name in scope.func.keyed
                                                        or v.kind == DICT and name in scope.func.filled)):
                    return self._keyed(name, v, scope)  # `out = {}; out["loss"] = loss`
                return v
            f = self._local_function(name, scope)
            if f is not None:
                return Value(FUNC, cls=f.key)  # `self.stats = robust_stats`: calling it calls that function
            q = self.aliases.map.get(name)
            if q is not None and q.split(".")[0] not in EXTERNAL_ROOTS and "." in q:
                return self._ref(("value", q))  # a module-level value imported from another file
            return UNKNOWN_VALUE
        if typ is cst.Integer:
            return INT
        if typ in (cst.Float, cst.Imaginary):
            return number("float")
        if typ is cst.SimpleString:
            if "cpu" not in e.value and "cuda" not in e.value:
                return Value(STR)  # no device name: skip evaluating the literal (ast.literal_eval)
            text = e.evaluated_value
            if isinstance(text, str) and text.startswith(("cpu", "cuda")):
                return Value(STR, device=CPU if text.startswith("cpu") else CUDA)
            return Value(STR)
        if typ in (cst.ConcatenatedString, cst.FormattedString):
            return Value(STR)
        if typ in (cst.List, cst.Tuple):
            kind = LIST if typ is cst.List else TUPLE
            if any(type(el) is cst.StarredElement for el in e.elements):
                return Value(kind)
            return Value(kind, elts=tuple(self.infer(el.value, scope) for el in e.elements))
        if typ in (cst.ListComp, cst.GeneratorExp, cst.DictComp):
            return self._comprehension(e, scope)
        if typ is cst.Dict:
            return self._dict_literal(e, scope)
        if typ is cst.Attribute:
            if scope.func is None and scope.cls is None:
                alias = self.type_expression(e)  # `LongTensor = torch.Tensor`
                if alias is not None:
                    return alias
            return self._attribute(e, scope)
        if scope.func is None and scope.cls is None and typ in (cst.Subscript, cst.BinaryOperation, cst.Call):
            alias = self.type_expression(e)  # `NdarrayOrTensor = np.ndarray | torch.Tensor`
            if alias is not None:
                return alias
        if typ is cst.Subscript:
            return self._subscript(e, scope)
        if typ is cst.Call:
            v = self._call(e, scope)
            if v.kind == UNKNOWN and v.ref is None and _asks_for_host_tensors(e):
                # `tokenizer(texts, return_tensors="pt")`: host tensors, not pinned, and small (ids
                # and masks: a non-blocking copy of a few KB does not stall, so `assumed` as a loader
                # whose pinning is unknown)
                return Value(BATCH, assumed=True)
            return v
        if typ is cst.BinaryOperation:
            return self._binary(e, scope)
        if typ is cst.Comparison:
            return self._comparison(e, scope)
        if typ is cst.UnaryOperation:
            v = self.infer(e.expression, scope)
            if type(e.operator) is cst.Not:
                return BOOL if v.kind != UNKNOWN else UNKNOWN_VALUE
            if type(e.operator) is cst.BitInvert and v.kind == TENSOR and v.dtype is None:
                return v.with_(dtype="bool")  # `~keep`: tensor code inverts masks, not integers' bits
            return v if v.kind in (TENSOR, NUMBER) else UNKNOWN_VALUE
        if typ is cst.BooleanOperation:
            a, b = self.infer(e.left, scope), self.infer(e.right, scope)
            if a.kind == b.kind and a.kind in (TENSOR, NUMBER):
                return join(a, b)
            kinds = {a.kind, b.kind}
            if TENSOR in kinds and kinds <= {TENSOR, NUMBER, NONE}:
                # `hit or (e > lim)` with `hit = False` first: the flag or the mask, maybe a tensor
                t = a if a.kind == TENSOR else b
                return t.with_(maybe=True) if NUMBER in kinds or type(e.operator) is cst.And else t
            return UNKNOWN_VALUE
        if typ is cst.IfExp:
            body = self._instance_tested(e) or self.infer(e.body, scope)
            return join(body, self.infer(e.orelse, scope))
        if typ is cst.NamedExpr:
            return self.infer(e.value, scope)
        return UNKNOWN_VALUE


def evident_value(func: FunctionInfo, name: str) -> Optional[Value]:
    """What the function uses ``name`` as (``index_uses``): only a tensor, or only a GradScaler,
    is used so; not under an isinstance test of it (a use there is no evidence)."""
    if name in func.type_tested:
        return None
    if name in func.tensor_uses or name in func.tensor_arg_uses and bound_once(func, name):
        return tensor()
    return Value(GRAD_SCALER) if name in func.scaler_uses else None


def _tested_class(e: cst.IfExp) -> Optional[cst.BaseExpression]:
    """``x if isinstance(x, Cls) else make(x)``: the one class the branch taken has ``x`` be."""
    test = e.test
    if not (type(test) is cst.Call and type(test.func) is cst.Name and test.func.value == "isinstance"
            and len(test.args) == 2 and type(e.body) is cst.Name and type(test.args[0].value) is cst.Name
            and test.args[0].value.value == e.body.value):
        return None
    cls = test.args[1].value
    return cls if type(cls) in (cst.Name, cst.Attribute) else None


def _asks_for_host_tensors(call: cst.Call) -> bool:
    key, wanted = api.HOST_BATCH_KEYWORD
    return any(a.keyword is not None and a.keyword.value == key and type(a.value) is cst.SimpleString
               and a.value.evaluated_value == wanted for a in call.args)


def _named_dtype(name: str, alias: Value) -> Value:
    """``BoolTensor: TypeAlias = torch.Tensor``: an alias named after one of torch's typed tensor
    classes promises that dtype (the name is all a reader of the signature sees)."""
    meaning = alias.item
    if meaning is None or meaning.kind != TENSOR or meaning.dtype is not None:
        return alias
    dtype = TYPED_TENSORS.get(name)
    return alias.with_(item=meaning.with_(dtype=dtype)) if dtype else alias


def _bound_once(func: FunctionInfo, name: str) -> bool:
    """``name`` is bound by exactly one plain assignment or loop of ``func`` and nothing else (nor a
    comprehension of the same name elsewhere: `[v.numpy() for v in a]` says nothing of another
    comprehension's `v`)."""
    found = [b for b in func.bindings if name in binding_names([b])]
    return len(found) == 1 and found[0][0] in ("assign", "for") and name not in func.comp_targets
