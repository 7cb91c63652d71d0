"""Refuse, before parsing, the few files LibCST's native parser cannot handle in reasonable time.

LibCST's parser is quadratic in the length of a chain of left-recursive operations in one
expression (``1 + 1 + ...``, ``a.b.c...``, ``x[0][0]...``, ``-(-(...))``, nested ternaries):
20,000 terms take minutes, and the parse runs in native code that no signal or alarm can
interrupt. Deep nesting overflows its stack and kills the process: a few thousand nested brackets,
``and``/``or`` terms or ``elif`` clauses of one statement. CPython itself rejects more than 200
nested brackets, and cannot compile a few thousand nested operations or ``elif`` clauses.

``refusal(source)`` measures these exactly, only where a cheap scan says they could be large:

- cheap (every file, about 1% of a parse): group physical lines into logical lines by counting
  brackets per line; only a logical line with more than ``MAX_DEPTH`` opening brackets or
  lambdas, or ``MAX_CHAIN`` operator characters and words, can be too costly. A bracket in a
  docstring or comment can mislead the grouping: when a line so found does not tokenize alone,
  the grouping is done again with strings and comments blanked out.
- exact (those lines only): Python's tokenizer; the operators in one chain are those at one
  bracket depth between two separators (``,`` ``:`` ``;`` ``=``), so a long list of short sums
  is fine (it parses in linear time) while one long sum is not. ``elif`` clauses are counted
  per ``if`` statement, with the tokenizer too, in files that have more than ``MAX_ELIF``.

Nested lambdas are no problem for LibCST, but the analysis is quadratic in their depth: more
than ``MAX_DEPTH`` are refused too.
"""

from __future__ import annotations

import io
import re
import tokenize
from typing import Dict, Iterator, List, NamedTuple, Optional, Tuple

MAX_DEPTH = 200  # CPython's own limit on brackets (the tokenizer's MAXLEVEL); lambdas too
# Operators in one chain: at 1,000, LibCST takes at most about 0.6 s (a chain of subscripts,
# its slowest) and its stack holds (``and`` chains crash it from about 6,000); 1,000 terms of
# one sum is already far beyond any hand-written code.
MAX_CHAIN = 1000
MAX_ELIF = 2000  # LibCST's stack overflows from about 8,500; CPython cannot compile 3,000

OPENERS = "([{"
OPERATOR_CHARS = "+-*/%@&|^~.(["
# also inside names ("torch", "for"): the cheap scan overcounts, which only costs time
OPERATOR_WORDS = ("if", "not", "and", "or", "lambda", "await")
CHAIN_OPS = frozenset(["+", "-", "*", "/", "//", "%", "@", "&", "|", "^", "~", "<<", ">>", "**", ".", "(", "["])
CHAIN_WORDS = frozenset(["if", "else", "not", "and", "or", "lambda", "await"])  # these nest too
SEPARATORS = frozenset([",", ":", ";", "=", ":=", "->", "+=", "-=", "*=", "/=", "//=", "%=", "@=", "&=",
                        "|=", "^=", ">>=", "<<=", "**="])
LAMBDA_ENDS = frozenset([",", ";"])  # a lambda's body ends there (or at its bracket's end)
_LAYOUT = frozenset([tokenize.NL, tokenize.COMMENT, tokenize.INDENT, tokenize.DEDENT, tokenize.NEWLINE])


class Refusal(NamedTuple):
    line: int
    why: str  # empty: not measured (the file does not tokenize); parse it if CPython accepts it
    syntax_first: bool  # CPython may well reject the file: its message is the better one


def refusal(source: str) -> Optional[Refusal]:
    """Why LibCST should not be given this file, or None (any ordinary file)."""
    lines: List[str] = []
    blanked = False
    spans = _suspect_spans(source)
    for start, end in spans:
        lines = lines or source.split("\n")
        found = _measure("\n".join(lines[start:end]), start)
        if found is None and not blanked:  # the grouping cut a string in two
            blanked = True
            spans = _suspect_spans(_blank_strings(source))
            continue
        whole = found is None
        if whole:  # measure the whole file
            found = _measure(source, 0)
            if found is None:  # not Python: CPython (or LibCST) says where it breaks
                return Refusal(1, "", True)
        verdict = _verdict(found)
        if verdict is not None:
            return verdict
        if whole:
            break
    if source.count("elif") > MAX_ELIF:
        elifs = _elif_chain(source)
        if elifs is None:
            return Refusal(1, "", True)
        if elifs[0] > MAX_ELIF:
            return Refusal(elifs[1], f"an if statement with {elifs[0]} elif clauses (more than {MAX_ELIF}); "
                                     "LibCST could crash on it", False)
    return None


def _verdict(found: Dict[str, Tuple[int, int]]) -> Optional[Refusal]:
    depth, line = found["depth"]
    if depth > MAX_DEPTH:
        return Refusal(line, f"brackets nested {depth} deep (Python allows {MAX_DEPTH}); LibCST could crash on it",
                       True)
    chain, line = found["chain"]
    if chain > MAX_CHAIN:
        return Refusal(line, f"{chain} operators in one expression (more than {MAX_CHAIN}); "
                             "LibCST would take too long to parse it", False)
    lambdas, line = found["lambdas"]
    if lambdas > MAX_DEPTH:
        return Refusal(line, f"lambdas nested {lambdas} deep (more than {MAX_DEPTH}); checking them would take "
                             "too long", False)
    return None


