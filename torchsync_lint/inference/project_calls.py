"""The project's answers about parameters: what the calls of other files pass a function's
parameter (``Project.param``), whether a function has callers at all, and how a call entry of an
interface reaches the function it runs (imported names, ``obj.method(...)`` on instances of
project classes, ``self.method(...)`` dispatched to overrides, methods placed by name).

A mixin of ``project.Project``: it uses the project's interfaces, names and references.
"""

from __future__ import annotations

from typing import Callable, Dict, List, Optional, Tuple

from torchsync_lint.inference import by_name
from torchsync_lint.inference.by_name import BY_NAME
from torchsync_lint.inference.handed import argument_data
from torchsync_lint.inference.values import CPU, TENSOR, UNKNOWN, UNKNOWN_VALUE, Value, from_data, join_passed, off_host

TEST_CALL = "@test"  # a keyword no call can pass: marks the calls of a test module


def test_module(name: str) -> bool:
    """A module of a package's test suite: a ``tests``/``test`` package, ``test_*``, ``*_test``, ``conftest``."""
    parts = name.split(".")
    last = parts[-1] if parts else ""
    return (any(p in ("tests", "test") for p in parts[:-1]) or last.startswith("test_") or last.endswith("_test")
            or last in ("conftest", "tests", "test"))


