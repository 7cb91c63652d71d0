"""Name the torch op behind a sync lazily, from the stack, at the moment the sync fires.

No hook runs on ordinary torch calls: when a hook reports a sync, the frame under the hook's own
frames is either torch's Python code (``Tensor.__format__``, ``torch.functional.unique``: the
outermost torch frame called from outside torch names the op) or the caller of a C op, whose
current instruction is decoded (``x.item()`` -> ``Tensor.item``, ``x[mask]`` ->
``Tensor.__getitem__``, ``torch.nonzero(m)`` -> ``torch.nonzero``, ``if t:`` -> ``Tensor.__bool__``).
Results are cached per (code object, instruction offset): a sync site is decoded once.
"""

from __future__ import annotations

import ast
import dis
import linecache
import os
import threading
from typing import Dict, Optional, Tuple

_lock = threading.Lock()
_cache: Dict[Tuple[object, int], str] = {}
_instr: Dict[object, Dict[int, dis.Instruction]] = {}

BUILTIN_DUNDER = {"int": "Tensor.__int__", "float": "Tensor.__float__", "bool": "Tensor.__bool__",
                  "len": "Tensor.__len__", "range": "Tensor.__index__", "print": "Tensor.__repr__",
                  "str": "Tensor.__str__", "repr": "Tensor.__repr__", "list": "Tensor.__iter__",
                  "tuple": "Tensor.__iter__", "max": "Tensor.__bool__", "min": "Tensor.__bool__"}
SUBSCR = {"BINARY_SUBSCR": "Tensor.__getitem__", "STORE_SUBSCR": "Tensor.__setitem__",
          "BINARY_SLICE": "Tensor.__getitem__", "STORE_SLICE": "Tensor.__setitem__",
          "DELETE_SUBSCR": "Tensor.__delitem__", "FORMAT_VALUE": "Tensor.__format__",
          "FORMAT_SIMPLE": "Tensor.__format__", "FORMAT_WITH_SPEC": "Tensor.__format__",
          "TO_BOOL": "Tensor.__bool__", "UNARY_NOT": "Tensor.__bool__", "GET_ITER": "Tensor.__iter__",
          "CONTAINS_OP": "Tensor.__contains__"}


def _torch_dir(torch_dir: Optional[str]) -> Optional[str]:
    return torch_dir.rstrip(os.sep) + os.sep if torch_dir else None


_real: Dict[str, str] = {}


def _in(path: str, root: Optional[str]) -> bool:
    if not root:
        return False
    real = _real.get(path)
    if real is None:
        real = _real[path] = os.path.realpath(path)
    return real.startswith(root)


def name_from_torch_frame(frame) -> str:
    """``Tensor.__format__``, ``torch.unique`` from a frame of torch's own Python code."""
    code = frame.f_code
    qual = getattr(code, "co_qualname", code.co_name)
    mod = frame.f_globals.get("__name__", "") or ""
    if qual.startswith("Tensor.") or qual.startswith("_TensorBase."):
        return "Tensor." + qual.split(".", 1)[1]
    if mod in ("torch.functional", "torch._tensor", "torch") or mod.startswith("torch._refs"):
        return "torch." + qual
    if mod.startswith("torch.cuda.") or mod.startswith("torch.accelerator"):
        return ("torch.accelerator." if mod.startswith("torch.accelerator") else "torch.cuda.") + qual
    return f"{mod}.{qual}" if mod else qual


def _instructions(code) -> Dict[int, dis.Instruction]:
    got = _instr.get(code)
    if got is None:
        got = {ins.offset: ins for ins in dis.get_instructions(code)}
        if len(_instr) > 4096:
            _instr.clear()
        _instr[code] = got
    return got


def _call_source(frame) -> Optional[str]:
    """The source text of the expression whose instruction is running in ``frame``."""
    code = frame.f_code
    idx = frame.f_lasti // 2
    try:
        for i, pos in enumerate(code.co_positions()):
            if i == idx:
                l1, l2, c1, c2 = pos
                break
        else:
            return None
    except (AttributeError, ValueError):
        return None
    if None in (l1, l2, c1, c2):
        return None
    lines = linecache.getlines(code.co_filename, frame.f_globals)
    if not lines or l2 > len(lines):
        return None
    if l1 == l2:
        return lines[l1 - 1][c1:c2]
    return "".join([lines[l1 - 1][c1:]] + lines[l1:l2 - 1] + [lines[l2 - 1][:c2]])


