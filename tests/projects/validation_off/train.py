import torch

from policy import Policy

torch.distributions.Distribution.set_default_validate_args(False)


def train(policy: Policy, batches, opt):
    for mu, log_std, action in batches:
        loss = -policy(mu, log_std, action).mean()
        loss.backward()
        opt.step()
