"""Turn a type annotation (an `ast` expression from a torch stub or source file) into value kinds.

Used only by the generator. Type aliases (`_size`, `Number`, `_int`, `_size_2_t`...) are read from
torch's own files by `AliasTable`, so the only names known here are the base types themselves.
"""

from __future__ import annotations

import ast
from typing import Optional

# Base type names (last dotted component, after alias resolution) and the kind they stand for.
BASE_KINDS = {
    "Tensor": "tensor", "TensorBase": "tensor", "Parameter": "tensor", "Buffer": "tensor",
    "int": "int", "SymInt": "int", "SupportsIndex": "int", "SupportsInt": "int",
    "float": "float", "SymFloat": "float", "bool": "bool", "SymBool": "bool", "complex": "complex",
    "str": "str", "None": "none", "NoneType": "none", "NoReturn": "none", "Never": "none",
    "Size": "size", "dtype": "dtype", "device": "device", "Generator": "generator",
    "Storage": "storage", "TypedStorage": "storage", "UntypedStorage": "storage", "StorageBase": "storage",
    "_StorageBase": "storage",
    "list": "list", "List": "list", "Sequence": "list", "MutableSequence": "list", "Iterable": "list",
    "tuple": "tuple", "Tuple": "tuple",
}
NUMERIC = frozenset({"bool", "int", "float", "number", "complex"})
SEQUENCES = frozenset({"list", "List", "Sequence", "MutableSequence", "Iterable"})
PREDICATE_WRAPPERS = frozenset({"TypeIs", "TypeGuard"})
TRANSPARENT = frozenset({"Final", "Annotated", "ClassVar", "Required", "NotRequired"})


def join_kinds(kinds: list[str]) -> str:
    """One kind for a union of kinds: numbers join to `number`, anything else mixed is unknown."""
    unique = sorted(set(kinds))
    if len(unique) == 1:
        return unique[0]
    if unique and set(unique) <= NUMERIC:
        return "number" if len(set(unique) - {"bool"}) != 1 else next(iter(set(unique) - {"bool"}))
    return "unknown"


class AliasTable:
    """Module-level type aliases and `import ... as` renames gathered from stub and source modules."""

    def __init__(self) -> None:
        self.aliases: dict[str, ast.expr] = {}
        self.params: dict[str, list[str]] = {}  # generic aliases: the TypeVars they are written in

    def add_module(self, tree: ast.Module) -> None:
        typevars = set()
        for node in tree.body:
            if isinstance(node, ast.ImportFrom):
                for a in node.names:
                    if a.asname and a.asname != a.name:
                        self.aliases.setdefault(a.asname, ast.Name(id=a.name))
            elif isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
                value = node.value
                if isinstance(value, ast.Call) and getattr(value.func, "id", None) == "TypeVar":
                    typevars.add(node.targets[0].id)
                elif _looks_like_type(value):
                    self._set(node.targets[0].id, value, typevars)
            elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.value is not None:
                if _last_name(node.annotation) == "TypeAlias":
                    self._set(node.target.id, node.value, typevars)

    def _set(self, name: str, value: ast.expr, typevars: set[str]) -> None:
        if name in self.aliases:
            return  # the first definition wins, so the output does not depend on file order quirks
        self.aliases[name] = value
        used = sorted({n.id for n in ast.walk(value) if isinstance(n, ast.Name) and n.id in typevars})
        if used:
            self.params[name] = used


def _looks_like_type(value: ast.expr) -> bool:
    if isinstance(value, ast.BinOp) and isinstance(value.op, ast.BitOr):
        return True
    if isinstance(value, ast.Subscript):
        return _last_name(value.value) in ("Union", "Optional")
    return False


def _last_name(node: ast.expr) -> Optional[str]:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    return None


def _dotted(node: ast.expr) -> str:
    if isinstance(node, ast.Attribute):
        return _dotted(node.value) + "." + node.attr
    return getattr(node, "id", "")


