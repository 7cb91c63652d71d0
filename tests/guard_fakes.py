"""Test helpers for the guard without CUDA: a stand-in syncing op and a backend without CUDA hooks."""

import os
import warnings

import torch
from torch.overrides import handle_torch_function, has_torch_function_unary

from torchsync_lint.guard import hooks
from torchsync_lint.guard.guard import TorchBackend

FAKE_OP = '''
def fake_sync(t):
    """Stands for a syncing torch op: overridable, and warns like the sync debug mode."""
    if has_torch_function_unary(t):
        return handle_torch_function(fake_sync, (t,), t)
    warnings.warn("fake_sync: called a synchronizing CUDA operation", UserWarning)
    return t
'''
# compiled as if it were a file inside torch, so that its frame is library code like a real op's
_ns = {"has_torch_function_unary": has_torch_function_unary, "handle_torch_function": handle_torch_function,
       "warnings": warnings}
exec(compile(FAKE_OP, os.path.join(os.path.dirname(torch.__file__), "_fake_sync_op.py"), "exec"), _ns)
fake_sync = _ns["fake_sync"]


class CpuBackend(TorchBackend):
    """The guard's own hooks without the CUDA ones (no debug mode or GPU trace on a CPU build)."""

    def unavailable(self):
        self.torch = torch
        return None

    def install(self):
        hooks.install(self.torch, cuda=False)

    def uninstall(self):
        hooks.uninstall(self.torch)


