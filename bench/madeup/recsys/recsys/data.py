import numpy as np
import torch


class InteractionData:
    def __init__(self, users, items, n_users, n_items):
        self.users = torch.as_tensor(users, dtype=torch.long)
        self.items = torch.as_tensor(items, dtype=torch.long)
        self.n_users, self.n_items = n_users, n_items
        self.popularity = torch.bincount(self.items, minlength=n_items).float()
        self.seen = {}
        for u, i in zip(users, items):
            self.seen.setdefault(int(u), set()).add(int(i))

    def sample_negatives(self, users, k=1):
        probs = self.popularity ** 0.75
        return torch.multinomial(probs / probs.sum(), users.numel() * k, replacement=True).view(-1, k)

    def batches(self, batch_size, device):
        perm = torch.randperm(len(self.users))
        for i in range(0, len(perm), batch_size):
            idx = perm[i:i + batch_size]
            users, pos = self.users[idx], self.items[idx]
            neg = self.sample_negatives(users)
            yield users.to(device), pos.to(device), neg.to(device)  # SYNC
