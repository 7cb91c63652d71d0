"""Pass one over a file: imports, classes, functions, assignments, returns, calls and hot loops.

Cheap facts only; values are computed lazily by ``evaluate.Evaluator`` from what is kept here.
"""

from __future__ import annotations

from typing import Dict, List, Optional, Set, Tuple

import libcst as cst

from torchsync_lint import catalog
from torchsync_lint.inference import torch_api as api
from torchsync_lint.inference.labels import COLD_METHODS, STEP_HOOKS, names_function  # noqa: F401  (re-exported)
from torchsync_lint.inference.defs import (  # noqa: F401  (re-exported)
    CallSite,
    ClassInfo,
    FunctionInfo,
    any_base,
    binding_names,
    bound_names,
    dynamic_attribute,
    node_params,
    setter_name,
    string_key,
    target_names,
    torch_dim_keyword,
)
from torchsync_lint.inference.dispatch import bound_lookup
from torchsync_lint.inference.index_bindings import Bindings, augmented_value  # noqa: F401  (re-exported)
from torchsync_lint.inference.index_loops import BatchLoops
from torchsync_lint.inference.index_uses import TensorUses, numpy_argument
from torchsync_lint.inference.names import BUILTIN_NAMES, Aliases, dotted
from torchsync_lint.inference.switches import leaves_validation_on

# contexts (and decorators) that turn off autograd: a loop in them evaluates or predicts
NO_GRAD = frozenset(("torch.no_grad", "torch.inference_mode"))
# factories whose first argument is the tensor's data, copied from Python values
HOST_DATA_FACTORIES = frozenset(("torch.tensor", "torch.as_tensor", "torch.asarray"))

# Calls whose presence marks a loop body as a training step.
STEP_CALL_ATTRS = frozenset(("backward", "step"))
MODULE_BASE_SUFFIXES = ("Module", "Loss", "LightningModule", "Sequential", "ModuleList", "ModuleDict")


