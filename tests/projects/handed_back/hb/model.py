import torch
from torch import nn

from hb.base import AutoRegressive, apply_each


class Model(AutoRegressive):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(4, 4)

    def forward(self, x):
        x = self.lin(x)

        def decode_one(idx, prev):
            col = x[:, [idx]]  # error: TSL201
            return col.sum() + prev

        def host_only(t):
            if t.sum() > 0:  # ok: the base class hands it a CPU tensor
                return t
            return -t

        def check(t, limit):
            if t.max() > limit:  # error: TSL302
                return t
            return -t

        out = self.decode_autoregressive(decode_one, 3, x.sum())
        self.on_host(host_only)
        apply_each(check, [x, out])
        return out
