"""Building blocks of the rules' autofixes: node text, the name torch goes by, keyword arguments.

A fix is computed when the rule reports, from the LibCST nodes it saw (so the new text keeps the
node's inner comments and formatting) and returned as a ``torchsync_lint.adopt.fixes.Fix``.
"""

from __future__ import annotations

from typing import Iterable, Optional, Tuple

import libcst as cst

from torchsync_lint.finding import INDENT, SAFE, UNSAFE, Fix, Hoist  # noqa: F401 (re-exported for rules)
from torchsync_lint.rules._common import number_literal

_EMPTY = cst.Module([])
_NO_SPACE = cst.SimpleWhitespace("")


def bare(node: cst.CSTNode) -> cst.CSTNode:
    """The node without its own parentheses: positions (and so the replaced text) exclude them."""
    if getattr(node, "lpar", None):
        return node.with_changes(lpar=[], rpar=[])
    return node


_HEAD = "if _:\n" + INDENT


def code(node: cst.CSTNode, parens: bool = False) -> str:
    """The node's text (an expression or a small statement), with ``INDENT`` where its lines take
    the indentation of the block it is in (unknown here: ``adopt.fixes`` finds it when it matches
    the text against the file), without its own parentheses unless ``parens``. LibCST's public
    code generator: the node as the one statement of a block whose indentation is ``INDENT``."""
    node = node if parens else bare(node)
    line = cst.SimpleStatementLine([node if isinstance(node, cst.BaseSmallStatement) else cst.Expr(node)])
    text = cst.Module([cst.If(cst.Name("_"), cst.IndentedBlock([line]))], default_indent=INDENT,
                      default_newline="\n").code
    return text[len(_HEAD):-1]  # without the block's header and the statement's own line end


def code_keeping_comments(node: cst.CSTNode) -> str:
    """Like ``code``, but keeps the node's parentheses when a comment sits in them."""
    text = code(node)
    with_parens = code(node, parens=True)
    return with_parens if "#" in with_parens.replace(text, "") else text


def make(applicability: str, message: str, node: cst.CSTNode, new: "cst.CSTNode | str",
         imports: Iterable[str] = (), hoist: Optional[Hoist] = None) -> Fix:
    """``original``: the reported node's text without its parentheses, which is what the
    finding's range covers in the file; ``new`` replaces exactly that."""
    text = new if isinstance(new, str) else code(new)
    return Fix(applicability, message, code(node), text, tuple(imports), hoist)


def torch_name(ctx) -> Tuple[str, Tuple[str, ...]]:
    """The local name of the ``torch`` module, and the imports the fix needs when there is none."""
    mapping = getattr(getattr(ctx, "aliases", None), "map", {}) or {}
    if mapping.get("torch") == "torch":
        return "torch", ()
    for local, full in sorted(mapping.items()):
        if full == "torch":
            return local, ()
    return "torch", ("torch",)


def keyword(call: cst.Call, name: str) -> Optional[cst.Arg]:
    for a in call.args:
        if a.keyword is not None and a.keyword.value == name:
            return a
    return None


def has_star(call: cst.Call) -> bool:
    return any(a.star for a in call.args)