class FileIndex(Bindings, TensorUses, BatchLoops, cst.CSTVisitor):
    """Run with ``module.visit(FileIndex(...))``."""

    def __init__(self, module_name: str, is_package: bool = False) -> None:
        self.module_name = module_name
        self.aliases = Aliases(module_name, is_package)
        self.classes: Dict[str, ClassInfo] = {}  # by simple name, top-level and nested
        self.functions: Dict[str, FunctionInfo] = {}  # by key
        self.by_node: Dict[int, FunctionInfo] = {}  # id(FunctionDef) -> info
        self.module_functions: Dict[str, FunctionInfo] = {}  # top-level functions by name
        self.module_bindings: List[tuple] = []
        self.call_sites: Dict[str, List[CallSite]] = {}  # by callee simple name / "self.name"
        # `getattr(cb, hook)(self, *args)` (or `fn = getattr(cb, hook, None)`, then `fn(self)`) in a
        # function: (the call, the lookup), methods called by a name held as text
        self.dispatches: List[tuple] = []
        self.hot_loops: Set[int] = set()
        self.module_hot_calls: Set[str] = set()
        # every call of a torch.* callable, by qualified name (file-wide settings such as
        # Distribution.set_default_validate_args(False) are looked up here)
        self.torch_calls: Dict[str, List[cst.Call]] = {}
        # calls of names imported from elsewhere (qualified name, caller, call): what this file
        # passes to other files' functions, for their parameters' values
        self.ext_calls: List[Tuple[str, Optional["FunctionInfo"], cst.Call]] = []
        self._func_stack: List[FunctionInfo] = []
        self._class_stack: List[ClassInfo] = []
        self._scopes: List[object] = []  # ClassInfo / FunctionInfo, innermost last
        self._saved_loops: List[tuple] = []
        self._loop_stack: List[cst.CSTNode] = []
        self._loop_calls: List[List[str]] = []  # callee keys seen per open loop
        self.mentions_torch = False
        # some call passes `validate_args=` something other than True/None (TSL404: a declared
        # distribution may be built that way here)
        self.validate_false = False
        self.augmented: Dict[int, cst.BinaryOperation] = {}  # id(AugAssign) -> its ``x + v``
        self._blocks: List[int] = []  # open statement blocks, innermost last
        self._attr_blocks: Dict[tuple, List[tuple]] = {}  # (method, attr) -> [(blocks, value)]
        # id() of the iterables of training-step loops whose body copies what they yield to a
        # device (`for x, y in loader: x = x.to(device) ... loss.backward()`): whatever their
        # type, they yield host batches
        self.batch_iters: Set[int] = set()
        # id() of a call inside comprehensions -> those comprehensions, outermost first: what their
        # variables hold where the call passes them (``[helper(x) for x in xs]``)
        self.comp_calls: Dict[int, Tuple[cst.CSTNode, ...]] = {}
        # id(call) -> where its statement and its innermost loop start in the caller's bindings
        # (``mark_statement``; the loop's None outside one)
        self.call_marks: Dict[int, Tuple[int, Optional[int]]] = {}
        self._stmt_mark = 0
        self._loop_starts: Dict[int, int] = {}
        self._comps: List[cst.CSTNode] = []
        self._loop_moved: Dict[int, Set[str]] = {}  # open for loop -> names moved to a device in it
        self._for_targets: List[tuple] = []  # open for loops of this function: (node, names bound)
        # calls in a for loop that pass the loop's target: id(loop) -> [(callee key, position, keyword)];
        # kept for training-step loops by id() of their iterable (``passes_batch``)
        self._loop_passes: Dict[int, List[tuple]] = {}
        self.loop_passes: Dict[int, List[tuple]] = {}
        self._passes_batch: Dict[int, bool] = {}
        # loops with no step of their own that move what they yield, or pass it on: id() of their
        # iterable -> the calls they make; a call to a function of this file that makes a training
        # step (`loss = train_step(model, opt, x, y)`) makes them step loops (``_steps_in``), known
        # only once the file is read
        self._step_via: Dict[int, tuple] = {}
        self._batch_via: Set[int] = set()
        # open `with torch.no_grad():` blocks (and no_grad-decorated functions) of the function
        # being read, and the for loops inside one: an evaluation loop moves batches like a
        # training step does (``leave_For``)
        self._no_grad: List[cst.CSTNode] = []
        self._eval_loops: Set[int] = set()
        # per open function: the names it uses that builtins also have (``input``, ``type``), and
        # the names its nested defs bind; a use the function (or one around it) binds is a local
        self._builtin_uses: List[List[cst.Name]] = []
        self._nested_defs: List[Set[str]] = []
        # answers no evaluator's state changes (an annotation read without this file's names,
        # declared types), shared by the file's evaluators (``annotations``, ``summaries.declared``)
        self.plain_annotations: Dict[int, tuple] = {}  # id(annotation node) -> (node, value)
        self.held_by_name: Optional[tuple] = None  # ``held_names.held_by_name``, on first question
        self.self_attr_reads: Dict[Tuple[int, str], bool] = {}  # ``attributes._attr_join``: (id(expr), attr)
        self.plain_declared: Dict[int, tuple] = {}  # id(FunctionInfo) -> (info, declared types)

    # -- keys --------------------------------------------------------------------------------
    def release(self) -> None:
        """Once the file is checked: cut each function's links to its class and enclosing function.
        With ``ClassInfo.methods`` they form cycles that would keep the whole tree alive until the
        cyclic collector traverses it (``gc_pause``); cut, it is freed as soon as it is dropped."""
        for info in self.by_node.values():
            info.cls = info.parent = None
        self.plain_annotations.clear()
        self.plain_declared.clear()
        self.held_by_name = None
        self.self_attr_reads.clear()

    def _prefix(self) -> str:
        if not self._scopes:
            return self.module_name
        info = self._scopes[-1]
        return info.key + ".<locals>" if isinstance(info, FunctionInfo) else info.key

    def _join(self, prefix: str, name: str) -> str:
        return f"{prefix}.{name}" if prefix else name

    # -- imports -----------------------------------------------------------------------------
    def visit_Import(self, node: cst.Import) -> None:
        self.aliases.add_import(node)
        for a in node.names:
            if (dotted(a.name) or "").split(".")[0] == "torch":
                self.mentions_torch = True

    def visit_ImportFrom(self, node: cst.ImportFrom) -> None:
        self.aliases.add_import_from(node)
        mod = dotted(node.module) if node.module is not None else ""
        if (mod or "").split(".")[0] == "torch":
            self.mentions_torch = True

    # -- classes and functions ---------------------------------------------------------------
    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        bases = []
        for arg in node.bases:
            base = arg.value
            if type(base) is cst.Subscript:  # `Loop[Batch]`, `Dataset[T]`: the generic class
                base = base.value
            name = self.aliases.qualify(base) or dotted(base)
            if arg.keyword is None and name:
                bases.append(name)
        info = ClassInfo(node.name.value, self._join(self._prefix(), node.name.value), node, bases)
        info.is_module = any(self._is_module_base(b) for b in bases)
        self.classes[info.name] = info
        self._class_stack.append(info)
        self._scopes.append(info)

    def _is_module_base(self, base: str) -> bool:
        if base.startswith("torch.nn.") or base.startswith("torch.jit.ScriptModule"):
            return True
        local = self.classes.get(base)
        if local is not None:
            return local.is_module
        return base.split(".")[-1].endswith(MODULE_BASE_SUFFIXES)

    def leave_ClassDef(self, node: cst.ClassDef) -> None:
        self._class_stack.pop()
        self._scopes.pop()

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        name = node.name.value
        inner = self._scopes[-1] if self._scopes else None
        cls = inner if isinstance(inner, ClassInfo) else None
        parent = inner if isinstance(inner, FunctionInfo) else None
        # a property's setter (`@data.setter`) is another function than its getter: under its own
        # name, so that reading `obj.data` still runs the getter (``defs.setter_name``)
        setter = setter_name(node) if cls is not None else None
        key = self._join(self._prefix(), setter or name)
        info = FunctionInfo(setter or name, key, node, cls, parent)
        self.functions[info.key] = info
        self.by_node[id(node)] = info
        if cls is not None:
            cls.methods[setter or name] = info
        elif parent is None:
            self.module_functions[name] = info
            self.aliases.shadowed.add(name)
        if parent is not None:
            self._nested_defs[-1].add(name)  # a def in a function binds its name there (not a method)
        self._builtin_uses.append([])
        self._nested_defs.append(set())
        self._func_stack.append(info)
        self._scopes.append(info)
        # loops do not cross function boundaries
        self._saved_loops.append((self._loop_stack, self._loop_calls, self._for_targets, self._no_grad))
        self._loop_stack, self._loop_calls, self._for_targets = [], [], []
        self._no_grad = [node] if any(self._turns_off_grad(d.decorator) for d in node.decorators) else []

    def leave_FunctionDef(self, node: cst.FunctionDef) -> None:
        info = self._func_stack.pop()
        if info.array_uses and info.device_moves:
            info.tensor_uses |= info.array_uses & info.device_moves
        self._shadow_locals(info, self._builtin_uses.pop(), self._nested_defs.pop())
        self._scopes.pop()
        self._loop_stack, self._loop_calls, self._for_targets, self._no_grad = self._saved_loops.pop()

    def leave_Module(self, node: cst.Module) -> None:
        # `input = ...` at module level is the module's global `input` in every function too
        self.aliases.shadowed |= binding_names(self.module_bindings) & BUILTIN_NAMES

    def _shadow_locals(self, info: FunctionInfo, uses: List[cst.Name], nested: Set[str]) -> None:
        """A parameter or local named like a builtin (``input = torch.tensor(c)``, ``def f(type)``)
        is that value in the whole function, and in functions nested in it: ``input.to(d)`` there
        is a tensor's method, not ``builtins.input``'s."""
        if not uses:
            return
        bound = {a.name.value for a in node_params(info.node)} | nested | bound_names(info)
        outer = self._builtin_uses[-1] if self._builtin_uses else None
        for use in uses:
            if use.value in bound:
                self.aliases.shadowed_nodes.add(id(use))
            elif outer is not None:
                outer.append(use)  # a closure may see the enclosing function's local

    # -- bindings ----------------------------------------------------------------------------
    def visit_For(self, node: cst.For) -> None:
        self.mark_statement()
        self._bindings().append(("for", node.target, node.iter))
        if self._no_grad:
            self._eval_loops.add(id(node))
        self._enter_loop(node)
        self._for_targets.append((node, target_names(node.target)))
        self._note_sources(node.iter, node.target)  # `for k, v in sample.items():` parts of `sample`

    def leave_For(self, node: cst.For) -> None:
        calls = self._leave_loop(node)
        self._for_targets.pop()
        self.note_batch_loop(node, calls)

    def _enter_comp(self, node: cst.CSTNode) -> None:
        self._comps.append(node)

    def _leave_comp(self, node: cst.CSTNode) -> None:
        self._comps.pop()

    visit_ListComp = visit_SetComp = visit_GeneratorExp = visit_DictComp = _enter_comp
    leave_ListComp = leave_SetComp = leave_GeneratorExp = leave_DictComp = _leave_comp

    def visit_CompFor(self, node: cst.CompFor) -> None:
        self._note_sources(node.iter, node.target)
        if self._func_stack:
            self._func_stack[-1].comp_targets |= target_names(node.target)

    def _note_sources(self, it: cst.BaseExpression, target: cst.BaseExpression) -> None:
        """Names bound by iterating over a name (or its ``items()``/``values()``): which name they are parts of."""
        if not self._func_stack:
            return
        if type(it) is cst.Call and type(it.func) is cst.Attribute and it.func.attr.value in ("items", "values"):
            it = it.func.value
        if type(it) is cst.Name:
            for name in target_names(target):
                self._func_stack[-1].comp_sources[name] = it.value

    def visit_While(self, node: cst.While) -> None:
        self.mark_statement()
        self._enter_loop(node)

    def leave_While(self, node: cst.While) -> None:
        self._leave_loop(node)

    def _turns_off_grad(self, e: cst.BaseExpression) -> bool:
        """``torch.no_grad()`` / ``torch.inference_mode()``, called or bare (a decorator)."""
        if type(e) is cst.Call:
            if any(a.keyword is None or a.keyword.value == "mode" for a in e.args):
                return False  # `inference_mode(flag)`: maybe on, maybe off
            e = e.func
        return self.aliases.qualify(e) in NO_GRAD

    def visit_With(self, node: cst.With) -> None:
        self.mark_statement()
        if any(self._turns_off_grad(item.item) for item in node.items):
            self._no_grad.append(node)

    def leave_With(self, node: cst.With) -> None:
        if self._no_grad and self._no_grad[-1] is node:
            self._no_grad.pop()

    def visit_IndentedBlock(self, node: cst.IndentedBlock) -> None:
        self._blocks.append(id(node))

    def leave_IndentedBlock(self, node: cst.IndentedBlock) -> None:
        self._blocks.pop()

    # -- loops and calls ---------------------------------------------------------------------
    def _enter_loop(self, node: cst.CSTNode) -> None:
        self._loop_stack.append(node)
        self._loop_calls.append([])
        self._loop_starts[id(node)] = self._stmt_mark

    def _leave_loop(self, node: cst.CSTNode) -> None:
        self._loop_stack.pop()
        calls = self._loop_calls.pop()
        if self._func_stack:
            self._func_stack[-1].looped_calls.update(calls)
        if id(node) in self.hot_loops:
            target = self._func_stack[-1].hot_calls if self._func_stack else self.module_hot_calls
            target.update(calls)
            if self._func_stack:
                self._func_stack[-1].hot_loops.add(id(node))
        if self._loop_calls:  # calls of an inner loop belong to the outer one too
            self._loop_calls[-1].extend(calls)
        return calls

    def visit_Call(self, node: cst.Call) -> None:
        if self._comps and node.args:
            self.comp_calls[id(node)] = tuple(self._comps)
        if not self.validate_false:
            for a in node.args:
                if a.keyword is not None and a.keyword.value == "validate_args" and not leaves_validation_on(a.value):
                    self.validate_false = True
        func = node.func
        if self._func_stack:
            looked_up = func if type(func) is cst.Call else bound_lookup(self._func_stack[-1], func)
            if (type(looked_up) is cst.Call and type(looked_up.func) is cst.Name
                    and looked_up.func.value == "getattr" and len(looked_up.args) in (2, 3)):
                self.dispatches.append((CallSite(self._func_stack[-1], node, 0), looked_up))
        if (type(func) is cst.Attribute and type(func.value) is cst.Name and self._func_stack
                and func.attr.value in ("append", "insert") and node.args and not node.args[-1].star):
            self._func_stack[-1].appends.setdefault(func.value.value, []).append(node.args[-1].value)
        if (type(func) is cst.Attribute and func.attr.value in ("append", "insert") and node.args
                and not node.args[-1].star):
            held = self._self_attr_of(func.value)
            if held is not None:
                held[0].cls.attr_appends.setdefault(held[1], []).append((held[0], node.args[-1].value))
        if (type(func) is cst.Attribute and func.attr.value in ("to", "cuda") and self._func_stack
                and (node.args or func.attr.value == "cuda")):
            moved = func.value
            while type(moved) is cst.Subscript:
                moved = moved.value  # `x[i:j].to(d)`: not `batch.images.to(d)` (a batch object's field)
            if type(moved) is cst.Name:
                self._func_stack[-1].device_moves.add(moved.value)
        if type(func) is cst.Attribute and func.attr.value in ("to", "cuda") and self._func_stack:
            moved = func.value
            while type(moved) in (cst.Subscript, cst.Attribute):
                moved = moved.value
            if type(moved) is cst.Name:
                self._func_stack[-1].moved.add(moved.value)
        if type(func) is cst.Attribute and func.attr.value in ("to", "cuda") and self._for_targets:
            moved = func.value
            while True:
                if type(moved) in (cst.Subscript, cst.Attribute):
                    moved = moved.value  # batch["x"].to(d), batch.images.to(d)
                elif (type(moved) is cst.Call and type(moved.func) is cst.Attribute
                      and moved.func.attr.value in api.RELAYOUTS):
                    moved = moved.func.value  # x.view(n, -1).to(d): the item, reshaped on the host
                else:
                    break
            if type(moved) is cst.Name:
                for loop, _names in self._for_targets:
                    self._loop_moved.setdefault(id(loop), set()).add(moved.value)
        if type(func) is cst.Attribute and func.attr.value in STEP_CALL_ATTRS and self._loop_stack:
            # loss.backward() / optimizer.step() / scaler.step(opt): the enclosing loops are steps
            for loop in self._loop_stack:
                self.hot_loops.add(id(loop))
        if type(func) is cst.Attribute and func.attr.value in STEP_CALL_ATTRS and self._func_stack:
            self._func_stack[-1].makes_step = True
        if (
            type(func) is cst.Attribute
            and func.attr.value in ("register_buffer", "register_parameter")
            and self._class_stack
            and node.args
            and type(node.args[0].value) is cst.SimpleString
        ):
            self._class_stack[-1].buffers.add(node.args[0].value.evaluated_value)
        elif self._class_stack and self._func_stack and len(node.args) >= 2:
            # `self.register_buffer(f"indices_{s}", t)`, `setattr(self, f"lo_{s}", v)`: read back by
            # `getattr(self, f"indices_{s}")`, by the computed name's template
            made = dynamic_attribute(func, node)
            if made is not None:
                self._class_stack[-1].dynamic_attrs.append(made + (self._func_stack[-1],))
        key = self.callee_key(func)
        caller = self._func_stack[-1] if self._func_stack else None
        self.tensor_arguments(node, key)
        self.device_keywords(node)
        handed = numpy_argument(key, node) if caller is not None and not self._handlers else None
        if handed is not None:
            caller.host_uses.add(handed)
        elif caller is not None and key is not None and node.args and not key.startswith(("torch.", "numpy.")):
            caller.arg_calls.append((key, node))
        if key is not None and self._for_targets and not any(a.star for a in node.args):
            via_self = type(func) is cst.Attribute and type(func.value) is cst.Name and func.value.value == "self"
            pos = 0
            for a in node.args:
                if type(a.value) is cst.Name:
                    for loop, names in self._for_targets:
                        if a.value.value in names:
                            self._loop_passes.setdefault(id(loop), []).append(
                                (key, None if a.keyword is not None else pos,
                                 a.keyword.value if a.keyword is not None else None, via_self))
                if a.keyword is None:
                    pos += 1
        if (caller is not None and type(func) is cst.Attribute and type(func.value) is cst.Name
                and torch_dim_keyword(node)
                and catalog.syncs("torch.Tensor." + func.attr.value) is False):
            # `x.mean(dim=0)`: numpy and pandas say `axis`; a method measured not to sync
            caller.tensor_uses.add(func.value.value)
        if (caller is not None and type(func) is cst.Name and func.value == "isinstance" and node.args
                and type(node.args[0].value) is cst.Name):
            caller.type_tested.add(node.args[0].value.value)
        if caller is not None and node.args and type(node.args[0].value) in (cst.List, cst.Tuple) and (
                type(func) is cst.Attribute and func.attr.value == "new_tensor" or key in HOST_DATA_FACTORIES):
            # `x.new_tensor([lo, hi])`, `torch.tensor([a, b])`: names listed as a tensor's data are
            # Python numbers
            for el in node.args[0].value.elements:
                if type(el.value) is cst.Name:
                    caller.number_uses.add(el.value.value)
        # a method called on a receiver of unknown class (not `self.m()`, not an imported name):
        # known by its name only
        by_name = func.attr.value if type(func) is cst.Attribute and (
            key is None or key.startswith("@attr:")) else None
        if caller is not None and by_name is not None:
            (caller.looped_method_names if self._loop_stack else caller.method_names).add(by_name)
        if caller is not None:
            caller.call_loops.append((key, by_name, tuple(id(lp) for lp in self._loop_stack), node))
        if key is not None:
            if key.startswith("torch."):
                self.torch_calls.setdefault(key, []).append(node)
            elif node.args and (type(func) is cst.Name and func.value in self.aliases.map
                                or type(func) is cst.Attribute and self.aliases.qualify(func) is not None):
                self.ext_calls.append((key, self._func_stack[-1] if self._func_stack else None, node))
            if caller is not None:
                caller.calls.add(key)
            for calls in self._loop_calls:
                calls.append(key)
        simple = None
        if type(func) is cst.Name:
            simple = func.value
        elif type(func) is cst.Attribute and type(func.value) is cst.Name and func.value.value == "self":
            simple = "self." + func.attr.value
        elif type(func) is cst.Attribute and node.args and key is None or (
                type(func) is cst.Attribute and node.args and key.startswith("@attr:")):
            # `self.solver.step(t, y)`, `model.fit(x)`: a method of some object, which may be an
            # instance of a class of this file (decided when that method's parameters are asked)
            simple = "." + func.attr.value
        elif key == "functools.partial" or key in api.CALLS_FIRST_ARGUMENT:
            simple = key  # what the partial binds (the checkpoint passes), and where the function goes
        if simple is not None:
            self.call_sites.setdefault(simple, []).append(CallSite(caller, node, 0))
            if caller is not None:
                loop = self._loop_starts[id(self._loop_stack[-1])] if self._loop_stack else None
                self.call_marks[id(node)] = (self._stmt_mark, loop)

    def callee_key(self, func: cst.BaseExpression) -> Optional[str]:
        """A best-effort key of the called function, matching ``FunctionInfo.key`` across files."""
        if type(func) is cst.Name:
            if func.value in self.module_functions:
                return self.module_functions[func.value].key
            q = self.aliases.qualify(func)
            if q and not q.startswith("builtins."):
                return q
            # a function defined later in this file
            return self._join(self.module_name, func.value)
        if type(func) is cst.Attribute:
            base = func.value
            if type(base) is cst.Name and base.value == "self" and self._class_stack:
                return f"{self._class_stack[-1].key}.{func.attr.value}"
            if (
                type(base) is cst.Attribute
                and type(base.value) is cst.Name
                and base.value.value == "self"
                and self._class_stack
            ):
                # self.helper.method(): resolved later through the attribute's class
                return f"@attr:{self._class_stack[-1].key}:{base.attr.value}:{func.attr.value}"
            q = self.aliases.qualify(func)
            if q and not q.startswith("builtins."):
                return q
        return None

    def visit_Name(self, node: cst.Name) -> None:
        if self.aliases.stars:
            self.aliases.star_uses.add(node.value)
        if self._builtin_uses and node.value in BUILTIN_NAMES:
            self._builtin_uses[-1].append(node)
        if not self.mentions_torch and node.value in ("torch", "Tensor"):
            self.mentions_torch = True

