"""Refuse, before parsing, the few files LibCST's native parser cannot handle in reasonable time.

LibCST's parser is quadratic in the length of a chain of left-recursive operations in one
expression (``1 + 1 + ...``, ``a.b.c...``, ``x[0][0]...``, ``a.f(1).g(2)...``, ``-(-(...))``, nested
ternaries): 20,000 terms take minutes, and the parse runs in native code that no signal or alarm
can interrupt. Deep nesting overflows its stack and kills the process: a few thousand nested
brackets, ``and``/``or`` terms or ``elif`` clauses of one statement. CPython itself rejects more than
200 nested brackets, and cannot compile a few thousand nested operations or ``elif`` clauses.

What a chain costs was measured (libcst 1.9, process time; ``tests/test_parse_guard.py`` keeps
the table honest): about the number of its links times the number of tokens it spans, where a call
or subscript link (``.f(...)``, ``[i]``) costs about four times a binary operator, an attribute
or a keyword operator (``and``, ``not``, ``if``/``else``). ``MAX_COST`` of these units is about
1.5 s of parsing on a developer machine: a 334-term sum of ``t.a[0]`` (0.8 M units, 0.1 s) or a
600-call method chain ``a.b(1, 2)...`` (12.6 M units, 1.2 s) is parsed; 20,000 terms of anything
are not. Since a chain spans at least as many tokens as it has links, ``MAX_COST`` also keeps a
chain below 4,000 links, under the lengths that overflow LibCST's stack (``and`` from about 6,000).

``refusal(source)`` measures these exactly, only where a cheap scan says they could be large:

- cheap (every file, about 1% of a parse): group physical lines into logical lines by counting
  brackets per line; only a logical line with more than ``MAX_DEPTH`` opening brackets or
  lambdas, or an upper bound of its chain cost (operator characters and words, times its length)
  above ``MAX_COST``, can be too costly. A bracket in a docstring or comment can mislead the
  grouping: when a line so found does not tokenize alone, the grouping is done again with strings
  and comments blanked out.
- exact (those lines only): Python's tokenizer; the links of one chain are the operators at one
  bracket depth between two separators (``,`` ``:`` ``;`` ``=``), so a long list of short sums
  is fine (it parses in linear time) while one long sum is not. ``elif`` clauses are counted
  per ``if`` statement, with the tokenizer too, in files that have more than ``MAX_ELIF``.

Nested lambdas are no problem for LibCST, but the analysis is quadratic in their depth: more
than ``MAX_DEPTH`` are refused too.
"""

from __future__ import annotations

import io
import keyword
import re
import tokenize
from typing import Dict, Iterator, List, NamedTuple, Optional, Tuple

MAX_DEPTH = 200  # CPython's own limit on brackets (the tokenizer's MAXLEVEL); lambdas too
# A chain's cost: its links (a call or subscript link weighs TRAILER_WEIGHT) times the tokens it
# spans; see the module's docstring for what was measured.
MAX_COST = 16_000_000
TRAILER_WEIGHT = 4
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
    cost, line = found["chain"]
    if cost > MAX_COST:
        links, tokens = found["chain_size"]
        return Refusal(line, f"an expression of {links} chained operations over {tokens} tokens; "
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
            or TRAILER_WEIGHT * _operators(text) * len(text) > MAX_COST)


def _operators(text: str) -> int:
    """At least the links of all chains in the text (an upper bound: C-speed counts); the text's
    length is at least the tokens any chain spans."""
    return sum(text.count(c) for c in OPERATOR_CHARS) + sum(text.count(w) for w in OPERATOR_WORDS)


def _measure(text: str, first_line: int) -> Optional[Dict[str, Tuple[int, int]]]:
    """The deepest bracket nesting, costliest operator chain and deepest lambda nesting of the
    text's tokens, each with the line of its statement (numbered from ``first_line`` + 1), and
    the links and tokens of that chain (``chain_size``); None when the text does not tokenize."""
    best = {"depth": (0, 0), "chain": (0, 0), "lambdas": (0, 0)}
    size = (0, 0)
    depth = line = 0
    count = 0  # tokens so far
    # per open bracket: [weighted links of the current chain, the token where it started, links]
    chains: List[List[int]] = [[0, 0, 0]]
    lambdas = [0]  # lambdas whose body goes on, per open bracket
    follows_operand = False  # the previous token ends an operand: an opener after it is a trailer
    try:
        for tok in tokenize.generate_tokens(io.StringIO(text).readline):
            kind, s = tok.type, tok.string
            if kind in _LAYOUT:
                if kind == tokenize.NEWLINE:
                    chains, lambdas = [[0, count, 0]], [0]
                    depth = line = 0
                    follows_operand = False
                continue
            count += 1
            if not line:
                line = tok.start[0]  # where the statement starts: what the message names
            link = 0
            if kind == tokenize.OP:
                if s in OPENERS:
                    link = TRAILER_WEIGHT if follows_operand and s != "{" else 0
                elif s in CHAIN_OPS:
                    link = 1
                elif s in SEPARATORS:
                    chains[-1] = [0, count, 0]
                    if s in LAMBDA_ENDS:
                        lambdas[-1] = 0
            elif kind == tokenize.NAME and s in CHAIN_WORDS:
                link = 1
                if s == "lambda":
                    lambdas[-1] += 1
                    if lambdas[-1] > best["lambdas"][0]:
                        best["lambdas"] = (lambdas[-1], line)
            if link:
                chain = chains[-1]
                chain[0] += link
                chain[2] += 1
                cost = chain[0] * (count - chain[1])
                if cost > best["chain"][0]:
                    best["chain"] = (cost, line)
                    size = (chain[2], count - chain[1])
            if kind == tokenize.OP and s in OPENERS:
                chains.append([0, count, 0])
                lambdas.append(0)
                depth += 1
                if depth > best["depth"][0]:
                    best["depth"] = (depth, line)
            elif kind == tokenize.OP and s in ")]}" and depth:
                chains.pop()
                lambdas.pop()
                depth -= 1
            follows_operand = (kind in (tokenize.NUMBER, tokenize.STRING) or (kind == tokenize.OP and s in ")]}")
                               or (kind == tokenize.NAME and not keyword.iskeyword(s)))
    except (tokenize.TokenError, SyntaxError):  # IndentationError is a SyntaxError
        return None
    out = {k: (n, at + first_line) for k, (n, at) in best.items()}
    out["chain_size"] = size
    return out


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
