"""TSL110 measured-sync-call."""

from typing import Optional

import libcst as cst

from torchsync_lint import catalog
from torchsync_lint.rules.base import Rule
from torchsync_lint.rules.tsl109_torchvision_nms import NMS_CALLS

# Third-party callables the sync catalog measured to sync (torchvision.ops...), less those a rule
# of their own reports (NMS: TSL109).
MEASURED = frozenset(catalog.third_party_syncs()) - frozenset(catalog.canonical(n) for n in NMS_CALLS)


class MeasuredSyncCall(Rule):
    """
    ## What it does
    Flags calls of third-party functions that the sync catalog measured on a GPU to make the host
    wait (`torchvision.ops.generalized_box_iou_loss`, `remove_small_boxes`, `ps_roi_align`...), and
    calls of your own syncing functions listed in `pyproject.toml`:

    ```toml
    [tool.torchsync-lint]
    extra-sync-calls = ["mylib.ops.nms"]
    ```

    ## Why is this bad?
    These functions read a value computed on the GPU back to the host (a data-dependent size, a
    validity check), so the CPU waits for every queued kernel before it can launch the next one.
    In a training step each call is a pipeline drain that no profiler summary points at.

    ## Example
    ```python
    import torch.nn as nn
    from torchvision.ops import remove_small_boxes


    class Head(nn.Module):
        def forward(self, boxes):
            keep = remove_small_boxes(boxes, 1e-3)
            return boxes[keep]
    ```

    ## Use instead
    ```python
    import torch.nn as nn


    class Head(nn.Module):
        def forward(self, boxes, scores):
            # keep the shape fixed: zero the scores of small boxes instead of dropping them
            wh = boxes[:, 2:] - boxes[:, :2]
            small = (wh < 1e-3).any(dim=1)
            return boxes, scores.masked_fill(small, 0.0)
    ```

    ## Fix safety
    Unsafe: a sync-free form changes the output's shape or semantics (fixed size, masked entries).

    ## Known problems
    Third-party names come from the catalog's measurement with small synthesised arguments; a call
    that syncs only with other arguments is missed, and one that synced only with the sweep's
    arguments is reported. Names from `extra-sync-calls` are read from the pyproject.toml of the
    run (not through flake8's own configuration). When the called function's own source is part of
    the linted project (linting torchvision itself), the call is not reported: the statement that
    syncs inside it is.

    ## Verify
    `python -m torchsync_lint.catalog.sweep` (torch 2.11, torchvision 0.26, H100): each flagged
    torchvision function stalled the host for the whole queued sleep kernel (about 4 ms); see
    docs/catalog.md. `torchsync-lint catalog --module mylib.ops` measures your own functions.

    ## References
    - docs/catalog.md
    - https://pytorch.org/vision/stable/ops.html
    """

    code = "TSL110"
    name = "measured-sync-call"
    message = "`{name}` was measured to make the host wait for the GPU; keep it out of the per-step path or batch the calls"

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        self.names = MEASURED | catalog.extra_sync_calls()

    def visit_Call(self, node: cst.Call) -> None:
        qual: Optional[str] = self.ctx.qualname(node.func)
        if qual is None:
            return
        if qual in self.names or catalog.canonical(qual) in self.names:
            project = self.ctx.evaluator.project
            if project is not None and project.locate(qual) is not None:
                return  # its source is linted in this run: the line that syncs is reported there
            self.report(node, self.message.format(name=qual))
