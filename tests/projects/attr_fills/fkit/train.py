import torch
from torch import nn

from fkit.meters import HostCount, HostMeter, Meter


class Counted(Meter):
    def add(self, n):
        self.total += n  # a count added to the base class's tensor

    def empty(self):
        return bool(self.total == 0)  # error: TSL004


class Hosted(HostCount):
    def add(self, n):
        self.total += n

    def empty(self):
        return bool(self.total == 0)  # ok: the base class keeps it on the CPU


def fit(model: nn.Module, batches, opt):
    meter, host = Meter("cuda"), HostMeter()
    counted, hosted = Counted("cuda"), Hosted()
    for x, y in batches:
        loss = (model(x.cuda(non_blocking=True)) - y.cuda(non_blocking=True)).pow(2).mean()
        loss.backward()
        opt.step()
        meter.update(loss)
        host.update("mse", loss)
        counted.add(len(y))
        hosted.add(3)
        meter.first()  # logged every step
        meter.latest()
        host.report()
        counted.empty()
        hosted.empty()
