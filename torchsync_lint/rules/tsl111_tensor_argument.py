"""TSL111 tensor-argument-sync."""

import functools
from typing import Dict, List, Optional, Tuple

import libcst as cst

from torchsync_lint import catalog
from torchsync_lint.inference import torch_facts
from torchsync_lint.rule import Rule

SYNC_CONDITION = "only when the named argument is a tensor (the catalog's `<param>=tensor` variants)"


@functools.cache
def _table() -> Dict[str, List[Tuple[str, Optional[int]]]]:
    """Catalog name -> (parameter, its position in the call) for the measured `<param>=tensor`
    syncs, less the calls another rule reports with a message of its own."""
    from torchsync_lint.catalog import claims

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


class TensorArgumentSync(Rule):
    """
    ## What it does
    Flags calls that the sync catalog measured to sync only when one argument is a GPU tensor
    rather than a Python number: `x.masked_fill(mask, value)` and `index_fill` with a tensor
    `value`, `torch.fake_quantize_per_tensor_affine` with a tensor `scale`... The list is read
    from `catalog/data/sync_catalog.json` (variants named `<param>=tensor` that synced while the
    default form did not), less calls another rule reports with its own advice.

    ## Why is this bad?
    These ops take the argument as a host scalar: given a CUDA tensor they copy it to the host
    first (an `.item()` inside the op), and the copy waits for every queued kernel.

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
    tensor is read without a wait and is not reported.

    ## Verify
    The catalog's `<param>=tensor` rows (docs/catalog.md) were measured with a CUDA 0-dim tensor.

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
        if q is None:
            method = self.ctx.tensor_method(node)
            if method is None:
                return
            q = f"torch.Tensor.{method}"
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
