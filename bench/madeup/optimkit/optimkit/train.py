import torch

from .optimizers import Lamb, clip_and_log, cosine_with_warmup


def train(model, loader, device="cuda", steps=1000, warmup=100, lbfgs_refine=False):
    model = model.to(device)  # SYNC
    opt = Lamb(model.parameters(), lr=1e-3)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: cosine_with_warmup(s, warmup, steps))
    norms = []
    step = 0
    while step < steps:
        for x, y in loader:
            x, y = x.to(device), y.to(device)  # SYNC
            loss = torch.nn.functional.mse_loss(model(x), y)
            opt.zero_grad()
            loss.backward()
            clip_and_log(model, 1.0, norms)
            opt.step()
            sched.step()
            step += 1
            if step >= steps:
                break
    if lbfgs_refine:
        lbfgs = torch.optim.LBFGS(model.parameters(), lr=0.1, max_iter=20)
        x, y = next(iter(loader))
        x, y = x.to(device), y.to(device)  # SYNC

        def closure():
            lbfgs.zero_grad()
            out = torch.nn.functional.mse_loss(model(x), y)
            out.backward()
            return out

        for _ in range(5):
            lbfgs.step(closure)  # SYNC
    return norms
