import math

import torch
from torch.optim import Optimizer


class Lamb(Optimizer):
    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-6, weight_decay=0.0):
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay)
        super().__init__(params, defaults)

    @torch.no_grad()
    def step(self, closure=None):
        loss = None
        if closure is not None:
            with torch.enable_grad():
                loss = closure()
        for group in self.param_groups:
            beta1, beta2 = group["betas"]
            for p in group["params"]:
                if p.grad is None:
                    continue
                grad = p.grad
                state = self.state[p]
                if len(state) == 0:
                    state["step"] = torch.tensor(0.0)
                    state["exp_avg"] = torch.zeros_like(p)
                    state["exp_avg_sq"] = torch.zeros_like(p)
                state["step"] += 1
                step = state["step"].item()
                exp_avg, exp_avg_sq = state["exp_avg"], state["exp_avg_sq"]
                exp_avg.mul_(beta1).add_(grad, alpha=1 - beta1)
                exp_avg_sq.mul_(beta2).addcmul_(grad, grad, value=1 - beta2)
                bc1 = 1 - beta1 ** step
                bc2 = 1 - beta2 ** step
                update = (exp_avg / bc1) / ((exp_avg_sq / bc2).sqrt() + group["eps"])
                if group["weight_decay"] != 0:
                    update.add_(p, alpha=group["weight_decay"])
                w_norm = p.norm(2)
                g_norm = update.norm(2)
                if w_norm == 0 or g_norm == 0:  # SYNC
                    trust = 1.0
                else:
                    trust = w_norm / g_norm
                p.add_(update, alpha=-group["lr"] * trust)  # SYNC
        return loss


class Lion(Optimizer):
    def __init__(self, params, lr=1e-4, betas=(0.9, 0.99), weight_decay=0.0):
        super().__init__(params, dict(lr=lr, betas=betas, weight_decay=weight_decay))

    @torch.no_grad()
    def step(self, closure=None):
        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is None:
                    continue
                state = self.state[p]
                if "exp_avg" not in state:
                    state["exp_avg"] = torch.zeros_like(p)
                exp_avg = state["exp_avg"]
                b1, b2 = group["betas"]
                p.mul_(1 - group["lr"] * group["weight_decay"])
                update = exp_avg * b1 + p.grad * (1 - b1)
                p.add_(torch.sign(update), alpha=-group["lr"])
                exp_avg.mul_(b2).add_(p.grad, alpha=1 - b2)


def cosine_with_warmup(step, warmup, total):
    if step < warmup:
        return step / max(1, warmup)
    progress = (step - warmup) / max(1, total - warmup)
    return 0.5 * (1 + math.cos(math.pi * progress))


def grad_norm(parameters):
    norms = [p.grad.detach().norm(2) for p in parameters if p.grad is not None]
    return torch.stack(norms).norm(2) if norms else torch.tensor(0.0)


def clip_and_log(model, max_norm, log):
    total = grad_norm(model.parameters())
    if total > max_norm:  # SYNC
        for p in model.parameters():
            if p.grad is not None:
                p.grad.mul_(max_norm / (total + 1e-6))
    log.append(total.item())  # SYNC
