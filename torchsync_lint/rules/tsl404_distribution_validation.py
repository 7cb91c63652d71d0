"""TSL404 distribution-validation."""

from typing import List, Optional, Union

import libcst as cst

from torchsync_lint.inference import torch_api as api
from torchsync_lint.inference.index import ClassInfo, FunctionInfo, any_base
from torchsync_lint.inference.names import dotted
from torchsync_lint.inference.switches import by_name_validates, leaves_validation_on, validation_off
from torchsync_lint.inference.values import CPU, FUNC, NUMBER, OBJECT, TENSOR, UNKNOWN
from torchsync_lint.rules.base import Rule
from torchsync_lint.rules import _fixes as fx
from torchsync_lint.rules._common import arg, is_false

# Distribution classes of torch.distributions whose constructor or log_prob validates (the list
# lives with inference's facts: a value built from one is a distribution object there).
DISTRIBUTIONS = api.VALIDATING_DISTRIBUTIONS
# Their `arg_constraints` are empty: constructing one checks nothing (what they wrap was checked
# when it was built); their `log_prob` still checks the sample (tests/test_torch_api_data.py
# compares this set with torch's classes when torch is installed).
NO_ARGUMENT_CHECKS = frozenset(("MixtureSameFamily", "TransformedDistribution"))
SET_DEFAULT = "Distribution.set_default_validate_args"
# Wrappers whose log_prob hands the sample to the distribution they wrap (which validates it).
WRAPPERS = frozenset(("Independent",))
# Methods that check their sample against the support (`_validate_sample`) when validation is on.
SAMPLE_CHECKING = frozenset(("log_prob", "cdf"))
SAMPLE_MESSAGE = (
    "`{method}` of a distribution built with argument validation on checks the sample on the host "
    "(`_validate_sample`); build it with `validate_args=False`"
)
UNPLACED_MESSAGE = (
    "`{method}` here can only be a `torch.distributions` distribution's (no class of the project "
    "defines it), which checks the sample on the host (`_validate_sample`) unless built with "
    "`validate_args=False`"
)
VALIDATE_SAMPLE_MESSAGE = (
    "`_validate_sample` checks the value against the support on the host whenever the distribution "
    "validates (the default); build it with `validate_args=False`"
)
FACTORY_MESSAGE = (
    "a callable declared to return a `torch.distributions` distribution builds one here, which checks its "
    "arguments on the host unless built with `validate_args=False`"
)
# MultivariateNormal factors these with torch.linalg.cholesky, which checks for errors on the host.
FACTORED_ARGS = ("covariance_matrix", "precision_matrix")
MVN_MESSAGE = (
    "`MultivariateNormal(covariance_matrix=/precision_matrix=)` runs `torch.linalg.cholesky`, which checks "
    "errors on the host; pass `scale_tril=torch.linalg.cholesky_ex(cov).L`"
)

# The sync-free alternatives the message names: catalog entry -> the measured variant that did not
# sync (tests/test_catalog.py checks both against catalog/data/sync_catalog.json).
SYNC_FREE = {
    "torch.distributions.Normal": "validate_args=False",
}


