"""Where the hand-kept lists in inference/torch_api.py disagree with the generated torch facts.

    python -m torchsync_lint.inference.data.compare_torch_api

Prints one line per disagreement, grouped by list: `contradicts` where the data says the opposite
(a "non-tensor" name that returns a tensor), `differs` where both say "not a tensor" but name another
kind, `absent` where the data has no such name (a typo, an alias, or a namespace the data leaves
out). Dtype lists (BOOL_OPS, INT_OPS, DTYPE_KEEPING) are not compared: the stubs carry no dtypes.
No torch import.
"""

from __future__ import annotations

import sys
from typing import Iterator, Optional

from torchsync_lint.inference import torch_api as hand
from torchsync_lint.inference import torch_facts as facts

TENSORISH = frozenset({"tensor", "tensor_tuple", "tensor_list"})
MULTI = frozenset({"tensor_tuple", "tensor_list"})
SCALAR = frozenset({"bool", "int", "float", "number", "complex"})


def _kinds(entry: facts.CallableFacts) -> set[str]:
    """The return kinds of an entry: its join, and each overload's."""
    return {entry.returns.kind} | {o.returns.kind for o in entry.overloads}


def _line(group: str, name: str, verdict: str, detail: str) -> str:
    return f"{group}: {name}: {verdict}: {detail}"


def _torch_names(group: str, names, want: str, attr: Optional[str] = None) -> Iterator[str]:
    for name in sorted(names):
        entry = facts.lookup(name)
        if entry is None:
            yield _line(group, name, "absent", "no such callable in the data")
        elif attr is not None and not getattr(entry, attr):
            yield _line(group, name, "contradicts", f"data: {attr}=False, returns {sorted(_kinds(entry))}")
        elif want == "multi" and not (_kinds(entry) & MULTI):
            yield _line(group, name, "contradicts", f"data returns {sorted(_kinds(entry))}")


def _non_tensor(group: str, pairs) -> Iterator[str]:
    for name, said in sorted(pairs):
        entry = facts.lookup(name)
        if entry is None:
            yield _line(group, name, "absent", f"list says {said}")
            continue
        kinds = _kinds(entry)
        if kinds & TENSORISH:
            yield _line(group, name, "contradicts", f"list says {said}, data returns {sorted(kinds)}")
        elif said not in kinds and not (said == "number" and kinds <= SCALAR):
            yield _line(group, name, "differs", f"list says {said}, data returns {sorted(kinds)}")


def _prefixed(group: str, prefixes, allowed: Optional[frozenset] = None) -> Iterator[str]:
    for name in sorted(facts.data()["api"]):
        if not name.startswith(tuple(prefixes)):
            continue
        kinds = _kinds(facts.lookup(name))
        if allowed is None and kinds & TENSORISH:
            yield _line(group, name, "contradicts", f"prefix says no tensor, data returns {sorted(kinds)}")
        elif allowed is not None and not kinds <= allowed:
            yield _line(group, name, "differs", f"prefix says {sorted(allowed)}, data returns {sorted(kinds)}")


def _tensor_members(group: str, names, want: str) -> Iterator[str]:
    for name in sorted(names):
        entry = facts.lookup("Tensor." + name)
        if entry is None:
            if want != "not_tensor":
                yield _line(group, name, "absent", "no Tensor method or attribute of that name")
            continue
        kinds = _kinds(entry)
        if want == "not_tensor":
            yield _line(group, name, "contradicts", f"Tensor.{name} exists ({entry.kind}), returns {sorted(kinds)}")
        elif want == "scalar" and kinds & TENSORISH:
            yield _line(group, name, "contradicts", f"data returns {sorted(kinds)}")
        elif want == "scalar" and not kinds <= SCALAR:
            yield _line(group, name, "differs", f"data returns {sorted(kinds)}")
        elif want == "multi" and not kinds & MULTI:
            yield _line(group, name, "contradicts", f"data returns {sorted(kinds)}")
        elif want == "tensor" and not kinds <= {"tensor"}:
            yield _line(group, name, "differs", f"data returns {sorted(kinds)}")


def _missing_from_lists() -> Iterator[str]:
    """Facts the data has and the lists lack (host-data and like-factories, multi-tensor returns)."""
    api = facts.data()["api"]
    for name in sorted(api):
        entry = facts.lookup(name)
        if not name.startswith("torch.") or name.count(".") != 1:
            continue
        if entry.host_data and name not in hand.HOST_DATA_FACTORIES:
            yield _line("HOST_DATA_FACTORIES", name, "missing", "data: takes host data")
        if entry.like and name not in hand.LIKE_FACTORIES:
            yield _line("LIKE_FACTORIES", name, "missing", "data: *_like")
        if entry.factory and name not in hand.FACTORIES | hand.HOST_DATA_FACTORIES | hand.LIKE_FACTORIES:
            yield _line("FACTORIES", name, "missing", "data: makes a tensor from no tensor, takes device=")


def report() -> list[str]:
    lines: list[str] = []
    lines += _torch_names("HOST_DATA_FACTORIES", hand.HOST_DATA_FACTORIES, "", "host_data")
    lines += _torch_names("FACTORIES", hand.FACTORIES, "", "factory")
    lines += _torch_names("LIKE_FACTORIES", hand.LIKE_FACTORIES, "", "like")
    lines += _torch_names("TORCH_MULTI", hand.TORCH_MULTI, "multi")
    lines += _non_tensor("TORCH_NON_TENSOR", hand.TORCH_NON_TENSOR.items())
    lines += _prefixed("TORCH_NON_TENSOR_PREFIXES", hand.TORCH_NON_TENSOR_PREFIXES)
    lines += _prefixed("TORCH_PREDICATE_PREFIXES", hand.TORCH_PREDICATE_PREFIXES, frozenset({"bool"}))
    lines += _tensor_members("NOT_TENSOR_METHODS", hand.NOT_TENSOR_METHODS, "not_tensor")
    lines += _tensor_members("METHOD_NUMBER", hand.METHOD_NUMBER, "scalar")
    lines += _tensor_members("METHOD_MULTI", hand.METHOD_MULTI, "multi")
    lines += _tensor_members("METHOD_MULTI_WITH_DIM", hand.METHOD_MULTI_WITH_DIM, "multi")
    lines += _tensor_members("ATTR_NUMBER", hand.ATTR_NUMBER, "scalar")
    lines += _tensor_members("ATTR_TENSOR", hand.ATTR_TENSOR, "tensor")
    lines += _missing_from_lists()
    return lines


def main() -> int:
    lines = report()
    print(f"# hand-kept lists vs torch {facts.torch_version()} data: {len(lines)} lines")
    for line in lines:
        print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
