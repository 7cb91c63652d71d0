"""Record every host-device sync that one library's code makes, attributed to that library's lines.

Generalised from bench/realcode_record.py (torchvision) to any package. Three oracles (DESIGN.md 4):

- ``warning``: ``torch.cuda.set_sync_debug_mode("warn")`` raises a Python warning per sync; a
  ``showwarning`` hook walks the stack from the innermost frame outwards to the innermost frame
  inside the target package (torch, the standard library, other libraries and the package's own
  ``__torch_function__`` dispatchers are walked past: the sync belongs to the package line that
  called them).
- ``stderr``: ops reached through ``torch.ops.*`` print the debug-mode message to fd 2; a line
  tracer on the package's frames attributes each new message to the package line that ran last.
  Checked against the stack-based oracles (``validation`` in the output).
- ``trace``: ``torch.cuda._gpu_trace`` device/stream/event synchronisation callbacks.

An event whose innermost non-torch frame lies in another library (transformers under
sentence-transformers, timm under segmentation-models-pytorch) keeps that frame as ``inner``: the
package line synced only through a callee the linter of this package cannot see. An event with no
package frame on the stack (``backward()``, the optimizer, the harness) is filed under ``<harness>``.
The same tracer records which package lines executed while recording was on.
"""

from __future__ import annotations

import collections
import os
import sys
import sysconfig
import tempfile
from typing import Dict, List, Optional, Sequence, Tuple

SYNC_WORDS = "synchronizing CUDA operation"
FAKE_WORDS = "dry-run sync"  # CPU dry runs emit this to exercise the plumbing
DISPATCH_NAMES = {"__torch_function__", "__torch_dispatch__"}  # a package's tensor-subclass hooks
Loc = Tuple[str, int]