class DistributionValidation(Rule):
    """
    ## What it does
    Flags the construction of a `torch.distributions` distribution (`Normal`, `Categorical`,
    `Bernoulli`, ..., however imported: `torch.distributions.Normal`, `D.Normal`,
    `from torch.distributions import Normal`, or a class held in a class attribute such as
    `self.distribution_class`) without `validate_args=False`, unless validation is turned off with
    `Distribution.set_default_validate_args(False)` in this file or any file of the project. Also
    flags `MultivariateNormal` built from `covariance_matrix=` or `precision_matrix=`, which syncs
    even without validation.

    Subclasses defined in the project count too: building a subclass of a checking distribution
    (or of `Distribution` with `arg_constraints` of its own) is flagged unless the call passes
    `validate_args=False` or its `__init__` hands `validate_args=False` to the base class;
    `self._validate_sample(value)` in a subclass is flagged, as is `super().log_prob(value)`.
    `log_prob` / `cdf` of a distribution built with validation on (in the same function, or
    returned by a function of the file, also wrapped in `Independent`) is flagged as well, as is
    one that inference knows as a distribution: returned by a function of another file or by an
    override, or declared `-> distributions.Normal` / `-> Distribution`; and `dist.log_prob(x)` where
    inference cannot say what `dist` is (a policy's output, a batch's field), since only torch's
    distributions answer to that name, unless a class of the project outside them defines a
    `log_prob` or some file builds a distribution with `validate_args=False`. Calling a callable declared
    to return a distribution (`dist_fn: Callable[[Tensor], Distribution]`) with arguments that may
    be on the GPU builds one, and is flagged where it is called.

    ## Why is this bad?
    Argument validation is on by default (it follows `__debug__`). The constructor checks every
    parameter against its constraint (`scale > 0`, probabilities in [0, 1], ...) with
    `if not valid.all(): raise`, and `log_prob` checks each sample the same way: every check
    copies a bool to the host, so the CPU waits for every queued kernel, once per distribution
    built in the step and once per `log_prob`.

    ## Example
    ```python
    import torch
    import torch.nn as nn


    class GaussianHead(nn.Module):
        def forward(self, mu, log_std, action):
            dist = torch.distributions.Normal(mu, log_std.exp())
            return dist.log_prob(action)
    ```

    ## Use instead
    ```python
    import torch
    import torch.nn as nn


    class GaussianHead(nn.Module):
        def forward(self, mu, log_std, action):
            dist = torch.distributions.Normal(mu, log_std.exp(), validate_args=False)
            return dist.log_prob(action)
    ```

    ## Fix safety
    Unsafe: invalid parameters (a negative scale, NaN logits) no longer raise; they give NaN or
    wrong results. Validate once outside the loop (a first step with validation, a test), or
    call `torch.distributions.Distribution.set_default_validate_args(False)` once at start-up.

    Autofix (unsafe, `--unsafe-fixes`): adds `validate_args=False` (or turns `True`/`None` into
    `False`); calls with `*args`/`**kwargs` are left alone.

    ## Known problems
    `validate_args=<variable>` is assumed to be False. Running with `python -O` turns validation
    off too, which the linter cannot know; so does a `set_default_validate_args(False)` outside
    the linted files. Subclasses are followed through the bases of their own file only.
    `Independent` is not reported: it only delegates to its base distribution. Building a
    `TransformedDistribution` or `MixtureSameFamily` checks nothing (they declare no argument
    constraints) and is not reported; their `log_prob` checks the sample and is. A distribution
    built only from Python numbers or CPU tensors (`Normal(0, 1)`) validates on the host and is
    not reported; its `log_prob` of a GPU tensor is (the sample is checked with a sync). A
    distribution known only by its declared type (`-> Distribution`) is taken to validate unless
    the file at hand passes `validate_args=False` somewhere; one built with it in another file
    and declared so is reported all the same.

    ## Verify
    Measured on an H200 (torch 2.11): constructing `Normal`, `Categorical`, `Bernoulli`,
    `Uniform` and `MultivariateNormal(scale_tril=)`, and `log_prob` of a validating `Normal`,
    take the whole queued `torch.cuda._sleep`; with `validate_args=False` or after
    `set_default_validate_args(False)` they return in well under a millisecond, except
    `MultivariateNormal(covariance_matrix=..., validate_args=False)` (its Cholesky factor syncs).

    ## References
    - https://pytorch.org/docs/stable/distributions.html (`Distribution.set_default_validate_args`)
    - DESIGN.md section 4
    """

    code = "TSL404"
    name = "distribution-validation"
    message = (
        "a `torch.distributions` object validates its arguments (and each `log_prob` sample) on the host "
        "by default; pass `validate_args=False` (validate once outside the loop)"
    )

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if type(func) is cst.Attribute:
            name = func.attr.value
            if name == "_validate_sample" and self._in_distribution_class() and _on_self(func.value):
                if not self._validation_off_in_file():
                    self.report(node, VALIDATE_SAMPLE_MESSAGE)
                return
            if name in SAMPLE_CHECKING and node.args:
                known = self._validating_receiver(func.value)
                if not known and not self._unplaced_receiver(func.value, name):
                    return
                sample = self.ctx.value(node.args[0].value)
                if sample.kind == NUMBER or (sample.kind == TENSOR and sample.device == CPU):
                    return
                if not self._validation_off_in_file():
                    self.report(node, (SAMPLE_MESSAGE if known else UNPLACED_MESSAGE).format(method=name))
                return
        target = self._distribution_class(func)
        if target is None:
            made = self.ctx.value(func)
            if (made.kind == FUNC and made.item is not None and _distribution_object(made.item)
                    and node.args and not self._host_parameters(node) and not self.ctx.index.validate_false
                    and not self._validation_off_in_file()):
                self.report(node, FACTORY_MESSAGE)  # `self.dist_fn(logits)`, `Callable[..., Distribution]`
            return
        if isinstance(target, ClassInfo):
            if self._host_parameters(node) or not self._subclass_validates(target, node):
                return
            if not self._validation_off_in_file():
                self.report(node, fix=None if any(a.star for a in node.args) else fx.make(
                    fx.UNSAFE, "pass `validate_args=False`", node, fx.with_keyword(node, "validate_args", "False")))
            return
        q = target
        if self._host_parameters(node) or q.split(".")[-1] in NO_ARGUMENT_CHECKS:
            return
        validate = arg(node, None, "validate_args")
        if validate is None or leaves_validation_on(validate.value):
            if not self._validation_off_in_file():
                self.report(node, fix=None if any(a.star for a in node.args) else fx.make(
                    fx.UNSAFE, "pass `validate_args=False`", node, fx.with_keyword(node, "validate_args", "False")))
                return
        if q.endswith("MultivariateNormal") and any(arg(node, None, k) is not None for k in FACTORED_ARGS):
            self.report(node, MVN_MESSAGE)

    # -- which class a call builds -----------------------------------------------------------
    def _distribution_class(self, func: cst.BaseExpression, depth: int = 0) -> Union[str, ClassInfo, None]:
        """A torch distribution's qualified name, or a project subclass of one, that calling
        ``func`` builds: the class named directly, however imported; a class of this file
        derived from one; a class held in a class attribute (``self.distribution_class``)."""
        q = self.ctx.qualname(func)
        if q is not None:
            return q if q.startswith("torch.distributions.") and q.split(".")[-1] in DISTRIBUTIONS else None
        if type(func) is cst.Name:
            cls = self.ctx.index.classes.get(func.value)
            if cls is not None and _is_class_ref(cls, func) and self._is_distribution(cls):
                return cls
            return None
        if depth < 2 and type(func) is cst.Attribute and _on_self(func.value):
            for value in self._class_attribute(func.attr.value):
                got = self._distribution_class(value, depth + 1)
                if got is not None:
                    return got
        return None

    def _class_attribute(self, name: str) -> List[cst.BaseExpression]:
        """What ``self.<name>`` / ``cls.<name>`` holds by the enclosing class's (or a local base
        class's) class-level assignments and ``self.<name> = ...`` in its methods."""
        func = self.ctx.function
        cls = func.cls if func is not None else None
        if cls is None and func is not None:
            p = func.parent
            while p is not None and p.cls is None:
                p = p.parent
            cls = p.cls if p is not None else None
        out: List[cst.BaseExpression] = []
        seen = set()
        while cls is not None and id(cls) not in seen:
            seen.add(id(cls))
            for st in cls.node.body.body:
                for small in getattr(st, "body", ()) if type(st) is cst.SimpleStatementLine else ():
                    if type(small) is cst.Assign and any(dotted(t.target) == name for t in small.targets):
                        out.append(small.value)
                    elif type(small) is cst.AnnAssign and small.value is not None and dotted(small.target) == name:
                        out.append(small.value)
            out.extend(expr for _f, expr in cls.attrs.get(name, ()))
            if out:
                return out
            cls = next((self.ctx.index.classes.get(b.split(".")[-1]) for b in cls.bases
                        if self.ctx.index.classes.get(b.split(".")[-1]) is not None), None)
        return out

    def _is_distribution(self, cls: ClassInfo) -> bool:
        """A class of this file derived from a torch distribution (through bases of this file)."""
        def torch_base(c: ClassInfo) -> bool:
            return any(b.startswith("torch.distributions.") for b in c.bases)
        return torch_base(cls) or any_base(cls, self.ctx.index, None, torch_base, lambda _k: False)

    def _concrete_base(self, cls: ClassInfo) -> bool:
        """Some base is a distribution of torch that checks its parameters (``Normal``...), or the
        class declares constraints of its own (``arg_constraints = {...}``) for the base to check."""
        def concrete(c: ClassInfo) -> bool:
            if any(b.startswith("torch.distributions.") and b.split(".")[-1] in DISTRIBUTIONS - NO_ARGUMENT_CHECKS
                   for b in c.bases):
                return True
            for st in c.node.body.body:
                for small in getattr(st, "body", ()) if type(st) is cst.SimpleStatementLine else ():
                    if (type(small) in (cst.Assign, cst.AnnAssign) and type(small.value) is cst.Dict
                            and small.value.elements
                            and any(dotted(t) == "arg_constraints" for t in _targets(small))):
                        return True
            return False
        return concrete(cls) or any_base(cls, self.ctx.index, None, concrete, lambda _k: False)

    def _subclass_validates(self, cls: ClassInfo, call: cst.Call) -> bool:
        """Building a project subclass validates unless the call passes ``validate_args=False`` or
        its ``__init__`` hands ``validate_args=False`` to the base class."""
        if not self._concrete_base(cls):
            return False
        given = arg(call, None, "validate_args")
        if given is not None and not leaves_validation_on(given.value):
            return False
        c: Optional[ClassInfo] = cls
        seen = set()
        while c is not None and id(c) not in seen:
            seen.add(id(c))
            init = c.methods.get("__init__")
            if init is not None:
                return not _forwards_false(init)
            c = next((self.ctx.index.classes.get(b.split(".")[-1]) for b in c.bases
                      if self.ctx.index.classes.get(b.split(".")[-1]) is not None), None)
        return True

    def _in_distribution_class(self) -> bool:
        func = self.ctx.function
        while func is not None and func.cls is None:
            func = func.parent
        return func is not None and self._is_distribution(func.cls)

    # -- log_prob of a validating distribution -----------------------------------------------
    def _validating_receiver(self, expr: cst.BaseExpression, depth: int = 0) -> bool:
        """``expr`` is a distribution that validates its samples: built here (or by a function
        of this file that returns one) from a validating construction, ``super()`` in a
        subclass of a checking distribution, or a value inference knows as one (returned by a
        method of another file, declared `-> distributions.Normal`)."""
        if depth > 3:
            return False
        if type(expr) is cst.Call and dotted(expr.func) == "super" and not expr.args:
            func = self.ctx.function
            return func is not None and func.cls is not None and self._concrete_base(func.cls)
        if type(expr) is cst.Call and self._validating_call(expr, depth):
            return True
        if type(expr) is cst.Name:
            func = self.ctx.function
            values = _bound(func, expr.value) if func is not None else []
            if values and all(self._validating_receiver(v, depth + 1) for v in values):
                return True
        if depth == 0:
            v = self.ctx.value(expr)
            # a declared one (`-> Distribution`) only where this file never turns validation off
            # by hand: there `validate_args=False` may be how the declared ones are built
            return _distribution_object(v) and not (v.assumed and self.ctx.index.validate_false)
        return False

    def _unplaced_receiver(self, expr: cst.BaseExpression, name: str) -> bool:
        """``dist.log_prob(x)`` where inference cannot say what ``dist`` is (a policy's output,
        a batch's field): only torch's distributions answer to the name where no project class
        outside them defines it (``switches.by_name_validates``). Not a name that refers to a
        module or another library's object (``stats.norm``)."""
        if self.ctx.qualname(expr) is not None:
            return False
        v = self.ctx.value(expr)
        if v.kind != UNKNOWN or v.ref is not None:
            return False
        return by_name_validates(self.ctx.evaluator, self.ctx.index, name)

    def _validating_call(self, call: cst.Call, depth: int) -> bool:
        q = self.ctx.qualname(call.func)
        if q is not None and q.startswith("torch.distributions.") and q.split(".")[-1] in WRAPPERS:
            a = arg(call, 0, "base_distribution")
            return a is not None and self._validating_receiver(a.value, depth + 1)
        target = self._distribution_class(call.func)
        if isinstance(target, ClassInfo):
            return self._subclass_validates(target, call)
        if target is not None:
            validate = arg(call, None, "validate_args")
            return validate is None or leaves_validation_on(validate.value)
        callee = self._local_function(call.func)
        if callee is None or not callee.returns:
            return False
        return all(self._returned_validating(callee, r, depth + 1) for r in callee.returns)

    def _returned_validating(self, callee: FunctionInfo, expr: cst.BaseExpression, depth: int) -> bool:
        if type(expr) is cst.Name:
            values = _bound(callee, expr.value)
            return bool(values) and all(self._returned_validating(callee, v, depth + 1) for v in values)
        return type(expr) is cst.Call and depth <= 3 and self._validating_call(expr, depth)

    def _local_function(self, func: cst.BaseExpression) -> Optional[FunctionInfo]:
        """The function of this file a call runs: ``helper(...)`` or ``self.method(...)``."""
        index = self.ctx.index
        if type(func) is cst.Name:
            return index.module_functions.get(func.value)
        if type(func) is cst.Attribute and _on_self(func.value):
            cur = self.ctx.function
            while cur is not None and cur.cls is None:
                cur = cur.parent
            c = cur.cls if cur is not None else None
            seen = set()
            while c is not None and id(c) not in seen:
                seen.add(id(c))
                m = c.methods.get(func.attr.value)
                if m is not None:
                    return m
                c = next((index.classes.get(b.split(".")[-1]) for b in c.bases
                          if index.classes.get(b.split(".")[-1]) is not None), None)
        return None

    def _host_parameters(self, call: cst.Call) -> bool:
        """Every parameter is a Python number or a CPU tensor: validation runs on the host, no wait."""
        values = [self.ctx.value(a.value) for a in call.args if not (a.keyword and a.keyword.value == "validate_args")]
        return bool(values) and all(v.kind == NUMBER or (v.kind == TENSOR and v.device == CPU) for v in values)

    def _validation_off_in_file(self) -> bool:
        """``Distribution.set_default_validate_args(False)`` in this file or any file of the project."""
        got: Optional[bool] = getattr(self, "_off", None)
        if got is None:
            got = validation_off(self.ctx.evaluator, self.ctx.index)
            self._off = got
        return got


