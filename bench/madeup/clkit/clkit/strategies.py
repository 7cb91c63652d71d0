import torch
import torch.nn.functional as F

from clkit.buffers import ClassBalancedBuffer, ReservoirBuffer


def accuracy(logits, y):
    return (logits.argmax(dim=1) == y).float().mean().item()  # SYNC


class Naive:
    def __init__(self, model, opt, device="cuda", epochs=1):
        self.model, self.opt, self.device, self.epochs = model, opt, device, epochs
        self.seen_classes = []

    def observe(self, x, y):
        return x, y

    def training_step(self, x, y):
        x, y = self.observe(x, y)
        logits = self.model(x)
        loss = F.cross_entropy(logits, y)
        self.opt.zero_grad()
        loss.backward()
        self.opt.step()
        return loss.detach()

    def train_experience(self, loader):
        self.model.train()
        for _ in range(self.epochs):
            for x, y in loader:
                x, y = x.to(self.device), y.to(self.device)  # SYNC
                new = torch.unique(y)  # SYNC
                for c in new.tolist():  # SYNC
                    if c not in self.seen_classes:
                        self.seen_classes.append(c)
                self.training_step(x, y)


class Replay(Naive):
    def __init__(self, model, opt, mem_size=200, **kw):
        super().__init__(model, opt, **kw)
        self.memory = ReservoirBuffer(mem_size, device=self.device)

    def observe(self, x, y):
        if len(self.memory) > 0:
            mx, my = self.memory.sample(x.shape[0])
            x, y = torch.cat([x, mx]), torch.cat([y, my])
        self.memory.add(x[: x.shape[0] // 2], y[: y.shape[0] // 2])
        return x, y


class BalancedReplay(Naive):
    def __init__(self, model, opt, per_class=20, **kw):
        super().__init__(model, opt, **kw)
        self.memory = ClassBalancedBuffer(per_class)

    def observe(self, x, y):
        self.memory.update(x, y)
        mx, my = self.memory.draw(x.shape[0], self.device)
        return torch.cat([x, mx]), torch.cat([y, my])


class MaskedHead(Naive):
    """Class-incremental training that hides the logits of classes not in the current task."""

    def training_step(self, x, y):
        logits = self.model(x)
        unseen = [c for c in range(logits.shape[1]) if c not in self.seen_classes]
        logits[:, unseen] = -1e9  # SYNC
        loss = F.cross_entropy(logits, y)
        self.opt.zero_grad()
        loss.backward()
        self.opt.step()
        return loss.detach()


@torch.no_grad()
def evaluate(model, loaders, device):
    model.eval()
    accs = []
    for loader in loaders:
        correct, total = 0, 0
        for x, y in loader:
            x, y = x.to(device), y.to(device)  # SYNC
            correct += (model(x).argmax(1) == y).sum().item()  # SYNC
            total += y.numel()
        accs.append(correct / max(total, 1))
    return accs
