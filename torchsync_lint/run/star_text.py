"""Whether ``from M import *`` could bind a name, read from M's text without deriving its interface.

A one-file check asks ``Project._starred`` whether a package's star imports bind a name
(``from ... import initialization``: ``transformers/__init__`` star-imports ``.models``, which
star-imports 515 packages, each of which star-imports its modules). The answer needs what every
module of that chain exports, and on demand each is a LibCST parse and an interface: a cold flake8
run on one transformers model derived 200 of them (``ondemand.MAX_ON_DEMAND``) for that one name,
and found none binding it.

``StarText.may_export(M, name)`` is False only where ``Project.exported(M)`` cannot hold ``name``,
so a star import it rules out is skipped with the same answer (``inference.stars.exports``):

- a module with no file in the project exports nothing (the loader finds no interface);
- a literal ``__all__`` (``defs.declared_all``) bounds what a star import takes: the module's
  ``__all__`` is read from the few statements that bind it, and only where every ``__all__`` in the
  text starts such a statement at the top level (code, not a string or comment, outside brackets,
  not a continued line), or where one plain list ends the file (``last_all``); anything else and
  ``__all__`` counts as unknown;
- otherwise every name the module binds itself (functions, classes, values, imports) is spelled in
  its code (strings and comments blanked, f-strings kept) and not after a dot, and the rest comes
  from its own star imports (their ``from X import *`` lines, else CPython's parse): followed in turn.
"""

from __future__ import annotations

import ast
import functools
import re
from typing import Callable, Dict, List, Optional, Tuple

from torchsync_lint.check.source import decode
from torchsync_lint.inference.stars import import_base

# comments and strings (any prefix: a raw string still cannot end in an escaped quote)
_NOT_CODE = re.compile(r"""
    \#[^\n]*
  | \"\"\"[^"\\]*(?:(?:\\.|"(?!""))[^"\\]*)*\"\"\"
  | '''[^'\\]*(?:(?:\\.|'(?!''))[^'\\]*)*'''
  | "[^"\\\n]*(?:\\.[^"\\\n]*)*"
  | '[^'\\\n]*(?:\\.[^'\\\n]*)*'
""", re.S | re.X)
_STAR = re.compile(r"import(?:[ \t\f]|\\\r?\n)*\*")  # `from x import *`, maybe across a continued line
_STAR_LINE = re.compile(r"^[ \t]*from[ \t]+(\.*)[ \t]*([^\W\d][\w.]*)?[ \t]+(import)[ \t]*\*[ \t]*(?:#[^\n]*)?$", re.M)
_OPEN, _CLOSE = "([{", ")]}"
# `__all__ = ["a", "b"]` (comments and newlines between, a trailing comma): the common statement,
# read without LibCST; its strings hold no escape, so each is its own value
_PLAIN_STRING = r"(?:\"[^\"\\\n]*\"|'[^'\\\n]*')"
_GAP = r"(?:\s|#[^\n]*)*"
_PLAIN_LIST = (r"__all__[ \t]*=[ \t]*\[" + _GAP + r"((?:" + _PLAIN_STRING + _GAP + "," + _GAP + r")*(?:"
               + _PLAIN_STRING + _GAP + r")?)\]")
_PLAIN_ALL = re.compile(_PLAIN_LIST + r"[ \t]*(?:#[^\n]*)?\n?\Z")  # one statement
_LAST_ALL = re.compile(_PLAIN_LIST + _GAP + r"\Z")  # the end of a file
_STRING_VALUE = re.compile(r"#[^\n]*|" + _PLAIN_STRING)  # a comment's quotes are not strings
_ALL = "__all__"
_NONE = 1 << 30  # no stack position: a cycle led back to nothing still being followed


class _Facts:
    """What one module's text says, read once: its literal ``__all__`` where it has one, else the
    text where every name it binds is spelled, and the modules it star-imports (when asked)."""

    __slots__ = ("all", "text", "names", "stars", "package")

    def __init__(self, text: str, package: bool) -> None:
        self.text: Optional[str] = text
        self.names: Optional[str] = None  # ``_bound_text``, when first needed
        self.all: Optional[frozenset] = None
        self.stars: Optional[List[str]] = None
        self.package = package
        if _ALL in text:
            declared = last_all(text)
            code, formatted = (None, []) if declared is not None else masked(text)
            if declared is None:
                declared = literal_all(text, code)
            if declared is not None:
                self.all = frozenset(declared)  # the name test is the list's: nothing more kept
                self.text = None
            else:
                self.names = _bound_text(text, code, formatted)

    def binds(self, name: str) -> bool:
        """Whether the module's code (f-strings' fields included) spells ``name`` where a binding
        would: outside strings and comments (licence headers say "distributed"), not after a dot
        (``import torch.distributed as dist`` binds ``dist``)."""
        if self.names is None:
            if name not in self.text:
                return False
            self.names = _bound_text(self.text, *masked(self.text))
        return name in self.names and _word(name).search(self.names) is not None


