"""TSL414 backward-to-host."""

from typing import Iterator, List, Optional, Tuple

import libcst as cst

from torchsync_lint.inference.defs import FunctionInfo, target_names
from torchsync_lint.rules.base import Rule
from torchsync_lint.rules._common import arg, is_true

# Private names: none of these calls waits by itself (``rules.claims`` reads public sets as claims).
# factories whose `requires_grad=True` makes a leaf, on the host unless `device=` says otherwise
_LEAF_FACTORIES = frozenset("torch." + n for n in (
    "tensor", "zeros", "ones", "full", "empty", "rand", "randn", "arange", "linspace", "eye"))
_PARAMETERS = frozenset(("torch.nn.Parameter", "torch.nn.parameter.Parameter"))
# layers whose backward waits (truth rows bwd-09, bwd-12): a sparse gradient, a bag's offsets
_BAG_LAYERS = frozenset(("torch.nn.EmbeddingBag", "torch.nn.modules.sparse.EmbeddingBag"))
_EMBEDDINGS = frozenset(("torch.nn.Embedding", "torch.nn.modules.sparse.Embedding"))
_BAG_FUNCTIONS = frozenset(("torch.nn.functional.embedding_bag",))
# where a graph is cut: what these return carries no gradient back
_CUTS = frozenset(("detach", "item", "tolist", "numpy", "detach_", "data"))
_MAX_STEPS = 200  # expressions followed per backward() call


