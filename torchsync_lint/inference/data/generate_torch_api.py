"""Regenerate torch_api.json from the installed torch's stubs, sources and native schemas.

    python -m torchsync_lint.inference.data.generate_torch_api          # write the file
    python -m torchsync_lint.inference.data.generate_torch_api --check  # exit 1 when it is stale

This is the only module of the package (with sources.py, which it drives) that imports torch; the
linter reads the JSON through torchsync_lint.inference.torch_facts and never imports this.

Sources, by namespace:
- torch.*: torch/_C/_VariableFunctions.pyi; functions written in Python (torch/functional.py,
  torch/__init__.py...) from their source's annotations, boolean_dispatch split into overloads
  (torch.unique(x, return_counts=True) -> tuple); builtins of torch._C from torch/_C/__init__.pyi;
  public classes (torch.Size -> size, legacy torch.FloatTensor -> tensor taking host data).
- Tensor.*: class TensorBase in torch/_C/__init__.pyi (methods, properties, annotated attributes),
  then class Tensor in torch/_tensor.py (Python methods; those that return torch.X(self, ...)
  unannotated take torch.X's overloads).
- torch.nn.functional.*: torch/nn/functional.pyi, then functional.py, then torch/_C/_nn.pyi and
  _VariableFunctions.pyi for the builtins it re-exports; torch._C._nn.* from _nn.pyi.
- torch.linalg / fft / special: builtins without stubs, read from ATen's native_functions.yaml
  (shipped in torchgen) with return names (torch.linalg.inv_ex -> (inverse, info)).
- torch.distributions.*: distribution classes, whether they take validate_args; Distribution.*
  methods and properties from torch/distributions/distribution.py.
- torch.nn.utils.*: the functions it exports, from their source's annotations
  (clip_grad_norm_ -> tensor: the total norm, where the gradients are).
"""

from __future__ import annotations

import argparse
import ast
import inspect
import json
import os
import re
import sys
import typing
from typing import Any, Optional

from torchsync_lint.inference.data.annotations import BASE_KINDS
from torchsync_lint.inference.data.facts import callable_facts, join_returns
from torchsync_lint.inference.data.signatures import (attributes_in, class_body, decorator_names,
                                                      functions_in, overload_of)

FORMAT = 1
DATA_PATH = os.path.join(os.path.dirname(os.path.abspath(__file__)), "torch_api.json")
VF_STUB = "_C/_VariableFunctions.pyi"
C_STUB = "_C/__init__.pyi"
NATIVE_NAMESPACES = ("linalg", "fft", "special")
VF_OWNERS = ("_VF", "torch._VF", "torch._C._VariableFunctions")
ANY_ARGS = [["args", "", "*"], ["kwargs", "", "**"]]


def _public(module: Any) -> list[str]:
    names = set(getattr(module, "__all__", ())) | set(dir(module))
    return sorted(n for n in names if not n.startswith("_"))


