"""TSL405 linalg-without-ex."""

import libcst as cst

from torchsync_lint.rules.base import Rule
from torchsync_lint.rules import _fixes as fx
from torchsync_lint.rules._common import arg, is_true, may_be_on_gpu

# The `_ex` forms --unsafe-fixes writes, and the field of their result that the checked form returns.
EX_FIELDS = {"torch.linalg.inv_ex": "inverse", "torch.linalg.cholesky_ex": "L", "torch.linalg.solve_ex": "result"}

# Functions that check LAPACK/cuSOLVER `info` on the host, and their sync-free `_ex` form.
CHECKED = {
    "torch.linalg.inv": "torch.linalg.inv_ex",
    "torch.inverse": "torch.linalg.inv_ex",
    "torch.linalg.cholesky": "torch.linalg.cholesky_ex",
    "torch.cholesky": "torch.linalg.cholesky_ex",
    "torch.linalg.solve": "torch.linalg.solve_ex",
    "torch.linalg.lu_factor": "torch.linalg.lu_factor_ex",
}
METHODS = {"inverse": "torch.linalg.inv_ex", "cholesky": "torch.linalg.cholesky_ex"}
# `_ex` forms that sync again when asked to raise.
EX_FORMS = frozenset("torch.linalg." + n for n in ("inv_ex", "cholesky_ex", "solve_ex", "lu_factor_ex"))
# Functions that wait for the GPU (convergence checks, host-side solvers) with no sync-free form.
NO_EX = frozenset(
    "torch.linalg." + n
    for n in (
        "eigh eigvalsh svd svdvals eig eigvals lstsq pinv matrix_rank cond matrix_exp tensorinv "
        "tensorsolve ldl_factor ldl_factor_ex"
    ).split()
) | frozenset(("torch.svd", "torch.pinverse", "torch.matrix_exp"))
NO_EX_METHODS = frozenset(("svd", "pinverse", "matrix_exp"))
CHECK_ERRORS_MESSAGE = "`check_errors=True` reads `info` on the host (a sync); drop it and check `info` on the device"

# The sync-free alternatives the message names: catalog entry -> the measured variant that did not
# sync (tests/test_catalog.py checks both against catalog/data/sync_catalog.json).
SYNC_FREE = {
    "torch.linalg.inv_ex": "default",
    "torch.linalg.cholesky_ex": "default",
    "torch.linalg.solve_ex": "default",
}


