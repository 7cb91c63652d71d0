"""Snippet mode's parent side (no torch): statements, names and specs, and the rules' rewrites."""

import textwrap

import libcst as cst

from torchsync_lint.finding import Finding
from torchsync_lint.verify import fixes
from torchsync_lint.verify.snippet import extract_file, module_info

SOURCE = textwrap.dedent("""\
    import torch
    import torch.nn as nn
    from torch import Tensor

    SCALE = 2.0


    class Loss(nn.Module):
        def __init__(self, num_classes: int = 10):
            super().__init__()
            self.num_classes = num_classes
            self.weights = torch.ones(num_classes)

        def forward(self, pred: Tensor, target: Tensor, sizes: list[int]) -> Tensor:
            import math
            mask = target != self.num_classes - 1
            n = pred.shape[0]
            if mask.sum() > 0:
                picked = pred[mask] * SCALE
            elif (target.max()
                  > 3):
                pass
            total = pred[range(n), target].sum().item()
            return total
""")


def finding(line, col, end_line, end_col, code="TSL001"):
    return Finding("x.py", line, col, end_line, end_col, code, "n", "m")


def extract(tmp_path, items):
    path = tmp_path / "lossmod.py"
    path.write_text(SOURCE)
    return extract_file(str(path), list(enumerate(items)))


def test_simple_statement_keeps_its_position_and_local_names(tmp_path):
    # `pred[range(n), target].sum().item()` on line 23
    line = 23
    col = SOURCE.splitlines()[line - 1].index("pred[range")
    out = extract(tmp_path, [finding(line, col + 1, line, col + 1 + len("pred[range(n), target].sum().item()"))])[0]
    assert out.failure is None
    assert out.stmt == {"src": "total = pred[range(n), target].sum().item()", "line": 23, "col": 8, "compound": False}
    specs = out.specs
    assert specs["pred"]["kind"] == "tensor" and "subscripted" in specs["pred"]["roles"]
    assert specs["n"] == {"kind": "number", "dtype": "int", "roles": ["scalar"]}
    assert "index" in specs["target"]["roles"]
    assert "range" not in specs and "torch" not in specs  # module names come from the real module
    assert out.expr["src"] == "pred[range(n), target].sum().item()"
    assert (out.span.stmt_line, out.span.stmt_end_line) == (23, 23)


def test_compound_headers_are_cut_at_the_colon(tmp_path):
    src_lines = SOURCE.splitlines()
    if_col = src_lines[17].index("mask.sum()")
    elif_col = src_lines[19].index("target.max()")
    got = extract(tmp_path, [finding(18, if_col + 1, 18, if_col + 11, "TSL302"),
                             finding(20, elif_col + 1, 20, elif_col + 13, "TSL302")])
    assert got[0].stmt == {"src": "if mask.sum() > 0:", "line": 18, "col": 8, "compound": True}
    elif_stmt = got[1].stmt
    assert elif_stmt["src"].startswith("if   (target.max()\n") and elif_stmt["src"].endswith("> 3):")
    assert elif_stmt["compound"] and got[1].span.stmt_end_line == 21


def test_self_spec_names_the_class_and_init_expressions(tmp_path):
    col = SOURCE.splitlines()[15].index("target !=")
    out = extract(tmp_path, [finding(16, col + 1, 16, col + 30, "TSL302")])[0]
    assert out.specs["self"] == {"kind": "self"}
    assert out.self_spec["class"] == "Loss"
    init = out.self_spec["attrs"]["num_classes"]["init"][0]
    assert init["src"] == "num_classes"
    assert init["params"]["num_classes"]["kind"] == "expr" and init["params"]["num_classes"]["src"] == "10"
    assert out.self_spec["init_params"] == {}


def test_local_imports_and_annotations(tmp_path):
    out = extract(tmp_path, [finding(23, 17, 23, 50)])[0]
    # `sizes: list[int]` is not read by the statement; the annotation converter is used for params read
    assert "sizes" not in out.specs
    from torchsync_lint.verify.specs import annotation_spec
    from torchsync_lint.inference.names import Aliases

    a = Aliases("m")
    assert annotation_spec(cst.parse_expression("list[int]"), a) == {
        "kind": "list", "elt": {"kind": "number", "dtype": "int"}}
    assert annotation_spec(cst.parse_expression("Optional[Dict[str, Tensor]]"), a) == {
        "kind": "dict", "value_spec": {"kind": "tensor"}}
    assert annotation_spec(cst.parse_expression("tuple[float, float]"), a)["elts"] == [
        {"kind": "number", "dtype": "float"}] * 2


