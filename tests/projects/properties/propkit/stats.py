import torch


class RunningMean:
    """Keeps its running sums on the device the first update brings."""

    def __init__(self):
        self.total = torch.zeros(())
        self.count = 0

    def update(self, x: torch.Tensor) -> None:
        self.total = self.total.to(x.device) + x.sum()
        self.count += x.numel()

    @property
    def mean(self):
        return self.total / max(self.count, 1)

    @property
    def name(self) -> str:
        return "mean"
