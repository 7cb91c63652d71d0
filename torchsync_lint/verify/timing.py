"""The timing oracle (the ground truth), in the verifier's child; ``torch`` is passed in.

``SleepClock`` is a calibrated ``torch.cuda._sleep`` kernel: with the sleep queued, a statement
that syncs keeps the host waiting for it; one that does not returns at once. ``LineTimer`` applies
it per source line: a trace function cuts the run into intervals (one per line event, return and
call of a traced file), keeps the sleep queue topped up, and records each interval's host time, to
compare with a run without the sleep (``line_excess``).
"""

from __future__ import annotations

import statistics
import sys
import time
from typing import Dict, List, Optional, Set, Tuple

from torchsync_lint.verify.stacks import Roots

# ---------------------------------------------------------------------------------------------
# timing


class SleepClock:
    """A ``torch.cuda._sleep`` of a known length, calibrated once per process."""

    def __init__(self, torch, sleep_ms: float = 20.0, cycles_per_ms: Optional[float] = None) -> None:
        self.torch = torch
        cuda = torch.cuda
        if cycles_per_ms is None:  # calibrate with CUDA events (exact device time)
            cuda._sleep(1000)
            cuda.synchronize()
            cycles = 2_000_000
            ms = 0.0
            for _ in range(6):
                ms = _slept_ms(cuda, cycles)
                if ms >= 5.0:
                    break
                cycles *= 4
            cycles_per_ms = cycles / max(ms, 1e-3)
            # another process's kernels on the GPU (the snippet children calibrate side by side) and
            # a clock still ramping up only lengthen a measurement: the fastest of three is the rate
            for _ in range(2):
                cycles_per_ms = max(cycles_per_ms, cycles / max(_slept_ms(cuda, cycles), 1e-3))
        self.cycles_per_ms = cycles_per_ms
        self.cycles = int(self.cycles_per_ms * sleep_ms)
        self.sleep_s = sleep_ms / 1000.0
        self.keep_s = 0.75 * self.sleep_s
        self.free_at = 0.0
        self.enqueued = 0

    def reset(self) -> None:
        self.torch.cuda.synchronize()
        self.free_at = 0.0

    def scaled(self, sleep_ms: float) -> "SleepClock":
        """The same calibration with another sleep length."""
        return SleepClock(self.torch, sleep_ms, self.cycles_per_ms)

    def top_up(self, now: float) -> None:
        """Keep at least three quarters of a sleep queued ahead of the host."""
        if self.free_at - now < self.keep_s:
            self.torch.cuda._sleep(self.cycles)
            self.enqueued += 1
            self.free_at = max(self.free_at, now) + self.sleep_s


class LineTimer:
    """Host time per interval of a traced file's line, with or without the sleep kept queued."""

    def __init__(self, traced: Set[str], roots: Roots, clock: Optional[SleepClock] = None) -> None:
        self.traced = traced
        self.roots = roots
        self.clock = clock
        self.durations: Dict[Tuple[str, int], List[float]] = {}
        self._codes: Dict[object, Optional[str]] = {}
        self._cur: Optional[Tuple[str, int]] = None
        self._t = 0.0

    def _path(self, code) -> Optional[str]:
        try:
            return self._codes[code]
        except KeyError:
            path, _ = self.roots.resolve(code.co_filename)
            got = path if path in self.traced else None
            self._codes[code] = got
            return got

    def _switch(self, owner: Optional[Tuple[str, int]]) -> None:
        now = time.perf_counter()
        if self._cur is not None:
            self.durations.setdefault(self._cur, []).append(now - self._t)
        if self.clock is not None:
            self.clock.top_up(now)
        self._cur = owner
        self._t = time.perf_counter()

    def _owner(self, frame) -> Optional[Tuple[str, int]]:
        while frame is not None:
            path = self._path(frame.f_code)
            if path is not None:
                return (path, frame.f_lineno)
            frame = frame.f_back
        return None

    def _global(self, frame, event, arg):
        if event == "call":
            path = self._path(frame.f_code)
            if path is not None:
                self._switch((path, frame.f_lineno))
                return self._local
        return None

    def _local(self, frame, event, arg):
        if event == "line":
            self._switch((self._path(frame.f_code), frame.f_lineno))
        elif event == "return":
            self._switch(self._owner(frame.f_back))
        return self._local

    def run(self, fn):
        if self.clock is not None:
            self.clock.reset()
        self._cur, self._t = None, time.perf_counter()
        sys.settrace(self._global)
        try:
            return fn()
        finally:
            sys.settrace(None)
            self._switch(None)
            if self.clock is not None:
                self.clock.torch.cuda.synchronize()


def line_excess(base_runs: List[Dict], sleep_runs: List[Dict]) -> List[list]:
    """[path, line, [excess_us per interval], [base_us per interval]]: median over repetitions."""
    keys = set()
    for r in base_runs + sleep_runs:
        keys.update(r)
    out = []
    for key in sorted(keys, key=lambda k: (k[0] or "", k[1])):
        per_index: Dict[int, List[float]] = {}
        base_index: Dict[int, List[float]] = {}
        for base, slept in zip(base_runs, sleep_runs):
            b, s = base.get(key, []), slept.get(key, [])
            if not s:
                continue
            ref = statistics.median(b) if b else 0.0
            for i, dur in enumerate(s):
                bi = b[i] if len(b) == len(s) else ref
                per_index.setdefault(i, []).append(dur - bi)
                base_index.setdefault(i, []).append(bi)
        if per_index:
            excess = [round(statistics.median(per_index[i]) * 1e6, 1) for i in sorted(per_index)]
            base = [round(statistics.median(base_index[i]) * 1e6, 1) for i in sorted(base_index)]
            out.append([key[0], key[1], excess, base])
    return out


def _slept_ms(cuda, cycles: int) -> float:
    """Device time of one ``torch.cuda._sleep(cycles)``, measured with CUDA events."""
    start, end = cuda.Event(enable_timing=True), cuda.Event(enable_timing=True)
    start.record()
    cuda._sleep(cycles)
    end.record()
    end.synchronize()
    return start.elapsed_time(end)
