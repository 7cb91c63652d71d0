import torch


class Accuracy:
    def __init__(self):
        self.reset()

    def reset(self):
        self.correct = 0
        self.total = 0

    def update(self, logits, target):
        self.correct += (logits.argmax(-1) == target).sum()
        self.total += target.numel()

    def compute(self):
        return self.correct / max(self.total, 1)


class MeanMetric:
    def __init__(self):
        self.sum = torch.tensor(0.0)
        self.n = 0

    def update(self, value):
        self.sum = self.sum.to(value.device) + value.detach()
        self.n += 1

    def compute(self):
        return self.sum / max(self.n, 1)