def test_module_info_for_packages(tmp_path):
    pkg = tmp_path / "pkg" / "sub"
    pkg.mkdir(parents=True)
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (pkg / "__init__.py").write_text("")
    (pkg / "mod.py").write_text("x = 1\n")
    info = module_info(str(pkg / "mod.py"))
    assert info["module"] == "pkg.sub.mod" and info["root"] == str(tmp_path)


# -- rewrites --------------------------------------------------------------------------------------------

def rewrite(code, stmt_src):
    stmt = cst.parse_statement(stmt_src).body[0]
    return fixes.rewrite(code, stmt, None, 3, 4)


def test_rewrites_per_rule():
    assert rewrite("TSL001", "y = x.sum().item()\n")["src"] == "y = x.sum().detach()"
    assert rewrite("TSL301", "assert t.max() < 10\n")["src"] == "torch._assert_async(torch.as_tensor(t.max() < 10))"
    assert rewrite("TSL201", "v = -p[range(t.shape[0]), t]\n")["src"] == \
        "v = -p[torch.arange(t.shape[0], device=(p).device), t]"
    assert rewrite("TSL203", "t[i] = -1\n")["src"] == "t[i] = torch.full((), -1, dtype=(t).dtype, device=(t).device)"
    assert rewrite("TSL003", "h = x.cpu()\n")["src"] == "h = (x).to('cpu', non_blocking=True)"
    assert rewrite("TSL004", "f = float(x)\n")["src"] == "f = (x).float()"
    assert rewrite("TSL005", "m = max(1, t.sum())\n")["src"] == "m = torch.clamp(t.sum(), min=1)"
    assert rewrite("TSL401", "torch.cuda.synchronize()\n")["src"] == "pass"
    assert rewrite("TSL403", "same = torch.equal(a, b)\n")["src"] == "same = torch.eq(a, b).all()"
    assert rewrite("TSL405", "y = torch.linalg.inv(a)\n")["src"] == "y = torch.linalg.inv_ex(a).inverse"
    assert "validate_args=False" in rewrite("TSL404", "d = torch.distributions.Normal(m, s)\n")["src"]
    assert "error_if_nonfinite" not in rewrite(
        "TSL406", "n = clip_grad_norm_(p, 1.0, error_if_nonfinite=True)\n")["src"]


def test_rules_without_a_local_rewrite_say_why():
    assert "num_classes" in rewrite("TSL108", "y = F.one_hot(t)\n")["none"]
    assert "__init__" in rewrite("TSL202", "w = torch.Tensor([0.1] * 10).cuda()\n")["none"]


TRICKY = '''\
import torch


def f(x, mask, dev="cpu"):
    """é docstring"""
    y = x.item(); z = (x.sum()
                       .item())
    if x.any():
        pass
    elif (mask.sum() >
          2):  # a comment
        w = x[mask]
    else:
        w = None
    for i in range(int(x.max())): pass
    with torch.no_grad(), open("é") as fh:
        q = [v.item() for v in x]
    try:
        g = (t.item() for t in x)
    except ValueError as exc:
        r = x.cpu()
    else:
        r = x.to(device=dev, non_blocking=True)
    finally:
        pass
    h = lambda t: t.item()
    x[mask] = x.nonzero()
    x += x.sum().item()
    while x.max() > 0:
        @staticmethod
        def inner(a):
            return a.tolist()
    match dev:
        case "cpu":
            s = "é" + str(x.sum().item())
    return y, z, w, q, g, r, h, s
'''


