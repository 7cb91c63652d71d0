"""TSL111 tensor-argument-sync."""

import functools
from typing import Dict, List, Optional, Tuple

import libcst as cst

from torchsync_lint import catalog
from torchsync_lint.catalog import forms as argforms
from torchsync_lint.inference import torch_facts
from torchsync_lint.inference.values import CPU, CUDA, LIST, NONE, NUMBER, SIZE, STR, TENSOR, TUPLE, UNKNOWN
from torchsync_lint.rules import claims
from torchsync_lint.rules.base import Rule
from torchsync_lint.rules._common import may_be_on_gpu

SYNC_CONDITION = (
    "only when the named argument is a tensor (the catalog's `<param>=tensor` variants), or, for the "
    "calls with measured argument forms (`form` rows), when every measured form the call can have synced"
)

# Calls whose sync depends on the form of their arguments, decided from the catalog's measured
# argument forms (recipes.ARGUMENT_RECIPES; catalog.forms matches a call against them). The message
# names the form measured sync-free where one exists (SYNC_FREE: catalog name -> that variant).
CTC_MESSAGE = (
    "`ctc_loss` / `nn.CTCLoss` waits for the GPU in the form of this call (measured: every form with "
    "`reduction='mean'` or GPU-tensor lengths, and every form outside cuDNN's path); the form measured "
    "sync-free is cuDNN's: `reduction='sum'` or `'none'`, int32 targets concatenated on the CPU, "
    "lengths as Python lists (every input length T), `blank=0`"
)
ISTFT_MESSAGE = (
    "`istft` checks the window's overlap-add envelope on the host, so it waits for the GPU in every "
    "measured form (with or without a window or `length`, `center`, `onesided`); call it outside "
    "the training step, or every N steps"
)
PACK_MESSAGE = (
    "`pack_padded_sequence(..., enforce_sorted=False)` sorts the lengths on the host and copies the "
    "order to the GPU, which waits for every queued kernel (measured); sort the batch by length in "
    "the collate function and pass `enforce_sorted=True`, measured sync-free with lengths as a list "
    "or a CPU tensor"
)
FORM_MESSAGE = "`{call}` waits for the GPU in the form of this call (measured: `{label}`)"
FORM_MESSAGES = {
    "torch.nn.functional.ctc_loss": CTC_MESSAGE,
    "torch.ctc_loss": CTC_MESSAGE,
    "torch.nn.CTCLoss": CTC_MESSAGE,
    "torch.istft": ISTFT_MESSAGE,
    "torch.Tensor.istft": ISTFT_MESSAGE,
    "torch.nn.utils.rnn.pack_padded_sequence": PACK_MESSAGE,
}
SYNC_FREE = {
    "torch.nn.functional.ctc_loss": "cudnn:targets=cpu-int32,lengths=list,reduction=sum",
    "torch.ctc_loss": "cudnn:targets=cpu-int32,lengths=list,reduction=sum",
    "torch.nn.CTCLoss": "cudnn:targets=cpu-int32,lengths=list,reduction=sum",
    "torch.nn.utils.rnn.pack_padded_sequence": "lengths=list,enforce_sorted=True",
}


@functools.cache
def _table() -> Dict[str, List[Tuple[str, Optional[int]]]]:
    """Catalog name -> (parameter, its position in the call) for the measured `<param>=tensor`
    syncs, less the calls another rule reports with a message of its own."""
    elsewhere = set()
    for code, module in claims.rule_modules().items():
        if code != "TSL111":
            elsewhere |= claims.claimed_calls(module)
    out: Dict[str, List[Tuple[str, Optional[int]]]] = {}
    for q, params in catalog.tensor_argument_syncs().items():
        if q in elsewhere:
            continue
        facts = torch_facts.lookup(q.replace("torch.Tensor.", "Tensor."))
        for name in params:
            pos = None
            for overload in facts.overloads if facts is not None else ():
                names = [p.name for p in overload.params if not p.keyword_only]
                if name in names:
                    pos = names.index(name)
                    break
            out.setdefault(q, []).append((name, pos))
    return out