class BackwardToHost(Rule):
    """
    ## What it does
    Flags `loss.backward()` (and `torch.autograd.backward` / `torch.autograd.grad`) where the
    loss is computed, in the same function or through attributes its class assigns, from a
    tensor that requires grad and lives on the host (`torch.zeros(1, requires_grad=True)`, an
    `nn.Parameter` made outside a module, either one moved with `.to(device)` afterwards), or
    from an `nn.EmbeddingBag` / an `nn.Embedding(..., sparse=True)`.

    ## Why is this bad?
    The backward pass ends by writing each leaf's gradient where the leaf lives: for a host leaf
    used in a CUDA graph that is a copy from the GPU, which waits for every queued kernel (measured
    on an H200: truth rows bwd-01, bwd-02, bwd-03, bwd-15 waited for a queued `torch.cuda._sleep`;
    bwd-04, the same leaf made on the device, did not). The backward of an embedding bag, and a
    sparse embedding gradient, wait too (bwd-12, bwd-09); a dense `nn.Embedding`'s does not
    (bwd-05, bwd-06). A learnable temperature or entropy coefficient kept as a plain tensor is
    the usual case: `module.to(device)` moves parameters and buffers, not plain attributes.

    ## Example
    ```python
    import torch


    class Alpha:
        def __init__(self, device):
            self.log_alpha = torch.zeros(1, requires_grad=True)
            self.opt = torch.optim.Adam([self.log_alpha], lr=3e-4)

        def update(self, entropy, target):
            loss = -(self.log_alpha.exp() * (entropy - target).detach()).mean()
            self.opt.zero_grad()
            loss.backward()
            self.opt.step()
    ```

    ## Use instead
    ```python
    import torch


    class Alpha:
        def __init__(self, device):
            self.log_alpha = torch.zeros(1, requires_grad=True, device=device)
            self.opt = torch.optim.Adam([self.log_alpha], lr=3e-4)

        def update(self, entropy, target):
            loss = -(self.log_alpha.exp() * (entropy - target).detach()).mean()
            self.opt.zero_grad()
            loss.backward()
            self.opt.step()
    ```

    For an embedding bag, a dense `nn.Embedding` with a sum over the bag's positions keeps the
    backward on the device.

    ## Fix safety
    Not automatic: the leaf's optimizer must be built from the tensor made on the device.

    ## Known problems
    The loss is followed through assignments in the function that calls `backward()` and through
    the assignments of `self` attributes in its class: a leaf reached only through another
    function's return, or a loss passed in as a parameter, is not seen. An `nn.Parameter` assigned
    to an attribute of an `nn.Module` is not reported (moving the module moves it), although one
    whose module is never moved waits as well. A leaf made on the host while a default device is
    set (`torch.set_default_device`) lives on the device and is reported all the same.

    ## Verify
    Truth rows bwd-01 to bwd-15 (`docs/truth-table.md`); `torchsync-lint --verify` times the
    statement after a queued `torch.cuda._sleep`.

    ## References
    - https://pytorch.org/docs/stable/notes/autograd.html
    - https://pytorch.org/docs/stable/generated/torch.nn.EmbeddingBag.html
    """

    code = "TSL414"
    name = "backward-to-host"
    message = (
        "this backward() writes a gradient to a host tensor (a leaf made on the CPU, or a sparse or bag "
        "embedding's) and waits for the GPU; make the leaf on the device (`device=`) or a parameter of a "
        "module that is moved"
    )

    def visit_Call(self, node: cst.Call) -> None:
        f = node.func
        loss: Optional[cst.BaseExpression] = None
        if self.ctx.qualname(f) in ("torch.autograd.backward", "torch.autograd.grad"):
            loss = node.args[0].value if node.args else None
        elif type(f) is cst.Attribute and f.attr.value == "backward":
            loss = f.value
            if (type(loss) is cst.Call and type(loss.func) is cst.Attribute and loss.func.attr.value == "scale"
                    and loss.args):
                loss = loss.args[0].value  # `scaler.scale(loss).backward()`
        func = self.ctx.function
        if loss is not None and func is not None and self._reaches_host(loss, func):
            self.report(node)

    # -- following the loss back ------------------------------------------------------------------
    def _reaches_host(self, loss: cst.BaseExpression, func: FunctionInfo) -> bool:
        todo: List[Tuple[cst.BaseExpression, FunctionInfo]] = [(loss, func)]
        seen = set()
        steps = 0
        while todo and steps < _MAX_STEPS:
            expr, at = todo.pop()
            if id(expr) in seen:
                continue
            seen.add(id(expr))
            steps += 1
            if self._host_leaf(expr, at) or self._bag_output(expr, at):
                return True
            todo.extend(self._sources(expr, at))
        return False

    def _sources(self, expr: cst.BaseExpression, at: FunctionInfo) -> Iterator[Tuple[cst.BaseExpression, FunctionInfo]]:
        """What ``expr`` is computed from: its parts, the values its names were assigned here, the
        values its ``self`` attributes were assigned in any method of the class."""
        if type(expr) is cst.Name:
            for value in _assigned(at, expr.value):
                yield value, at
            return
        if _self_attr(expr) is not None:
            for method, value in (at.cls.attrs.get(_self_attr(expr), ()) if at.cls is not None else ()):
                yield value, method
            return
        if type(expr) is cst.Call:
            fn = expr.func
            if type(fn) is cst.Attribute and fn.attr.value in _CUTS:
                return  # `t.detach()`: no gradient flows back through it
            if type(fn) is cst.Attribute:
                yield fn.value, at
            elif type(fn) is cst.Name:
                yield fn, at  # `emb(x)` of a name bound to a layer
            for a in expr.args:
                yield a.value, at
            return
        if type(expr) is cst.Attribute:
            if expr.attr.value not in _CUTS:
                yield expr.value, at
            return
        for child in expr.children:
            if isinstance(child, cst.BaseExpression):
                yield child, at
            elif type(child) in (cst.Arg, cst.Element, cst.StarredElement, cst.SubscriptElement, cst.Index):
                for grand in child.children:
                    if isinstance(grand, cst.BaseExpression):
                        yield grand, at

    def _host_leaf(self, expr: cst.BaseExpression, at: FunctionInfo) -> bool:
        """A tensor made on the host that requires grad: a factory with `requires_grad=True` and no
        `device=`, or an `nn.Parameter` of one that no module holds."""
        if type(expr) is not cst.Call:
            return False
        q = self.ctx.qualname(expr.func)
        if q in _LEAF_FACTORIES:
            return is_true(_kw(expr, "requires_grad")) and _on_host(expr)
        if q in _PARAMETERS and expr.args and type(expr.args[0].value) is cst.Call:
            inner = expr.args[0].value
            if self.ctx.qualname(inner.func) not in _LEAF_FACTORIES or not _on_host(inner):
                return False
            holder = at.cls
            return holder is None or not self.ctx.evaluator.is_module_class(holder) or not _held_by_self(at, expr)
        return False

    def _bag_output(self, expr: cst.BaseExpression, at: FunctionInfo) -> bool:
        """A call of an embedding bag (or a sparse embedding): its layer made here, or bound to a
        name or attribute assigned one."""
        if type(expr) is not cst.Call:
            return False
        if self.ctx.qualname(expr.func) in _BAG_FUNCTIONS:
            return True
        fn = expr.func
        makers: List[cst.BaseExpression] = []
        if type(fn) is cst.Name:
            makers = list(_assigned(at, fn.value))
        elif _self_attr(fn) is not None and at.cls is not None:
            makers = [v for _m, v in at.cls.attrs.get(_self_attr(fn), ())]
        return any(self._bag_layer(m) for m in makers)

    def _bag_layer(self, expr: cst.BaseExpression) -> bool:
        while type(expr) is cst.Call and type(expr.func) is cst.Attribute and expr.func.attr.value in ("to", "cuda"):
            expr = expr.func.value  # `nn.EmbeddingBag(...).to(d)`
        if type(expr) is not cst.Call:
            return False
        q = self.ctx.qualname(expr.func)
        return q in _BAG_LAYERS or q in _EMBEDDINGS and is_true(_kw(expr, "sparse"))


def _assigned(func: FunctionInfo, name: str) -> Iterator[cst.BaseExpression]:
    for b in func.bindings:
        if b[0] != "assign" or b[2] is None:
            continue
        for t in b[1] if isinstance(b[1], list) else [b[1]]:
            if isinstance(t, cst.BaseExpression) and name in target_names(t):
                yield b[2]


def _self_attr(expr: cst.BaseExpression) -> Optional[str]:
    if type(expr) is cst.Attribute and type(expr.value) is cst.Name and expr.value.value == "self":
        return expr.attr.value
    return None


def _held_by_self(func: FunctionInfo, value: cst.Call) -> bool:
    """The Parameter is assigned to an attribute of ``self`` in this method (a module holds it)."""
    cls = func.cls
    return cls is not None and any(v is value for values in cls.attrs.values() for _m, v in values)


def _kw(call: cst.Call, name: str) -> Optional[cst.BaseExpression]:
    a = arg(call, None, name)
    return a.value if a is not None else None


def _on_host(call: cst.Call) -> bool:
    device = _kw(call, "device")
    return device is None or type(device) is cst.SimpleString and device.evaluated_value == "cpu"