class ProjectCalls:
    """Mixin of ``project.Project``."""

    # -- parameters from call sites in other files ---------------------------------------------
    def _call_index(self) -> Dict[str, List[Tuple[list, dict]]]:
        if self._calls is None:
            calls: Dict[str, List[Tuple[list, dict]]] = {}
            # On demand (a loader), other files' calls are placed with the interfaces loaded so far:
            # deriving the files they name would cascade over the project (each new interface's
            # calls name more), far past what the checked file reaches. What that placing
            # memoises saw less than the file's own questions see: dropped after.
            loader, saved = self._loader, None
            if loader is not None:
                saved = (dict(self._resolved), dict(self._is_module), dict(self._object_informative))
                self._loader = lambda name: None
            try:
                for iface in list(self._ifaces.values()):
                    for key, args, kwargs in self.calls_from(iface):
                        calls.setdefault(key, []).append((args, kwargs))
            finally:
                if saved is not None:
                    self._loader = loader
                    self._resolved, self._is_module, self._object_informative = saved
            self._calls = calls
        return self._calls

    def calls_from(self, iface: Optional[dict]) -> List[Tuple[str, list, dict]]:
        """One file's calls into the project, each with the key of the function it reaches
        (``obj.method(...)`` entries: the method of the class the receiver resolves to)."""
        test = test_module((iface or {}).get("module", ""))
        out: List[Tuple[str, list, dict]] = []
        for entry in (iface or {}).get("calls", ()):
            out.extend(self.entry_calls(entry, test))
        return out

    def entry_calls(self, entry: list, test: bool = False) -> List[Tuple[str, list, dict]]:
        """``calls_from`` for one call entry of an interface (``test``: of a test module)."""
        if entry[0] == "@self":
            _, cls_key, name, args, kwargs = entry
            out = [(key, args, kwargs) for key in self._dispatch(cls_key, name)]
        else:
            key = self.call_target(entry)
            out = [(key, entry[-2], entry[-1])] if key is not None else []  # its args and kwargs
            if not out and self._unplaced(entry):
                name = entry[1] if entry[0] == "@name" else entry[2]
                out = [(m, entry[-2], dict(entry[-1], **{BY_NAME: True}))
                       for m in by_name.targets(name, self._definers_of(name))]
        if test:
            # a package's own tests show what its API takes, but they leave defaults out as its
            # users need not (`Trainer(model)` with `device="cpu"`): marked, they do not make a
            # default count (``has_callers``)
            out = [(key, args, dict(kwargs, **{TEST_CALL: True})) for key, args, kwargs in out]
        return out

    def _unplaced(self, entry: list) -> bool:
        """A call on a receiver of unknown kind: ``@name``, or ``@method`` of a reference that
        resolves to nothing known, or to an instance of one of several classes (``for cb in
        self.callbacks: cb.on_epoch_end(self)``)."""
        if entry[0] != "@method":
            return entry[0] == "@name"
        v = self.deep(from_data(entry[1]))
        return v.kind == UNKNOWN or v.kind in ("module", "object") and v.cls is None

    def call_target(self, entry: list) -> Optional[str]:
        """The function one call entry of an interface reaches, or None."""
        if entry[0] == "@name":
            return None
        if entry[0] == "@method":
            _, recv, name, _args, _kwargs = entry
            return self._method_of(from_data(recv), name)
        loc = self.locate(entry[0])
        if loc is None:
            return None
        if loc[0] == "class":  # the constructor; a tensor subclass's `__new__` where no `__init__` is found
            return self.find_method(loc[1], "__init__") or self.find_method(loc[1], "__new__")
        return loc[1] if loc[0] == "function" else None

    def _dispatch(self, cls_key: str, name: str) -> List[str]:
        """What ``self.name(...)`` in a method of ``cls_key`` may run: the method the class
        inherits or defines, and every override in a project subclass."""
        out = []
        found = self.find_method(cls_key, name)
        if found is not None:
            out.append(found)
        for key, m in self._definers_of(name):
            if key != cls_key and m not in out and cls_key in self.mro(key):
                out.append(m)
        return out

    def _definers_of(self, name: str) -> List[Tuple[str, str]]:
        """(class key, method key) of every project class that defines a method ``name``."""
        if self._definers is None:
            self._definers = {}
            for key, (_, c) in self._classes.items():
                for n, m in c.get("methods", {}).items():
                    self._definers.setdefault(n, []).append((key, m))
        return self._definers.get(name, [])

    def defines_method(self, name: str) -> bool:
        """Some class of the project defines a method ``name``."""
        return bool(self._definers_of(name))

    def _method_of(self, recv: Value, name: str) -> Optional[str]:
        v = self.deep(recv)
        if v.kind not in ("module", "object") or v.cls is None:
            return None
        cls_key = self.class_key(v.cls)
        if cls_key is None:
            return None
        m = self.find_method(cls_key, name)
        if m is None and name == "__call__" and self.is_module(cls_key):
            m = self.find_method(cls_key, "forward")
        return m

    def has_callers(self, key: str) -> bool:
        """Some file that is not a test calls the function."""
        return any(TEST_CALL not in kwargs and BY_NAME not in kwargs for _args, kwargs in self._call_index().get(key, ()))

    def passes_informative(self, key: str, informative: Callable[[Value], bool]) -> bool:
        """Some call site in another file passes the function an argument that can change what
        its rules decide (a tensor, a module...); calls with numbers and strings only cannot."""
        for args, kwargs in self._call_index().get(key, ()):
            if args is None:
                return True  # *args: anything
            for data in list(args) + [v for k, v in kwargs.items() if k not in (TEST_CALL, BY_NAME)]:
                if data is not None and informative(self.deep(from_data(data))):
                    return True
        return False

    def param(self, func_key: str, name: str, pos: Optional[int], tensors_only: bool = False) -> Value:
        """The join of what other files pass for a parameter; UNKNOWN when none passes it.
        ``tensors_only``: the join of the tensors some of them pass (others may pass numbers)."""
        k = (func_key, name, pos, tensors_only)
        got = self._params.get(k)
        if got is not None:
            return got
        self._params[k] = UNKNOWN_VALUE  # recursion through arguments
        values: List[Value] = []
        calls = self._call_index().get(func_key, ())
        named = [c for c in calls if BY_NAME in c[1]]
        real = [c for c in calls if BY_NAME not in c[1] and TEST_CALL not in c[1]]
        tests = [c for c in calls if BY_NAME not in c[1] and TEST_CALL in c[1]]
        # calls placed by the method's name only where no placed call passes the parameter; but a
        # package's tests (on the CPU, with toy inputs) say less than its own code reaching the
        # method by name (`self.processor.preprocess(batch)` of a training loop): the first group
        # that passes something is the answer
        star = False
        for group in ([real + tests, named] if real else [named, tests]):
            if values or star:
                break
            for args, kwargs in group:
                if args is None:  # *args at the call site: anything
                    values, star = ([] if tensors_only else [UNKNOWN_VALUE]), True
                    break
                v = self._passed_value(args, kwargs, name, pos, tensors_only)
                if v is not None:
                    values.append(v)
        out: Optional[Value] = None
        if values:
            # as for the file's own call sites (``values.join_passed``), except where the value
            # lives: a gap may be a GPU tensor (`rows.to("cuda")` of a value inference cannot see)
            out, gaps = join_passed(values)
            if gaps and out.kind == TENSOR:
                out = out.with_(device=None)
        out = out if out is not None else UNKNOWN_VALUE
        self._params[k] = out
        return out

    def _passed_value(self, args: list, kwargs: dict, name: str, pos: Optional[int],
                      tensors_only: bool) -> Optional[Value]:
        """What one call entry passes for a parameter; None where it passes nothing (or, asked for
        tensors only, no tensor)."""
        data = argument_data(args, kwargs, name, pos)
        if data is None:
            return None
        v = self.deep(from_data(data))
        if TEST_CALL in kwargs:
            # a package's tests run on the CPU: what kind of value they pass, not where it lives
            v = off_host(v)
        if tensors_only and (v.kind != TENSOR or v.assumed or v.ref is not None):
            return None
        return v

    def param_left_out(self, func_key: str, name: str, pos: Optional[int]) -> bool:
        """Some file that is not a test calls the function, and every such call leaves the parameter
        out (its default applies there)."""
        calls = [c for c in self._call_index().get(func_key, ()) if TEST_CALL not in c[1] and BY_NAME not in c[1]]
        return bool(calls) and all(args is not None and argument_data(args, kwargs, name, pos) is None
                                   for args, kwargs in calls)

    def param_on_host(self, func_key: str, name: str, pos: Optional[int]) -> bool:
        """Every call in other files passes the parameter a host tensor (and some call passes it)."""
        v = self.param(func_key, name, pos)
        return v.kind == TENSOR and v.device == CPU and not v.assumed