class Classifier:
    """Kinds of annotations, given the aliases and torch.return_types' named tuples."""

    def __init__(self, aliases: AliasTable, return_types: dict[str, dict]):
        self.aliases = aliases
        self.return_types = return_types

    # -- returns -------------------------------------------------------------------------------
    def returns(self, node: Optional[ast.expr], self_kind: str = "tensor") -> dict:
        """A return description: {"kind", optional "n"/"elts"/"fields"/"optional"/"self"}."""
        if node is None:
            return {"kind": "unknown"}
        members = self._union_members(node, depth=0)
        optional = any(self._is_none(m) for m in members)
        members = [m for m in members if not self._is_none(m)]
        if not members:
            return {"kind": "none"}
        described = [self._describe(m, self_kind, 0) for m in members]
        if len(described) == 1:
            result = described[0]
        else:
            kinds = [d["kind"] for d in described]
            result = {"kind": join_kinds(kinds)}
            if len(set(map(repr, described))) == 1:
                result = described[0]
        if optional:
            result = dict(result, optional=True)
        return result

    def _describe(self, node: ast.expr, self_kind: str, depth: int) -> dict:
        node = self._resolve(node, depth)
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            try:
                return self._describe(ast.parse(node.value, mode="eval").body, self_kind, depth + 1)
            except SyntaxError:
                return {"kind": "unknown"}
        if isinstance(node, ast.Subscript):
            return self._describe_subscript(node, self_kind, depth)
        dotted = _dotted(node)
        if ".return_types." in "." + dotted or dotted.startswith("return_types."):
            fields = self.return_types.get(dotted.rsplit(".", 1)[-1])
            if fields is not None:
                return dict(fields)
        name = _last_name(node)
        if name == "Self":
            return {"kind": self_kind, "self": True}
        return {"kind": BASE_KINDS.get(name or "", "unknown")}

    def _describe_subscript(self, node: ast.Subscript, self_kind: str, depth: int) -> dict:
        head = self._head(node)
        args = list(node.slice.elts) if isinstance(node.slice, ast.Tuple) else [node.slice]
        if head in PREDICATE_WRAPPERS:
            return {"kind": "bool"}
        if head in TRANSPARENT:
            return self._describe(args[0], self_kind, depth + 1)
        if head in ("Union", "Optional"):
            return self.returns(node, self_kind)
        if head == "Literal":
            return {"kind": join_kinds([_literal_kind(a) for a in args])}
        if head in ("tuple", "Tuple"):
            if len(args) == 2 and isinstance(args[1], ast.Constant) and args[1].value is Ellipsis:
                elt = self.returns(args[0], self_kind)["kind"]
                return {"kind": "tensor_list" if elt == "tensor" else "tuple"}
            elts = [self.returns(a, self_kind)["kind"] for a in args]
            if "tensor" in elts:
                return {"kind": "tensor_tuple", "n": len(elts), "elts": elts}
            return {"kind": "tuple", "n": len(elts), "elts": elts}
        if head in SEQUENCES:
            elt = self.returns(args[0], self_kind)["kind"]
            return {"kind": "tensor_list" if elt == "tensor" else "list"}
        return {"kind": BASE_KINDS.get(head or "", "unknown")}

    # -- parameters ----------------------------------------------------------------------------
    def accepts(self, node: Optional[ast.expr]) -> tuple[str, Optional[list]]:
        """What a parameter accepts: kinds joined with "|" ("" when not annotated) and Literal values."""
        if node is None:
            return "", None
        kinds: set[str] = set()
        literals: Optional[list] = []
        for member in self._union_members(node, depth=0):
            resolved = self._resolve(member, 0)
            if isinstance(resolved, ast.Subscript) and self._head(resolved) == "Literal":
                lit_args = resolved.slice.elts if isinstance(resolved.slice, ast.Tuple) else [resolved.slice]
                for a in lit_args:
                    if isinstance(a, ast.Constant) and literals is not None:
                        literals.append(a.value)
                    kinds.add(_literal_kind(a))
                continue
            literals = None if not self._is_none(member) else literals
            if self._is_none(member):
                kinds.add("none")
                if literals is not None:
                    literals.append(None)
                continue
            kinds.add(self._describe(member, "tensor", 0)["kind"])
        if "unknown" in kinds:
            kinds = {"unknown"}
        if literals is not None and not any(v is not None for v in literals):
            literals = None  # only None: the "none" kind says it already
        return "|".join(sorted(kinds)), (sorted(literals, key=repr) if literals else None)

    # -- helpers -------------------------------------------------------------------------------
    def _union_members(self, node: ast.expr, depth: int) -> list[ast.expr]:
        if depth > 20:
            return [node]
        node = self._resolve(node, depth)
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            try:
                return self._union_members(ast.parse(node.value, mode="eval").body, depth + 1)
            except SyntaxError:
                return [node]
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
            return self._union_members(node.left, depth + 1) + self._union_members(node.right, depth + 1)
        if isinstance(node, ast.Subscript) and self._head(node) in ("Union", "Optional"):
            args = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
            out = [m for a in args for m in self._union_members(a, depth + 1)]
            if self._head(node) == "Optional":
                out.append(ast.Constant(value=None))
            return out
        return [node]

    def _resolve(self, node: ast.expr, depth: int) -> ast.expr:
        """Follow aliases (and generic aliases with their TypeVars substituted) to a base type."""
        for _ in range(20):
            if isinstance(node, ast.Name) and node.id in self.aliases.aliases:
                target = self.aliases.aliases[node.id]
                if isinstance(target, ast.Name) and target.id == node.id:
                    return node
                node = target
            elif (isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name)
                  and node.value.id in self.aliases.params):
                typevars = self.aliases.params[node.value.id]
                args = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
                node = _substitute(self.aliases.aliases[node.value.id], dict(zip(typevars, args)))
            else:
                return node
        return node

    def _head(self, node: ast.Subscript) -> Optional[str]:
        return _last_name(self._resolve(node.value, 0))

    @staticmethod
    def _is_none(node: ast.expr) -> bool:
        return (isinstance(node, ast.Constant) and node.value is None) or _last_name(node) in ("None", "NoneType")


def _literal_kind(node: ast.expr) -> str:
    if isinstance(node, ast.Constant):
        value = node.value
        for typ, kind in ((bool, "bool"), (int, "int"), (float, "float"), (str, "str"), (type(None), "none")):
            if isinstance(value, typ):
                return kind
    return "unknown"


class _Substitute(ast.NodeTransformer):
    def __init__(self, mapping: dict[str, ast.expr]):
        self.mapping = mapping

    def visit_Name(self, node: ast.Name) -> ast.expr:
        return self.mapping.get(node.id, node)


def _substitute(node: ast.expr, mapping: dict[str, ast.expr]) -> ast.expr:
    import copy

    return _Substitute(mapping).visit(copy.deepcopy(node))
