"""Where the generator reads torch's signatures: stub files, source files, native schemas.

Everything here takes the installed torch as given (its files, or objects the generator imported);
this module itself imports torch only inside functions, and only the generator calls them.
"""

from __future__ import annotations

import ast
import functools
import inspect
import os
import textwrap
from typing import Any, Optional

from torchsync_lint.inference.data.annotations import AliasTable, Classifier
from torchsync_lint.inference.data.signatures import functions_in, overload_of


@functools.cache
def parse_file(path: str) -> ast.Module:
    with open(path, encoding="utf-8") as f:
        return ast.parse(f.read(), filename=path, type_comments=True)


class TorchFiles:
    """The installed torch's stub and source trees, with one alias table over all of them."""

    ALIAS_MODULES = ("types.py", "_C/__init__.pyi", "_C/_VariableFunctions.pyi", "_C/_nn.pyi",
                     "nn/functional.pyi", "nn/common_types.py", "_prims_common/__init__.py",
                     "return_types.pyi", "functional.py", "nn/functional.py", "__init__.py", "_tensor.py")

    def __init__(self, torch_dir: str):
        self.root = torch_dir
        self.aliases = AliasTable()
        for rel in self.ALIAS_MODULES:
            if os.path.exists(self.path(rel)):
                self.aliases.add_module(self.tree(rel))
        plain = Classifier(self.aliases, {})
        from torchsync_lint.inference.data.signatures import return_type_fields

        self.return_types = return_type_fields(self.tree("return_types.pyi"), plain)
        self.classifier = Classifier(self.aliases, self.return_types)

    def path(self, rel: str) -> str:
        return os.path.join(self.root, *rel.split("/"))

    def tree(self, rel: str) -> ast.Module:
        return parse_file(self.path(rel))

    def rel(self, path: str) -> str:
        return "torch/" + os.path.relpath(path, self.root).replace(os.sep, "/")

    def stub_functions(self, rel: str) -> dict[str, list[ast.FunctionDef]]:
        return functions_in(self.tree(rel).body)

    # -- Python-level functions ----------------------------------------------------------------
    def python_defs(self, fn: Any) -> Optional[tuple[list[ast.FunctionDef], str]]:
        """Definitions (with @overloads) of a function written in Python, from its source file."""
        fn = inspect.unwrap(fn)
        try:
            path = inspect.getsourcefile(fn)
        except TypeError:
            return None
        if not path or not path.startswith(self.root):
            return None
        qual = getattr(fn, "__qualname__", "")
        defs: list[ast.FunctionDef] = []
        if "." not in qual:
            defs = functions_in(parse_file(path).body).get(fn.__name__, [])
        if not defs:
            try:
                tree = ast.parse(textwrap.dedent(inspect.getsource(fn)), type_comments=True)
            except (OSError, TypeError, SyntaxError):
                return None
            defs = [n for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))][:1]
        return (defs, self.rel(path)) if defs else None

    def python_overloads(self, fn: Any, *, method: bool = False) -> Optional[tuple[list[dict], str]]:
        found = self.python_defs(fn)
        if found is None:
            return None
        return [overload_of(d, self.classifier, method=method) for d in found[0]], found[1]


# -- native function schemas (torch.linalg / fft / special builtins have no .pyi) ----------------
SCHEMA_BASE = {"Tensor": "tensor", "int": "int", "SymInt": "int", "float": "float", "bool": "bool",
               "Scalar": "number", "ScalarType": "dtype", "str": "str", "Device": "device",
               "Generator": "generator", "Storage": "storage", "Dimname": "str"}


def _schema_kind(typ: str) -> tuple[set[str], bool]:
    """Kinds a native schema type accepts, and whether it is a list type."""
    optional = typ.endswith("?")
    typ = typ.rstrip("?")
    is_list = typ.endswith("]")
    base = typ.split("[", 1)[0].rstrip("?")
    kind = SCHEMA_BASE.get(base, "unknown")
    if is_list:
        kinds = {"tensor_list"} if kind == "tensor" else {"list", "tuple"} | ({"size"} if kind == "int" else set())
        if kind == "int" and typ.endswith("[1]"):
            kinds.add("int")  # int[1]: a single int is accepted too
    else:
        kinds = {kind}
    if optional:
        kinds.add("none")
    return kinds, is_list


@functools.cache
def native_schemas(python_module: Optional[str]) -> dict[str, list]:
    """name -> [FunctionSchema...] of the native functions in torch.<python_module> (None: torch)."""
    import torchgen
    import yaml
    from torchgen.model import FunctionSchema

    path = os.path.join(os.path.dirname(torchgen.__file__), "packaged", "ATen", "native",
                        "native_functions.yaml")
    with open(path, encoding="utf-8") as f:
        entries = yaml.load(f, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    out: dict[str, list] = {}
    for entry in entries:
        if entry.get("python_module") != python_module:
            continue
        schema = FunctionSchema.parse(entry["func"])
        out.setdefault(str(schema.name.name), []).append(schema)
    return out


def schema_overloads(schemas: list) -> list[dict]:
    """Python-visible overloads of one native function: out= variants fold into an `out` keyword."""
    has_out = any(s.arguments.out for s in schemas)
    overloads = []
    for schema in schemas:
        if schema.arguments.out:
            continue
        params = []
        for arg in schema.arguments.flat_positional:
            params.append(_schema_param(arg, ""))
        for arg in schema.arguments.flat_kwarg_only:
            params.append(_schema_param(arg, "k"))
        if has_out:
            params.append(["out", "none|tensor|tensor_tuple", "k"])
        overloads.append({"params": params, "returns": _schema_returns(schema.returns)})
    return overloads


def _schema_param(arg, flags: str) -> list:
    kinds, _ = _schema_kind(str(arg.type))
    required = arg.default is None
    return [arg.name, "|".join(sorted(kinds)), ("r" if required else "") + flags]


def _schema_returns(returns) -> dict:
    if not returns:
        return {"kind": "none"}
    kinds = [_schema_kind(str(r.type)) for r in returns]
    if len(returns) == 1:
        (kind_set, is_list) = kinds[0]
        kind = next(iter(kind_set - {"none"})) if len(kind_set - {"none"}) == 1 else "unknown"
        if is_list:
            kind = "tensor_list" if "tensor_list" in kind_set else "list"
        return {"kind": kind}
    elts = [next(iter(k - {"none"})) if len(k - {"none"}) == 1 else "unknown" for k, _ in kinds]
    result = {"kind": "tensor_tuple" if "tensor" in elts else "tuple", "n": len(elts), "elts": elts}
    if all(r.name for r in returns):
        result["fields"] = [r.name for r in returns]
    return result
