"""From overload records to one callable's facts (join of returns, device/dtype parameters, factory...).

Pure data work, no torch: the generator calls it, and the tests can too.
"""

from __future__ import annotations

from typing import Optional

from torchsync_lint.inference.data.annotations import join_kinds

DEVICE_PARAMS = frozenset({"device"})
DTYPE_PARAMS = frozenset({"dtype"})
# Names under which torch's constructors take Python/numpy/buffer data to copy into a tensor.
HOST_DATA_PARAMS = frozenset({"data", "obj", "ndarray", "buffer"})


def join_returns(returns: list[dict]) -> dict:
    """One return description for several overloads: equal ones stay, else the kinds are joined."""
    if not returns:
        return {"kind": "unknown"}
    optional = any(r.get("optional") for r in returns)
    bare = [{k: v for k, v in r.items() if k != "optional"} for r in returns]
    if all(b == bare[0] for b in bare):
        result = dict(bare[0])
    else:
        kinds = [b["kind"] for b in bare]
        result = {"kind": join_kinds(kinds)}
        if len(set(kinds)) == 1 and all(b.get("n") == bare[0].get("n") for b in bare) and "n" in bare[0]:
            result["n"] = bare[0]["n"]
            elts = [b.get("elts") for b in bare]
            if all(e == elts[0] for e in elts):
                result["elts"] = elts[0]
    if optional:
        result["optional"] = True
    return result


def _accepts_tensor(param: list) -> bool:
    return "tensor" in param[1].split("|")


def _is_factory_overload(overload: dict) -> bool:
    """Makes a tensor on a chosen device from no tensor input (out= aside)."""
    names = {p[0] for p in overload["params"]}
    if overload["returns"]["kind"] != "tensor" or not names & DEVICE_PARAMS:
        return False
    return not any("r" in p[2] and _accepts_tensor(p) for p in overload["params"] if p[0] != "out")


def callable_facts(name: str, overloads: list[dict], *, kind: str, source: str,
                   returns: Optional[dict] = None, method: bool = False) -> dict:
    """The record stored for one callable. False flags and empty lists are left out to keep it small."""
    param_names = {p[0] for o in overloads for p in o["params"]}
    joined = returns if returns is not None else join_returns([o["returns"] for o in overloads])
    facts: dict = {"kind": kind, "source": source, "returns": joined, "overloads": overloads}
    if param_names & DEVICE_PARAMS:
        facts["device_params"] = sorted(param_names & DEVICE_PARAMS)
    if param_names & DTYPE_PARAMS:
        facts["dtype_params"] = sorted(param_names & DTYPE_PARAMS)
    if "out" in param_names:
        facts["out"] = True
    short = name.rsplit(".", 1)[-1]
    if not method:
        for o in overloads:
            if _is_factory_overload(o):
                o["factory"] = True
        if any(o.get("factory") for o in overloads):
            facts["factory"] = True
        first = [o["params"][0] for o in overloads if o["params"]]
        if joined["kind"] == "tensor" and any(p[0] in HOST_DATA_PARAMS and not _accepts_tensor(p) for p in first):
            facts["host_data"] = True
        if short.endswith("_like") and first and all(_accepts_tensor(p) for p in first):
            facts["like"] = True
    else:
        if short.endswith("_") and not short.startswith("__"):
            facts["inplace"] = True
        if facts.get("inplace") or any(o["returns"].get("self") for o in overloads):
            facts["returns_self"] = True
    return facts