# strings (triple-quoted first) and comments, leftmost first: a '#' in a string is no comment
_STRINGS = re.compile(r'(?s)""".*?"""|' + r"'''.*?'''|" + r'"(?:\\.|[^"\\\n])*"|' + r"'(?:\\.|[^'\\\n])*'|#[^\n]*")


def _blank_strings(source: str) -> str:
    """The source with every string and comment reduced to its line breaks (lines keep their numbers)."""
    return _STRINGS.sub(lambda m: "\n" * m.group().count("\n"), source)


def _suspect_spans(source: str) -> Iterator[Tuple[int, int]]:
    """0-based [start, end) physical-line ranges of the logical lines that could be too costly."""
    if not _heavy(source):
        return  # a small file (the common case): nothing to group
    lines = source.split("\n")  # as the tokenizer numbers lines (not str.splitlines)
    depth = size = start = 0
    for i, line in enumerate(lines):
        depth += (line.count("(") + line.count("[") + line.count("{")
                  - line.count(")") - line.count("]") - line.count("}"))
        size += len(line)
        if depth <= 0 and not line.endswith(("\\", "\\\r")):
            if size > MAX_DEPTH and _heavy("\n".join(lines[start:i + 1])):
                yield start, i + 1
            depth = size = 0  # stray closers (in strings, comments) must not hide the next line
            start = i + 1
    if size > MAX_DEPTH and _heavy("\n".join(lines[start:])):
        yield start, len(lines)


def _heavy(text: str) -> bool:
    return (sum(text.count(c) for c in OPENERS) > MAX_DEPTH or text.count("lambda") > MAX_DEPTH
            or _operators(text) > MAX_CHAIN)


def _operators(text: str) -> int:
    """At least the operators of all chains in the text (an upper bound: C-speed counts)."""
    return sum(text.count(c) for c in OPERATOR_CHARS) + sum(text.count(w) for w in OPERATOR_WORDS)


def _measure(text: str, first_line: int) -> Optional[Dict[str, Tuple[int, int]]]:
    """The deepest bracket nesting, longest operator chain and deepest lambda nesting of the
    text's tokens, each with the line of its statement (numbered from ``first_line`` + 1); None
    when the text does not tokenize on its own."""
    best = {"depth": (0, 0), "chain": (0, 0), "lambdas": (0, 0)}
    depth = line = 0
    chains = [0]  # operators so far in the current chain, per open bracket
    lambdas = [0]  # lambdas whose body goes on, per open bracket
    try:
        for tok in tokenize.generate_tokens(io.StringIO(text).readline):
            kind, s = tok.type, tok.string
            if not line and kind not in _LAYOUT:
                line = tok.start[0]  # where the statement starts: what the message names
            if kind == tokenize.OP or (kind == tokenize.NAME and s in CHAIN_WORDS):
                if s in CHAIN_OPS or kind == tokenize.NAME:
                    chains[-1] += 1
                    if chains[-1] > best["chain"][0]:
                        best["chain"] = (chains[-1], line)
                    if s == "lambda":
                        lambdas[-1] += 1
                        if lambdas[-1] > best["lambdas"][0]:
                            best["lambdas"] = (lambdas[-1], line)
                elif s in SEPARATORS:
                    chains[-1] = 0
                    if s in LAMBDA_ENDS:
                        lambdas[-1] = 0
                if s in OPENERS:
                    chains.append(0)
                    lambdas.append(0)
                    depth += 1
                    if depth > best["depth"][0]:
                        best["depth"] = (depth, line)
                elif s in ")]}" and depth:
                    chains.pop()
                    lambdas.pop()
                    depth -= 1
            elif kind == tokenize.NEWLINE:
                chains, lambdas = [0], [0]
                depth = line = 0
    except (tokenize.TokenError, SyntaxError):  # IndentationError is a SyntaxError
        return None
    return {k: (n, at + first_line) for k, (n, at) in best.items()}


def _elif_chain(source: str) -> Optional[Tuple[int, int]]:
    """(the most elif clauses of one if statement, the line of that if); None when the source
    does not tokenize."""
    best = (0, 0)
    chains: Dict[int, Tuple[int, int]] = {}  # indentation depth -> (elif clauses so far, if's line)
    depth = 0
    at_start = True
    try:
        for tok in tokenize.generate_tokens(io.StringIO(source).readline):
            if tok.type == tokenize.INDENT:
                depth += 1
            elif tok.type == tokenize.DEDENT:
                depth -= 1
            elif tok.type == tokenize.NEWLINE:
                at_start = True
            elif at_start and tok.type not in (tokenize.NL, tokenize.COMMENT):
                at_start = False
                if tok.string == "elif":
                    n, line = chains.get(depth, (0, tok.start[0]))
                    chains[depth] = (n + 1, line)
                    best = max(best, chains[depth])
                elif tok.string != "else":  # any other statement (a block never starts with elif)
                    chains[depth] = (0, tok.start[0])
    except (tokenize.TokenError, SyntaxError):
        return None
    return best
