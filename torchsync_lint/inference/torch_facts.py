"""Facts about torch's API, read from data generated from torch itself (never imports torch).

The data file `inference/data/torch_api.json` is written by
`python -m torchsync_lint.inference.data.generate_torch_api` from the installed torch's stubs,
sources and native schemas; `tests/test_torch_api_data.py` fails when it is stale for the pinned
torch. This module loads it once, lazily, and answers per call expression (memoised):

    function("torch.nonzero")            -> CallableFacts | None   (also torch.nn.functional.*, linalg...)
    tensor_only_methods()                 -> {"type_as", "masked_fill", ...}: only a tensor has them
    float_constants()                     -> {"torch.inf", "torch.pi", ...}
    method("item")                        -> CallableFacts | None   (Tensor methods: "Tensor.<name>")
    attribute("shape")                    -> CallableFacts | None   (Tensor attributes and properties)
    lookup("Distribution.sample")         -> any entry by its key ("torch.Tensor.x" = "Tensor.x")
    returns("torch.max", 2, ("keepdim",)) -> Returns(kind="tensor_tuple", n=2, fields=("values", "indices"))
    returns("Tensor.size", 1)             -> Returns(kind="int");  returns("Tensor.size", 0) -> size
    returns("torch.unique", 1, ("return_counts",), constants={"return_counts": True}) -> tuple of 2

Return kinds: tensor, tensor_tuple (fixed n, element kinds `elts`, `fields` for torch.return_types),
tensor_list, bool, int, float, number, complex, size, list, tuple, none, dtype, device, str, storage,
generator, object (an instance of a class: `cls`), unknown. `optional` marks `X | None`.

Overload choice (`returns`, `overloads_for`): an overload fits when the call's positional count and
keywords fill its required parameters and name only parameters it has; `constants` (known literal
arguments, by position or keyword) rule out overloads whose `Literal[...]` parameter (or
boolean_dispatch branch: `return_indices=True`) disagrees; `arg_kinds` (kinds of the positional
arguments, None where unknown) make an overload fit better where a typed parameter takes the
argument, worse where it cannot; passing a value to a parameter typed only `None` fits worse too.
The best-fitting overloads' returns are joined: torch.max(x, 1) with unknown argument kinds is
`unknown` (max(x, other) returns a tensor, max(x, dim) a tuple); with arg_kinds=(None, "int") it is
the tuple. When no overload fits, the join over all overloads.

Flags of CallableFacts: device_params / dtype_params (parameter names that set them), out (takes out=),
factory (some overload makes a tensor from no tensor input and takes a device), host_data (copies
Python/numpy data: torch.tensor, as_tensor, asarray, from_numpy, legacy FloatTensor), like (device
and dtype follow the first argument: zeros_like), inplace and returns_self (Tensor methods),
validate_args (distributions that validate their arguments).
"""

from __future__ import annotations

import functools
import json
import os
from dataclasses import dataclass
from typing import Any, Mapping, Optional, Sequence, Union

DATA_PATH = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "torch_api.json")
NUMERIC_ORDER = ("bool", "int", "float", "number", "complex")
SEQUENCE_KINDS = frozenset({"list", "tuple", "size", "tensor_list", "tensor_tuple"})


@dataclass(frozen=True)
class Returns:
    kind: str
    n: Optional[int] = None
    elts: tuple[str, ...] = ()
    fields: tuple[str, ...] = ()
    optional: bool = False
    is_self: bool = False
    cls: Optional[str] = None


@dataclass(frozen=True)
class Param:
    name: str
    accepts: frozenset[str]  # empty: not annotated
    required: bool = False
    keyword_only: bool = False
    positional_only: bool = False
    var_positional: bool = False
    var_keyword: bool = False
    literals: Optional[tuple] = None  # Literal[...] values (or a boolean_dispatch branch)


@dataclass(frozen=True)
class Overload:
    params: tuple[Param, ...]
    returns: Returns
    factory: bool = False


@dataclass(frozen=True)
class CallableFacts:
    qualname: str
    kind: str  # function, method, class, attribute
    source: str
    returns: Returns
    overloads: tuple[Overload, ...] = ()
    device_params: tuple[str, ...] = ()
    dtype_params: tuple[str, ...] = ()
    out: bool = False
    factory: bool = False
    host_data: bool = False
    like: bool = False
    inplace: bool = False
    returns_self: bool = False
    validate_args: bool = False


