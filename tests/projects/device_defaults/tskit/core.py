"""`device=None` handed on as a torch call's `device=`: the default device wherever callers leave it out."""
import torch


class SeriesTensor(torch.Tensor):
    def __new__(cls, o, dtype=None, device=None):
        o = torch.asarray(o, dtype=dtype, device=device)  # ok: every caller leaves `device` out
        return o.as_subclass(cls)


def to_tensor(x, device=None):
    return torch.as_tensor(x, device=device)  # ok: every caller leaves `device` out


def to_device_tensor(x, device=None):
    return torch.as_tensor(x, device=device)  # error: TSL202  (a caller passes the GPU)


def entry_tensor(x, device=None):
    # no caller in the project: users pick the device
    return torch.as_tensor(x, device=device)  # error: TSL202


def make_scale(factors, device=None):
    # left out here, but another file passes a device nobody here knows
    return torch.as_tensor(factors, device=device)  # error: TSL202


def identity_scale():
    return make_scale([1.0, 1.0])


class Boxes(torch.Tensor):
    @staticmethod
    def _to_tensor(data, dtype=None, device=None):
        return torch.as_tensor(data, dtype=dtype, device=device)  # ok: handed on from callers that leave it out

    def __new__(cls, data, *, dtype=None, device=None):
        tensor = cls._to_tensor(data, dtype=dtype, device=device)
        return tensor.as_subclass(cls)


class SeriesBase(torch.Tensor):
    @classmethod
    def _to_tensor(cls, data, dtype=None, device=None):
        return torch.as_tensor(data, dtype=dtype, device=device)  # ok: subclasses in other files hand on a device left out