@functools.cache
def _form_calls() -> Dict[str, argforms.Forms]:
    """Catalog name -> measured argument forms, for the calls with a form that synced, less the
    calls another rule reports (repeat_interleave: TSL105)."""
    elsewhere = set()
    for code, module in claims.rule_modules().items():
        if code != "TSL111":
            elsewhere |= claims.claimed_calls(module)
    out = {}
    for q in argforms.callables():
        f = argforms.forms(q)
        if f is not None and q not in elsewhere and any(v.synced for v in f.variants):
            out[q] = f
    return out


def _literal(expr: cst.BaseExpression):
    """(is a literal, its value) for True/False/None, strings, numbers."""
    if type(expr) is cst.Name and expr.value in ("True", "False", "None"):
        return True, {"True": True, "False": False, "None": None}[expr.value]
    if type(expr) is cst.SimpleString:
        return True, expr.evaluated_value
    sign = 1
    if type(expr) is cst.UnaryOperation and type(expr.operator) is cst.Minus:
        sign, expr = -1, expr.expression
    if type(expr) in (cst.Integer, cst.Float):
        return True, sign * expr.evaluated_value
    return False, None


class TensorArgumentSync(Rule):
    """
    ## What it does
    Flags calls that the sync catalog measured to sync only when one argument is a GPU tensor
    rather than a Python number: `x.masked_fill(mask, value)` and `index_fill` with a tensor
    `value`, `torch.fake_quantize_per_tensor_affine` with a tensor `scale`... The list is read
    from `catalog/data/sync_catalog.json` (variants named `<param>=tensor` that synced while the
    default form did not), less calls another rule reports with its own advice.

    It also decides the ops whose sync depends on the form of their arguments from the forms the
    catalog measured by hand (`recipes.ARGUMENT_RECIPES`): a call is flagged when every measured form
    it can have (lengths a GPU tensor, a CPU tensor or a list; `reduction`; `enforce_sorted`...)
    synced, and not when one of them did not: `F.ctc_loss` / `torch.ctc_loss` / `nn.CTCLoss`,
    `torch.istft` (every form syncs), `pack_padded_sequence(..., enforce_sorted=False)`.
    `embedding_bag`, `stft`, `quantile` and `multinomial` were measured sync-free in every form.

    ## Why is this bad?
    These ops take the argument as a host scalar: given a CUDA tensor they copy it to the host
    first (an `.item()` inside the op), and the copy waits for every queued kernel. The ops with
    measured forms copy between host and GPU inside: `ctc_loss` moves its lengths and batch
    offsets (and, with `reduction='mean'`, the target lengths) to the GPU from pageable memory,
    `istft` checks the window envelope on the host, `pack_padded_sequence` copies the sort order.

    ## Example
    ```python
    import torch.nn as nn


    class Attention(nn.Module):
        def forward(self, scores, mask):
            neg = scores.min()
            return scores.masked_fill(mask, neg)
    ```

    ## Use instead
    ```python
    import torch
    import torch.nn as nn


    class Attention(nn.Module):
        def forward(self, scores, mask):
            return torch.where(mask, scores.min(), scores)  # no host read: the value stays on the GPU
    ```

    ## Fix safety
    Not automatic. A constant belongs in Python (`masked_fill(mask, float("-inf"))`); a value
    computed on the GPU can be used by `torch.where`, which takes tensors without a host read.

    ## Known problems
    Reported when inference says the argument is a tensor that may be on the GPU; a CPU 0-dim
    tensor is read without a wait and is not reported. A call with measured forms is reported only
    when the tensor it runs on may be on the GPU and every measured form its arguments allow synced;
    where an argument's form cannot be told (a tensor of unknown device, a module's constructor
    arguments) and the forms disagree, it is not reported. cuDNN's sync-free `ctc_loss` also needs
    every input length equal to T, which cannot be seen statically.

    ## Verify
    The catalog's `<param>=tensor` rows (docs/catalog.md) were measured with a CUDA 0-dim tensor.
    The argument forms: `python -m torchsync_lint.catalog.sweep --recipes` (H100, torch 2.11), each
    form a row with its `form`; every `ctc_loss` form stalled about 4 ms behind a queued 4 ms sleep
    except cuDNN's with `reduction='sum'`/`'none'` and list lengths (0 us).

    ## References
    - docs/catalog.md
    """

    code = "TSL111"
    name = "tensor-argument-sync"
    message = (
        "`{call}` reads its `{param}` on the host when it is a tensor, and waits for the GPU; pass a Python "
        "number, or use `torch.where`, which takes the tensor as is"
    )

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        q = self.ctx.qualname(func)
        receiver = None  # a method's tensor, a module's forward: the tensor the op runs on
        if q is None:
            method = self.ctx.tensor_method(node)
            if method is None:
                module = self.ctx.value(func)
                if module.cls is not None and module.cls.startswith("torch.nn."):
                    self._form_call(node, "torch.nn." + module.cls.rsplit(".", 1)[1], None, module=True)
                return
            q = f"torch.Tensor.{method}"
            receiver = func.value
        if catalog.canonical(q) in _form_calls():
            self._form_call(node, catalog.canonical(q), receiver)
            return
        params = _table().get(catalog.canonical(q))
        if not params:
            return
        positional = [a for a in node.args if a.keyword is None and not a.star]
        for name, pos in params:
            given = next((a for a in node.args if a.keyword is not None and a.keyword.value == name), None)
            if given is None and pos is not None and pos < len(positional):
                given = positional[pos]
            if given is not None and self.ctx.value(given.value).maybe_gpu and not self.ctx.value(given.value).assumed:
                self.report(node, self.message.format(call=q.rsplit(".", 1)[-1], param=name))
                return

    def _form_call(self, node: cst.Call, q: str, receiver: Optional[cst.BaseExpression], module: bool = False) -> None:
        """Report a call whose every possible measured argument form synced (catalog.forms)."""
        f = _form_calls().get(q)
        if f is None or any(a.star for a in node.args):
            return
        args: Dict[str, argforms.Observed] = {}
        positional = [a for a in node.args if a.keyword is None]
        params = f.params
        for i, a in enumerate(positional):
            if i < len(params):
                args[params[i]] = self._observe(a.value)
        for a in node.args:
            if a.keyword is not None:
                args[a.keyword.value] = self._observe(a.value)
        # the tensor the op runs on: measured on the GPU; a CPU tensor does not wait
        first = receiver if receiver is not None else positional[0].value if positional else None
        if first is None or not may_be_on_gpu(self.ctx.value(first)):
            return
        synced, variant = argforms.decide(f, args)
        if synced:
            message = FORM_MESSAGES.get(q) or FORM_MESSAGE.format(call=q.rsplit(".", 1)[1], label=variant.label)
            self.report(node, message)

    def _observe(self, expr: cst.BaseExpression) -> argforms.Observed:
        is_literal, value = _literal(expr)
        if is_literal:
            if value is None:
                return argforms.Observed(argforms.ABSENT)
            if isinstance(value, (int, float)) and not isinstance(value, bool):
                return argforms.Observed(argforms.NUMBER, value)
            return argforms.Observed(argforms.LITERAL, value)
        if type(expr) in (cst.List, cst.Tuple):
            return argforms.Observed(argforms.LIST)
        v = self.ctx.value(expr)
        if v.kind == TENSOR:
            if v.assumed:
                return argforms.Observed(None)
            kind = {CUDA: argforms.CUDA, CPU: argforms.CPU}.get(v.device, argforms.TENSOR)
            return argforms.Observed(kind, ndim=v.ndim, dtype=v.dtype)
        if v.kind in (LIST, TUPLE, SIZE):
            return argforms.Observed(argforms.LIST)
        if v.kind == NUMBER:
            return argforms.Observed(argforms.NUMBER)
        if v.kind == NONE:
            return argforms.Observed(argforms.ABSENT)
        if v.kind == STR:  # `reduction=mode`: some string, which one is not known
            return argforms.Observed(argforms.LITERAL)
        if v.kind == UNKNOWN:
            return argforms.Observed(None)
        return argforms.Observed(argforms.OTHER)