class Generator:
    def __init__(self) -> None:
        import torch

        from torchsync_lint.inference.data.sources import TorchFiles

        self.torch = torch
        self.files = TorchFiles(os.path.dirname(torch.__file__))
        self.cls = self.files.classifier
        self.api: dict[str, dict] = {}
        self.vf = self.files.stub_functions(VF_STUB)
        self.c_funcs = self.files.stub_functions(C_STUB)
        self.nn_funcs = self.files.stub_functions("_C/_nn.pyi")

    def stub(self, defs: list[ast.FunctionDef], **kw: Any) -> list[dict]:
        return [overload_of(d, self.cls, **kw) for d in defs]

    def add(self, qualname: str, overloads: list[dict], kind: str, source: str, **kw: Any) -> None:
        self.api[qualname] = callable_facts(qualname, overloads, kind=kind, source=source, **kw)

    # -- Python functions, with boolean_dispatch opened into overloads ---------------------------
    def python_function(self, fn: Any) -> Optional[tuple[list[dict], str]]:
        from torch._jit_internal import boolean_dispatched

        info = boolean_dispatched.get(fn)
        if info is None:
            return self.python_leaf(fn)
        overloads, source = [], ""
        for branch, value in (("if_true", True), ("if_false", False)):
            found = self.python_function(info[branch])
            if found is None:
                return None
            source = found[1]
            for overload in found[0]:
                for param in overload["params"]:
                    if param[0] == info["arg_name"]:
                        flags = param[2].replace("r", "")
                        param[2] = flags if value == info["default"] else "r" + flags
                        del param[3:]
                        param.append([value])
                overloads.append(overload)
        return overloads, source

    def python_leaf(self, fn: Any) -> Optional[tuple[list[dict], str]]:
        """A Python function's overloads; unannotated ones that only return _VF.X(...) take X's returns."""
        found = self.files.python_defs(fn)
        if found is None:
            return None
        defs, source = found
        overloads = self.stub(defs)
        if all(o["returns"]["kind"] == "unknown" for o in overloads):
            targets = _vf_targets(defs[0])
            found = [self.vf_returns(t) for t in targets]
            if targets and all(found):
                joined = join_returns([r for rs in found for r in rs])
                for o in overloads:
                    o["returns"] = dict(joined)
                source += " -> " + ", ".join("_VF." + t for t in targets)
            else:
                documented = self.documented_returns(fn)
                if documented is not None:
                    for o in overloads:
                        o["returns"] = dict(documented)
                    source += " -> docstring"
        return overloads, source

    def documented_returns(self, fn: Any) -> Optional[dict]:
        """What an unannotated Python function returns by its docstring's ``Returns:`` section
        (``shape (torch.Size): ...``): the one type it names, when the annotation classifier
        knows it; None otherwise."""
        doc = inspect.getdoc(fn) or ""
        m = re.search(r"^Returns?:\s*\n((?:[ \t]+.*\n?)+)", doc, re.M)
        if m is None:
            return None
        entries = [ln.strip() for ln in m.group(1).splitlines() if ln.strip()]
        found = re.match(r"^(?:\w+\s*)?\(([\w.]+)\)\s*:", entries[0]) if entries else None
        if found is None:
            return None
        try:
            node = ast.parse(found.group(1), mode="eval").body
        except SyntaxError:
            return None
        got = self.cls.returns(node)
        return got if got.get("kind") != "unknown" else None

    def vf_returns(self, name: str) -> list[dict]:
        """Returns of torch._VF.<name>: its stub, else its native schemas (many have no stub)."""
        from torchsync_lint.inference.data.sources import native_schemas, schema_overloads

        if name in self.vf:
            return [o["returns"] for o in self.stub(self.vf[name])]
        return [o["returns"] for o in schema_overloads(native_schemas(None).get(name, []))]

    def builtin(self, fn: Any, *stubs: tuple[dict, str]) -> Optional[tuple[list[dict], str]]:
        name = getattr(fn, "__name__", "")
        for funcs, rel in stubs:
            if name in funcs:
                return self.stub(funcs[name]), "torch/" + rel
        return None

    def any_callable(self, obj: Any, *stubs: tuple[dict, str]) -> Optional[tuple[list[dict], str]]:
        if inspect.isfunction(obj) or hasattr(obj, "__wrapped__"):
            return self.python_function(obj)
        if inspect.isbuiltin(obj) or type(obj).__name__ in ("builtin_function_or_method", "method"):
            return self.builtin(obj, *stubs)
        return None

    # -- namespaces ------------------------------------------------------------------------------
    def torch_namespace(self) -> None:
        torch = self.torch
        for name in _public(torch):
            obj = getattr(torch, name, None)
            if name in self.vf:
                self.add("torch." + name, self.stub(self.vf[name]), "function", "torch/" + VF_STUB)
            elif inspect.isclass(obj):
                self.torch_class("torch." + name, obj)
            elif callable(obj) and not inspect.ismodule(obj):
                found = self.any_callable(obj, (self.c_funcs, C_STUB), (self.vf, VF_STUB))
                if found:
                    self.add("torch." + name, found[0], "function", found[1])

    def torch_class(self, qualname: str, cls: Any) -> None:
        torch = self.torch
        tensor_type = issubclass(cls, torch.Tensor) or cls in getattr(torch, "_tensor_classes", ())
        if tensor_type:
            returns = {"kind": "tensor"}
        elif issubclass(cls, (torch.TypedStorage, torch.UntypedStorage)):
            returns = {"kind": "storage"}
        else:
            returns = {"kind": BASE_KINDS.get(cls.__name__, "object"), "class": cls.__name__}
            if returns["kind"] != "object":
                del returns["class"]
        overloads = None
        stub_cls = class_body(self.files.tree(C_STUB), cls.__name__)
        if stub_cls is not None:
            defs = functions_in(stub_cls.body)
            init = defs.get("__init__") or defs.get("__new__")
            if init:
                overloads, source = self.stub(init, method=True), "torch/" + C_STUB
        if overloads is None and "__init__" in vars(cls) and inspect.isfunction(vars(cls)["__init__"]):
            found = self.files.python_overloads(vars(cls)["__init__"], method=True)
            if found:
                overloads, source = found
        if overloads is None:
            overloads, source = [{"params": [list(p) for p in ANY_ARGS]}], "runtime"
        for o in overloads:
            o["returns"] = dict(returns)
        self.add(qualname, overloads, "class", source, returns=returns)
        if tensor_type:
            self.api[qualname]["host_data"] = True  # legacy constructors: torch.FloatTensor([1.0])

    def functional(self) -> None:
        import torch.nn.functional as F

        stub = self.files.stub_functions("nn/functional.pyi")
        for name in _public(F):
            obj = getattr(F, name)
            if inspect.isclass(obj) or inspect.ismodule(obj) or not callable(obj):
                continue
            from torch._jit_internal import boolean_dispatched

            found = None
            if name in stub and obj not in boolean_dispatched:
                found = self.stub(stub[name]), "torch/nn/functional.pyi"
            if found is None:
                found = self.any_callable(obj, (self.nn_funcs, "_C/_nn.pyi"), (self.vf, VF_STUB))
            if found is None and name in stub:
                found = self.stub(stub[name]), "torch/nn/functional.pyi"
            if found:
                self.add("torch.nn.functional." + name, found[0], "function", found[1])
        for name, defs in self.nn_funcs.items():
            if not name.startswith("_"):
                self.add("torch._C._nn." + name, self.stub(defs), "function", "torch/_C/_nn.pyi")

    def nn_utils(self) -> None:
        import torch.nn.utils as utils

        for name in _public(utils):
            obj = getattr(utils, name)
            if inspect.isfunction(obj):
                found = self.python_function(obj)
                if found:
                    self.add("torch.nn.utils." + name, found[0], "function", found[1])

    def native(self) -> None:
        from torchsync_lint.inference.data.sources import native_schemas, schema_overloads

        for namespace in NATIVE_NAMESPACES:
            module = getattr(self.torch, namespace)
            schemas = native_schemas(namespace)
            for name in _public(module):
                obj = getattr(module, name)
                native = getattr(obj, "__name__", "")
                if inspect.isbuiltin(obj) and native in schemas:
                    overloads = schema_overloads(schemas[native])
                    self.add(f"torch.{namespace}.{name}", overloads, "function",
                             "torchgen/packaged/ATen/native/native_functions.yaml")
                elif inspect.isfunction(obj):
                    found = self.python_function(obj)
                    if found:
                        self.add(f"torch.{namespace}.{name}", found[0], "function", found[1])

    def tensor(self) -> None:
        base = class_body(self.files.tree(C_STUB), "TensorBase")
        self.tensor_class(base, "torch/" + C_STUB)
        py = class_body(self.files.tree("_tensor.py"), "Tensor")
        self.tensor_class(py, "torch/_tensor.py", delegate=True)

    def tensor_class(self, cls: ast.ClassDef, source: str, delegate: bool = False) -> None:
        for name, ret in attributes_in(cls, self.cls).items():
            key = "Tensor." + name
            if key not in self.api and not name.startswith("_"):
                self.api[key] = {"kind": "attribute", "source": source, "returns": ret}
        for name, defs in functions_in(cls.body).items():
            key = "Tensor." + name
            if key in self.api or (name.startswith("_") and not name.startswith("__")):
                continue
            if any("property" in decorator_names(d) for d in defs):
                continue
            overloads, origin = self.stub(defs, method=True), source
            target = _delegate_target(defs[0]) if delegate else None
            if target and all(o["returns"]["kind"] == "unknown" for o in overloads) and target in self.api:
                overloads = [dict(o, params=[list(p) for p in o["params"][1:]])
                             for o in self.api[target]["overloads"]]
                origin = f"{source} -> {target}"
            self.add(key, overloads, "method", origin, method=True)

    def distributions(self) -> None:
        import torch.distributions as D

        for name in _public(D):
            obj = getattr(D, name)
            if not (inspect.isclass(obj) and issubclass(obj, D.Distribution)):
                continue
            returns = {"kind": "object", "class": "Distribution"}
            found = self.files.python_overloads(obj.__init__, method=True)
            overloads = found[0] if found else [{"params": [list(p) for p in ANY_ARGS]}]
            for o in overloads:
                o["returns"] = dict(returns)
            self.add("torch.distributions." + name, overloads, "class", found[1] if found else "runtime",
                     returns=returns)
            if any(p[0] == "validate_args" for o in overloads for p in o["params"]):
                self.api["torch.distributions." + name]["validate_args"] = True
        rel = "distributions/distribution.py"
        cls = class_body(self.files.tree(rel), "Distribution")
        for name, ret in attributes_in(cls, self.cls).items():
            self.api["Distribution." + name] = {"kind": "attribute", "source": "torch/" + rel, "returns": ret}
        for name, defs in functions_in(cls.body).items():
            if not name.startswith("_") and not any("property" in decorator_names(d) for d in defs):
                self.add("Distribution." + name, self.stub(defs, method=True), "method", "torch/" + rel, method=True)

    def build(self) -> dict:
        self.torch_namespace()
        self.functional()
        self.nn_utils()
        self.native()
        self.tensor()
        self.distributions()
        return {"format": FORMAT, "torch_version": self.torch.__version__,
                "generated_by": "python -m torchsync_lint.inference.data.generate_torch_api",
                "return_types": self.files.return_types, "api": self.api,
                "tensor_only_methods": self.tensor_only_methods(), "float_constants": self.float_constants(),
                "excluded_with": self.excluded_with(), "stateless_modules": self.stateless_modules(),
                "framework_methods": self.framework_methods(), "module_self_methods": self.module_self_methods()}

    def module_self_methods(self) -> list[str]:
        """Public methods of `nn.Module` that return the module itself (declared `-> Self`, or `T`
        bound to it; `to` through its overloads): `Model().to("cuda")` is that model."""
        out = []
        for name in dir(self.torch.nn.Module):
            fn = getattr(self.torch.nn.Module, name)
            if name.startswith("_") or not callable(fn):
                continue
            sigs = [inspect.signature(o) for o in typing.get_overloads(fn)] or [inspect.signature(fn)]
            if all(getattr(s.return_annotation, "__name__", str(s.return_annotation)) in ("Self", "T") for s in sigs):
                out.append(name)
        return sorted(out)

    def framework_methods(self) -> list[str]:
        """Method names (the hooks subclasses override too: `_call`, `_inverse`) of the classes user
        code subclasses or holds without the project seeing which (a module, an optimizer, a
        scheduler, a dataset, a loader, a distribution and its transforms, a scaler) and of Python's
        builtin containers: a call of one on a receiver inference cannot place may reach any of
        them, so its name says nothing about which project method runs."""
        t = self.torch
        classes = (t.nn.Module, t.optim.Optimizer, t.optim.lr_scheduler.LRScheduler, t.utils.data.Dataset,
                   t.utils.data.DataLoader, t.distributions.Distribution, t.distributions.transforms.Transform,
                   t.amp.GradScaler, list, tuple, dict, set, str, bytes, object)
        return sorted({n for c in classes for n in dir(c) if not n.startswith("__")})

    def stateless_modules(self) -> list[str]:
        """torch.nn module classes that hold no parameter or buffer (`nn.ReLU`, `nn.Dropout`): read
        from the sources of their `__init__`s along the class hierarchy. Moving a fresh one to the
        GPU copies nothing (measured: `nn.ReLU().to(d)` does not sync; `nn.Linear(8, 8).to(d)` does)."""
        nn = self.torch.nn
        # what creates state, or holds modules that may have some (DataParallel, TransformerEncoder)
        makes_state = ("Parameter(", "register_buffer(", "register_parameter(", "UninitializedParameter",
                       "UninitializedBuffer", "factory_kwargs", "_get_clones(", "self.module =", "ModuleList(",
                       "add_module(")
        out = []
        for name in _public(nn):
            cls = getattr(nn, name, None)
            if not (inspect.isclass(cls) and issubclass(cls, nn.Module)):
                continue
            stateless = True
            for klass in cls.__mro__:
                if klass is nn.Module or not klass.__module__.startswith("torch.nn"):
                    continue
                init = klass.__dict__.get("__init__")
                if init is None:
                    continue
                try:
                    text = inspect.getsource(init)
                except (OSError, TypeError):
                    stateless = False
                    break
                if any(m in text for m in makes_state) or "nn.Module" in text.split("super().__init__")[0]:
                    stateless = False
                    break
            # containers hold whatever their children hold
            if stateless and cls is not nn.Module and not issubclass(
                    cls, (nn.Sequential, nn.ModuleList, nn.ModuleDict, nn.ParameterList, nn.ParameterDict, nn.Container)):
                out.append(f"torch.nn.{name}")
        return sorted(out)

    @staticmethod
    def excluded_with() -> dict[str, str]:
        """The versions `tensor_only_methods` was computed against (the staleness test needs them)."""
        import numpy
        import pandas

        return {"numpy": numpy.__version__, "pandas": pandas.__version__}

    def tensor_only_methods(self) -> list[str]:
        """Public Tensor methods that no numpy array, pandas frame or series, nn.Module or Python
        builtin has: a call of one (`x.type_as(y)`, `x.masked_fill(m, 0)`) says its receiver is a tensor."""
        import numpy
        import pandas

        others = set()
        for t in (numpy.ndarray, numpy.generic, pandas.Series, pandas.DataFrame, pandas.Index, self.torch.nn.Module,
                  list, tuple, dict, set, str, bytes, int, float, complex, object):
            others |= set(dir(t))
        return sorted(n for n in dir(self.torch.Tensor)
                      if not n.startswith("_") and n not in others and callable(getattr(self.torch.Tensor, n, None)))

    def float_constants(self) -> list[str]:
        """`torch.inf`, `torch.pi`...: module attributes that are Python floats."""
        return sorted(f"torch.{n}" for n in dir(self.torch) if not n.startswith("_")
                      and type(getattr(self.torch, n, None)) is float)


