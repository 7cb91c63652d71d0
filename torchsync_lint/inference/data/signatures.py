"""Overload records from `ast` function definitions (stub or source), used by the generator.

An overload is {"params": [[name, accepts, flags(, literal values)]...], "returns": {...}}, where
`accepts` is the kinds the annotation allows joined by "|" ("" when not annotated) and flags hold
"r" (required), "k" (keyword-only), "p" (positional-only), "*" (*args), "**" (**kwargs).
"""

from __future__ import annotations

import ast
import copy
from typing import Iterator, Optional

from torchsync_lint.inference.data.annotations import Classifier


def decorator_names(node: ast.FunctionDef) -> set[str]:
    names = set()
    for d in node.decorator_list:
        target = d.func if isinstance(d, ast.Call) else d
        if isinstance(target, ast.Attribute):
            names.add(target.attr)
        elif isinstance(target, ast.Name):
            names.add(target.id)
    return names


def overload_of(fn: ast.FunctionDef, classifier: Classifier, *, method: bool = False,
                self_kind: str = "tensor") -> dict:
    fn = _with_type_comment(fn)
    a = fn.args
    positional = list(a.posonlyargs) + list(a.args)
    defaults = [None] * (len(positional) - len(a.defaults)) + list(a.defaults)
    params: list[list] = []
    for i, (arg, default) in enumerate(zip(positional, defaults)):
        if method and i == 0 and "staticmethod" not in decorator_names(fn):
            continue  # self / cls
        flags = ("r" if default is None else "") + ("p" if i < len(a.posonlyargs) else "")
        params.append(_param(arg, flags, classifier))
    if a.vararg is not None:
        params.append(_param(a.vararg, "*", classifier))
    for arg, default in zip(a.kwonlyargs, a.kw_defaults):
        params.append(_param(arg, ("r" if default is None else "") + "k", classifier))
    if a.kwarg is not None:
        params.append(_param(a.kwarg, "**", classifier))
    return {"params": params, "returns": classifier.returns(fn.returns, self_kind)}


def _with_type_comment(fn: ast.FunctionDef) -> ast.FunctionDef:
    """TorchScript-style `# type: (Tensor, bool) -> Tuple[Tensor, Tensor]` comments as annotations."""
    if fn.returns is not None or not fn.type_comment:
        return fn
    try:
        sig = ast.parse(fn.type_comment, mode="func_type")
    except SyntaxError:
        return fn
    fn = copy.deepcopy(fn)
    fn.returns = sig.returns
    positional = list(fn.args.posonlyargs) + list(fn.args.args)
    if len(positional) == len(sig.argtypes) + 1:
        positional = positional[1:]  # a method's comment leaves out self
    for arg, annotation in zip(positional, sig.argtypes):
        if arg.annotation is None:
            arg.annotation = annotation
    return fn


def _param(arg: ast.arg, flags: str, classifier: Classifier) -> list:
    accepts, literals = classifier.accepts(arg.annotation)
    record = [arg.arg, accepts, flags]
    if literals is not None:
        record.append(literals)
    return record


def functions_in(body: list[ast.stmt]) -> dict[str, list[ast.FunctionDef]]:
    """Public and dunder function definitions in a module or class body, overloads kept in order."""
    found: dict[str, list[ast.FunctionDef]] = {}
    for node in _flatten(body):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            found.setdefault(node.name, []).append(node)
    for name, defs in found.items():
        overloads = [d for d in defs if "overload" in decorator_names(d)]
        if overloads:
            found[name] = overloads  # the implementation after @overloads is not a signature
    return found


def _flatten(body: list[ast.stmt]) -> Iterator[ast.stmt]:
    """Statements of a body, with `if TYPE_CHECKING`/version branches opened (the first one wins)."""
    for node in body:
        if isinstance(node, ast.If):
            yield from _flatten(node.body)
            yield from _flatten(node.orelse)
        else:
            yield node


def class_body(tree: ast.Module, name: str) -> Optional[ast.ClassDef]:
    for node in _flatten(tree.body):
        if isinstance(node, ast.ClassDef) and node.name == name:
            return node
    return None


def attributes_in(cls: ast.ClassDef, classifier: Classifier) -> dict[str, dict]:
    """Annotated class attributes and @property getters of a stub class."""
    found: dict[str, dict] = {}
    for node in cls.body:
        if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            found[node.target.id] = classifier.returns(node.annotation)
        elif isinstance(node, ast.FunctionDef) and "property" in decorator_names(node):
            found.setdefault(node.name, classifier.returns(node.returns))
    return found


def return_type_fields(tree: ast.Module, classifier: Classifier) -> dict[str, dict]:
    """torch.return_types' named tuples: field names and element kinds, from return_types.pyi."""
    out: dict[str, dict] = {}
    for node in tree.body:
        if not isinstance(node, ast.ClassDef):
            continue
        fields = [(f.name, classifier.returns(f.returns)["kind"]) for f in node.body
                  if isinstance(f, ast.FunctionDef) and "property" in decorator_names(f)]
        if not fields:
            continue
        elts = [k for _, k in fields]
        out[node.name] = {"kind": "tensor_tuple" if "tensor" in elts else "tuple", "n": len(fields),
                          "elts": elts, "fields": [n for n, _ in fields]}
    return out
