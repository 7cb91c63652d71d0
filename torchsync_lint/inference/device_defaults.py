"""What a parameter holds where callers may leave it out or come from other files: the join of
what other files pass (``Project.param``), a ``device=None`` handed on as a torch call's device,
and a ``device="cpu"`` default of an entry point no call in the project reaches.

A mixin of the evaluator (through ``summaries.Summaries``): it uses the file's call sites
(``call_sites.CallSites._passed``), the project and ``open_params``.
"""

from __future__ import annotations

from typing import Optional

from torchsync_lint.inference.defs import FunctionInfo
from torchsync_lint.inference.values import DEVICE, UNKNOWN, Value, join


class DeviceDefaults:
    """Mixin of ``evaluate.Evaluator``."""

    def _other_files_pass(self, func: FunctionInfo, name: str, pos: Optional[int],
                          tensors_only: bool = False) -> Optional[Value]:
        """What calls in other files pass for the parameter (``Project.param``; None without a
        project), the function marked open: callers may come later, and the project pass asks."""
        if self.project is None or self.recorded is not None:
            self.open_params.add(func.key)
        return self.project.param(func.key, name, pos, tensors_only) if self.project is not None else None

    def _device_left_out(self, func: FunctionInfo, name: str, pos: Optional[int], declared: Value) -> Value:
        """``def to_tensor(x, device=None): torch.as_tensor(x, device=device)``: the join over the calls
        (here and in other files) of what each passes, the default device where one leaves it out;
        ``declared`` where no call leaves it out, or other files pass what is not known."""
        omitted: list = []
        passed = self._passed(func, name, pos, omitted)
        left_out = Value(DEVICE, device=self.default_device())
        parts = [left_out] if omitted else []
        if passed is not None:
            parts.append(passed)
        if func.parent is None:
            if self.project is None or self.recorded is not None:
                self.open_params.add(func.key)  # other files' calls: asked in the project pass
            if self.project is not None and self.project.has_callers(func.key):
                if self.project.param_left_out(func.key, name, pos):
                    parts.append(left_out)
                else:
                    other = self.project.param(func.key, name, pos)
                    if other.kind == UNKNOWN:
                        return declared
                    parts += [other, left_out]  # (some may leave it out)
        if not any(p is left_out for p in parts):
            return declared
        out = parts[0]
        for p in parts[1:]:
            out = join(out, p)
        return out

    def _entry_device(self, func: FunctionInfo, name: str, pos: Optional[int], default: Value) -> Value:
        """``def schedule(n, device="cpu")`` that no call in the project reaches: an entry point whose
        callers (outside the project) pick the device; the CPU default says nothing about them."""
        private = func.name.startswith("_") and not (func.name.startswith("__") and func.name.endswith("__"))
        if func.parent is not None or private:  # a constructor (`__init__`) is as public as its class
            return default
        if self.project is None:
            # a file on its own: its calls are all there are (in a run, the project pass asks again)
            self.open_params.add(func.key)
            return default.with_(device=None)
        if self.recorded is not None:
            self.open_params.add(func.key)
        got = self.project.param(func.key, name, pos)
        if got.kind != UNKNOWN:
            return got
        if self.project.has_callers(func.key):
            return default
        return default.with_(device=None)
