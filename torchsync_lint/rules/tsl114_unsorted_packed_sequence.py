"""TSL114 unsorted-packed-sequence."""

from typing import Set

import libcst as cst

from torchsync_lint.rules.base import Rule
from torchsync_lint.rules._common import arg, is_true, may_be_on_gpu

# Private names: the measurement is the truth table's (rows pps-01..03), not the op catalog's,
# whose sweep cannot build a PackedSequence with its sort order on the device.
_PAD = frozenset(("torch.nn.utils.rnn.pad_packed_sequence", "torch.nn.utils.rnn.unpack_sequence"))
_PACK = frozenset(("torch.nn.utils.rnn.pack_padded_sequence", "torch.nn.utils.rnn.pack_sequence"))
_PACKED_SEQUENCE = frozenset(("torch.nn.utils.rnn.PackedSequence",))


class UnsortedPackedSequence(Rule):
    """
    ## What it does
    Flags `pad_packed_sequence` (and `unpack_sequence`) in a function that packs its batch
    unsorted: `pack_padded_sequence(...)` or `pack_sequence(...)` with `enforce_sorted` not
    `True` (the default is `True`; `False` or a variable may sort), or a `PackedSequence(...)`
    built with its `unsorted_indices`.

    ## Why is this bad?
    A sequence packed unsorted carries the order that restores the batch, on the device of the
    data. Unpacking it reorders the lengths on the host with `lengths[unsorted_indices.cpu()]`:
    a copy to the host that waits for every queued kernel, once per unpacked sequence (an RNN
    layer that packs and unpacks in its `forward` pays it every step). Packing unsorted waits
    too (TSL111).

    ## Example
    ```python
    import torch.nn as nn
    from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence


    class Encoder(nn.Module):
        def __init__(self):
            super().__init__()
            self.rnn = nn.LSTM(16, 32, batch_first=True)

        def forward(self, x, lengths):
            packed = pack_padded_sequence(x, lengths, batch_first=True, enforce_sorted=False)
            out, _ = self.rnn(packed)
            out, _ = pad_packed_sequence(out, batch_first=True)
            return out
    ```

    ## Use instead
    ```python
    import torch.nn as nn
    from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence


    class Encoder(nn.Module):
        def __init__(self):
            super().__init__()
            self.rnn = nn.LSTM(16, 32, batch_first=True)

        def forward(self, x, lengths):
            # the collate function sorts the batch by length, longest first
            packed = pack_padded_sequence(x, lengths, batch_first=True, enforce_sorted=True)
            out, _ = self.rnn(packed)
            out, _ = pad_packed_sequence(out, batch_first=True)
            return out
    ```

    ## Fix safety
    Not automatic: the batch has to arrive sorted by length (in the collate function), or the
    caller has to undo the order itself with device tensors.

    ## Known problems
    Only packing seen earlier in the same function counts: a packed sequence passed in from
    elsewhere is not followed. Data known to be on the CPU is not reported.

    ## Verify
    Truth table rows pps-01..03 (H200, torch 2.11): unpacking a `PackedSequence` whose
    `unsorted_indices` are on the GPU took the whole queued sleep; one without them returned at
    once, and its lengths came back on the CPU (`tests/gpu`).

    ## References
    - https://pytorch.org/docs/stable/generated/torch.nn.utils.rnn.pad_packed_sequence.html
    """

    code = "TSL114"
    name = "unsorted-packed-sequence"
    message = (
        "unpacking a sequence packed with `enforce_sorted=False` reorders its lengths on the host "
        "(`unsorted_indices.cpu()`) and waits for the GPU; sort the batch by length in the collate "
        "function and pack with `enforce_sorted=True`"
    )

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        self._unsorted: Set[int] = set()  # functions (their def nodes) seen packing unsorted

    def visit_Call(self, node: cst.Call) -> None:
        func = self.ctx.function
        if func is None:
            return
        q = self.ctx.qualname(node.func)
        if q in _PACK or q in _PACKED_SEQUENCE:
            if self._packs_unsorted(node, q):
                self._unsorted.add(id(func.node))
        elif q in _PAD and id(func.node) in self._unsorted:
            packed = arg(node, 0, "sequence") or arg(node, 0, "packed_sequences")
            if packed is None or may_be_on_gpu(self.ctx.value(packed.value)):
                self.report(node)

    def _packs_unsorted(self, call: cst.Call, q: str) -> bool:
        """``pack_padded_sequence(x, n, enforce_sorted=False)`` of data not known to be on the
        CPU, or ``PackedSequence(data, sizes, order, unsorted_indices)``."""
        if q in _PACKED_SEQUENCE:
            given = arg(call, 3, "unsorted_indices")
            return given is not None and not (type(given.value) is cst.Name and given.value.value == "None")
        given = arg(call, 3 if q.endswith("pack_padded_sequence") else 1, "enforce_sorted")
        data = arg(call, 0, "input") or arg(call, 0, "sequences")
        return given is not None and not is_true(given.value) and (
            data is None or may_be_on_gpu(self.ctx.value(data.value)))