def _delegate_target(fn: ast.FunctionDef) -> Optional[str]:
    """`return torch.X(self, ...)` (or torch.functional.X / _VF.X): the torch function it forwards to."""
    for node in ast.walk(fn):
        if isinstance(node, ast.Return) and isinstance(node.value, ast.Call):
            call = node.value
            if not (call.args and isinstance(call.args[0], ast.Name) and call.args[0].id == "self"):
                continue
            func = call.func
            if isinstance(func, ast.Attribute) and isinstance(func.value, (ast.Name, ast.Attribute)):
                owner = ast.unparse(func.value)
                if owner in ("torch", "torch.functional", "_VF", "torch._VF"):
                    return "torch." + func.attr
    return None


def _vf_targets(fn: ast.FunctionDef) -> list[str]:
    """Names X when every return of `fn` (torch-function overrides aside) is `_VF.X(...)`; else []."""
    targets = []
    for node in ast.walk(fn):
        if not isinstance(node, ast.Return):
            continue
        call = node.value
        func = call.func if isinstance(call, ast.Call) else None
        if isinstance(func, ast.Name) and func.id == "handle_torch_function":
            continue
        if not (isinstance(func, ast.Attribute) and ast.unparse(func.value) in VF_OWNERS):
            return []
        targets.append(func.attr)
    return sorted(set(targets))


