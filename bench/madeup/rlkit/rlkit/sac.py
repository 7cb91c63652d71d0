import copy

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from .buffer import ReplayBuffer


class Actor(nn.Module):
    def __init__(self, obs_dim, act_dim, act_limit, hidden=256):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(obs_dim, hidden), nn.ReLU(), nn.Linear(hidden, hidden), nn.ReLU())
        self.mu = nn.Linear(hidden, act_dim)
        self.log_std = nn.Linear(hidden, act_dim)
        self.act_limit = act_limit

    def forward(self, obs, deterministic=False):
        h = self.net(obs)
        mu, log_std = self.mu(h), self.log_std(h).clamp(-20, 2)
        dist = torch.distributions.Normal(mu, log_std.exp())  # SYNC
        u = mu if deterministic else dist.rsample()
        logp = dist.log_prob(u).sum(-1) - (2 * (np.log(2) - u - F.softplus(-2 * u))).sum(-1)  # SYNC
        return self.act_limit * torch.tanh(u), logp


class SAC:
    def __init__(self, env, obs_dim, act_dim, act_limit, device="cuda", gamma=0.99, tau=0.005, lr=3e-4):
        self.env = env
        self.device = torch.device(device)
        self.actor = Actor(obs_dim, act_dim, act_limit).to(self.device)  # SYNC
        self.q1 = nn.Sequential(nn.Linear(obs_dim + act_dim, 256), nn.ReLU(), nn.Linear(256, 1)).to(self.device)  # SYNC
        self.q1_targ = copy.deepcopy(self.q1)
        self.log_alpha = torch.zeros(1, requires_grad=True, device=self.device)
        self.target_entropy = -act_dim
        self.gamma, self.tau = gamma, tau
        self.pi_opt = torch.optim.Adam(self.actor.parameters(), lr=lr)
        self.q_opt = torch.optim.Adam(self.q1.parameters(), lr=lr)
        self.a_opt = torch.optim.Adam([self.log_alpha], lr=lr)
        self.buffer = ReplayBuffer(100000, obs_dim, act_dim, device=device)

    def act(self, obs, deterministic=False):
        with torch.no_grad():
            o = torch.as_tensor(obs, dtype=torch.float32, device=self.device)  # SYNC
            a, _ = self.actor(o.unsqueeze(0), deterministic)
        return a[0].cpu().numpy()  # SYNC

    def update(self, batch):
        o, a, r, o2, d = batch["obs"], batch["act"], batch["rew"], batch["obs2"], batch["done"]
        alpha = self.log_alpha.exp().detach()
        with torch.no_grad():
            a2, logp2 = self.actor(o2)
            q_targ = self.q1_targ(torch.cat([o2, a2], -1)).squeeze(-1)
            backup = r + self.gamma * (1 - d) * (q_targ - alpha * logp2)
        q = self.q1(torch.cat([o, a], -1)).squeeze(-1)
        loss_q = F.mse_loss(q, backup)
        self.q_opt.zero_grad()
        loss_q.backward()
        self.q_opt.step()
        pi, logp = self.actor(o)
        loss_pi = (alpha * logp - self.q1(torch.cat([o, pi], -1)).squeeze(-1)).mean()
        self.pi_opt.zero_grad()
        loss_pi.backward()
        self.pi_opt.step()
        loss_a = -(self.log_alpha * (logp.detach() + self.target_entropy)).mean()
        self.a_opt.zero_grad()
        loss_a.backward()
        self.a_opt.step()
        with torch.no_grad():
            for p, pt in zip(self.q1.parameters(), self.q1_targ.parameters()):
                pt.mul_(1 - self.tau).add_(self.tau * p)
        return {"loss_q": loss_q.item(), "loss_pi": loss_pi.item(), "alpha": alpha.item()}  # SYNC

    def train(self, steps=10000, start_steps=1000, update_every=50, batch_size=256):
        o, ep_ret, ep_len = self.env.reset(), 0.0, 0
        returns = []
        for t in range(steps):
            a = self.env.action_space.sample() if t < start_steps else self.act(o)
            o2, r, d, _ = self.env.step(a)
            ep_ret += r
            ep_len += 1
            self.buffer.store(o, a, r, o2, d)
            o = o2
            if d:
                returns.append(ep_ret)
                o, ep_ret, ep_len = self.env.reset(), 0.0, 0
            if t >= start_steps and t % update_every == 0:
                for _ in range(update_every):
                    info = self.update(self.buffer.sample(batch_size))
        return returns, info
