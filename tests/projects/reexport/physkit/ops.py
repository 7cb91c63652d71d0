from .backend import lib


def torch_ish(x):
    return lib.nonzero(x)  # ok: `lib` may be any backend's module; only a name `torch` is taken for torch
