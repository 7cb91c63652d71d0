"""Refuse, before parsing, the few files LibCST's native parser cannot handle in reasonable time.

LibCST's parser is quadratic in the length of a chain of left-recursive operations in one
expression (``1 + 1 + ...``, ``a.b.c...``, ``x[0][0]...``, ``-(-(...))``, nested ternaries):
20,000 terms take minutes, and the parse runs in native code that no signal or alarm can
interrupt. Bracket nesting past a few thousand levels overflows its stack and kills the process.
CPython rejects more than 200 nested brackets anyway, so neither is code anyone can run.

``refusal(source)`` measures both, exactly, only where a cheap scan says they could be large:

- cheap (every file, about 1% of a parse): group physical lines into logical lines by counting
  brackets per line; only a logical line with more than ``MAX_DEPTH`` opening brackets or
  ``MAX_CHAIN`` operator characters can be too costly. A bracket in a docstring or comment can
  mislead the grouping: when a line so found does not tokenize alone, the grouping is done
  again with strings and comments blanked out.
- exact (those lines only): Python's tokenizer; the operators in one chain are those at one
  bracket depth between two separators (``,`` ``:`` ``;`` ``=``), so a long list of short sums
  is fine (it parses in linear time) while one long sum is not.
"""

from __future__ import annotations

import io
import re
import tokenize
from typing import Iterator, List, NamedTuple, Optional, Tuple

MAX_DEPTH = 200  # CPython's own limit (the tokenizer's MAXLEVEL); LibCST crashes well above it
# Operators in one chain: at 1,000, LibCST takes at most about 0.6 s (a chain of subscripts,
# its slowest), and 1,000 terms of one sum is already far beyond any hand-written code.
MAX_CHAIN = 1000

OPENERS = "([{"
OPERATOR_CHARS = "+-*/%@&|^~.(["
OPERATOR_WORDS = ("if", "not", "lambda", "await")  # also in names: the cheap scan may overcount
CHAIN_OPS = frozenset(["+", "-", "*", "/", "//", "%", "@", "&", "|", "^", "~", "<<", ">>", "**", ".", "(", "["])
CHAIN_WORDS = frozenset(["if", "else", "not", "lambda", "await"])  # ternaries, unary, lambdas nest too
SEPARATORS = frozenset([",", ":", ";", "=", ":=", "->", "+=", "-=", "*=", "/=", "//=", "%=", "@=", "&=",
                        "|=", "^=", ">>=", "<<=", "**="])


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
        if found is None:  # measure the whole file
            found = _measure(source, 0)
            if found is None:  # not Python: CPython (or LibCST) says where it breaks
                return Refusal(1, "", True)
            return _verdict(*found)
        verdict = _verdict(*found)
        if verdict is not None:
            return verdict
    return None


def _verdict(depth: int, depth_line: int, chain: int, chain_line: int) -> Optional[Refusal]:
    if depth > MAX_DEPTH:
        return Refusal(depth_line, f"brackets nested {depth} deep (Python allows {MAX_DEPTH}); "
                                   "LibCST could crash on it", True)
    if chain > MAX_CHAIN:
        return Refusal(chain_line, f"{chain} operators in one expression (more than {MAX_CHAIN}); "
                                   "LibCST would take too long to parse it", False)
    return None


_LAYOUT = frozenset([tokenize.NL, tokenize.COMMENT, tokenize.INDENT, tokenize.DEDENT, tokenize.NEWLINE])

# strings (triple-quoted first) and comments, leftmost first: a '#' in a string is no comment
_STRINGS = re.compile(r'(?s)""".*?"""|' + r"'''.*?'''|" + r'"(?:\\.|[^"\\\n])*"|' + r"'(?:\\.|[^'\\\n])*'|#[^\n]*")


def _blank_strings(source: str) -> str:
    """The source with every string and comment reduced to its line breaks (lines keep their numbers)."""
    return _STRINGS.sub(lambda m: "\n" * m.group().count("\n"), source)


def _suspect_spans(source: str) -> Iterator[Tuple[int, int]]:
    """0-based [start, end) physical-line ranges of the logical lines that could be too costly."""
    if _operators(source) <= MAX_CHAIN and sum(source.count(c) for c in OPENERS) <= MAX_DEPTH:
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
    return sum(text.count(c) for c in OPENERS) > MAX_DEPTH or _operators(text) > MAX_CHAIN


def _operators(text: str) -> int:
    """At least the operators of all chains in the text (an upper bound: C-speed counts)."""
    return sum(text.count(c) for c in OPERATOR_CHARS) + sum(text.count(w) for w in OPERATOR_WORDS)


def _measure(text: str, first_line: int) -> Optional[Tuple[int, int, int, int]]:
    """(max bracket depth, its statement's line, longest operator chain, its statement's line)
    of the text's tokens, lines numbered from ``first_line`` + 1; None when the text does not
    tokenize on its own."""
    depth = best_depth = depth_line = best_chain = chain_line = line = 0
    chains = [0]  # operators so far in the current chain, per open bracket
    try:
        for tok in tokenize.generate_tokens(io.StringIO(text).readline):
            kind, s = tok.type, tok.string
            if not line and kind not in _LAYOUT:
                line = tok.start[0]  # where the statement starts: what the message names
            if kind == tokenize.OP or (kind == tokenize.NAME and s in CHAIN_WORDS):
                if s in CHAIN_OPS or kind == tokenize.NAME:
                    chains[-1] += 1
                    if chains[-1] > best_chain:
                        best_chain, chain_line = chains[-1], line
                elif s in SEPARATORS:
                    chains[-1] = 0
                if s in OPENERS:
                    chains.append(0)
                    depth += 1
                    if depth > best_depth:
                        best_depth, depth_line = depth, line
                elif s in ")]}" and depth:
                    chains.pop()
                    depth -= 1
            elif kind == tokenize.NEWLINE:
                chains = [0]
                depth = line = 0
    except (tokenize.TokenError, SyntaxError):  # IndentationError is a SyntaxError
        return None
    return best_depth, depth_line + first_line, best_chain, chain_line + first_line