class LinalgWithoutEx(Rule):
    """
    ## What it does
    Flags `torch.linalg.inv`, `torch.inverse` / `A.inverse()`, `torch.linalg.cholesky`,
    `torch.cholesky` / `A.cholesky()`, `torch.linalg.solve` and `torch.linalg.lu_factor` on
    tensors that may be on the GPU, and their `_ex` forms called with `check_errors=True`. Also
    flags the decompositions that wait for the GPU and have no `_ex` form (`linalg.eigh`,
    `eigvalsh`, `svd`, `svdvals`, `eig`, `eigvals`, `lstsq`, `pinv`, `matrix_rank`, `cond`,
    `matrix_exp`, `tensorinv`, `tensorsolve`, `ldl_factor` and `ldl_factor_ex`; `torch.svd`,
    `torch.pinverse`, `torch.matrix_exp` and their method forms), with a message of their own.

    ## Why is this bad?
    These functions raise an error for a singular or non-positive-definite input. The solver
    reports that in an `info` tensor on the device, so PyTorch copies `info` to the host to decide
    whether to raise: the CPU waits for every queued kernel, on every call. The `_ex` forms return
    `info` instead of checking it and do not wait. Eigen- and singular-value solvers check
    convergence the same way (or run partly on the host), and have no such form.

    ## Example
    ```python
    import torch
    import torch.nn as nn


    class Whiten(nn.Module):
        def forward(self, x, cov):
            return x @ torch.linalg.inv(cov)
    ```

    ## Use instead
    ```python
    import torch
    import torch.nn as nn


    class Whiten(nn.Module):
        def forward(self, x, cov):
            inv, info = torch.linalg.inv_ex(cov)  # info > 0: singular; check it outside the step
            return x @ inv
    ```

    ## Fix safety
    Unsafe: a singular or indefinite input no longer raises; the result holds garbage (often inf
    or NaN) and `info` says which matrices failed. Check `info` asynchronously
    (`torch._assert_async(info == 0)`, or log it every N steps). `torch.cholesky(A, upper=True)`
    maps to `torch.linalg.cholesky_ex(A, upper=True)`; the deprecated `torch.cholesky` returns the
    lower factor by default, like `linalg.cholesky_ex`.

    Autofix (unsafe, `--unsafe-fixes`): `torch.linalg.inv(A)`, `torch.inverse(A)` and
    `A.inverse()` become `torch.linalg.inv_ex(A).inverse`; `cholesky` forms become
    `torch.linalg.cholesky_ex(A).L` (a positional `upper` passed by keyword); `linalg.solve(A, B)`
    becomes `torch.linalg.solve_ex(A, B).result`. Calls with `out=` and `lu_factor` are left alone.

    ## Known problems
    The decompositions without an `_ex` form have no drop-in fix: the finding says where a wait
    happens so it can be moved out of the step. `linalg.matrix_power` with a negative exponent
    (an inverse) is not reported. `linalg.lu`, `det`, `slogdet`, `qr`, `solve_triangular`,
    `cholesky_solve`, `cholesky_inverse` and `lu_solve` do not sync and are never reported. An
    untyped first argument is reported (these functions only take tensors); the method forms
    need a receiver inference knows to be a tensor.

    ## Verify
    Measured on an H200 (torch 2.11): `linalg.inv`, `torch.inverse`, `A.inverse()`,
    `linalg.cholesky`, `torch.cholesky`, `linalg.solve`, `linalg.lu_factor` and
    `inv_ex(check_errors=True)` take the whole queued `torch.cuda._sleep`; `inv_ex`,
    `cholesky_ex`, `solve_ex` and `lu_factor_ex` return in well under a millisecond. `eigh`,
    `eigvalsh`, `svd`, `svdvals`, `eig`, `lstsq`, `pinv`, `matrix_rank`, `cond`, `matrix_exp`,
    `tensorinv`, `tensorsolve`, `ldl_factor` and `ldl_factor_ex` wait too; `lu`, `det`,
    `slogdet`, `qr`, `solve_triangular`, `cholesky_solve`, `cholesky_inverse`, `lu_solve` and the
    deprecated `torch.lu` do not.
    `set_sync_debug_mode("warn")` reports the copy of `info`.

    ## References
    - https://pytorch.org/docs/stable/generated/torch.linalg.inv_ex.html
    - https://pytorch.org/docs/stable/generated/torch.linalg.cholesky_ex.html
    - DESIGN.md section 4
    """

    code = "TSL405"
    name = "linalg-without-ex"
    message = (
        "this linalg function checks for errors on the host, so it waits for the GPU; use its `_ex` form "
        "(`torch.linalg.inv_ex`, `cholesky_ex`, `solve_ex`, `lu_factor_ex`) and check `info` on the device"
    )

    def visit_Call(self, node: cst.Call) -> None:
        q = self.ctx.qualname(node.func)
        if q in CHECKED:
            first = arg(node, 0, "A") or arg(node, 0, "input")
            if first is not None and may_be_on_gpu(self.ctx.value(first.value)):
                self.report(node, _message(q, CHECKED[q]), fix=self._fix(node, CHECKED[q], list(node.args)))
        elif q in EX_FORMS:
            flag = arg(node, None, "check_errors")
            first = arg(node, 0, "A")
            on_gpu = first is None or may_be_on_gpu(self.ctx.value(first.value))
            if flag is not None and is_true(flag.value) and on_gpu:
                self.report(node, CHECK_ERRORS_MESSAGE)
        elif q in NO_EX:
            first = arg(node, 0, "A") or arg(node, 0, "input")
            if first is not None and may_be_on_gpu(self.ctx.value(first.value)):
                self.report(node, _no_ex_message(q))
        elif q is None:
            method = self.ctx.tensor_method(node)
            if method in METHODS and self.ctx.maybe_gpu_tensor(node.func.value):
                self.report(node, _message(f"Tensor.{method}", METHODS[method]),
                            fix=self._fix(node, METHODS[method], [cst.Arg(node.func.value)] + list(node.args)))
            elif method in NO_EX_METHODS and self.ctx.maybe_gpu_tensor(node.func.value):
                self.report(node, _no_ex_message(f"Tensor.{method}"))

    def _fix(self, call: cst.Call, ex: str, args):
        """`torch.linalg.inv(A)` -> `torch.linalg.inv_ex(A).inverse` (and cholesky, solve)."""
        field = EX_FIELDS.get(ex)
        if field is None or any(a.star for a in args) or fx.keyword(call, "out") is not None or args[0].keyword:
            return None
        parts = [fx.code(args[0].value)]
        for i, a in enumerate(args[1:]):
            if a.keyword is None and ex.endswith("cholesky_ex"):
                parts.append(f"upper={fx.code(a.value)}")  # torch.cholesky(A, upper): keyword-only in cholesky_ex
            else:
                parts.append(fx.arg_code(a))
        torch, imports = fx.torch_name(self.ctx)
        new = f"{torch}.{ex[len('torch.'):]}({', '.join(parts)}).{field}"
        return fx.make(fx.UNSAFE, f"use `{ex}` (errors go to `info` instead of raising)", call, new, imports)


def _message(function: str, alternative: str) -> str:
    return (
        f"`{function}` checks `info` for errors on the host, so it waits for the GPU; "
        f"use `{alternative}` and check `info` on the device"
    )


def _no_ex_message(function: str) -> str:
    return (
        f"`{function}` waits for the GPU (a convergence check or a host-side step) and has no sync-free form; "
        "compute it outside the step, every N steps, or on fewer matrices"
    )
