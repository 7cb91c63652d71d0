import numpy as np
import torch
from torch import nn

from .buffers import RolloutBuffer, obs_as_tensor


class ActorCritic(nn.Module):
    def __init__(self, obs_dim, n_actions, hidden=64):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(obs_dim, hidden), nn.Tanh(), nn.Linear(hidden, hidden), nn.Tanh())
        self.pi = nn.Linear(hidden, n_actions)
        self.v = nn.Linear(hidden, 1)

    def forward(self, obs):
        h = self.body(obs)
        dist = torch.distributions.Categorical(logits=self.pi(h))  # SYNC
        return dist, self.v(h).squeeze(-1)

    def evaluate_actions(self, obs, actions):
        dist, values = self(obs)
        return values, dist.log_prob(actions), dist.entropy()  # SYNC


def explained_variance(y_pred, y_true):
    var_y = np.var(y_true)
    return np.nan if var_y == 0 else 1 - np.var(y_true - y_pred) / var_y


class PPO:
    def __init__(self, env, policy, n_steps=128, batch_size=64, n_epochs=4, lr=3e-4, clip=0.2,
                 ent_coef=0.0, vf_coef=0.5, max_grad_norm=0.5, target_kl=None, device="cuda"):
        self.env, self.policy = env, policy.to(device)  # SYNC
        self.device = device
        self.n_steps, self.batch_size, self.n_epochs = n_steps, batch_size, n_epochs
        self.clip, self.ent_coef, self.vf_coef = clip, ent_coef, vf_coef
        self.max_grad_norm, self.target_kl = max_grad_norm, target_kl
        self.opt = torch.optim.Adam(policy.parameters(), lr=lr)
        self.buffer = RolloutBuffer(n_steps, env.obs_dim, env.n_envs, device=device)
        self.logs = {}

    def collect_rollouts(self, obs, starts):
        self.policy.eval()
        self.buffer.pos = 0
        for _ in range(self.n_steps):
            with torch.no_grad():
                dist, values = self.policy(obs_as_tensor(obs, self.device))
                actions = dist.sample()  # SYNC
                log_probs = dist.log_prob(actions)  # SYNC
            actions = actions.cpu().numpy()  # SYNC
            new_obs, rewards, dones, _ = self.env.step(actions)
            self.buffer.add(obs, actions, rewards, starts, values, log_probs)
            obs, starts = new_obs, dones
        with torch.no_grad():
            _, last_values = self.policy(obs_as_tensor(obs, self.device))
        self.buffer.compute_returns(last_values, dones)
        return obs, starts

    def train(self):
        self.policy.train()
        clip_fracs, pg_losses, approx_kl = [], [], []
        for epoch in range(self.n_epochs):
            for batch in self.buffer.get(self.batch_size):
                values, log_prob, entropy = self.policy.evaluate_actions(batch["obs"], batch["actions"])
                adv = batch["advantages"]
                adv = (adv - adv.mean()) / (adv.std() + 1e-8)
                ratio = torch.exp(log_prob - batch["log_probs"])
                pg_loss = -torch.min(adv * ratio, adv * ratio.clamp(1 - self.clip, 1 + self.clip)).mean()
                clip_fracs.append(((ratio - 1).abs() > self.clip).float().mean().item())  # SYNC
                v_loss = (batch["returns"] - values).pow(2).mean()
                loss = pg_loss - self.ent_coef * entropy.mean() + self.vf_coef * v_loss
                with torch.no_grad():
                    kl = ((ratio - 1) - (log_prob - batch["log_probs"])).mean().cpu().numpy()  # SYNC
                    approx_kl.append(kl)
                if self.target_kl is not None and kl > 1.5 * self.target_kl:
                    break
                self.opt.zero_grad()
                loss.backward()
                nn.utils.clip_grad_norm_(self.policy.parameters(), self.max_grad_norm)
                self.opt.step()
                pg_losses.append(pg_loss.item())  # SYNC
        ev = explained_variance(self.buffer.values.flatten(), self.buffer.returns.flatten())
        self.logs = {"pg_loss": np.mean(pg_losses), "clip_frac": np.mean(clip_fracs), "kl": np.mean(approx_kl), "ev": ev}
        return self.logs
