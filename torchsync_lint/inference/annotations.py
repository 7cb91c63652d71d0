"""What an annotation says a value is: ``Tensor``, ``Optional[Tensor]``, ``list[Tensor]``, jaxtyping's
``Float[Tensor, "b n"]``, string annotations, and type aliases bound to a name in this file or in
another one (``NdarrayOrTensor = np.ndarray | torch.Tensor``).

A mixin of ``evaluate.Evaluator``: it uses the evaluator's ``aliases``, ``module_scope`` and
``_ref``. A type alias is a module-level value of kind TYPE whose ``item`` is what the annotation
means, so it travels between files in the interfaces like any other module-level value. What an
annotation says without reading those (``Optional[Tensor]``, not a name of this file or another)
is the same for every evaluator of the file (a project's, one without, the variants that assume
tensors in parameters): kept on the file's index (``FileIndex.plain_annotations``), made once.
"""

from __future__ import annotations

from typing import Optional

import libcst as cst

from torchsync_lint.inference import containers
from torchsync_lint.inference import torch_api as api
from torchsync_lint.inference.names import dotted
from torchsync_lint.inference.roots import DICT_CLASSES
from torchsync_lint.inference.torch_calls import BOOL, EXTERNAL_ROOTS, TYPED_TENSORS
from torchsync_lint.inference.values import (
    DEVICE,
    DICT,
    DTYPE,
    FUNC,
    LIST,
    MAX_KEYS,
    MODULE,
    NDARRAY,
    NONE,
    OBJECT,
    SIZE,
    STR,
    TENSOR,
    TUPLE,
    TYPE,
    UNKNOWN,
    UNKNOWN_VALUE,
    Value,
    join,
    join_maybe,
    number,
    tensor,
)

# jaxtyping's dtype heads (``Float[Tensor, "b n"]``): the dtype family they promise
JAXTYPING_DTYPES = {"Float": "float", "Float16": "float", "Float32": "float", "Float64": "float",
                    "BFloat16": "float", "Int": "int", "Int8": "int", "Int16": "int", "Int32": "int",
                    "Int64": "int", "UInt": "int", "UInt8": "int", "Integer": "int", "Bool": "bool",
                    "Shaped": None, "Num": None, "Real": None, "Inexact": None, "Complex": None}
_CONTAINERS = ("List", "list", "Sequence", "Iterable", "Iterator", "MutableSequence")
_MAPPINGS = ("Dict", "dict", "Mapping", "MutableMapping", "OrderedDict", "DefaultDict", "defaultdict")
_TYPING_ROOTS = ("typing", "typing_extensions", "collections", "builtins", "jaxtyping", "torchtyping")


def _union(vals) -> Value:
    """``Union[...]`` / ``a | b``: None drops out; an array that may be numpy or torch is a tensor
    for the rules (on the GPU path its methods are tensor methods, and only tensors can sync)."""
    vals = [v for v in vals if v.kind != NONE]
    if not vals:
        return Value(NONE)
    if any(v.kind == DEVICE for v in vals) and all(v.kind in (DEVICE, STR) for v in vals):
        return Value(DEVICE)  # `device: str | torch.device`
    tensors = [v for v in vals if v.kind == TENSOR]
    if tensors and all(v.kind in (TENSOR, NDARRAY) for v in vals):
        out = tensors[0]
        for v in tensors[1:]:
            out = join(out, v)
        return out.with_(arraylike=len(tensors) < len(vals) or out.arraylike)
    out = vals[0]
    for v in vals[1:]:
        out = join_maybe(out, v)  # `Union[Tensor, float]`: maybe a tensor
    return out


def without_arraylike(v: Value) -> Value:
    """A return annotation's "array or tensor" says nothing: the function's body decides."""
    if v.kind == TENSOR and v.arraylike:
        return UNKNOWN_VALUE
    if v.elts:
        return v.with_(elts=tuple(without_arraylike(e) for e in v.elts))
    if v.keys:
        v = v.with_(keys=tuple((k, without_arraylike(x)) for k, x in v.keys))
    if v.item is not None:
        item = without_arraylike(v.item)
        return v.with_(item=item if item.kind != UNKNOWN else None)
    return v


