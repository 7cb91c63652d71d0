import torch.nn as nn


class ActorPolicy(nn.Module):
    """Builds its distribution with a function handed in from outside: what comes out is unplaced."""

    def __init__(self, actor, dist_fn):
        super().__init__()
        self.actor = actor
        self.dist_fn = dist_fn

    def forward(self, batch):
        return Result(self.dist_fn(self.actor(batch.obs)))


class Result:
    def __init__(self, dist):
        self.dist = dist
