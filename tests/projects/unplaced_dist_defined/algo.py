import torch  # noqa: F401  (a file that mentions torch is one the rules read)


def update(policy, batches, opt):
    for minibatch in batches:
        dist = policy(minibatch).dist
        log_prob = dist.log_prob(minibatch.act)  # ok: the project's Flow also has a `log_prob`
        (-log_prob.mean()).backward()
        opt.step()
