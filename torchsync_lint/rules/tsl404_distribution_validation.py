"""TSL404 distribution-validation."""

from typing import Optional

import libcst as cst

from torchsync_lint.inference.values import CPU, NUMBER, TENSOR
from torchsync_lint.rules.base import Rule
from torchsync_lint.rules import _fixes as fx
from torchsync_lint.rules._common import arg, is_false

# Distribution classes of torch.distributions whose constructor or log_prob validates its
# arguments when `validate_args` is on (its default). Independent only delegates to its base.
DISTRIBUTIONS = frozenset(
    (
        "Bernoulli Beta Binomial Categorical Cauchy Chi2 ContinuousBernoulli Dirichlet Exponential "
        "FisherSnedecor Gamma GeneralizedPareto Geometric Gumbel HalfCauchy HalfNormal InverseGamma "
        "Kumaraswamy LKJCholesky Laplace LogNormal LogisticNormal LowRankMultivariateNormal "
        "MixtureSameFamily Multinomial MultivariateNormal NegativeBinomial Normal OneHotCategorical "
        "OneHotCategoricalStraightThrough Pareto Poisson RelaxedBernoulli RelaxedOneHotCategorical "
        "StudentT TransformedDistribution Uniform VonMises Weibull Wishart LogitRelaxedBernoulli "
        "ExpRelaxedCategorical"
    ).split()
)
SET_DEFAULT = "Distribution.set_default_validate_args"
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
    `from torch.distributions import Normal`) without `validate_args=False`, unless the file
    turns validation off with `Distribution.set_default_validate_args(False)`. Also flags
    `MultivariateNormal` built from `covariance_matrix=` or `precision_matrix=`, which syncs even
    without validation.

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
    `set_default_validate_args(False)` is only seen in the same file; set in another file (a
    training script), it still leaves this file's distributions reported: pass
    `validate_args=False` or add a noqa. `validate_args=<variable>` is assumed to be False.
    Running with `python -O` turns validation off too, which the linter cannot know. Subclasses
    of `Distribution` defined in the project are not reported. `Independent` is not reported: it
    only delegates to its base distribution. A distribution built only from Python numbers or
    CPU tensors (`Normal(0, 1)`) validates on the host and is not reported, although its
    `log_prob` or `cdf` of a GPU tensor still checks that value with a sync.

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
        q = self.ctx.qualname(node.func)
        if q is None or not q.startswith("torch.distributions.") or q.split(".")[-1] not in DISTRIBUTIONS:
            return
        if self._host_parameters(node):
            return
        validate = arg(node, None, "validate_args")
        if validate is None or self._validates(validate.value):
            if not self._validation_off_in_file():
                self.report(node, fix=None if any(a.star for a in node.args) else fx.make(
                    fx.UNSAFE, "pass `validate_args=False`", node, fx.with_keyword(node, "validate_args", "False")))
                return
        if q.endswith("MultivariateNormal") and any(arg(node, None, k) is not None for k in FACTORED_ARGS):
            self.report(node, MVN_MESSAGE)

    def _host_parameters(self, call: cst.Call) -> bool:
        """Every parameter is a Python number or a CPU tensor: validation runs on the host, no wait."""
        values = [self.ctx.value(a.value) for a in call.args if not (a.keyword and a.keyword.value == "validate_args")]
        return bool(values) and all(v.kind == NUMBER or (v.kind == TENSOR and v.device == CPU) for v in values)

    def _validates(self, expr: cst.BaseExpression) -> bool:
        """`validate_args=True` or `=None` (the default); a variable is assumed to be False."""
        return isinstance(expr, cst.Name) and expr.value in ("True", "None")

    def _validation_off_in_file(self) -> bool:
        got: Optional[bool] = getattr(self, "_off", None)
        if got is None:
            got = any(
                name.endswith(SET_DEFAULT) and name.startswith("torch.distributions.") and is_false(_first(call))
                for name, calls in self.ctx.index.torch_calls.items()
                for call in calls
            )
            self._off = got
        return got


def _first(call: cst.Call) -> Optional[cst.BaseExpression]:
    a = arg(call, 0, "value")
    return a.value if a is not None else None
