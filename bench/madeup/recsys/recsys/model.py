import torch
import torch.nn.functional as F
from torch import nn


class MF(nn.Module):
    def __init__(self, n_users, n_items, dim=64):
        super().__init__()
        self.user = nn.Embedding(n_users, dim)
        self.item = nn.Embedding(n_items, dim)
        nn.init.normal_(self.user.weight, std=0.01)
        nn.init.normal_(self.item.weight, std=0.01)

    def forward(self, users, items):
        return (self.user(users)[:, None] * self.item(items)).sum(-1)


def bpr_loss(pos_scores, neg_scores):
    return -F.logsigmoid(pos_scores[:, None] - neg_scores).mean()


def train(model, data, epochs=10, batch_size=1024, device="cuda", weight_decay=1e-5):
    model = model.to(device)  # SYNC
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    for epoch in range(epochs):
        total, n = torch.zeros((), device=device), 0
        for users, pos, neg in data.batches(batch_size, device):
            pos_s = model(users, pos[:, None]).squeeze(1)
            neg_s = model(users, neg)
            loss = bpr_loss(pos_s, neg_s) + weight_decay * model.user(users).pow(2).sum()
            opt.zero_grad()
            loss.backward()
            opt.step()
            total += loss.detach()
            n += 1
        print(f"epoch {epoch} bpr {(total / n).item():.4f}")  # SYNC


@torch.no_grad()
def recall_at_k(model, data, test_users, test_items, k=20, device="cuda"):
    users = torch.as_tensor(test_users, device=device)  # SYNC
    scores = model.user(users) @ model.item.weight.T
    for row, u in enumerate(test_users):
        seen = list(data.seen.get(int(u), ()))
        if seen:
            scores[row, seen] = -float("inf")  # SYNC
    top = scores.topk(k, dim=1).indices.cpu()  # SYNC
    hits = [int(t in set(r.tolist())) for t, r in zip(test_items, top)]
    return sum(hits) / len(hits)
