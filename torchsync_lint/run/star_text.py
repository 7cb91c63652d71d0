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
        self._reach: Dict[str, _Reach] = {}  # module -> what a question about it reaches
        self._known: Dict[Tuple[str, str], bool] = {}  # (module, name) -> answer

    def may_export(self, module: str, name: str) -> bool:
        """Some module a question about ``module`` reaches could bind ``name``: ``module`` itself
        and, followed from a module whose own text does not decide (no literal ``__all__``), the
        modules it star-imports, in turn (a star-import cycle adds nothing more). Each module
        answers by its text alone: no file, nothing; a literal ``__all__``, whether it lists the
        name; else whether its code spells the name where a binding would; unreadable, or star
        imports it cannot list, it may."""
        got = self._known.get((module, name))
        if got is None:
            reach = self._reach.get(module)
            if reach is None:
                reach = self._reach[module] = self._reached(module)
            got = self._known[(module, name)] = reach.may_bind(name)
        return got

    def _reached(self, module: str) -> "_Reach":
        """The modules a question about ``module`` reaches, read once for every name asked (the
        walk was the cost: transformers' ``models`` star-imports 515 packages, each its modules,
        2,060 modules for each new name)."""
        listed: set = set()
        texts: List[_Facts] = []
        seen = {module}
        todo = [module]
        while todo:
            m = todo.pop()
            path = self._paths().get(m)
            if path is None:
                continue  # no file: no interface, nothing exported
            facts = self._facts.get(m, False)
            if facts is False:
                facts = self._facts[m] = _read(path)
            if facts is None:
                return _Reach(True)  # unreadable here: assume it may
            if facts.all is not None:
                listed |= facts.all
                continue
            texts.append(facts)
            if facts.stars is None:
                facts.stars = _stars(facts.text, m, facts.package)
                if facts.stars is None:
                    return _Reach(True)
            for star in facts.stars:
                if star not in seen:
                    seen.add(star)
                    todo.append(star)
        return _Reach(False, frozenset(listed), texts)


class _Reach:
    """What a question about one module reaches: the names literal ``__all__`` lists grant, and the
    texts whose code may bind a name; ``anything``: some module there may bind any name."""

    __slots__ = ("anything", "listed", "texts")

    def __init__(self, anything: bool, listed: frozenset = frozenset(), texts: Optional[List[_Facts]] = None) -> None:
        self.anything = anything
        self.listed = listed
        self.texts = texts or []

    def may_bind(self, name: str) -> bool:
        return self.anything or name in self.listed or any(f.binds(name) for f in self.texts)


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
