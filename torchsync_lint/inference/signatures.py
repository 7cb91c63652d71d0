"""What a function's signature and body declare, read without evaluating it: annotations refined
by the body, literal defaults, static methods, placeholder bodies, PEP 484 signature comments."""

from __future__ import annotations

import libcst as cst

from torchsync_lint.inference.values import DICT, LIST, TENSOR, TUPLE, Value


def vague_tensors(v: Value) -> bool:
    """An annotation's value with a tensor of unknown device (worth refining from the body)."""
    if v.kind == TENSOR:
        return v.device is None
    if v.item is not None:
        return vague_tensors(v.item)
    return v.kind == TUPLE and any(vague_tensors(e) for e in v.elts)


def bare_container(v: Value) -> bool:
    """``-> dict`` / ``-> list``: a container annotation that names nothing it holds."""
    return v.kind in (DICT, LIST, TUPLE) and v.item is None and not v.elts and not v.keys


def refine_annotation(ann: Value, body: Value) -> Value:
    """The annotated value, with the device (and dtype) the function's body gives its tensors;
    a bare container annotation, with what the body's container holds."""
    if bare_container(ann) and body.kind == ann.kind:
        return body
    if ann.kind == TENSOR and body.kind == TENSOR:
        # `-> Tensor` says nothing of the rank: a body's full reduction (`scores.argmax()`) is 0-dim
        ndim = ann.ndim if ann.ndim is not None else body.ndim
        return ann.with_(device=ann.device or body.device, dtype=ann.dtype or body.dtype, host_data=body.host_data,
                         ndim=ndim, zero_dim=ann.zero_dim or body.zero_dim)
    if ann.kind == TUPLE and body.kind == TUPLE and ann.elts and len(ann.elts) == len(body.elts):
        return ann.with_(elts=tuple(refine_annotation(a, b) for a, b in zip(ann.elts, body.elts)))
    if ann.kind == body.kind and ann.item is not None and body.item is not None:  # dict[str, tuple[Tensor, bool]]
        # and the keys a body's dict names (`-> Dict[str, Tensor]` of `{"valid": mask, "peak": i}`)
        keys = tuple((k, refine_annotation(ann.item, v)) for k, v in body.keys) if ann.kind == DICT else ()
        return ann.with_(item=refine_annotation(ann.item, body.item), keys=keys or ann.keys)
    return ann


def literal_default(param: cst.Param) -> bool:
    d = param.default
    return type(d) in (cst.SimpleString, cst.ConcatenatedString, cst.FormattedString, cst.Integer, cst.Float,
                          cst.UnaryOperation, cst.List, cst.Tuple, cst.Dict) or (
        type(d) is cst.Name and d.value in ("True", "False"))


def is_static(node: cst.FunctionDef) -> bool:
    return any(type(d.decorator) is cst.Name and d.decorator.value == "staticmethod" for d in node.decorators)


def placeholder(node: cst.FunctionDef) -> bool:
    """A body that raises unconditionally or does nothing (``raise NotImplementedError``, ``pass``,
    ``...``, a docstring): a method for subclasses to override, so its callers learn nothing from it (it
    does not return None to them)."""
    body = node.body.body if type(node.body) is cst.IndentedBlock else ()
    if any(type(stmt) is cst.SimpleStatementLine and any(type(s) is cst.Raise for s in stmt.body)
           for stmt in body):
        return True  # an unconditional raise: it never returns
    for stmt in body:
        if type(stmt) is not cst.SimpleStatementLine:
            return False
        for small in stmt.body:
            if type(small) is cst.Pass:
                continue
            if type(small) is cst.Expr and type(small.value) in (cst.SimpleString, cst.ConcatenatedString,
                                                                        cst.Ellipsis):
                continue
            return False
    return True


def signature_comment(node: cst.FunctionDef):
    """A PEP 484 signature type comment, ``# type: (Tensor, int) -> Tensor``, on the ``def`` line or
    the first line of the body: ([argument annotations] or None for ``(...)``, return annotation)."""
    texts = []
    body = node.body
    if type(body) is cst.IndentedBlock:
        if body.header.comment is not None:
            texts.append(body.header.comment.value)
        if body.body:
            texts.extend(line.comment.value for line in body.body[0].leading_lines if line.comment is not None)
    for text in texts:
        text = text[1:].strip()
        if not text.startswith("type:") or "->" not in text:
            continue
        args, _, ret = text[len("type:"):].strip().rpartition("->")
        try:
            args_expr = cst.parse_expression(args.strip())
            ret_expr = cst.parse_expression(ret.split("#")[0].strip())
        except Exception:
            return None
        if type(args_expr) is cst.Ellipsis:
            return None, ret_expr
        if type(args_expr) is cst.Tuple:
            if any(type(el) is cst.StarredElement for el in args_expr.elements):
                return None, ret_expr
            return [el.value for el in args_expr.elements], ret_expr
        return [args_expr], ret_expr
    return None
