import torch

from propkit.stats import RunningMean


def fit(model, batches, opt):
    meter = RunningMean()
    for x in batches:
        loss = model(x.cuda()).square().mean()  # error: TSL204
        loss.backward()
        opt.step()
        meter.update(loss.detach())
        if meter.mean > 10.0:  # error: TSL302
            break
        if meter.name == "mean":  # ok: a str property
            pass
    return meter
