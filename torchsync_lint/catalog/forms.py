"""Argument forms: deciding a call from the catalog's hand-measured variants (issue #9).

Some ops sync or not depending on the *form* of an argument (lengths as a GPU tensor, a CPU
tensor or a Python list; ``enforce_sorted``; a ``reduction``). ``recipes.ARGUMENT_RECIPES`` measures
such forms on a GPU; each measured row carries a ``form`` (parameter -> form, see ``synth``) and the
entry a ``recipe`` (the parameters in positional order, the defaults of its literal parameters).

A rule describes what it knows of each argument of a call as an ``Observed``; ``decide`` matches
it against the measured forms. Never imports torch (or LibCST): the rule does the looking.
"""

from __future__ import annotations

import ast
from typing import Dict, List, NamedTuple, Optional, Tuple

from torchsync_lint import catalog

# What an argument is, as far as the rule can tell.
CUDA, CPU, TENSOR, LIST, NUMBER, ABSENT, LITERAL, OTHER = "cuda", "cpu", "tensor", "list", "number", "absent", \
    "literal", "other"


class Observed(NamedTuple):
    kind: Optional[str]  # one of the kinds above; None: unknown. TENSOR: a tensor of unknown device
    literal: object = None  # kind LITERAL (and NUMBER from a literal): its value
    ndim: Optional[int] = None  # tensors: number of dimensions, when known
    dtype: Optional[str] = None  # tensors: "int" / "float" / "bool", when known


class Variant(NamedTuple):
    label: str
    form: Dict[str, str]
    synced: bool
    stall_us: int


class Forms(NamedTuple):
    params: Tuple[str, ...]
    defaults: Dict[str, object]
    variants: Tuple[Variant, ...]  # only decided rows (a form that could not run tells nothing)


def forms(qualname: str) -> Optional[Forms]:
    """The measured argument forms of a callable, or None when it has none."""
    e = catalog.entry(qualname)
    if not e or not e.get("recipe"):
        return None
    rows = tuple(Variant(label, row["form"], row["synced"], row.get("stall_us", 0))
                 for label, row in sorted(e["variants"].items()) if row.get("form") and row["synced"] is not None)
    if not rows:
        return None
    return Forms(tuple(e["recipe"]["params"]), dict(e["recipe"].get("defaults", {})), rows)


def callables() -> List[str]:
    """Every callable with measured argument forms."""
    return sorted(q for q, e in catalog.entries().items() if e.get("recipe"))


_KIND_DTYPES = {"int32": "int", "int64": "int", "float32": "float"}


def term(form: str, seen: Observed, default: object = ABSENT) -> Optional[bool]:
    """Does an argument seen as ``seen`` have the measured ``form``? None: cannot tell.
    ``default``: the parameter's default (``ABSENT`` when it has none), for an argument not passed."""
    if form.startswith("="):
        want = ast.literal_eval(form[1:])
        if seen.kind == ABSENT:
            return default is not ABSENT and default == want and type(default) is type(want)
        if seen.kind in (LITERAL, NUMBER) and seen.literal is not None:
            return seen.literal == want and type(seen.literal) is type(want)
        return None if seen.kind in (None, NUMBER, LITERAL) else False
    kind, *quals = form.split(":")
    if kind == ABSENT:
        if seen.kind == ABSENT:
            return True
        return None if seen.kind is None else False
    if seen.kind is None:
        return None
    if kind in (CUDA, CPU):
        if seen.kind not in (CUDA, CPU, TENSOR):
            return False
        for q in quals:
            if q.endswith("d") and q[:-1].isdigit() and seen.ndim is not None and seen.ndim != int(q[:-1]):
                return False
            if q in _KIND_DTYPES and seen.dtype is not None and seen.dtype != _KIND_DTYPES[q]:
                return False
        if seen.kind == TENSOR:
            return None
        return seen.kind == kind
    if kind == LIST:
        return seen.kind == LIST
    if kind == NUMBER:
        return seen.kind == NUMBER
    return None


def decide(f: Forms, args: Dict[str, Observed]) -> Tuple[Optional[bool], Optional[Variant]]:
    """(synced, the variant that says so) for a call whose arguments are ``args`` (parameter ->
    what is seen; a parameter missing from ``args`` was not passed). A variant is *possible* when
    none of its terms is contradicted; the call is decided when every possible variant agrees (the
    ones matched on every term first), and None (unknown) otherwise."""
    possible, exact = [], []
    for v in f.variants:
        results = []
        for param, form in v.form.items():
            if param.startswith("init."):  # a module's constructor argument: not seen at the call
                results.append(None)
                continue
            seen = args.get(param, Observed(ABSENT))
            results.append(term(form, seen, f.defaults.get(param, ABSENT)))
        if False in results:
            continue
        possible.append(v)
        if all(r is True for r in results):
            exact.append(v)
    for group in (exact, possible):
        verdicts = {v.synced for v in group}
        if len(verdicts) == 1:
            return verdicts.pop(), group[0]
    return None, None
