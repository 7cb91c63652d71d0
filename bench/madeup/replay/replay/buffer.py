import numpy as np
import torch


class SumTree:
    def __init__(self, capacity):
        self.capacity = capacity
        self.tree = np.zeros(2 * capacity - 1)
        self.write = 0

    def total(self):
        return self.tree[0]

    def update(self, idx, priority):
        change = priority - self.tree[idx]
        self.tree[idx] = priority
        while idx != 0:
            idx = (idx - 1) // 2
            self.tree[idx] += change

    def get(self, s):
        idx = 0
        while idx < self.capacity - 1:
            left = 2 * idx + 1
            if s <= self.tree[left]:
                idx = left
            else:
                s -= self.tree[left]
                idx = left + 1
        return idx


class PrioritizedReplay:
    def __init__(self, capacity, obs_dim, device, alpha=0.6, beta=0.4):
        self.tree = SumTree(capacity)
        self.capacity = capacity
        self.alpha, self.beta = alpha, beta
        self.device = device
        self.obs = torch.zeros((capacity, obs_dim), dtype=torch.float32)
        self.next_obs = torch.zeros((capacity, obs_dim), dtype=torch.float32)
        self.actions = torch.zeros(capacity, dtype=torch.long)
        self.rewards = torch.zeros(capacity)
        self.dones = torch.zeros(capacity)
        self.max_priority = 1.0
        self.pos = 0
        self.size = 0

    def add(self, obs, action, reward, next_obs, done):
        self.obs[self.pos] = torch.as_tensor(obs)
        self.next_obs[self.pos] = torch.as_tensor(next_obs)
        self.actions[self.pos] = action
        self.rewards[self.pos] = reward
        self.dones[self.pos] = float(done)
        self.tree.update(self.pos + self.capacity - 1, self.max_priority ** self.alpha)
        self.pos = (self.pos + 1) % self.capacity
        self.size = min(self.size + 1, self.capacity)

    def sample(self, batch_size):
        segment = self.tree.total() / batch_size
        idxs = []
        for i in range(batch_size):
            s = np.random.uniform(segment * i, segment * (i + 1))
            idxs.append(self.tree.get(s) - self.capacity + 1)
        idxs = np.asarray(idxs)
        probs = self.tree.tree[idxs + self.capacity - 1] / self.tree.total()
        weights = (self.size * probs) ** (-self.beta)
        weights = weights / weights.max()
        batch = (self.obs[idxs], self.actions[idxs], self.rewards[idxs], self.next_obs[idxs], self.dones[idxs])
        batch = tuple(t.to(self.device) for t in batch)  # SYNC
        return batch, torch.as_tensor(weights, dtype=torch.float32, device=self.device), idxs  # SYNC

    def update_priorities(self, idxs, td_errors):
        priorities = td_errors.abs().detach().cpu().numpy() + 1e-6  # SYNC
        for idx, p in zip(idxs, priorities):
            self.tree.update(int(idx) + self.capacity - 1, p ** self.alpha)
            self.max_priority = max(self.max_priority, p)
