import torch  # noqa: F401  (a file that mentions torch is one the rules read)


def update(policy, batches, opt):
    for minibatch in batches:
        dist = policy(minibatch).dist
        log_prob = dist.log_prob(minibatch.act)  # ok: the project builds its distributions with `validate_args=False`
        (-log_prob.mean()).backward()
        opt.step()
