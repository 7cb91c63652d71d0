"""What the guard reports: one ``SyncEvent`` per host-device sync, located at the user's own line.

The user's line is the innermost frame outside torch, the standard library and torchsync-lint
itself (a library such as torchvision counts as the user's side: it is code someone can change).
"""

from __future__ import annotations

import os
import sys
import sysconfig
import threading
from dataclasses import asdict, dataclass, field
from typing import Dict, List, Optional, Tuple

PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.realpath(__file__)))  # torchsync_lint/
RUNNERS = ("_pytest", "pytest", "pluggy", "IPython", "ipykernel", "xdist")  # test runners and shells: not the user's
RUNNER_SCRIPTS = ("pytest", "py.test", "pytest.exe", "ipython", "jupyter")  # their console scripts (`__main__`)


@dataclass
class Frame:
    path: str
    line: int
    function: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line} in {self.function}"


@dataclass
class SyncEvent:
    """One sync: where (the user's frame), what (the torch op), how long the host waited."""

    path: Optional[str]  # None when no frame was outside torch and the standard library
    line: Optional[int]
    function: str
    op: str  # e.g. "Tensor.item", "torch.nonzero", "torch.cuda.synchronize"
    oracles: List[str]  # "gpu-trace", "debug-mode", "pageable-copy", "empty-cache"
    stall_us: Optional[float]
    code: str = "TSL900"  # the linter's code for that line; TSL900: a sync no rule predicted
    thread: str = ""
    stack: List[Frame] = field(default_factory=list)  # user-side frames, innermost first
    allowed: bool = False
    step: Optional[int] = None  # set by `torchsync-lint trace` (optimizer steps so far)

    @property
    def where(self) -> str:
        return f"{self.path}:{self.line}" if self.path else "<no user frame>"

    def summary(self) -> str:
        stall = f"{self.stall_us:.0f} us" if self.stall_us is not None else "unknown"
        return f"{self.where}: {self.op or 'a torch call'} synchronised with the GPU ({self.code}, host stall {stall})"

    def describe(self) -> str:
        """The summary with the user-side stack, for error messages and test failures."""
        lines = [self.summary()]
        if self.stack:
            lines.append("user stack (innermost first):")
            lines.extend(f"  {fr}" for fr in self.stack[:12])
        return "\n".join(lines)

    def to_json(self) -> Dict:
        out = asdict(self)
        out["stack"] = [asdict(f) for f in self.stack]
        return out


class Roots:
    """Which files are not the user's: torch, the standard library and this package."""

    def __init__(self, torch_dir: Optional[str]) -> None:
        own = {PACKAGE_DIR}
        if torch_dir:
            own.add(os.path.realpath(torch_dir))
        for name in RUNNERS:
            mod = sys.modules.get(name)
            if mod is not None and getattr(mod, "__file__", None):
                own.add(os.path.dirname(os.path.realpath(mod.__file__)))
        self.runner_files = set()
        main = sys.modules.get("__main__")
        main_file = getattr(main, "__file__", None) or (sys.argv[0] if sys.argv else "")
        if main_file and (os.path.basename(main_file) in RUNNER_SCRIPTS or "_pytest" in sys.modules and
                          os.path.basename(os.path.dirname(os.path.realpath(main_file))) == "pytest"):
            self.runner_files.add(os.path.realpath(main_file))
        lib = set(own)
        for key in ("stdlib", "platstdlib"):
            p = sysconfig.get_paths().get(key)
            if p:
                lib.add(os.path.realpath(p))
        site = set()
        for key in ("purelib", "platlib"):
            p = sysconfig.get_paths().get(key)
            if p:
                site.add(os.path.realpath(p))
        self.own = tuple(sorted(own))
        self.library = tuple(sorted(lib))
        self.site = tuple(sorted(site))
        self._cache: Dict[str, Tuple[str, bool]] = {}

    @staticmethod
    def _under(path: str, root: str) -> bool:
        return path == root or path.startswith(root.rstrip(os.sep) + os.sep)

    def resolve(self, filename: str) -> Tuple[str, bool]:
        """(real path, is library)."""
        got = self._cache.get(filename)
        if got is None:
            if not filename or filename.startswith("<frozen") or filename.startswith("<built-in"):
                got = (filename, True)
            elif filename.startswith("<"):
                got = (filename, False)
            else:
                path = os.path.realpath(filename)
                lib = path in self.runner_files or any(self._under(path, r) for r in self.library)
                if lib and path not in self.runner_files and any(self._under(path, s) for s in self.site):
                    # site-packages inside the stdlib folder hold third-party code: the user's side
                    lib = any(self._under(path, r) for r in self.own)
                got = (path, lib)
            self._cache[filename] = got
        return got


_STACKS: Dict[tuple, Tuple[tuple, List[Frame]]] = {}  # a sync site fires again and again with the same stack


def stack_key(frame, extra: tuple = ()) -> tuple:
    """A stack's identity, cheap to hash: each frame's code object (by id) and instruction,
    innermost first. A cache keyed by it holds the code objects too (``codes_of``), so no id is
    reused while its entry lives."""
    key = []
    f, depth = frame, 0
    while f is not None and depth < 400:
        key.append(id(f.f_code))
        key.append(f.f_lasti)
        f = f.f_back
        depth += 1
    key.extend(extra)
    return tuple(key)


def codes_of(frame) -> tuple:
    out = []
    f, depth = frame, 0
    while f is not None and depth < 400:
        out.append(f.f_code)
        f = f.f_back
        depth += 1
    return tuple(out)


def user_frames(frame, roots: Roots, limit: int = 64) -> List[Frame]:
    """The frames outside the library roots, innermost first. Cached by the stack (``stack_key``):
    a training loop's sync site repeats its stack every step, so one walk of cheap attribute reads
    and a lookup, then a copy of the list."""
    k = stack_key(frame, (id(roots),))
    got = _STACKS.get(k)
    if got is not None:
        return list(got[1])
    out: List[Frame] = []
    f, depth = frame, 0
    while f is not None and depth < 400 and len(out) < limit:
        code = f.f_code
        path, lib = roots.resolve(code.co_filename)
        if not lib:
            out.append(Frame(path, f.f_lineno, code.co_name))
        f = f.f_back
        depth += 1
    if len(_STACKS) > 4096:
        _STACKS.clear()
    _STACKS[k] = (codes_of(frame), out)
    return list(out)


def thread_label() -> str:
    t = threading.current_thread()
    if isinstance(t, threading._DummyThread):  # a thread torch started in C++ (the autograd engine)
        return f"native thread {threading.get_ident()}"
    return t.name


def frame_of_thread(ident: int):
    """The current Python frame of another thread (for syncs done on its behalf)."""
    return sys._current_frames().get(ident)
