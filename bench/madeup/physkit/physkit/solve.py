import torch

from .pde import MLP, Burgers


def resample(pde, model, pool_size=20000, k=2000):
    pool = pde.sample_interior(pool_size)
    res = pde.residual(model, pool).detach().abs().flatten()
    idx = torch.multinomial(res / res.sum(), k, replacement=False)
    return pool[idx]


def solve(iters=5000, n_int=4000, device="cuda", tol=1e-5, resample_every=500):
    pde = Burgers(device=device)
    model = MLP().to(device)  # SYNC
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    xt_int = pde.sample_interior(n_int)
    xt_0, u_0 = pde.initial(256)
    history = []
    for it in range(iters):
        loss_r = pde.residual(model, xt_int).pow(2).mean()
        loss_0 = (model(xt_0) - u_0).pow(2).mean()
        loss = loss_r + 10.0 * loss_0
        opt.zero_grad()
        loss.backward()
        opt.step()
        history.append(loss.detach())
        if loss < tol:  # SYNC
            break
        if (it + 1) % resample_every == 0:
            xt_int = torch.cat([xt_int[: n_int // 2], resample(pde, model, k=n_int // 2)])
    lbfgs = torch.optim.LBFGS(model.parameters(), max_iter=500, line_search_fn="strong_wolfe")

    def closure():
        lbfgs.zero_grad()
        l = pde.residual(model, xt_int).pow(2).mean() + 10.0 * (model(xt_0) - u_0).pow(2).mean()
        l.backward()
        return l

    lbfgs.step(closure)  # SYNC
    return model, torch.stack(history).cpu()  # SYNC