class SyncRecorder:
    """Collects sync events and executed package lines while ``active``."""

    def __init__(self, pkg_dirs: Sequence[str], torch_dir: str) -> None:
        # (prefix of the package folder, its site-packages root): paths keep "pkg/..."
        self.pkgs = [(d.rstrip(os.sep) + os.sep, os.path.dirname(d.rstrip(os.sep)) + os.sep) for d in pkg_dirs]
        self.torch_prefix = torch_dir.rstrip(os.sep) + os.sep
        self.stdlib_prefix = sysconfig.get_paths()["stdlib"] + os.sep
        self.path_roots = sorted({os.path.abspath(p) + os.sep for p in sys.path if p and os.path.isdir(p)},
                                 key=len, reverse=True)
        self.skip_codes = set()  # code objects of our own hooks, which stand in for torch
        self._rel_cache: Dict[str, str] = {}
        self.phase = "setup"
        self.events: collections.Counter = collections.Counter()
        self.executed: Dict[str, set] = collections.defaultdict(set)
        self.samples: Dict[tuple, str] = {}
        self.validation = collections.Counter()
        self.disagreements: List[dict] = []
        self.active = False
        self.last_loc: Optional[Loc] = None  # the package line that ran last (stderr oracle)
        self.last_frame = None
        self.err_fd = -1
        self.err_pos = 0
        self.saved_fd2 = -1
        self.other_stderr: List[str] = []

    # ---- paths -------------------------------------------------------------------------------
    def rel(self, filename: str) -> str:
        """'pkg/...' for the target package's files, '' otherwise (cached)."""
        r = self._rel_cache.get(filename)
        if r is None:
            r = ""
            for prefix, root in self.pkgs:
                if filename.startswith(prefix):
                    r = filename[len(root):].replace(os.sep, "/")
                    break
            self._rel_cache[filename] = r
        return r

    def outside_name(self, filename: str) -> str:
        """A non-package file as 'lib/file.py' relative to its sys.path entry, else its base name."""
        for root in self.path_roots:
            if filename.startswith(root):
                return filename[len(root):].replace(os.sep, "/")
        return "<harness>/" + os.path.basename(filename)

    def _skipped(self, frame) -> bool:
        code = frame.f_code
        fn = code.co_filename
        if code in self.skip_codes or fn.startswith(self.torch_prefix) or fn.startswith("<"):
            return True
        return fn.startswith(self.stdlib_prefix) and "-packages" not in fn

    def _chain(self, frame) -> List[Loc]:
        chain = []
        while frame is not None:
            r = self.rel(frame.f_code.co_filename)
            if r and frame.f_code.co_name not in DISPATCH_NAMES:
                chain.append((r, frame.f_lineno))
            frame = frame.f_back
        return chain

    def attribute_stack(self, frame) -> Tuple[Loc, List[Loc], str, str]:
        """(innermost package line, package chain, torch function it went through, inner other-library line)."""
        via, inner = "", ""
        while frame is not None and self._skipped(frame):
            fn = frame.f_code.co_filename
            if fn.startswith(self.torch_prefix) and not via:
                via = "torch/%s:%s" % (fn[len(self.torch_prefix):], frame.f_code.co_name)
            frame = frame.f_back
        if frame is None:
            return ("<unknown>", 0), [], via, inner
        if not self.rel(frame.f_code.co_filename):
            inner = "%s:%d" % (self.outside_name(frame.f_code.co_filename), frame.f_lineno)
        chain = self._chain(frame)
        if not chain:
            return ("<harness>", frame.f_lineno), [], via, inner
        return chain[0], chain, via, inner

    # ---- event recording ---------------------------------------------------------------------
    def record(self, oracle: str, loc: Loc, chain: List[Loc], via: str, inner: str = "", what: str = "") -> None:
        if not self.active:
            return
        key = (self.phase, loc[0], loc[1], oracle, tuple(chain[1:4]), via, inner)
        self.events[key] += 1
        if what and key not in self.samples:
            self.samples[key] = what[:200]

    def on_stack_event(self, oracle: str, what: str, frame=None) -> None:
        if not self.active:
            return
        frame = frame or sys._getframe(1)
        loc, chain, via, inner = self.attribute_stack(frame)
        if not loc[0].startswith("<") and not inner:
            # validate the line tracer used for the stderr oracle against the stack
            traced = self.last_loc
            self.validation["agree" if traced == loc else "disagree"] += 1
            if traced != loc and len(self.disagreements) < 20:
                self.disagreements.append({"stack": loc, "tracer": traced, "oracle": oracle})
        self.record(oracle, loc, chain or [loc], via, inner, what)

    def showwarning(self, message, category, filename, lineno, file=None, line=None):
        text = str(message)
        if SYNC_WORDS in text or FAKE_WORDS in text:
            # start above warnings._showwarnmsg: a package's own showwarning wrapper (monai installs
            # one) sits between it and this hook and is not where the sync happened
            frame = sys._getframe(1)
            while frame is not None and not (frame.f_code.co_name == "_showwarnmsg"
                                             and frame.f_code.co_filename.startswith(self.stdlib_prefix)):
                frame = frame.f_back
            self.on_stack_event("warning", text, frame.f_back if frame is not None else sys._getframe(1))

    def trace_callback(self, kind: str):
        def callback(*args):
            self.on_stack_event("trace", kind)
        self.skip_codes.add(callback.__code__)
        return callback

    def install(self, torch, cuda: bool) -> None:
        """Hook warnings (always shown), and on CUDA the trace callbacks and the debug mode."""
        import warnings

        warnings.simplefilter("always")
        warnings.showwarning = self.showwarning
        self.skip_codes.add(self.showwarning.__func__.__code__)
        if cuda:
            from torch.cuda import _gpu_trace

            torch._C._activate_gpu_trace()
            _gpu_trace.register_callback_for_device_synchronization(self.trace_callback("device-sync"))
            _gpu_trace.register_callback_for_stream_synchronization(self.trace_callback("stream-sync"))
            _gpu_trace.register_callback_for_event_synchronization(self.trace_callback("event-sync"))
            torch.cuda.set_sync_debug_mode("warn")

    # ---- stderr oracle -----------------------------------------------------------------------
    def start_stderr_capture(self) -> None:
        sys.stderr.flush()
        self.saved_fd2 = os.dup(2)
        fd, _path = tempfile.mkstemp(prefix="tsl-stderr-")
        os.dup2(fd, 2)
        self.err_fd = fd
        self.err_pos = 0

    def stop_stderr_capture(self) -> None:
        if self.saved_fd2 < 0:
            return
        sys.stderr.flush()
        self.poll_stderr()
        os.dup2(self.saved_fd2, 2)
        os.close(self.saved_fd2)
        self.saved_fd2 = -1
        for text in self.other_stderr[-20:]:
            sys.stderr.write("[stderr] " + text + "\n")

    def poll_stderr(self) -> None:
        """Attribute sync messages written to fd 2 since the last poll to the last traced line."""
        if self.err_fd < 0:
            return
        size = os.fstat(self.err_fd).st_size
        if size <= self.err_pos:
            return
        data = os.pread(self.err_fd, size - self.err_pos, self.err_pos).decode("utf-8", "replace")
        self.err_pos = size
        n = data.count(SYNC_WORDS) + data.count(FAKE_WORDS)
        for text in data.splitlines():
            if text.strip() and SYNC_WORDS not in text and FAKE_WORDS not in text:
                self.other_stderr.append(text[:300])
        if not n:
            return
        if self.last_loc is None:
            loc, chain = ("<harness>", 0), []
        else:
            outer = self._chain(self.last_frame.f_back) if self.last_frame is not None else []
            loc, chain = self.last_loc, [self.last_loc] + outer
        for _ in range(n):
            self.record("stderr", loc, chain, "torch.ops", "", "stderr message")

    # ---- line tracer (package frames only) ---------------------------------------------------
    def global_trace(self, frame, event, arg):
        if not self.rel(frame.f_code.co_filename):
            return None
        self.poll_stderr()  # anything pending ran under the caller's line
        return self.local_trace

    def local_trace(self, frame, event, arg):
        if event == "line":
            self.poll_stderr()
            r = self.rel(frame.f_code.co_filename)
            if self.active:
                self.executed[r].add(frame.f_lineno)
            if frame.f_code.co_name not in DISPATCH_NAMES:  # a dispatcher's op belongs to its caller
                self.last_loc = (r, frame.f_lineno)
                self.last_frame = frame
        elif event == "return":
            self.poll_stderr()
            outer = frame.f_back
            while outer is not None and (not self.rel(outer.f_code.co_filename)
                                         or outer.f_code.co_name in DISPATCH_NAMES):
                outer = outer.f_back
            self.last_frame = outer
            self.last_loc = (self.rel(outer.f_code.co_filename), outer.f_lineno) if outer else None
        return self.local_trace

    def flush(self) -> None:
        """Attribute what the harness itself (backward, optimizer step) printed."""
        self.last_loc, self.last_frame = None, None
        self.poll_stderr()

    def start(self) -> None:
        self.start_stderr_capture()
        sys.settrace(self.global_trace)

    def stop(self) -> None:
        sys.settrace(None)
        self.stop_stderr_capture()

    # ---- per-workload results ----------------------------------------------------------------
    def clear(self) -> None:
        for table in (self.events, self.executed, self.samples, self.validation, self.disagreements):
            table.clear()

    def entry(self) -> dict:
        """Events and executed lines in the schema of bench/data/torchvision-*-syncs.json."""
        events = []
        for key, n in sorted(self.events.items()):
            ph, f, ln, o, ch, via, inner = key
            ev = {"phase": ph, "file": f, "line": ln, "oracle": o, "chain": [list(c) for c in ch],
                  "via": via, "count": n}
            if inner:
                ev["inner"] = inner
            if key in self.samples:
                ev["what"] = self.samples[key]
            events.append(ev)
        return {
            "events": events,
            "executed": {f: sorted(v) for f, v in sorted(self.executed.items())},
            "validation": dict(self.validation),
            "disagreements": self.disagreements[:],
        }
