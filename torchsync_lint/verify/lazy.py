"""``torch._dynamo``, imported by a package only to have it, put off until used (the verifier's children).

A snippet child imports the linted package before its tasks, and that import is on ``--verify``'s
critical path. torchvision imports ``torch._dynamo`` (``from torch._dynamo.utils import
is_compile_supported`` in ``ops/roi_align.py``, called only in deterministic mode): 80% of its
import (1.2 of 1.5 s on a CPU box, 4.1 of 4.4 s on an H100 machine), for a function no snippet
calls. Here a module under ``PREFIXES`` is created at its import but its code does not run
(attributes the import machinery set, ``__spec__``, ``__path__``, a submodule, are there).
``from M import f``, where ``f`` is a function that ``M`` defines once at its top level (``def f(``
at column 0, no other binding of that name there), gets a stand-in that calls the real ``M.f``, so
that the import statement itself runs nothing. Any other use (a constant, a class, a submodule's
attribute, a name bound twice, a dunder, a stand-in's first call) ends the laziness: every lazy
module is then imported for real, in a plain import's order, and each lazy module object forwards
to its real module. One decorator is put off too: ``torch.compiler.disable`` / ``torch._dynamo.disable``
on a function (``_deferred``; torchvision's ``tv_tensors.wrap``). Values are the real module's; only the identity of a stand-in (``f is M.f``)
and of a lazy module object differ.

``install()`` puts the finder first on ``sys.meta_path`` (once per process);
``TORCHSYNC_VERIFY_EAGER_IMPORTS=1`` leaves imports as they are. Only the verifier's snippet children
(and its fork server) install it: the guard and ``trace`` run the user's program as it is.
"""

from __future__ import annotations

import functools
import importlib
import importlib.abc
import inspect
import importlib.machinery
import os
import re
import sys
import types
from typing import Dict, Optional, Sequence, Tuple

PREFIXES: Tuple[str, ...] = ("torch._dynamo",)
ENV_OFF = "TORCHSYNC_VERIFY_EAGER_IMPORTS"


def wanted() -> bool:
    return os.environ.get(ENV_OFF) != "1"


class _Lazy(types.ModuleType):
    """A module whose code has not run yet."""

    def __getattr__(self, name: str):
        if name == "__path__":  # the import machinery asks whether this is a package: it is not
            raise AttributeError(name)
        if not (name.startswith("__") and name.endswith("__")):
            got = _deferred(self, name) or _standin(self, name)
            if got is not None:
                return got
        return getattr(real(self), name)


class _Forward(types.ModuleType):
    """A lazy module after the real one was imported: every attribute is the real module's."""

    def __getattr__(self, name: str):
        return getattr(self.__dict__["__tsl_real__"], name)

    def __setattr__(self, name: str, value) -> None:
        setattr(self.__dict__["__tsl_real__"], name, value)

    def __delattr__(self, name: str) -> None:
        delattr(self.__dict__["__tsl_real__"], name)


_PENDING: Dict[str, types.ModuleType] = {}  # lazy modules whose code has not run, by name
_STATE = {"off": False}  # once one lazy module is used, every later import is a plain one


_STANDINS: Dict[Tuple[str, str], object] = {}
_SOURCES: Dict[str, Optional[str]] = {}
_BAD_SOURCE = re.compile(r"(?m)^(?:def\s+__getattr__\b|from\s+\S+\s+import\s+\*)")


def _source(module: types.ModuleType) -> Optional[str]:
    path = getattr(module.__spec__, "origin", None) or ""
    if path not in _SOURCES:
        try:
            with open(path, encoding="utf-8") as fh:
                text: Optional[str] = fh.read()
        except (OSError, UnicodeDecodeError, ValueError):
            text = None
        _SOURCES[path] = None if text is None or _BAD_SOURCE.search(text) else text
    return _SOURCES[path]


def plain_function(source: str, name: str) -> bool:
    """Whether ``source`` binds ``name`` once, by a ``def`` at its top level (not in a branch), and
    nowhere else: no assignment at the top level, no ``global`` of it, no import of it, no class."""
    n = re.escape(name)
    if len(re.findall(rf"(?m)^(?:async\s+)?def\s+{n}\s*\(", source)) != 1:
        return False
    others = (rf"(?m)^{n}\s*(?::|=|\+=|,|\))",  # an assignment (annotated, augmented, unpacked)
              rf"(?m)^[^#\n]*,\s*{n}\s*(?:,[^\n]*)?=",  # a, NAME = ...
              rf"\bglobal\b[^\n]*\b{n}\b",
              rf"(?m)^(?:from\s+\S+\s+)?import\b[^\n]*\b{n}\b",
              rf"(?m)^\s+{n}\s*,?\s*(?:#[^\n]*)?$",  # a name alone on a line: inside an import's parentheses
              rf"\bas\s+{n}\b",
              rf"(?m)^class\s+{n}\b",
              rf"(?m)^(?:for|with|del)\b[^\n]*\b{n}\b")
    return not any(re.search(p, source) for p in others)


