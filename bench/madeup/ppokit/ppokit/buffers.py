import numpy as np
import torch


def obs_as_tensor(obs, device):
    if isinstance(obs, np.ndarray):
        return torch.as_tensor(obs, device=device)  # SYNC
    if isinstance(obs, dict):
        return {k: torch.as_tensor(v, device=device) for k, v in obs.items()}  # SYNC
    raise TypeError(type(obs))


class RolloutBuffer:
    def __init__(self, size, obs_dim, n_envs, device="cpu", gamma=0.99, lam=0.95):
        self.size, self.n_envs, self.device = size, n_envs, device
        self.gamma, self.lam = gamma, lam
        self.obs = np.zeros((size, n_envs, obs_dim), dtype=np.float32)
        self.actions = np.zeros((size, n_envs), dtype=np.int64)
        self.rewards = np.zeros((size, n_envs), dtype=np.float32)
        self.starts = np.zeros((size, n_envs), dtype=np.float32)
        self.values = np.zeros((size, n_envs), dtype=np.float32)
        self.log_probs = np.zeros((size, n_envs), dtype=np.float32)
        self.pos = 0

    def add(self, obs, action, reward, start, value, log_prob):
        self.obs[self.pos] = obs
        self.actions[self.pos] = action
        self.rewards[self.pos] = reward
        self.starts[self.pos] = start
        self.values[self.pos] = value.clone().cpu().numpy().flatten()  # SYNC
        self.log_probs[self.pos] = log_prob.clone().cpu().numpy()  # SYNC
        self.pos += 1

    def compute_returns(self, last_values, dones):
        last_values = last_values.clone().cpu().numpy().flatten()  # SYNC
        adv = np.zeros_like(self.rewards)
        last_gae = 0
        for step in reversed(range(self.size)):
            if step == self.size - 1:
                nonterminal, next_values = 1.0 - dones, last_values
            else:
                nonterminal, next_values = 1.0 - self.starts[step + 1], self.values[step + 1]
            delta = self.rewards[step] + self.gamma * next_values * nonterminal - self.values[step]
            last_gae = delta + self.gamma * self.lam * nonterminal * last_gae
            adv[step] = last_gae
        self.advantages = adv
        self.returns = adv + self.values

    def get(self, batch_size):
        n = self.size * self.n_envs
        idx = np.random.permutation(n)
        flat = {k: getattr(self, k).reshape(n, *getattr(self, k).shape[2:])
                for k in ("obs", "actions", "values", "log_probs", "advantages", "returns")}
        for start in range(0, n, batch_size):
            b = idx[start:start + batch_size]
            yield {k: torch.as_tensor(v[b], device=self.device) for k, v in flat.items()}  # SYNC