def _distribution_object(v) -> bool:
    """A value inference knows as a validating distribution: built by a torch class without
    `validate_args=False`, or declared as one (`-> distributions.Normal`, `-> Distribution`), in
    this file or returned by another file's function."""
    if v.kind != OBJECT or not (v.cls or "").startswith(api.DISTRIBUTION_PREFIX):
        return False
    last = v.cls.rsplit(".", 1)[1]
    return last in DISTRIBUTIONS or last == "Distribution"


def _on_self(expr: cst.BaseExpression) -> bool:
    """``self``, ``cls``, ``type(self)`` or ``self.__class__``."""
    if type(expr) is cst.Name:
        return expr.value in ("self", "cls")
    if type(expr) is cst.Call and dotted(expr.func) == "type" and len(expr.args) == 1:
        return _on_self(expr.args[0].value)
    return type(expr) is cst.Attribute and expr.attr.value == "__class__" and _on_self(expr.value)


def _is_class_ref(cls: ClassInfo, name: cst.Name) -> bool:
    return cls.name == name.value


def _targets(small) -> List[cst.BaseExpression]:
    if type(small) is cst.Assign:
        return [t.target for t in small.targets]
    return [small.target]


def _bound(func: FunctionInfo, name: str) -> List[cst.BaseExpression]:
    """Every value a function assigns to a plain local name (none: a parameter or unknown)."""
    out = []
    for b in func.bindings:
        if b[0] in ("assign", "annassign") and b[2] is not None:
            for t in b[1]:
                if type(t) is cst.Name and t.value == name:
                    out.append(b[2])
                elif type(t) in (cst.Tuple, cst.List) and any(
                        type(e.value) is cst.Name and e.value.value == name for e in t.elements):
                    return []  # unpacked from something else: unknown
        elif b[0] in ("for", "with", "import"):
            tgt = b[1]
            if type(tgt) is cst.Name and tgt.value == name or b[0] == "import" and tgt == name:
                return []
    return out


def _forwards_false(init: FunctionInfo) -> bool:
    """``__init__`` calls ``super().__init__(..., validate_args=False)`` (or ``Base.__init__``)."""
    stack: List[cst.CSTNode] = [init.node.body]
    while stack:
        n = stack.pop()
        if type(n) is cst.Call and type(n.func) is cst.Attribute and n.func.attr.value == "__init__":
            a = arg(n, None, "validate_args")
            if a is not None and is_false(a.value):
                return True
        if type(n) not in (cst.FunctionDef, cst.ClassDef):
            stack.extend(n.children)
    return False
