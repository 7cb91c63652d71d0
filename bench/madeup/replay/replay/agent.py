import random

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from .buffer import PrioritizedReplay


class QNet(nn.Module):
    def __init__(self, obs_dim, n_actions, hidden=256):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(obs_dim, hidden), nn.ReLU(), nn.Linear(hidden, n_actions))

    def forward(self, x):
        return self.net(x)


class DQNAgent:
    def __init__(self, obs_dim, n_actions, device="cuda", gamma=0.99, lr=1e-3, tau=0.005):
        self.device = torch.device(device)
        self.q = QNet(obs_dim, n_actions).to(self.device)  # SYNC
        self.q_target = QNet(obs_dim, n_actions).to(self.device)  # SYNC
        self.q_target.load_state_dict(self.q.state_dict())
        self.opt = torch.optim.Adam(self.q.parameters(), lr=lr)
        self.gamma, self.tau = gamma, tau
        self.n_actions = n_actions
        self.buffer = PrioritizedReplay(100000, obs_dim, self.device)
        self.train_steps = 0

    def act(self, obs, eps):
        if random.random() < eps:
            return random.randrange(self.n_actions)
        with torch.no_grad():
            q = self.q(torch.as_tensor(obs, dtype=torch.float32, device=self.device)[None])  # SYNC
        return int(q.argmax(dim=1).item())  # SYNC

    def learn(self, batch_size=64):
        (obs, act, rew, next_obs, done), weights, idxs = self.buffer.sample(batch_size)
        with torch.no_grad():
            next_act = self.q(next_obs).argmax(dim=1, keepdim=True)
            next_q = self.q_target(next_obs).gather(1, next_act).squeeze(1)
            target = rew + self.gamma * (1 - done) * next_q
        q = self.q(obs).gather(1, act[:, None]).squeeze(1)
        td = target - q
        loss = (weights * F.smooth_l1_loss(q, target, reduction="none")).mean()
        self.opt.zero_grad()
        loss.backward()
        grad_norm = nn.utils.clip_grad_norm_(self.q.parameters(), 10.0)
        self.opt.step()
        self.buffer.update_priorities(idxs, td)
        with torch.no_grad():
            for p, tp in zip(self.q.parameters(), self.q_target.parameters()):
                tp.mul_(1 - self.tau).add_(p, alpha=self.tau)
        self.train_steps += 1
        return {"loss": loss.item(), "grad_norm": float(grad_norm), "q": q.mean().item()}  # SYNC


def run(env, agent, total_steps=100000, learning_starts=1000, log_every=1000):
    obs, _ = env.reset()
    episode_return, returns = 0.0, []
    for step in range(total_steps):
        eps = max(0.05, 1.0 - step / 50000)
        action = agent.act(obs, eps)
        next_obs, reward, terminated, truncated, _ = env.step(action)
        agent.buffer.add(obs, action, reward, next_obs, terminated)
        episode_return += reward
        obs = next_obs
        if terminated or truncated:
            returns.append(episode_return)
            episode_return = 0.0
            obs, _ = env.reset()
        if step >= learning_starts:
            stats = agent.learn()
            if step % log_every == 0:
                print(step, np.mean(returns[-10:]) if returns else 0.0, stats["loss"])
    return returns