@functools.lru_cache(maxsize=256)
def _word(name: str) -> "re.Pattern[str]":
    return re.compile(r"(?<![\w.])" + re.escape(name) + r"(?!\w)")


def _bound_text(text: str, code: Optional[str], formatted: List[str]) -> str:
    return text if code is None else "\n".join([code] + formatted)


class StarText:
    """``paths()``: module name -> file, as the on-demand project loads them."""

    def __init__(self, paths: Callable[[], Dict[str, str]]) -> None:
        self._paths = paths
        self._facts: Dict[str, Optional[_Facts]] = {}
        self._known: Dict[Tuple[str, str], bool] = {}  # (module, name) -> answer, where final

    def may_export(self, module: str, name: str) -> bool:
        return self._may(module, name, {}, {})[0]

    def _may(self, module: str, name: str, stack: Dict[str, int], done: Dict[str, int]) -> Tuple[bool, int]:
        """(answer, the lowest stack position a star-import cycle led back to; past the end: none).
        A module met again in one question adds nothing: on the stack, its other star imports are
        followed by the frame that holds it; done, it was followed in full and bound nothing (but
        may still wait, as it did, on a module being followed)."""
        got = self._known.get((module, name))
        if got is not None:
            return got, _NONE
        if module in stack:
            return False, stack[module]
        if module in done:
            return False, done[module]
        here = len(stack)
        answer, low = self._own(module, name)
        if answer is None:
            answer = False
            stack[module] = here
            for star in self._stars_of(module):
                got, back = self._may(star, name, stack, done)
                low = min(low, back)
                if got:
                    answer = True
                    break
            del stack[module]
        if answer or low >= here:  # not waiting on a module still being followed
            self._known[(module, name)] = answer
            low = _NONE
        done[module] = low
        return answer, low

    def _own(self, module: str, name: str) -> Tuple[Optional[bool], int]:
        """(the answer from the module's own text, or None: its star imports decide; no cycle)."""
        path = self._paths().get(module)
        if path is None:
            return False, _NONE  # no file: no interface, nothing exported
        facts = self._facts.get(module, False)
        if facts is False:
            facts = self._facts[module] = _read(path)
        if facts is None:
            return True, _NONE  # unreadable here: assume it may
        if facts.all is not None:
            return name in facts.all, _NONE
        if facts.binds(name):
            return True, _NONE
        if facts.stars is None:
            facts.stars = _stars(facts.text, module, facts.package)
            if facts.stars is None:
                return True, _NONE
        return None, _NONE

    def _stars_of(self, module: str) -> List[str]:
        facts = self._facts[module]
        return facts.stars if facts is not None and facts.stars is not None else []


def _read(path: str) -> Optional[_Facts]:
    try:
        with open(path, "rb") as fh:
            data = fh.read()
        if not data.startswith(b"\xef\xbb\xbf"):
            end = data.find(b"\n", data.find(b"\n") + 1)
            if b"coding" not in (data if end < 0 else data[:end]):
                # no BOM, no encoding declared in the first two lines: what ``decode`` reads as UTF-8
                return _Facts(data.decode("utf-8"), path.endswith("__init__.py"))
        text = decode(data, path)
    except (OSError, ValueError):  # UnicodeDecodeError included
        return None
    return _Facts(text, path.endswith("__init__.py"))


def _stars(text: str, module: str, package: bool) -> Optional[List[str]]:
    """The modules ``text`` star-imports, as ``names.Aliases`` resolves them; None if unreadable.
    Where every ``import *`` of the text ends a plain line (``from .x import *``, as package
    ``__init__`` files write them), from those lines; else from CPython's parse of the text."""
    stars = {m.start() for m in _STAR.finditer(text)}
    if not stars:
        return []
    lines = list(_STAR_LINE.finditer(text))
    if {m.start(3) for m in lines} == stars:
        return [base for base in (import_base(module, package, len(m.group(1)), m.group(2) or "") for m in lines)
                if base]
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    out = []
    for node in ast.walk(tree):
        if type(node) is ast.ImportFrom and any(a.name == "*" for a in node.names):
            base = import_base(module, package, node.level, node.module or "")
            if base:
                out.append(base)
    return out


