import torch.nn as nn

from fwkit.registry import register


@register("mlp")
class MLP(nn.Module):
    def __init__(self, inp=16, hidden=32, classes=4):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(inp, hidden), nn.ReLU())
        self.cls = nn.Linear(hidden, classes)

    def forward(self, x):
        h = self.body(x)
        return {"logits": self.cls(h), "feat": h}