def _resolve(expr: ast.expr, frame):
    """The object a dotted name refers to, looked up without running code (names and attributes)."""
    parts = []
    while isinstance(expr, ast.Attribute):
        parts.append(expr.attr)
        expr = expr.value
    if not isinstance(expr, ast.Name):
        return None
    ns = frame.f_locals if expr.id in frame.f_code.co_varnames else frame.f_globals
    obj = ns.get(expr.id, frame.f_builtins.get(expr.id) if isinstance(frame.f_builtins, dict) else None)
    for p in reversed(parts):
        if obj is None or not (isinstance(obj, type) or type(obj).__name__ == "module"):
            return None
        obj = getattr(obj, p, None)
    return obj


def _module_name(obj) -> Optional[str]:
    if type(obj).__name__ == "module":
        return obj.__name__
    return None


def name_from_user_frame(frame, torch=None) -> str:
    """Decode the instruction running in the caller of a C op."""
    ins = _instructions(frame.f_code).get(frame.f_lasti)
    if ins is not None and ins.opname in SUBSCR:
        return SUBSCR[ins.opname]
    if ins is not None and ins.opname.startswith(("POP_JUMP", "JUMP_IF")):
        return "Tensor.__bool__"
    src = _call_source(frame)
    if not src:
        return ""
    try:
        node = ast.parse(src.strip(), mode="eval").body
    except SyntaxError:
        try:
            node = ast.parse("(" + src.strip() + ")", mode="eval").body
        except SyntaxError:
            return ""
    if isinstance(node, ast.Subscript):
        return "Tensor.__setitem__" if ins is not None and "STORE" in ins.opname else "Tensor.__getitem__"
    if not isinstance(node, ast.Call):
        return ""
    func = node.func
    if isinstance(func, ast.Attribute):
        owner = _resolve(func.value, frame)
        mod = _module_name(owner) if owner is not None else None
        if mod:
            short = "torch" if mod == "torch" else mod
            return f"{short}.{func.attr}"
        if isinstance(owner, type):
            return f"{owner.__name__}.{func.attr}"
        tensor = getattr(torch, "Tensor", None) if torch is not None else None
        if tensor is None or hasattr(tensor, func.attr):
            return f"Tensor.{func.attr}"
        return func.attr
    if isinstance(func, ast.Name):
        obj = _resolve(func, frame)
        if func.id in BUILTIN_DUNDER and (obj is None or getattr(obj, "__module__", "") == "builtins"):
            return BUILTIN_DUNDER[func.id]
        mod = getattr(obj, "__module__", None) or ""
        qual = getattr(obj, "__qualname__", None) or func.id
        if mod.startswith("torch"):
            if mod in ("torch", "torch.functional", "torch._C._VariableFunctions"):
                return "torch." + qual.split(".")[-1]
            return f"{mod}.{qual}"
        return func.id
    return ""


def op_at(frame, torch_dir: Optional[str], torch=None, skip_files=()) -> str:
    """The op of the sync whose hook was called with ``frame`` as its nearest caller frame."""
    root = _torch_dir(torch_dir)
    f = frame
    # step over the hook machinery: torch's callback registry, the warnings module, our own frames
    while f is not None and (os.path.basename(f.f_code.co_filename) in skip_files
                             or f.f_code.co_filename.endswith(("torch/_utils.py", "warnings.py"))):
        f = f.f_back
    if f is None:
        return ""
    outer_torch = None
    g = f
    while g is not None and _in(g.f_code.co_filename, root):
        outer_torch = g
        g = g.f_back
    top = outer_torch or f
    key = (top.f_code, top.f_lasti)
    got = _cache.get(key)
    if got is not None:
        return got
    try:
        if outer_torch is not None:
            name = name_from_torch_frame(outer_torch)
        else:
            name = name_from_user_frame(f, torch)
    except Exception:  # naming is a courtesy: never fail the user's run over it
        name = ""
    with _lock:
        if len(_cache) > 65536:
            _cache.clear()
        _cache[key] = name
    return name
