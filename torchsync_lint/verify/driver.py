"""CUDA's driver and the first device's primary context, started on a thread while torch imports.

A snippet child's start-up is a serial chain: the torch import (seconds), then CUDA's start (the
driver, then the device's context: most of a second on an H100), then the linted packages. The
driver needs no torch: through ``ctypes`` (which lets go of the GIL during a foreign call) a
thread starts it and retains the device's primary context while the main thread imports torch;
torch's runtime then finds both ready (the runtime API uses that same primary context). Off in
predict mode, in a forked child (``forkserver``: no CUDA before the fork) and with
``TORCHSYNC_VERIFY_NO_DRIVER_WARMUP=1``; a machine without the driver or a device just skips it.
"""

from __future__ import annotations

import os
import threading
import time
from typing import Dict, Optional


class Warmup:
    def __init__(self) -> None:
        self.seconds: Optional[float] = None
        self.error: Optional[str] = None
        self._thread = threading.Thread(target=self._run, name="tsl-cuda-driver", daemon=True)

    def start(self) -> "Warmup":
        self._thread.start()
        return self

    def _run(self) -> None:
        t0 = time.monotonic()
        try:
            import ctypes

            cuda = ctypes.CDLL("libcuda.so.1")
            dev, ctx = ctypes.c_int(0), ctypes.c_void_p()
            for step, call in (("cuInit", lambda: cuda.cuInit(0)),
                               ("cuDeviceGet", lambda: cuda.cuDeviceGet(ctypes.byref(dev), 0)),
                               ("cuDevicePrimaryCtxRetain",
                                lambda: cuda.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), dev))):
                code = call()
                if code != 0:
                    self.error = f"{step} returned {code}"
                    return
        except (OSError, AttributeError) as exc:  # no driver library here
            self.error = str(exc)[:200]
        finally:
            self.seconds = round(time.monotonic() - t0, 3)

    def join(self, timeout: float = 60.0) -> Dict[str, object]:
        """Wait for it (torch's own start would wait on the driver anyway); what it measured."""
        t0 = time.monotonic()
        self._thread.join(timeout)
        out: Dict[str, object] = {"driver_s": self.seconds, "driver_wait_s": round(time.monotonic() - t0, 3)}
        if self.error:
            out["driver_error"] = self.error
        return out


def wanted(mode: str) -> bool:
    return mode == "gpu" and os.environ.get("TORCHSYNC_VERIFY_NO_DRIVER_WARMUP") != "1"