class Annotations:
    def annotation_value(self, ann: cst.BaseExpression, depth: int = 0) -> Value:
        """Memoised per annotation node: typed code asks about the same ones again and again."""
        memo = self._annotation_memo
        hit = memo.get(id(ann))
        if hit is not None and hit[0] is ann:
            return hit[1]
        # read by another evaluator of the file already (whole annotations only: a nested one's
        # answer also depends on how deep it sits)
        plain = self.index.plain_annotations if depth == 0 else None
        hit = plain.get(id(ann)) if plain is not None else None
        if hit is not None and hit[0] is ann:
            return hit[1]
        mark = self._context_reads
        v = self._annotation_value(ann, depth)
        if v.ref is None:  # a reference resolves later, through the project
            memo[id(ann)] = (ann, v)
            if plain is not None and self._context_reads == mark:
                plain[id(ann)] = (ann, v)
        return v

    def _annotation_value(self, ann: cst.BaseExpression, depth: int) -> Value:
        if depth > 8:
            self._context_reads += 1  # cut short: what the nesting around it asked decides
            return UNKNOWN_VALUE
        if type(ann) is cst.SimpleString:
            try:
                text = ann.evaluated_value
                ann = cst.parse_expression(text) if isinstance(text, str) else ann
            except Exception:
                return UNKNOWN_VALUE
        if type(ann) is cst.Subscript:
            return self._subscripted(ann, depth)
        if type(ann) is cst.BinaryOperation and type(ann.operator) is cst.BitOr:
            return _union([self.annotation_value(ann.left, depth + 1), self.annotation_value(ann.right, depth + 1)])
        if type(ann) is cst.Name and ann.value == "None":
            return Value(NONE)
        name = self.aliases.qualify(ann) or dotted(ann) or ""
        last = name.split(".")[-1]
        if containers.is_container_class(name):
            return containers.container()  # `tensordict: TensorDictBase`: its leaves are tensors
        if name in api.DATA_LOADERS:
            # pin_memory not known here (`assumed`: the batches it yields may be pinned)
            return Value(OBJECT, cls="torch.utils.data.DataLoader", assumed=True)
        if name.startswith(api.DISTRIBUTION_PREFIX) and (last in api.VALIDATING_DISTRIBUTIONS or last == "Distribution"):
            # `-> distributions.Normal`: declared, not seen built (`assumed`: validate_args unknown)
            return Value(OBJECT, cls=api.DISTRIBUTION_PREFIX + last, assumed=True)
        if name.startswith("torch.") or last == "Tensor" or name in ("Tensor",):
            if last in TYPED_TENSORS:
                return tensor(dtype=TYPED_TENSORS[last] if last != "Tensor" else None)
            if last == "Parameter":
                return tensor()
            if last == "Size":
                return Value(SIZE)
            if last == "device":
                return Value(DEVICE)
            if last == "dtype":
                return Value(DTYPE)
            if name in ("torch.nn.Module", "torch.nn.modules.module.Module"):
                return Value(MODULE, cls="torch.nn.Module")  # `model: nn.Module`: calling it gives a tensor
            return UNKNOWN_VALUE
        if name.startswith("torchtyping.") and last == "TensorType":
            return tensor()
        if name in ("builtins.int", "builtins.float"):
            return number(last)
        if name == "builtins.bool":
            return BOOL
        if name == "builtins.str":
            return Value(STR)
        if name in ("builtins.list",):
            return Value(LIST)
        if name in ("builtins.tuple",):
            return Value(TUPLE)
        if name.startswith("numpy.") and last in ("ndarray", "array"):
            return Value(NDARRAY)
        return self._type_alias(ann, name, depth)

    def _subscripted(self, ann: cst.Subscript, depth: int) -> Value:
        head = self.aliases.qualify(ann.value) or dotted(ann.value) or ""
        last = head.split(".")[-1]
        inner = [e.slice.value for e in ann.slice if type(e.slice) is cst.Index]
        if head.startswith("jaxtyping.") and last in JAXTYPING_DTYPES and inner:
            base = self.annotation_value(inner[0], depth + 1)
            if base.kind == TENSOR:
                return tensor(dtype=JAXTYPING_DTYPES[last] or base.dtype)
            return base
        if head.startswith("torchtyping.") and last == "TensorType":
            return tensor()
        if last in ("Optional", "Annotated", "Final", "ClassVar", "Required", "NotRequired") and inner:
            return self.annotation_value(inner[0], depth + 1)
        if last == "Union" and inner:
            return _union([self.annotation_value(i, depth + 1) for i in inner])
        if last in _CONTAINERS:
            return Value(LIST, item=self._item(inner[0], depth) if len(inner) == 1 else None)
        if last in ("Tuple", "tuple"):
            if len(inner) == 2 and type(inner[1]) is cst.Ellipsis:  # tuple[Tensor, ...]
                return Value(TUPLE, item=self._item(inner[0], depth))
            return Value(TUPLE, elts=tuple(self.annotation_value(i, depth + 1) for i in inner
                                           if type(i) is not cst.Ellipsis))
        if last in _MAPPINGS:
            return Value(DICT, item=self._item(inner[1], depth) if len(inner) == 2 else None)
        if last == "Callable" and len(inner) == 2:
            # `dist_fn: Callable[[Tensor], Distribution]`: calling it gives what it declares
            result = self._item(inner[1], depth)
            return Value(FUNC, item=result) if result is not None else UNKNOWN_VALUE
        return UNKNOWN_VALUE

    def _item(self, ann: cst.BaseExpression, depth: int = 0) -> Optional[Value]:
        v = self.annotation_value(ann, depth + 1)
        return v if v.kind != UNKNOWN else None

    def _type_alias(self, ann: cst.BaseExpression, name: str, depth: int = 0) -> Value:
        """A name bound to a type: in this file (a module-level TYPE value), else through the
        project (``("type", qualified name)``, resolved to the alias's meaning); a class of the
        project (here or there) means an instance of it, declared (``assumed``); a ``TypedDict``, a
        dict whose keys hold what its fields declare."""
        # the answer depends on the evaluator (its module scope, its project): not shared
        self._context_reads += 1
        if type(ann) is cst.Name:
            v = self.module_scope().lookup(ann.value)
            if v is not None and v.kind == TYPE and v.item is not None:
                return v.item
            cls = self.index.classes.get(ann.value)
            if v is None and cls is not None and cls.key in (ann.value, f"{self.index.module_name}.{ann.value}"):
                if any(b.split(".")[-1] in DICT_CLASSES for b in cls.bases):
                    # `batch: Batch` of a TypedDict: a dict whose keys hold what its fields declare
                    fields = [(n, self.annotation_value(a, depth + 1)) for n, a in cls.class_fields.items()]
                    return Value(DICT, keys=tuple(fields[:MAX_KEYS]))
                # `out: Output` of a class of this file: an instance, declared (`assumed`)
                got = self._instance(cls)
                return got.with_(assumed=True) if got.ref is None else got
            imported = bool(name) and not name.startswith(self.index.module_name + ".")
            if v is not None and not (imported and v.kind == UNKNOWN):
                return UNKNOWN_VALUE  # a value of this file, not a type
        if name and "." in name and name.split(".")[0] not in EXTERNAL_ROOTS and name.split(".")[0] not in _TYPING_ROOTS:
            return self._ref(("type", name))
        return UNKNOWN_VALUE

    def type_expression(self, e: cst.BaseExpression) -> Optional[Value]:
        """``np.ndarray | torch.Tensor``, ``Union[...]``, ``Optional[Tensor]`` on the right of a
        module-level assignment: a TYPE value (what an annotation with that name means), or None
        when ``e`` is no type expression."""
        if type(e) is cst.BinaryOperation and type(e.operator) is cst.BitOr:
            if not (self._names_type(e.left) and self._names_type(e.right)):
                return None
        elif type(e) is cst.Subscript:
            head = self.aliases.qualify(e.value) or ""
            if head.split(".")[0] not in _TYPING_ROOTS:
                return None
        elif type(e) is cst.Call:  # TypeVar("T", bound=NdarrayOrTensor) / TypeVar("T", A, B)
            if (self.aliases.qualify(e.func) or "").split(".")[-1] != "TypeVar":
                return None
            bound = [a.value for a in e.args if a.keyword is not None and a.keyword.value == "bound"]
            options = bound or [a.value for a in e.args[1:] if a.keyword is None]
            meaning = _union([self.annotation_value(o) for o in options]) if options else UNKNOWN_VALUE
            return Value(TYPE, item=meaning if meaning.kind != UNKNOWN or meaning.ref is not None else None)
        elif type(e) in (cst.Name, cst.Attribute):
            # `LongTensor = torch.Tensor`: only a tensor class reads as a type here; any other
            # name on the right may be a value (`lib = torch`, `default = Model`)
            meaning = self.annotation_value(e)
            return Value(TYPE, item=meaning) if meaning.kind == TENSOR else None
        else:
            return None
        meaning = self.annotation_value(e)
        return Value(TYPE, item=meaning) if meaning.kind != UNKNOWN or meaning.ref is not None else None

    def declared_alias(self, ann: cst.BaseExpression, value: cst.BaseExpression) -> Optional[Value]:
        """``MappedTriples: TypeAlias = LongTensor``: the annotation says the value is a type, so
        any name on the right (this file's alias, an imported one) is read as one."""
        if (self.aliases.qualify(ann) or dotted(ann) or "").split(".")[-1] != "TypeAlias":
            return None
        meaning = self.annotation_value(value)
        return Value(TYPE, item=meaning if meaning.kind != UNKNOWN or meaning.ref is not None else None)

    def _names_type(self, e: cst.BaseExpression) -> bool:
        if type(e) is cst.BinaryOperation and type(e.operator) is cst.BitOr:
            return self._names_type(e.left) and self._names_type(e.right)
        if type(e) is cst.Name and e.value == "None":
            return True
        if type(e) is cst.Subscript:
            return self.type_expression(e) is not None
        q = self.aliases.qualify(e) or ""
        if q.split(".")[0] in ("torch", "numpy", "builtins") or q.startswith(_TYPING_ROOTS):
            return True
        return type(e) is cst.Name and (self.module_scope().lookup(e.value) or UNKNOWN_VALUE).kind == TYPE