def test_the_fast_locator_agrees_with_libcst_positions(tmp_path):
    """Every expression of a file with the shapes that trip a locator (elif, suites on the header's
    line, semicolons, non-ASCII text, decorators in a body, lambda, generator, store targets, an
    attribute's name, a keyword's name, try/else/finally, match): the extraction from Python's
    parser and the one from LibCST's positions say the same."""
    import ast as ast_mod

    path = tmp_path / "tricky.py"
    path.write_text(TRICKY, encoding="utf-8")
    lines = TRICKY.splitlines()
    findings = []
    for node in ast_mod.walk(ast_mod.parse(TRICKY)):
        if isinstance(node, (ast_mod.Call, ast_mod.Subscript, ast_mod.Compare)):
            c1 = len(lines[node.lineno - 1].encode()[:node.col_offset].decode()) + 1
            c2 = len(lines[node.end_lineno - 1].encode()[:node.end_col_offset].decode()) + 1
            findings.append(Finding(str(path), node.lineno, c1, node.end_lineno, c2, "TSL001", "n", "m"))
        if isinstance(node, ast_mod.Attribute) and node.attr in ("item", "cpu"):
            end = len(lines[node.end_lineno - 1].encode()[:node.end_col_offset].decode()) + 1
            findings.append(Finding(str(path), node.end_lineno, end - len(node.attr), node.end_lineno, end,
                                    "TSL001", "n", "m"))
    items = list(enumerate(findings))
    fast = extract_file(str(path), items)
    slow = extract_file(str(path), items, nodes=True)
    assert len(items) > 30
    for key in fast:
        a, b = fast[key], slow[key]
        if a.stmt and a.stmt["src"].startswith("while"):
            # a body that starts with a decorated def: LibCST's block starts at `def`, so its header
            # text ran on into "@staticmethod"; Python's parser ends it at the colon
            assert a.stmt["src"] == "while x.max() > 0:" and "@staticmethod" in b.stmt["src"]
            continue
        assert (a.span, a.stmt, a.expr, a.specs, a.self_spec, a.failure, a.notes) == \
            (b.span, b.stmt, b.expr, b.specs, b.self_spec, b.failure, b.notes), findings[key]
    assert any(e.failure and "lambda" in e.failure for e in fast.values())
    assert any("inside a generator expression" in e.notes for e in fast.values())


def test_names_inverted_or_combined_in_an_index_are_masks(tmp_path):
    # `~keep` / `valid & hit` as an index: the names are boolean masks (synthesised as bool), not
    # integer indices whose `~` is a bitwise not and whose indexing gathers without a sync
    src = ("import torch\n\n\ndef f(x: torch.Tensor, keep: torch.Tensor, valid: torch.Tensor, hit: torch.Tensor):\n"
           "    a = x[~keep]\n    b = x[valid & ~hit]\n    return a, b\n")
    path = tmp_path / "masks.py"
    path.write_text(src)
    lines = src.splitlines()
    items = [Finding("masks.py", n, lines[n - 1].index("x[") + 1, n, len(lines[n - 1]) + 1, "TSL103", "n", "m")
             for n in (5, 6)]
    out = extract_file(str(path), list(enumerate(items)))
    first, second = out[0], out[1]
    assert "mask" in first.specs["keep"]["roles"] and "index" not in first.specs["keep"]["roles"]
    assert "mask" in second.specs["valid"]["roles"] and "mask" in second.specs["hit"]["roles"]


def test_a_receiver_of_summary_writer_methods_is_a_writer(tmp_path):
    # TSL410 reads `writer.add_scalar(...)` of an unknown `writer` by the method's name: the
    # snippet needs a SummaryWriter there, not a tensor stand-in without `add_scalar`
    src = ("import torch\n\n\ndef log(writer, loss: torch.Tensor, step: int):\n"
           "    writer.add_scalar('loss', loss, step)\n")
    path = tmp_path / "logs.py"
    path.write_text(src)
    line = src.splitlines()[4]
    item = Finding("logs.py", 5, line.index("writer") + 1, 5, len(line) + 1, "TSL410", "n", "m")
    specs = extract_file(str(path), [(0, item)])[0].specs
    assert "writer" in specs["writer"]["roles"] and "writer" not in specs["loss"].get("roles", [])