def build() -> dict:
    return Generator().build()


def dumps(data: dict) -> str:
    # one level of indentation keeps diffs readable; compact separators keep the file small
    return json.dumps(data, sort_keys=True, indent=0, separators=(",", ":"), ensure_ascii=True) + "\n"


def main(argv: Optional[list[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 if the checked-in file is stale")
    parser.add_argument("--output", default=DATA_PATH, help="where to write (default: the package's file)")
    args = parser.parse_args(argv)
    try:
        import numpy  # noqa: F401  (which method names numpy and pandas share with a tensor)
        import pandas  # noqa: F401
        import torch
    except ImportError as e:
        print(f"generate_torch_api: {e.name} is not installed; install torch, numpy and pandas to regenerate", file=sys.stderr)
        return 2
    text = dumps(build())
    if args.check:
        try:
            with open(args.output, encoding="utf-8") as f:
                current = f.read()
        except OSError as e:
            print(f"generate_torch_api: cannot read {args.output}: {e}", file=sys.stderr)
            return 1
        recorded = json.loads(current).get("torch_version")
        if recorded != torch.__version__:
            print(f"generate_torch_api: {args.output} is for torch {recorded}, installed is "
                  f"{torch.__version__}; cannot check", file=sys.stderr)
            return 2
        if current != text:
            print(f"generate_torch_api: {args.output} is stale; rerun without --check", file=sys.stderr)
            return 1
        print(f"{args.output} is up to date (torch {torch.__version__})")
        return 0
    try:
        with open(args.output, "w", encoding="utf-8") as f:
            f.write(text)
    except OSError as e:
        print(f"generate_torch_api: cannot write {args.output}: {e}", file=sys.stderr)
        return 1
    print(f"wrote {args.output} ({len(text)} bytes, {len(json.loads(text)['api'])} callables, "
          f"torch {torch.__version__})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
