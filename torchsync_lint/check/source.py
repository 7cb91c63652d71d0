"""A file's text before any rule runs: decoding, its module name, and the errors that stop a check
before LibCST parses it (CPython's syntax errors, null bytes, the parse guard's refusals)."""

from __future__ import annotations

import ast
import os
import tokenize
import warnings
from io import BytesIO
from typing import Dict, List, Optional, Tuple

from torchsync_lint.check import parse_guard
from torchsync_lint.finding import FileError

# A file that mentions none of these cannot hold a tensor we could infer.
PREFILTER = ("torch", "Tensor", "tensor", "cuda", "forward", ".item(")
# LibCST needs about 45 s of CPU and 3 GB of memory for a 5 MB module (measured, libcst 1.9), and
# grows faster than linearly; a 100 MB module aborts it natively. Larger files are refused unparsed.
MAX_FILE_CHARS = 5_000_000


def module_name_for(path: str) -> Tuple[str, bool]:
    """Dotted module name from the package folders (those with ``__init__.py``) above ``path``."""
    path = os.path.abspath(path)
    directory, filename = os.path.split(path)
    stem = os.path.splitext(filename)[0]
    is_package = stem == "__init__"
    parts = [] if is_package else [stem]
    while os.path.isfile(os.path.join(directory, "__init__.py")):
        directory, name = os.path.split(directory)
        parts.append(name)
        if not name:
            break
    return ".".join(reversed(parts)), is_package


class ModuleNames:
    """``module_name_for`` over many files (a walk of a tree), each folder's package looked up once:
    the same names, one ``__init__.py`` test per folder rather than per file and level."""

    def __init__(self) -> None:
        self._parts: Dict[str, List[str]] = {}  # folder -> its package's names, innermost first

    def __call__(self, path: str) -> Tuple[str, bool]:
        directory, filename = os.path.split(os.path.abspath(path))
        stem = os.path.splitext(filename)[0]
        is_package = stem == "__init__"
        parts = ([] if is_package else [stem]) + self._package(directory)
        return ".".join(reversed(parts)), is_package

    def _package(self, directory: str) -> List[str]:
        got = self._parts.get(directory)
        if got is None:
            got = []
            if os.path.isfile(os.path.join(directory, "__init__.py")):
                parent, name = os.path.split(directory)
                got = [name] + (self._package(parent) if name else [])
            self._parts[directory] = got
        return got


def decode(data: bytes, path: str) -> str:
    try:
        encoding, _ = tokenize.detect_encoding(BytesIO(data).readline)
        return data.decode(encoding)
    except (SyntaxError, UnicodeDecodeError, LookupError) as exc:
        reason = getattr(exc, "reason", None) or str(exc)
        raise ValueError(f"cannot decode file ({reason}); save it as UTF-8 or declare its encoding") from None


def python_syntax_error(source: str, path: str) -> Optional[FileError]:
    """CPython's own verdict on a file (clearer messages and positions than LibCST's), or None."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # invalid escapes etc. are not our business
            compile(source, path, "exec", flags=ast.PyCF_ONLY_AST, dont_inherit=True)
    except SyntaxError as exc:
        return FileError(path, f"syntax error: {exc.msg}", exc.lineno, exc.offset)
    except (ValueError, RecursionError, MemoryError) as exc:  # null bytes, absurd nesting
        return FileError(path, f"cannot parse: {exc}")
    return None


def pre_parse_error(source: str, path: str) -> Optional[FileError]:
    """The error for a file LibCST must not parse: null bytes (CPython, so flake8 too, rejects
    them; LibCST reads on), or one it would take minutes on or crash on (its size, ``parse_guard``)."""
    if len(source) > MAX_FILE_CHARS:
        return FileError(path, f"file skipped: {len(source) / 1e6:.1f} MB of source, more than LibCST can parse in "
                               f"reasonable time and memory (the limit is {MAX_FILE_CHARS / 1e6:.0f} MB)")
    nul = source.find("\x00")
    if nul >= 0:
        return FileError(path, "syntax error: source code cannot contain null bytes", source.count("\n", 0, nul) + 1,
                         nul - source.rfind("\n", 0, nul))
    refused = parse_guard.refusal(source)
    if refused is None:
        return None
    if refused.syntax_first:
        error = python_syntax_error(source, path)
        if error is not None or not refused.why:
            return error
    return FileError(path, f"file skipped: {refused.why}", refused.line)
