"""TSL113 measured-torch-sync."""

import functools
from typing import FrozenSet

import libcst as cst

from torchsync_lint import catalog
from torchsync_lint.inference.values import CPU, NDARRAY, TENSOR, UNKNOWN
from torchsync_lint.rules import claims
from torchsync_lint.rules.base import Rule
from torchsync_lint.rules._common import arg

# One-argument `torch.where(cond)` is `nonzero` (TSL101); the three-argument form never syncs.
# (Private: the rules' upper-case module sets are their claims, and this rule claims no name itself.)
_OTHER_FORMS = frozenset(("torch.where",))
# `isin` sorts (and syncs) only when the test set is large against the elements (the catalog's
# 16 in 16); a small one is compared by brute force, measured sync-free (truth row mts-03).
_SIZE_DEPENDENT = frozenset(("torch.isin",))
# Sparse constructors were measured without a size: they take it from the indices (a max on the
# host). Given `size` they need none, so the call is not reported (the position of `size`).
_SIZE_GIVEN = {"torch.sparse_coo_tensor": 2, "torch.sparse_csr_tensor": 3, "torch.sparse_csc_tensor": 3}


@functools.cache
def measured_claims() -> FrozenSet[str]:
    """Catalog names of torch callables whose default form synced and whose sync does not depend
    on the arguments (``argument_dependent`` entries are decided by TSL111's forms), less the
    calls other rules claim. ``claims.claimed_calls`` reads this rule's claims from here."""
    elsewhere = set(_OTHER_FORMS) | _SIZE_DEPENDENT
    for code, module in claims.rule_modules().items():
        if code != "TSL113":
            elsewhere |= claims.claimed_calls(module)
    out = set()
    for q, e in catalog.entries().items():
        default = e.get("variants", {}).get("default", {})
        if (q.startswith("torch.") and e.get("syncs") and default.get("synced") is True
                and not e.get("argument_dependent") and q not in elsewhere):
            out.add(q)
    return frozenset(out)


class MeasuredTorchSync(Rule):
    """
    ## What it does
    Flags calls of torch functions and Tensor methods that the sync catalog measured to make the
    host wait in their plain form, where no rule of their own reports them: `torch.cov`,
    `torch.corrcoef`, `F.gaussian_nll_loss`, `torch.combinations`,
    `torch.unravel_index`, `Tensor.to_sparse()`, `torch.nuclear_norm`, `torch.svd_lowrank`...
    The list is read from `catalog/data/sync_catalog.json`, so it follows the measurement.

    ## Why is this bad?
    These ops read a GPU value on the host inside: a validity check (`gaussian_nll_loss` tests
    `var < 0`, `cov` checks its normalisation factor), a data-dependent output size (sparse
    conversions, `combinations`), or an iterative solver's convergence test. The host
    waits for every queued kernel each time, which no line of the calling code shows.

    ## Example
    ```python
    import torch
    import torch.nn as nn


    class Whitening(nn.Module):
        def forward(self, feats):
            cov = torch.cov(feats.T)
            return feats @ torch.linalg.cholesky_ex(cov).L
    ```

    ## Use instead
    ```python
    import torch
    import torch.nn as nn


    class Whitening(nn.Module):
        def forward(self, feats):
            centred = feats - feats.mean(dim=0, keepdim=True)
            cov = centred.T @ centred / (feats.shape[0] - 1)
            return feats @ torch.linalg.cholesky_ex(cov).L
    ```

    ## Fix safety
    Unsafe: the sync-free form depends on the op (the covariance by a matmul, as above; a fixed-size
    mask instead of a sparse tensor).

    ## Known problems
    The catalog measures each op once, with small synthesised arguments: an op whose sync depends
    on its sizes is reported for every size, except `isin`, left alone (it sorts, and syncs, only
    for a test set large against the elements; measured sync-free for a small one).
    A call whose first tensor argument is known to be on the CPU is not reported, nor a sparse
    constructor given its `size` (measured without one: it then reads the size off the indices).

    ## Verify
    `python -m torchsync_lint.catalog.sweep` (H100/H200, torch 2.11): each op listed here stalled
    the host for the whole queued sleep kernel (about 4 ms) in its default form; see docs/catalog.md.

    ## References
    - docs/catalog.md
    - https://pytorch.org/docs/stable/generated/torch.cuda.set_sync_debug_mode.html
    """

    code = "TSL113"
    name = "measured-torch-sync"
    message = (
        "`{name}` was measured to make the host wait for the GPU (a check or a data-dependent size "
        "inside the op); compute it outside the step, every N steps, or with a fixed-size equivalent"
    )

    def visit_Call(self, node: cst.Call) -> None:
        q = self.ctx.qualname(node.func)
        if q is not None:
            name = catalog.canonical(q)
            if name not in measured_claims():
                return
            first = next((a for a in node.args if not a.star), None)
            if first is not None and self._not_on_gpu(first.value):
                return
            if name in _SIZE_GIVEN and arg(node, _SIZE_GIVEN[name], "size") is not None:
                return
            self.report(node, self.message.format(name=q))
            return
        method = self.ctx.tensor_method(node)
        if method is not None and f"torch.Tensor.{method}" in measured_claims():
            if not self._not_on_gpu(node.func.value):
                self.report(node, self.message.format(name="Tensor." + method))

    def _not_on_gpu(self, expr: cst.BaseExpression) -> bool:
        v = self.ctx.value(expr)
        return (v.kind == TENSOR and v.device == CPU) or v.kind == NDARRAY or (
            v.kind not in (TENSOR, UNKNOWN))