UNKNOWN = Returns("unknown")
FLAGS = ("out", "factory", "host_data", "like", "inplace", "returns_self", "validate_args")


@functools.cache
def data() -> dict:
    """The raw JSON object (format, torch_version, return_types, api)."""
    with open(DATA_PATH, encoding="utf-8") as f:
        return json.load(f)


def torch_version() -> str:
    return data()["torch_version"]


@functools.cache
def tensor_only_methods() -> frozenset[str]:
    """Tensor methods no numpy array, pandas object, nn.Module or Python builtin has: calling one
    says the receiver is a tensor."""
    return frozenset(data()["tensor_only_methods"])


@functools.cache
def framework_methods() -> frozenset[str]:
    """Method names of torch's framework classes (modules, optimizers, schedulers, datasets,
    loaders, distributions, scalers) and Python's containers."""
    return frozenset(data()["framework_methods"])


@functools.cache
def module_self_methods() -> frozenset[str]:
    """`nn.Module` methods that return the module itself (`to`, `cuda`, `eval`, `train`...)."""
    return frozenset(data()["module_self_methods"])


@functools.cache
def stateless_modules() -> frozenset[str]:
    """torch.nn module classes without parameters or buffers (`torch.nn.ReLU`)."""
    return frozenset(data()["stateless_modules"])


@functools.cache
def float_constants() -> frozenset[str]:
    """`torch.inf`, `torch.pi`...: Python floats."""
    return frozenset(data()["float_constants"])


def _returns(raw: Mapping[str, Any]) -> Returns:
    return Returns(raw["kind"], raw.get("n"), tuple(raw.get("elts", ())), tuple(raw.get("fields", ())),
                   bool(raw.get("optional")), bool(raw.get("self")), raw.get("class"))


def _param(raw: list) -> Param:
    flags = raw[2]
    return Param(raw[0], frozenset(k for k in raw[1].split("|") if k), "r" in flags, "k" in flags,
                 "p" in flags, flags == "*", flags == "**", tuple(raw[3]) if len(raw) > 3 else None)


@functools.lru_cache(maxsize=16384)  # bounded: a long flake8 session may ask about many names
def lookup(qualname: str) -> Optional[CallableFacts]:
    """Any entry by key; `torch.Tensor.x` is read as `Tensor.x`."""
    if qualname.startswith("torch.Tensor."):
        qualname = qualname[len("torch."):]
    raw = data()["api"].get(qualname)
    if raw is None:
        return None
    overloads = tuple(Overload(tuple(_param(p) for p in o["params"]), _returns(o["returns"]),
                               bool(o.get("factory"))) for o in raw.get("overloads", ()))
    flags = {name: bool(raw.get(name)) for name in FLAGS}
    return CallableFacts(qualname, raw["kind"], raw["source"], _returns(raw["returns"]), overloads,
                         tuple(raw.get("device_params", ())), tuple(raw.get("dtype_params", ())), **flags)


def function(qualname: str) -> Optional[CallableFacts]:
    """A torch function or class by qualified name (torch.x, torch.nn.functional.x, torch.linalg.x)."""
    facts = lookup(qualname)
    return facts if facts is not None and facts.kind in ("function", "class") else None


def method(name: str) -> Optional[CallableFacts]:
    facts = lookup("Tensor." + name)
    return facts if facts is not None and facts.kind == "method" else None


def attribute(name: str) -> Optional[CallableFacts]:
    facts = lookup("Tensor." + name)
    return facts if facts is not None and facts.kind == "attribute" else None


def compatible(kind: Optional[str], accepts: frozenset[str]) -> bool:
    """Whether an argument of `kind` may be passed to a parameter accepting `accepts`."""
    if kind is None or kind == "unknown" or not accepts or "unknown" in accepts or kind in accepts:
        return True
    if kind in NUMERIC_ORDER:
        rank = NUMERIC_ORDER.index(kind)
        return any(k in NUMERIC_ORDER and NUMERIC_ORDER.index(k) >= rank for k in accepts) or (
            kind == "number" and bool(accepts & set(NUMERIC_ORDER)))
    return kind in SEQUENCE_KINDS and bool(accepts & SEQUENCE_KINDS)


def _literal_ok(value: Any, literals: Optional[tuple]) -> bool:
    # True == 1 in Python: compare types too, so Literal[True] does not accept 1
    return literals is None or any(type(value) is type(v) and value == v for v in literals)


