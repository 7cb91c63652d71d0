"""Cholesky factors that survive numerically indefinite kernels, and solves through them."""
import warnings

import torch


class NotPSDError(RuntimeError):
    pass


def psd_safe_cholesky(A, jitter=None, max_tries=4):
    L, info = torch.linalg.cholesky_ex(A)
    if not torch.any(info):  # SYNC
        return L
    if torch.isnan(A).any():  # SYNC
        raise NotPSDError("matrix contains NaN")
    if jitter is None:
        jitter = 1e-6 if A.dtype == torch.float32 else 1e-8
    Aprime = A.clone()
    jitter_prev = 0.0
    for i in range(max_tries):
        jitter_new = jitter * (10 ** i)
        Aprime.diagonal(dim1=-2, dim2=-1).add_(jitter_new - jitter_prev)
        jitter_prev = jitter_new
        L, info = torch.linalg.cholesky_ex(Aprime)
        if not torch.any(info):  # SYNC
            warnings.warn(f"A not p.d., added jitter of {jitter_new:.1e} to the diagonal")
            return L
    raise NotPSDError(f"not p.d. after adding {jitter_new:.1e} to the diagonal")


def inv_quad_logdet(K, y):
    L = psd_safe_cholesky(K)
    alpha = torch.cholesky_solve(y.unsqueeze(-1), L).squeeze(-1)
    inv_quad = (y * alpha).sum(-1)
    logdet = 2 * L.diagonal(dim1=-2, dim2=-1).log().sum(-1)
    return inv_quad, logdet


def solve(K, B):
    return torch.linalg.solve(K, B)  # SYNC