def _deferred(module: types.ModuleType, name: str):
    """``torch._dynamo.disable`` (hence ``torch.compiler.disable``, a common decorator at a
    package's import): a function decorated while ``torch._dynamo`` has not run yet calls the
    function itself as long as it has not (nothing can be compiling: there is no frame to keep
    from dynamo), and the real ``disable(fn)`` once it has."""
    if module.__name__ != "torch._dynamo" or name != "disable":
        return None
    key = (module.__name__, name)
    if key not in _STANDINS:
        _STANDINS[key] = _deferred_disable(module)
    return _STANDINS[key]


def _deferred_disable(module: types.ModuleType):
    def disable(fn=None, *args, **kwargs):
        if fn is None:  # ``@disable(recursive=False)``
            return lambda f: disable(f, *args, **kwargs)
        if not inspect.isfunction(fn) or type(module) is not _Lazy:
            return real(module).disable(fn, *args, **kwargs)
        done: list = []

        @functools.wraps(fn)
        def disabled(*a, **k):
            if not done:
                if type(module) is _Lazy:
                    return fn(*a, **k)
                done.append(real(module).disable(fn, *args, **kwargs))
            return done[0](*a, **k)

        return disabled

    disable.__module__ = module.__name__
    return disable


def _standin(module: types.ModuleType, name: str):
    key = (module.__name__, name)
    if key in _STANDINS:
        return _STANDINS[key]
    source = _source(module)
    if source is None or not plain_function(source, name):
        return None

    def standin(*args, **kwargs):
        return getattr(real(module), name)(*args, **kwargs)

    standin.__name__ = standin.__qualname__ = name
    standin.__module__ = module.__name__
    standin.__doc__ = f"Calls {module.__name__}.{name} (imported on the first call)."
    _STANDINS[key] = standin
    return standin


def real(module: types.ModuleType) -> types.ModuleType:
    """The real module of a lazy one (imported now, with every other lazy module: see
    ``_import_all``); any other module as it is."""
    if type(module) is _Forward:
        return module.__dict__["__tsl_real__"]
    if type(module) is not _Lazy:
        return module
    _import_all()
    if type(module) is _Lazy:  # its import failed before: again, as a plain import would
        _forward(module, importlib.import_module(module.__name__))
    return module.__dict__["__tsl_real__"]


def _forward(module: types.ModuleType, got: types.ModuleType) -> None:
    module.__dict__.clear()
    module.__dict__["__tsl_real__"] = got
    module.__class__ = _Forward


def _import_all() -> None:
    """The first use of a lazy module: laziness ends here, and each lazy module is imported for
    real, in the order of a plain import (the package, whose own imports run its submodules in their
    order, then each submodule): they leave ``sys.modules`` (and their parents' attributes) first,
    and each lazy module object then forwards to its real module."""
    _STATE["off"] = True
    pending = sorted(_PENDING.items(), key=lambda kv: (kv[0].count("."), kv[0]))
    _PENDING.clear()
    for name, mod in pending:
        if sys.modules.get(name) is mod:
            del sys.modules[name]
        parent_name, _, child = name.rpartition(".")
        parent = sys.modules.get(parent_name)
        if parent is not None and type(parent) is not _Lazy and parent.__dict__.get(child) is mod:
            try:
                delattr(parent, child)
            except AttributeError:
                pass
    error: Optional[BaseException] = None
    for name, mod in pending:
        try:
            _forward(mod, importlib.import_module(name))
        except BaseException as exc:  # noqa: BLE001  (raised once every other one is done)
            error = error or exc
    if error is not None:
        raise error


def is_lazy(module) -> bool:
    return type(module) is _Lazy


class _Loader(importlib.abc.Loader):
    def __init__(self, real) -> None:
        self.real = real

    def create_module(self, spec):
        return None  # the default module object

    def exec_module(self, module) -> None:
        module.__spec__.loader = module.__loader__ = self.real
        module.__class__ = _Lazy
        _PENDING[module.__name__] = module


class Finder(importlib.abc.MetaPathFinder):
    def __init__(self, prefixes: Sequence[str] = PREFIXES) -> None:
        self.prefixes = tuple(prefixes)

    def _mine(self, fullname: str) -> bool:
        return any(fullname == p or fullname.startswith(p + ".") for p in self.prefixes)

    def find_spec(self, fullname, path, target=None):
        if _STATE["off"] or not self._mine(fullname):
            return None
        for finder in sys.meta_path:
            if finder is self or isinstance(finder, Finder) or not hasattr(finder, "find_spec"):
                continue
            spec = finder.find_spec(fullname, path, target)
            if spec is not None:
                break
        else:
            return None
        # only plain Python source (or its cached bytecode): an extension module runs as it is
        if not isinstance(spec.loader, importlib.machinery.SourceFileLoader):
            return spec
        spec.loader = _Loader(spec.loader)
        return spec


def install(prefixes: Sequence[str] = PREFIXES) -> Optional[Finder]:
    """Put the finder first on ``sys.meta_path`` (once; modules already imported stay as they are)."""
    for f in sys.meta_path:
        if isinstance(f, Finder):
            return f
    finder = Finder(prefixes)
    sys.meta_path.insert(0, finder)
    return finder


def uninstall() -> None:
    """The finder off ``sys.meta_path``, and laziness possible again (for tests)."""
    sys.meta_path[:] = [f for f in sys.meta_path if not isinstance(f, Finder)]
    _STATE["off"] = False
    _PENDING.clear()
    _STANDINS.clear()
    _SOURCES.clear()