def masked(text: str) -> Tuple[Optional[str], List[str]]:
    """``text`` with every string and comment blanked out (NUL characters, the same length: line
    and bracket structure is what remains), and its f-strings (whose fields are code); None where a
    string never ends or the text holds NUL."""
    if "\0" in text:
        return None, []
    pieces: List[str] = []
    formatted: List[str] = []
    pos = 0
    for m in _NOT_CODE.finditer(text):
        i, j = m.span()
        pieces.append(text[pos:i])
        pieces.append("\0" * (j - i))
        if text[i] != "#" and "f" in text[max(i - 2, pos):i].lower():
            formatted.append(text[i:j])  # `f"{(x := 1)}"` binds x
        pos = j
    pieces.append(text[pos:])
    out = "".join(pieces)
    if "'" in out or '"' in out:
        return None, []  # a quote no string pattern took: a string that never ends
    return out, formatted


def _depth(code: str, start: int, end: int) -> int:
    return sum(code.count(c, start, end) for c in _OPEN) - sum(code.count(c, start, end) for c in _CLOSE)


def last_all(text: str) -> Optional[List[str]]:
    """``literal_all`` without reading the rest of the file, where ``__all__`` is named once, in a
    plain list that ends the file (as in every transformers model): nothing after it but blank and
    comment lines, no triple quote among them, the line before not continued. In a file LibCST
    parses (else it has no interface and exports nothing) that line is then a statement at the top
    level: a string open before it would have to close after it, a bracket open before it would
    have to close after it, and nothing after it does. None where this does not apply."""
    p = text.find(_ALL)
    if p < 0 or text.count(_ALL) != 1 or (p and text[p - 1] != "\n") or (p > 1 and text[p - 2] == "\\"):
        return None
    tail = text[p:]
    if '"""' in tail or "'''" in tail or "\r" in text:  # "\\\r\n" continues a line too
        return None
    plain = _LAST_ALL.match(tail)
    return None if plain is None else [v[1:-1] for v in _STRING_VALUE.findall(plain.group(1)) if v[0] != "#"]


def literal_all(text: str, code: Optional[str]) -> Optional[List[str]]:
    """``defs.declared_all`` of the module ``text`` is, read from the statements that bind
    ``__all__`` (``code``: the text ``masked``); None where that is unknown or not a literal list."""
    if "\r" in text or code is None:
        return None  # lines ended otherwise than by "\n": not worth the cases
    statements: List[str] = []
    p = text.find(_ALL)
    while p >= 0:
        # code at the start of a line (not a use, an indented binding, a string, a comment), outside
        # brackets, the line before not continued
        if code[p] != "_" or (p and code[p - 1] != "\n") or (p > 1 and code[p - 2] == "\\") or _depth(code, 0, p):
            return None
        end = _statement_end(code, p)
        statements.append(text[p:end])
        p = text.find(_ALL, end)
    return _declared(statements)


def _statement_end(code: str, p: int) -> int:
    """Where the logical line starting at ``p`` ends (after its newline)."""
    j = p
    while True:
        j = code.find("\n", j)
        if j < 0:
            return len(code)
        if code[j - 1] != "\\" and not _depth(code, p, j):
            return j + 1
        j += 1


def _declared(statements: List[str]) -> Optional[List[str]]:
    """``declared_all`` over the module-level bindings of these statements, in order."""
    # LibCST and the index only here: a file whose ``__all__`` is read (a cold one-file check)
    from torchsync_lint.inference.defs import declared_all
    from torchsync_lint.inference.index import FileIndex
    from torchsync_lint.syntax import walk
    from torchsync_lint.syntax.parse import parse_module

    if len(statements) == 1:
        plain = _PLAIN_ALL.match(statements[0])
        if plain is not None:
            return [v[1:-1] for v in _STRING_VALUE.findall(plain.group(1)) if v[0] != "#"]
    bindings: List[tuple] = []
    for source in statements:
        try:
            module = parse_module(source)
        except Exception:
            return None
        if len(module.body) != 1:
            return None
        index = FileIndex("_")
        walk.visit(module, index)
        bindings.extend(index.module_bindings)
    return declared_all(bindings)