def with_keyword(call: cst.Call, name: str, value: str) -> cst.Call:
    """``call`` with ``name=value``: the existing argument's value replaced, else a new last
    argument written in the call's own style (one line, or one argument per line)."""
    new_value = cst.parse_expression(value)
    args = list(call.args)
    for i, a in enumerate(args):
        if a.keyword is not None and a.keyword.value == name:
            args[i] = a.with_changes(value=new_value)
            return call.with_changes(args=args)
    arg = cst.Arg(new_value, keyword=cst.Name(name), equal=cst.AssignEqual(_NO_SPACE, _NO_SPACE))
    if not args:
        return call.with_changes(args=[arg])
    last = args[-1]
    after = last.comma.whitespace_after if type(last.comma) is cst.Comma else None
    opening = call.whitespace_before_args
    if type(after) is cst.ParenthesizedWhitespace and type(opening) is cst.ParenthesizedWhitespace:
        # one argument per line, with a trailing comma: the last line keeps its comment, the new
        # argument goes on a line of its own, indented like the others
        args[-1] = last.with_changes(comma=last.comma.with_changes(
            whitespace_after=after.with_changes(last_line=opening.last_line)))
        args.append(arg.with_changes(comma=last.comma.with_changes(
            whitespace_after=after.with_changes(first_line=cst.TrailingWhitespace(), empty_lines=[]))))
    elif type(last.comma) is cst.Comma:
        args[-1] = last.with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")))
        args.append(arg.with_changes(comma=last.comma))
    else:
        args[-1] = last.with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")))
        args.append(arg)
    return call.with_changes(args=args)


def without_keyword(call: cst.Call, name: str) -> cst.Call:
    """``call`` without ``name=``; a removed last argument leaves its comma (and the line break
    before the closing parenthesis) to the argument before it."""
    args = [a for a in call.args if not (a.keyword is not None and a.keyword.value == name)]
    removed_last = call.args and call.args[-1] not in args
    if args and removed_last:
        args[-1] = args[-1].with_changes(comma=call.args[-1].comma)
    return call.with_changes(args=args)


def is_scalar_literal(expr: Optional[cst.BaseExpression]) -> bool:
    """``3``, ``-0.5``, ``True``: a Python number written in the code."""
    if expr is None:
        return False
    if type(expr) is cst.Name:
        return expr.value in ("True", "False")
    return number_literal(expr) is not None


def is_constant(expr: cst.CSTNode, torch_names: Iterable[str]) -> bool:
    """Built only from literals and ``torch`` attributes (``torch.tensor([1.0, 2.0]).float()``,
    ``torch.Tensor([0.1] * 10)``): the same value every time, safe to build once elsewhere."""
    roots = set(torch_names)
    stack = [expr]
    while stack:
        n = stack.pop()
        if type(n) is cst.Name:
            if n.value not in roots and n.value not in ("True", "False", "None"):
                return False
        elif type(n) is cst.Attribute:
            stack.append(n.value)  # the attribute's own name is not a variable
            continue
        elif type(n) is cst.Arg:
            stack.append(n.value)  # keyword names are not variables
            continue
        elif type(n) in (cst.Lambda, cst.ListComp, cst.SetComp, cst.DictComp, cst.GeneratorExp,
                            cst.NamedExpr, cst.Await, cst.Yield, cst.Subscript, cst.FormattedString):
            return False
        stack.extend(n.children)
    return True


def torch_aliases(ctx) -> Tuple[str, ...]:
    mapping = getattr(getattr(ctx, "aliases", None), "map", {}) or {}
    return tuple(local for local, full in mapping.items() if full == "torch")


def module_method(ctx):
    """The class of the ``nn.Module`` method being checked (``self`` as first parameter), or None."""
    func = getattr(ctx, "function", None)
    if func is None or not getattr(func, "is_method", False) or func.cls is None or not func.cls.is_module:
        return None
    node = func.node
    if func.name == "__init__" or node.decorators:
        return None
    params = node.params.posonly_params or node.params.params
    if not params or params[0].name.value != "self":
        return None
    return func.cls


def init_params(cls) -> str:
    """What a new ``__init__`` takes: nothing for a direct ``nn.Module`` subclass, else all."""
    bases = list(getattr(cls, "bases", []))
    return "" if bases == ["torch.nn.Module"] or bases == ["torch.nn.modules.module.Module"] else "*args, **kwargs"


def arg_code(a: cst.Arg) -> str:
    """One argument's text (``name=value``), without its comma."""
    return _EMPTY.code_for_node(a.with_changes(comma=cst.MaybeSentinel.DEFAULT)).strip()
