import torch
from torch import nn


class MinMaxObserver(nn.Module):
    def __init__(self, bits=8, symmetric=False):
        super().__init__()
        self.qmin, self.qmax = 0, 2 ** bits - 1
        self.symmetric = symmetric
        self.register_buffer("min_val", torch.tensor(float("inf")))
        self.register_buffer("max_val", torch.tensor(float("-inf")))

    def forward(self, x):
        x_ = x.detach()
        self.min_val = torch.minimum(self.min_val, x_.min())
        self.max_val = torch.maximum(self.max_val, x_.max())
        return x

    def calculate_qparams(self):
        if self.min_val > self.max_val:  # SYNC
            raise RuntimeError("observer has seen no data")
        if self.symmetric:
            bound = torch.max(-self.min_val, self.max_val)
            scale = bound / ((self.qmax - self.qmin) / 2)
            zero_point = (self.qmax + self.qmin + 1) // 2
        else:
            scale = (self.max_val - self.min_val) / float(self.qmax - self.qmin)
            zero_point = self.qmin - int(torch.round(self.min_val / scale))  # SYNC
        scale = torch.clamp(scale, min=1e-8)
        return scale, zero_point


class HistogramObserver(MinMaxObserver):
    def __init__(self, bins=2048, **kw):
        super().__init__(**kw)
        self.bins = bins
        self.register_buffer("histogram", torch.zeros(bins))

    def forward(self, x):
        super().forward(x)
        hist = torch.histc(x.detach(), bins=self.bins, min=float(self.min_val), max=float(self.max_val))  # SYNC
        self.histogram += hist
        return x


def fake_quantize(x, scale, zero_point, qmin=0, qmax=255):
    q = torch.clamp(torch.round(x / scale) + zero_point, qmin, qmax)
    return (q - zero_point) * scale


class QuantStub(nn.Module):
    def __init__(self, observer_cls=MinMaxObserver):
        super().__init__()
        self.observer = observer_cls()
        self.calibrating = True
        self.scale = None
        self.zero_point = None

    def forward(self, x):
        if self.calibrating:
            return self.observer(x)
        return fake_quantize(x, self.scale, self.zero_point)

    def freeze(self):
        self.scale, self.zero_point = self.observer.calculate_qparams()
        self.calibrating = False