def test_a_tensor_formatted_with_a_number_format_is_one_element(tmp_path):
    # `f"{loss:.3f}"` only formats a tensor of one element: synthesised 0-dim, else the snippet
    # raises in Tensor.__format__ and the verdict is inconclusive
    src = "import torch\n\n\ndef show(loss: torch.Tensor, name):\n    print(f'{name} {loss:.3f}')\n"
    path = tmp_path / "show.py"
    path.write_text(src)
    line = src.splitlines()[4]
    item = Finding("show.py", 5, line.index("f'") + 1, 5, len(line), "TSL006", "n", "m")
    specs = extract_file(str(path), [(0, item)])[0].specs
    assert "scalar" in specs["loss"]["roles"] and "scalar" not in specs["name"]["roles"]


def test_an_index_tsl303_reads_as_an_int_is_0_dim_and_a_module_moved_by_tsl412_is_on_the_host(tmp_path):
    # TSL303 reports `table[t]` of a CPU table because only a 0-dim GPU index works there: the
    # stand-in for `t` must have no dimensions (a 1-D one raises, and the verdict was inconclusive);
    # TSL412 reports moving a module built on the host: its stand-in must hold host parameters
    src = ("import torch\n\nTABLE = torch.linspace(0, 1, 10)\n\n\ndef f(t: torch.Tensor, model, device='cuda'):\n"
           "    a = TABLE[t]\n    model.to(device)\n    return a, list(model.parameters())\n")
    path = tmp_path / "tables.py"
    path.write_text(src)
    lines = src.splitlines()
    items = [Finding("tables.py", 7, lines[6].index("t]") + 1, 7, lines[6].index("t]") + 2, "TSL303", "n", "m"),
             Finding("tables.py", 8, 5, 8, len(lines[7]) + 1, "TSL412", "n", "m")]
    out = extract_file(str(path), list(enumerate(items)))
    assert "int_index" in out[0].specs["t"]["roles"]
    assert "host_module" in out[1].specs["model"]["roles"]


def test_stand_ins_for_int_indexes_and_host_modules():
    torch = __import__("pytest").importorskip("torch")
    from torchsync_lint.verify.synth import Plan, Synth

    synth = Synth(torch, Plan((4, 10)), "cpu")
    t = synth.value({"kind": "tensor", "roles": ["index", "int_index"]}, "t")
    assert t.dim() == 0 and t.dtype == torch.int64
    assert synth.value({"kind": "tensor", "roles": ["index"]}, "i").dim() >= 1  # an index of positions
    host = synth.value({"kind": "module", "roles": ["host_module"]}, "model")
    assert [p.device.type for p in host.parameters()] == ["cpu"] and torch.equal(host(t), t)


def test_the_loss_of_a_tsl414_backward_reaches_a_host_leaf(tmp_path):
    # TSL414 reports a backward() whose loss reaches a host leaf that requires grad: the stand-in
    # for the loss must be such a loss, whether it is `.backward()`'s receiver or the argument of
    # `torch.autograd.backward` (plain stand-ins made `backward()` raise, and every verdict was
    # inconclusive; a leaf on the device made the second one refuted on the H200)
    torch = __import__("pytest").importorskip("torch")
    from torchsync_lint.verify.synth import Plan, Synth

    src = ("import torch\n\n\ndef update(log_alpha: torch.Tensor, log_prob: torch.Tensor, reg):\n"
           "    loss = -(log_alpha.exp() * log_prob.detach()).mean()\n    loss.backward()\n"
           "    torch.autograd.backward(reg)\n")
    path = tmp_path / "alpha.py"
    path.write_text(src)
    items = [Finding("alpha.py", 6, 5, 6, 20, "TSL414", "n", "m"), Finding("alpha.py", 7, 5, 7, 33, "TSL414", "n", "m")]
    out = extract_file(str(path), list(enumerate(items)))
    assert "host_grad_loss" in out[0].specs["loss"]["roles"]
    assert "host_grad_loss" in out[1].specs["reg"]["roles"]
    synth = Synth(torch, Plan((4, 10)), "cpu")
    for got in (out[0].specs["loss"], out[1].specs["reg"]):
        loss = synth.value(got, "loss")
        assert loss.dim() == 0 and loss.requires_grad and not loss.is_leaf
        loss.backward()  # runs: a scalar whose graph reaches a leaf on the host
