import torch

from policy import ActorPolicy


def update(policy: ActorPolicy, batches, opt, runs):
    for minibatch in batches:
        dist = policy(minibatch).dist
        log_prob = dist.log_prob(minibatch.act)  # ok: the project builds its distributions with `validate_args=False`
        ok = dist.log_prob(0.5)  # ok: a Python number is checked on the host
        cpu = dist.log_prob(torch.zeros(3))  # ok: a CPU sample is checked on the host
        loss = -(log_prob * minibatch.adv).mean() + ok + cpu.sum()
        loss.backward()
        opt.step()
    for r in runs:
        print(r.stats.cdf(0.5))  # ok: only `log_prob` is a distribution's alone
