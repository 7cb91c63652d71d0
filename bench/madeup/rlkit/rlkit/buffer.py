import numpy as np
import torch


class ReplayBuffer:
    def __init__(self, size, obs_dim, act_dim, device="cpu"):
        self.obs = np.zeros((size, obs_dim), dtype=np.float32)
        self.next_obs = np.zeros((size, obs_dim), dtype=np.float32)
        self.act = np.zeros((size, act_dim), dtype=np.float32)
        self.rew = np.zeros(size, dtype=np.float32)
        self.done = np.zeros(size, dtype=np.float32)
        self.ptr, self.size, self.max_size = 0, 0, size
        self.device = device

    def store(self, obs, act, rew, next_obs, done):
        self.obs[self.ptr] = obs
        self.act[self.ptr] = act
        self.rew[self.ptr] = rew
        self.next_obs[self.ptr] = next_obs
        self.done[self.ptr] = done
        self.ptr = (self.ptr + 1) % self.max_size
        self.size = min(self.size + 1, self.max_size)

    def sample(self, batch_size=256):
        idxs = np.random.randint(0, self.size, size=batch_size)
        batch = dict(obs=self.obs[idxs], obs2=self.next_obs[idxs], act=self.act[idxs],
                     rew=self.rew[idxs], done=self.done[idxs])
        return {k: torch.as_tensor(v, device=self.device) for k, v in batch.items()}  # SYNC


class PrioritizedBuffer(ReplayBuffer):
    def __init__(self, *args, alpha=0.6, **kwargs):
        super().__init__(*args, **kwargs)
        self.priorities = torch.zeros(self.max_size)
        self.alpha = alpha

    def update_priorities(self, idxs, td_errors):
        self.priorities[idxs] = td_errors.abs().detach().cpu() + 1e-6  # SYNC

    def sample_prioritized(self, batch_size=256, beta=0.4):
        p = self.priorities[: self.size] ** self.alpha
        probs = p / p.sum()
        idxs = torch.multinomial(probs, batch_size, replacement=True)
        weights = (self.size * probs[idxs]) ** (-beta)
        weights = weights / weights.max()
        batch = self.sample(batch_size)
        return batch, idxs, weights.to(self.device)  # SYNC
