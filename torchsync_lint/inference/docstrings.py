"""Parameter types that a docstring declares, for parameters without an annotation.

Much real PyTorch code documents its types instead of annotating them (``x : torch.Tensor`` in
numpydoc, ``x (Tensor): ...`` in Google style, ``:type x: torch.Tensor`` in Sphinx). Only tensor
types are taken: a docstring that says ``int`` is weaker evidence than what callers pass (schedulers
document ``timestep (int)`` and are called with 0-dim tensors), and other types change no rule.
"""

from __future__ import annotations

import re
from typing import Dict, Optional

import libcst as cst

from torchsync_lint.inference.values import TENSOR, Value

# Section headers whose entries are parameters (numpydoc underlines them, Google ends them in ":")
_PARAM_SECTIONS = frozenset((
    "parameters", "params", "arguments", "args", "argument", "other parameters", "keyword arguments",
    "kwargs", "inputs",
))
_OTHER_SECTIONS = frozenset((
    "returns", "return", "yields", "yield", "raises", "raise", "example", "examples", "note", "notes",
    "see also", "references", "attributes", "outputs", "output", "shape", "warning", "warnings", "todo",
    "methods",
))

_NUMPY_ENTRY = re.compile(r"^(\*{0,2}\w+)\s*:\s*(.+?)\s*$")  # x : torch.Tensor, optional
_GOOGLE_ENTRY = re.compile(r"^(\*{0,2}\w+)\s*\(([^()]*(?:\([^()]*\))?[^()]*)\)\s*:")  # x (Tensor, optional): ...
_SPHINX_TYPE = re.compile(r"^:type\s+(\w+)\s*:\s*(.+?)\s*$")
_SPHINX_PARAM = re.compile(r"^:param\s+(\S+)\s+(\w+)\s*:")
_TENSOR_NAME = re.compile(r"^(?:torch\.)?(?:cuda\.)?(Bool|Long|Int|Short|Byte|Float|Double|Half|BFloat16)?Tensor$")
_DROP = re.compile(r"^(optional|none|default.*|keyword-only|keyword only)$", re.I)
_DTYPES = {"Bool": "bool", "Long": "int", "Int": "int", "Short": "int", "Byte": "int",
           "Float": "float", "Double": "float", "Half": "float", "BFloat16": "float"}


def parameter_types(*docstrings: Optional[str]) -> Dict[str, Value]:
    """Tensor parameters that the docstrings declare: name -> tensor value (device unknown)."""
    out: Dict[str, Value] = {}
    for doc in docstrings:
        if doc:
            for name, text in _entries(doc):
                v = _type_value(text)
                if v is not None:
                    out.setdefault(name.lstrip("*"), v)
    return out


def _entries(doc: str):
    lines = doc.splitlines()
    section = None
    for i, raw in enumerate(lines):
        line = raw.strip()
        m = _SPHINX_TYPE.match(line)
        if m:
            yield m.group(1), m.group(2)
            continue
        m = _SPHINX_PARAM.match(line)
        if m:
            yield m.group(2), m.group(1)
            continue
        header = line.rstrip(":").strip().lower()
        underlined = i + 1 < len(lines) and set(lines[i + 1].strip()) == {"-"}
        if header in _PARAM_SECTIONS and (underlined or line.endswith(":")):
            section = "params"
            continue
        if header in _OTHER_SECTIONS and (underlined or line.endswith(":")):
            section = None
            continue
        if section != "params" or not line or set(line) == {"-"}:
            continue
        m = _GOOGLE_ENTRY.match(line) or _NUMPY_ENTRY.match(line)
        if m:
            yield m.group(1), m.group(2)


def _type_value(text: str) -> Optional[Value]:
    """A tensor value if every alternative the text names is a tensor (``None``/optional aside)."""
    text = text.replace("`", "").strip().rstrip(".")
    parts = [p.strip() for p in re.split(r"\s+or\s+|\||,", text) if p.strip()]
    parts = [p for p in parts if not _DROP.match(p)]
    if not parts:
        return None
    dtypes = set()
    for p in parts:
        m = _TENSOR_NAME.match("Tensor" if p.lower() == "tensor" else p)
        if not m:
            return None
        dtypes.add(_DTYPES.get(m.group(1)) if m.group(1) else None)
    return Value(TENSOR, dtype=dtypes.pop() if len(dtypes) == 1 else None)


def docstring(node) -> Optional[str]:
    """The docstring of a ``FunctionDef`` or ``ClassDef``, or None."""
    try:
        return node.get_docstring(clean=True)
    except (AttributeError, cst.ParserSyntaxError, ValueError):
        return None