def _fit(overload: Overload, count: int, keywords: frozenset, constants: tuple, kinds: tuple) -> Optional[int]:
    """How well a call fits an overload: None when it cannot, else a score (higher fits better)."""
    params = overload.params
    positional = [p for p in params if not (p.keyword_only or p.var_positional or p.var_keyword)]
    var_pos = next((p for p in params if p.var_positional), None)
    var_kw = any(p.var_keyword for p in params)
    if count > len(positional) and var_pos is None:
        return None
    filled = {p.name: p for p in positional[:count]}
    by_name = {p.name: p for p in params if not (p.var_positional or p.var_keyword)}
    for kw in keywords:
        p = by_name.get(kw)
        if p is None or p.positional_only:
            if not var_kw:
                return None
            continue
        if kw in filled:
            return None
        filled[kw] = p
    if any(p.required and p.name not in filled for p in params if not (p.var_positional or p.var_keyword)):
        return None
    score = 0
    for key, value in constants:
        p = (positional[key] if key < len(positional) else var_pos) if isinstance(key, int) else by_name.get(key)
        if p is not None and not _literal_ok(value, p.literals):
            return None
    for i, kind in enumerate(kinds[:count]):
        p = positional[i] if i < len(positional) else var_pos
        if p is None or kind in (None, "unknown"):
            continue
        if not compatible(kind, p.accepts):
            score -= 1
        elif p.accepts and "unknown" not in p.accepts:
            score += 1  # a typed parameter that takes it beats a catch-all (`other: object`)
    score -= sum(1 for p in filled.values() if p.accepts == {"none"})
    return score


@functools.lru_cache(maxsize=65536)
def _choose(qualname: str, count: int, keywords: frozenset, constants: tuple, kinds: tuple) -> tuple[Overload, ...]:
    facts = lookup(qualname)
    if facts is None:
        return ()
    scored = [(s, o) for o in facts.overloads if (s := _fit(o, count, keywords, constants, kinds)) is not None]
    if not scored:
        return ()
    best = max(s for s, _ in scored)
    return tuple(o for s, o in scored if s == best)


def overloads_for(qualname: str, positional_count: int = 0, keywords: Sequence[str] = (), *,
                  constants: Optional[Mapping[Union[int, str], Any]] = None,
                  arg_kinds: Sequence[Optional[str]] = ()) -> tuple[Overload, ...]:
    """The overloads a call fits best (empty when none fits or the name is unknown)."""
    given = dict(constants or {})
    named = frozenset(keywords) | {k for k in given if isinstance(k, str)}
    # an unhashable value (a list...) cannot match a Literal: it only says the argument is there
    frozen_constants = tuple(sorted(((k, v) for k, v in given.items() if _hashable(v)), key=repr))
    return _choose(qualname, positional_count, named, frozen_constants, tuple(arg_kinds))


def _hashable(value: Any) -> bool:
    try:
        hash(value)
    except TypeError:
        return False
    return True


def returns(qualname: str, positional_count: int = 0, keywords: Sequence[str] = (), *,
            constants: Optional[Mapping[Union[int, str], Any]] = None,
            arg_kinds: Sequence[Optional[str]] = ()) -> Returns:
    """What a call returns (see the module docstring); UNKNOWN for names not in the data."""
    facts = lookup(qualname[len("torch."):] if qualname.startswith("torch.Tensor.") else qualname)
    if facts is None:
        return UNKNOWN
    chosen = overloads_for(facts.qualname, positional_count, keywords, constants=constants, arg_kinds=arg_kinds)
    if not chosen:
        return facts.returns
    return join([o.returns for o in chosen])


def join(values: Sequence[Returns]) -> Returns:
    """One Returns for several: equal ones stay, numbers join to number, other mixes are unknown."""
    if not values:
        return UNKNOWN
    first = values[0]
    if all(v == first for v in values):
        return first
    optional = any(v.optional for v in values)
    kinds = {v.kind for v in values}
    if len(kinds) == 1:
        n = first.n if all(v.n == first.n for v in values) else None
        elts = first.elts if all(v.elts == first.elts for v in values) else ()
        return Returns(first.kind, n, elts, optional=optional)
    if kinds <= set(NUMERIC_ORDER):
        return Returns("number", optional=optional)
    return Returns("unknown")
