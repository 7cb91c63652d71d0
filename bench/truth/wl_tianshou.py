"""tianshou 2.0.1 workloads, as its examples and tests run them (procedural API): each algorithm built from
``tianshou.utils.net`` networks (Net, Recurrent, BranchingNet, the discrete / continuous actors and critics,
NoisyLinear, EnsembleLinear, IQN / FQF quantile networks, VAE, Perturbation, ICM), with a ``Collector``
over a ``DummyVectorEnv`` of gymnasium's CartPole-v1 / Pendulum-v1 (episodes cut at 50 steps), and these
calls recorded: ``Collector.collect`` in a training step (exploration noise into a replay buffer),
``Algorithm.update`` (the library's own training step: sample, n-step / GAE returns, forward, loss,
backward, optimizer step, target-network update, priority update), a test ``collect`` of whole
episodes, and ``Algorithm.run_training`` (the off-policy / on-policy / offline trainers with test
episodes, a TensorBoard logger, save_best_fn and stop_fn). Algorithms: DQN (plain, dueling with
prioritized replay, recurrent DRQN with stacked frames), C51, Rainbow, QRDQN, IQN, FQF, BDQN, discrete
SAC, Reinforce, A2C, PPO (discrete and continuous), NPG, TRPO, DDPG, TD3, SAC (auto alpha), REDQ,
imitation learning, the offline BCQ / CQL / TD3+BC and discrete BCQ / CQL / CRR on a gathered buffer,
GAIL, and the ICM wrappers; plus a hand-written DQN step (policy forward on a buffer sample, loss by
hand) and the data helpers (Batch, replay buffers, returns). No files read, no downloads.
"""

from __future__ import annotations

import tempfile

from harness import Workload

N_TRAIN, N_TEST, BATCH, MAX_STEPS = 4, 2, 32, 50


def _gym():
    import gymnasium as gym
    import numpy as np
    import torch

    np.random.seed(0)
    torch.manual_seed(0)
    return gym


def _make_env(task):
    gym = _gym()
    if task == "Pendulum-discrete":
        from tianshou.env import ContinuousToDiscrete

        return ContinuousToDiscrete(gym.make("Pendulum-v1", max_episode_steps=MAX_STEPS), 5)
    return gym.make(task, max_episode_steps=MAX_STEPS)


def _envs(task, n):
    from tianshou.env import DummyVectorEnv

    envs = DummyVectorEnv([lambda: _make_env(task) for _ in range(n)])
    envs.seed(0)
    return envs


def _space(task):
    from tianshou.utils.space_info import SpaceInfo

    env = _make_env(task)
    return env, SpaceInfo.from_env(env)


def _logger():
    from torch.utils.tensorboard import SummaryWriter

    from tianshou.utils import TensorboardLogger

    return TensorboardLogger(SummaryWriter(tempfile.mkdtemp(prefix="tianshou-")))


def _online_cases(torch, algorithm, task, kind, buffer=None, prefix=""):
    """Cases of one online algorithm ("off" or "on" policy): a training-step ``collect`` (the policy's forward,
    exploration, action mapping), ``update``, a test ``collect`` of whole episodes and a one-epoch
    ``run_training``."""
    from tianshou.data import Collector, CollectStats, VectorReplayBuffer
    from tianshou.trainer import OffPolicyTrainerParams, OnPolicyTrainerParams
    from tianshou.utils.torch_utils import policy_within_training_step

    buf = buffer if buffer is not None else VectorReplayBuffer(1000, N_TRAIN)
    train_c = Collector[CollectStats](algorithm, _envs(task, N_TRAIN), buf, exploration_noise=True)
    test_c = Collector[CollectStats](algorithm, _envs(task, N_TEST))
    logger = _logger()
    policy = algorithm.policy
    with policy_within_training_step(policy):
        train_c.reset()
        train_c.collect(n_step=BATCH)
    best = []

    def collect():
        with policy_within_training_step(policy):
            return train_c.collect(n_step=4 * N_TRAIN)

    def update():
        with policy_within_training_step(policy):
            if kind == "on":  # as the on-policy trainer: a fresh rollout, minibatch epochs over it, then reset
                train_c.collect(n_step=BATCH)
                stats = algorithm.update(buffer=buf, batch_size=BATCH // 2, repeat=2)
                train_c.reset_buffer(keep_statistics=True)
                return stats
            return algorithm.update(buffer=buf, sample_size=BATCH)

    def test():
        return test_c.collect(n_episode=N_TEST, reset_before_collect=True)

    def run_training():
        common = dict(training_collector=train_c, test_collector=test_c, max_epochs=1, test_step_num_episodes=N_TEST,
                      batch_size=BATCH if kind == "off" else BATCH // 2, logger=logger,
                      show_progress=False, verbose=False, stop_fn=lambda mean_rewards: mean_rewards >= 1e9,
                      save_best_fn=lambda alg: best.append(1))
        if kind == "on":
            params = OnPolicyTrainerParams(epoch_num_steps=2 * BATCH, collection_step_num_env_steps=BATCH,
                                           update_step_num_repetitions=2, **common)
        else:
            params = OffPolicyTrainerParams(epoch_num_steps=16 * N_TRAIN, collection_step_num_env_steps=8 * N_TRAIN,
                                            update_step_num_gradient_steps_per_sample=1 / 8, test_in_training=True,
                                            **common)
        return algorithm.run_training(params)

    p = prefix + ":" if prefix else ""
    return [(p + "Collector.collect", collect), (p + "update", update), (p + "test collect", test),
            (p + "run_training", run_training)]


def _opt(lr=1e-3):
    from tianshou.algorithm.optim import AdamOptimizerFactory

    return AdamOptimizerFactory(lr=lr)


def build_dqn(torch, device):
    """DQN on CartPole: MLP Q-network, n-step returns, target network, epsilon-greedy."""
    from tianshou.algorithm import DQN
    from tianshou.algorithm.modelfree.dqn import DiscreteQLearningPolicy
    from tianshou.utils.net.common import Net

    env, info = _space("CartPole-v1")
    net = Net(state_shape=info.observation_info.obs_shape, action_shape=info.action_info.action_shape,
              hidden_sizes=[64, 64]).to(device)
    policy = DiscreteQLearningPolicy(model=net, action_space=env.action_space, observation_space=env.observation_space,
                                     eps_training=0.1, eps_inference=0.05)
    algorithm = DQN(policy=policy, optim=_opt(), gamma=0.9, n_step_return_horizon=3, target_update_freq=4)
    return Workload("dqn", cases=_online_cases(torch, algorithm, "CartPole-v1", "off"))


def build_dqn_dueling_prioritized(torch, device):
    """Dueling DQN with a PrioritizedVectorReplayBuffer (importance weights, priority update from TD errors)."""
    from tianshou.algorithm import DQN
    from tianshou.algorithm.modelfree.dqn import DiscreteQLearningPolicy
    from tianshou.data import PrioritizedVectorReplayBuffer
    from tianshou.utils.net.common import Net

    env, info = _space("CartPole-v1")
    net = Net(state_shape=info.observation_info.obs_shape, action_shape=info.action_info.action_shape,
              hidden_sizes=[64, 64], dueling_param=({"hidden_sizes": [32]}, {"hidden_sizes": [32]})).to(device)
    policy = DiscreteQLearningPolicy(model=net, action_space=env.action_space, eps_training=0.1, eps_inference=0.05)
    algorithm = DQN(policy=policy, optim=_opt(), gamma=0.95, n_step_return_horizon=3, target_update_freq=4,
                    is_double=True, huber_loss_delta=1.0)
    buf = PrioritizedVectorReplayBuffer(2000, buffer_num=N_TRAIN, alpha=0.6, beta=0.4)
    return Workload("dqn_dueling_prioritized", cases=_online_cases(torch, algorithm, "CartPole-v1", "off", buffer=buf))


def build_drqn(torch, device):
    """Recurrent DQN: tianshou.utils.net.common.Recurrent (LSTM) on stacked observations (stack_num=4)."""
    from tianshou.algorithm import DQN
    from tianshou.algorithm.modelfree.dqn import DiscreteQLearningPolicy
    from tianshou.data import VectorReplayBuffer
    from tianshou.utils.net.common import Recurrent

    env, info = _space("CartPole-v1")
    net = Recurrent(layer_num=2, state_shape=info.observation_info.obs_shape,
                    action_shape=info.action_info.action_shape).to(device)
    policy = DiscreteQLearningPolicy(model=net, action_space=env.action_space, eps_training=0.1, eps_inference=0.05)
    algorithm = DQN(policy=policy, optim=_opt(), gamma=0.9, n_step_return_horizon=3, target_update_freq=4)
    buf = VectorReplayBuffer(2000, buffer_num=N_TRAIN, stack_num=4, ignore_obs_next=True)
    return Workload("drqn", cases=_online_cases(torch, algorithm, "CartPole-v1", "off", buffer=buf))


def build_distributional(torch, device):
    """C51 and Rainbow (NoisyLinear dueling heads, prioritized replay) on CartPole."""
    from tianshou.algorithm import C51, RainbowDQN
    from tianshou.algorithm.modelfree.c51 import C51Policy
    from tianshou.data import PrioritizedVectorReplayBuffer
    from tianshou.utils.net.common import Net
    from tianshou.utils.net.discrete import NoisyLinear

    env, info = _space("CartPole-v1")
    shape = dict(state_shape=info.observation_info.obs_shape, action_shape=info.action_info.action_shape)
    net = Net(hidden_sizes=[64, 64], softmax=True, num_atoms=51, **shape)
    policy = C51Policy(model=net, action_space=env.action_space, observation_space=env.observation_space, num_atoms=51,
                       v_min=-10.0, v_max=10.0, eps_training=0.1, eps_inference=0.05)
    c51 = C51(policy=policy, optim=_opt(), gamma=0.9, n_step_return_horizon=3, target_update_freq=4).to(device)

    def noisy_linear(x, y):
        return NoisyLinear(x, y, 0.1)

    rnet = Net(hidden_sizes=[64, 64], softmax=True, num_atoms=51,
               dueling_param=({"linear_layer": noisy_linear}, {"linear_layer": noisy_linear}), **shape)
    rpolicy = C51Policy(model=rnet, action_space=env.action_space, num_atoms=51, v_min=-10.0, v_max=10.0,
                        eps_training=0.1, eps_inference=0.05)
    rainbow = RainbowDQN(policy=rpolicy, optim=_opt(), gamma=0.9, n_step_return_horizon=3,
                         target_update_freq=4).to(device)
    buf = PrioritizedVectorReplayBuffer(2000, buffer_num=N_TRAIN, alpha=0.6, beta=0.4, weight_norm=True)
    return Workload("distributional", cases=_online_cases(torch, c51, "CartPole-v1", "off", prefix="C51")
                    + _online_cases(torch, rainbow, "CartPole-v1", "off", buffer=buf, prefix="Rainbow"))


def build_quantile(torch, device):
    """QRDQN, IQN (ImplicitQuantileNetwork) and FQF (FullQuantileFunction + FractionProposalNetwork)."""
    from tianshou.algorithm import FQF, IQN, QRDQN
    from tianshou.algorithm.modelfree.fqf import FQFPolicy
    from tianshou.algorithm.modelfree.iqn import IQNPolicy
    from tianshou.algorithm.modelfree.qrdqn import QRDQNPolicy
    from tianshou.algorithm.optim import RMSpropOptimizerFactory
    from tianshou.utils.net.common import Net
    from tianshou.utils.net.discrete import FractionProposalNetwork, FullQuantileFunction, ImplicitQuantileNetwork

    env, info = _space("CartPole-v1")
    obs, act = info.observation_info.obs_shape, info.action_info.action_shape
    qnet = Net(state_shape=obs, action_shape=act, hidden_sizes=[64, 64], softmax=False, num_atoms=20)
    qpolicy = QRDQNPolicy(model=qnet, action_space=env.action_space, observation_space=env.observation_space,
                          eps_training=0.1, eps_inference=0.05)
    qrdqn = QRDQN(policy=qpolicy, optim=_opt(), gamma=0.9, num_quantiles=20, n_step_return_horizon=3,
                  target_update_freq=4).to(device)
    feat = Net(state_shape=obs, action_shape=64, hidden_sizes=[64], softmax=False)
    inet = ImplicitQuantileNetwork(preprocess_net=feat, action_shape=act, num_cosines=16)
    ipolicy = IQNPolicy(model=inet, action_space=env.action_space, sample_size=16, online_sample_size=8,
                        target_sample_size=8, eps_training=0.1, eps_inference=0.05)
    iqn = IQN(policy=ipolicy, optim=_opt(), gamma=0.9, n_step_return_horizon=3, target_update_freq=4).to(device)
    feat2 = Net(state_shape=obs, action_shape=64, hidden_sizes=[64], softmax=False)
    fnet = FullQuantileFunction(preprocess_net=feat2, action_shape=act, hidden_sizes=[64], num_cosines=16)
    fraction = FractionProposalNetwork(16, fnet.input_dim)
    fpolicy = FQFPolicy(model=fnet, fraction_model=fraction, action_space=env.action_space, eps_training=0.1,
                        eps_inference=0.05)
    fqf = FQF(policy=fpolicy, optim=_opt(), fraction_optim=RMSpropOptimizerFactory(lr=2.5e-9), gamma=0.9,
              num_fractions=16, ent_coef=10.0, n_step_return_horizon=3, target_update_freq=4).to(device)
    return Workload("quantile", cases=_online_cases(torch, qrdqn, "CartPole-v1", "off", prefix="QRDQN")
                    + _online_cases(torch, iqn, "CartPole-v1", "off", prefix="IQN")
                    + _online_cases(torch, fqf, "CartPole-v1", "off", prefix="FQF"))


def build_bdqn_discrete_sac(torch, device):
    """Branching DQN on a discretised Pendulum (ContinuousToDiscrete) and discrete SAC on CartPole."""
    import numpy as np

    from tianshou.algorithm import BDQN, DiscreteSAC
    from tianshou.algorithm.modelfree.bdqn import BDQNPolicy
    from tianshou.algorithm.modelfree.discrete_sac import DiscreteSACPolicy
    from tianshou.algorithm.modelfree.sac import AutoAlpha
    from tianshou.utils.net.common import BranchingNet, Net
    from tianshou.utils.net.discrete import DiscreteActor, DiscreteCritic

    env = _make_env("Pendulum-discrete")  # MultiDiscrete actions: SpaceInfo takes Discrete and Box only
    bnet = BranchingNet(state_shape=env.observation_space.shape, num_branches=1, action_per_branch=5,
                        common_hidden_sizes=[64], value_hidden_sizes=[32], action_hidden_sizes=[32]).to(device)
    bpolicy = BDQNPolicy(model=bnet, action_space=env.action_space, eps_training=0.1, eps_inference=0.0)
    bdqn = BDQN(policy=bpolicy, optim=_opt(), gamma=0.9, target_update_freq=4)

    env2, info2 = _space("CartPole-v1")
    obs, act, adim = info2.observation_info.obs_shape, info2.action_info.action_shape, info2.action_info.action_dim
    actor = DiscreteActor(preprocess_net=Net(state_shape=obs, hidden_sizes=[64]), action_shape=act,
                          softmax_output=False).to(device)
    c1 = DiscreteCritic(preprocess_net=Net(state_shape=obs, hidden_sizes=[64]), last_size=adim).to(device)
    c2 = DiscreteCritic(preprocess_net=Net(state_shape=obs, hidden_sizes=[64]), last_size=adim).to(device)
    alpha = AutoAlpha(0.98 * np.log(adim), 0.0, _opt(3e-4)).to(device)
    spolicy = DiscreteSACPolicy(actor=actor, action_space=env2.action_space)
    dsac = DiscreteSAC(policy=spolicy, policy_optim=_opt(), critic=c1, critic_optim=_opt(), critic2=c2,
                       critic2_optim=_opt(), tau=0.005, gamma=0.95, alpha=alpha, n_step_return_horizon=3)
    return Workload("bdqn_discrete_sac", cases=_online_cases(torch, bdqn, "Pendulum-discrete", "off", prefix="BDQN")
                    + _online_cases(torch, dsac, "CartPole-v1", "off", prefix="DiscreteSAC"))


def build_pg_discrete(torch, device):
    """On-policy on CartPole: Reinforce (softmax Net), A2C and PPO (DiscreteActor / DiscreteCritic, GAE)."""
    from tianshou.algorithm import A2C, PPO, Reinforce
    from tianshou.algorithm.modelfree.reinforce import DiscreteActorPolicy, ProbabilisticActorPolicy
    from tianshou.utils.net.common import Net
    from tianshou.utils.net.discrete import DiscreteActor, DiscreteCritic

    env, info = _space("CartPole-v1")
    obs, act = info.observation_info.obs_shape, info.action_info.action_shape
    rnet = Net(state_shape=obs, action_shape=act, hidden_sizes=[64], softmax=True).to(device)
    rpolicy = ProbabilisticActorPolicy(actor=rnet, dist_fn=torch.distributions.Categorical,
                                       action_space=env.action_space, action_scaling=False)
    reinforce = Reinforce(policy=rpolicy, optim=_opt(), gamma=0.95, return_standardization=True)

    net = Net(state_shape=obs, hidden_sizes=[64, 64])
    actor = DiscreteActor(preprocess_net=net, action_shape=act).to(device)
    critic = DiscreteCritic(preprocess_net=net).to(device)
    apolicy = ProbabilisticActorPolicy(actor=actor, dist_fn=torch.distributions.Categorical,
                                       action_space=env.action_space, action_scaling=False)
    a2c = A2C(policy=apolicy, critic=critic, optim=_opt(), gamma=0.9, gae_lambda=0.95, vf_coef=0.5, ent_coef=0.01,
              max_grad_norm=0.5, return_scaling=True)

    net2 = Net(state_shape=obs, hidden_sizes=[64, 64])
    actor2 = DiscreteActor(preprocess_net=net2, action_shape=act).to(device)
    critic2 = DiscreteCritic(preprocess_net=net2).to(device)
    ppolicy = DiscreteActorPolicy(actor=actor2, dist_fn=torch.distributions.Categorical, action_space=env.action_space,
                                  deterministic_eval=True)
    ppo = PPO(policy=ppolicy, critic=critic2, optim=_opt(3e-4), gamma=0.99, max_grad_norm=0.5, eps_clip=0.2,
              vf_coef=0.5, ent_coef=0.0, gae_lambda=0.95, return_scaling=False, dual_clip=None, value_clip=False,
              advantage_normalization=True, recompute_advantage=False)
    return Workload("pg_discrete", cases=_online_cases(torch, reinforce, "CartPole-v1", "on", prefix="Reinforce")
                    + _online_cases(torch, a2c, "CartPole-v1", "on", prefix="A2C")
                    + _online_cases(torch, ppo, "CartPole-v1", "on", prefix="PPO"))


def _gauss(loc_scale):
    from torch.distributions import Independent, Normal

    loc, scale = loc_scale
    return Independent(Normal(loc, scale), 1)


def build_pg_continuous(torch, device):
    """On-policy on Pendulum: PPO (dual clip, value clip, recomputed advantages), NPG and TRPO with
    ContinuousActorProbabilistic and a diagonal Gaussian."""
    from tianshou.algorithm import NPG, PPO, TRPO
    from tianshou.algorithm.modelfree.reinforce import ProbabilisticActorPolicy
    from tianshou.utils.net.common import Net
    from tianshou.utils.net.continuous import ContinuousActorProbabilistic, ContinuousCritic

    env, info = _space("Pendulum-v1")
    obs, act = info.observation_info.obs_shape, info.action_info.action_shape

    def pair():
        actor = ContinuousActorProbabilistic(preprocess_net=Net(state_shape=obs, hidden_sizes=[64, 64],
                                                                activation=torch.nn.Tanh),
                                             action_shape=act, unbounded=True).to(device)
        critic = ContinuousCritic(preprocess_net=Net(state_shape=obs, hidden_sizes=[64, 64],
                                                     activation=torch.nn.Tanh)).to(device)
        policy = ProbabilisticActorPolicy(actor=actor, dist_fn=_gauss, action_space=env.action_space)
        return policy, critic

    p, c = pair()
    ppo = PPO(policy=p, critic=c, optim=_opt(), gamma=0.95, max_grad_norm=0.5, eps_clip=0.2, vf_coef=0.25,
              ent_coef=0.0, return_scaling=True, advantage_normalization=True, recompute_advantage=True,
              dual_clip=3.0, value_clip=True, gae_lambda=0.95)
    p, c = pair()
    npg = NPG(policy=p, critic=c, optim=_opt(), gamma=0.95, return_scaling=True, advantage_normalization=True,
              gae_lambda=0.95, optim_critic_iters=2, trust_region_size=0.05)
    p, c = pair()
    trpo = TRPO(policy=p, critic=c, optim=_opt(), gamma=0.95, return_scaling=True, advantage_normalization=True,
                gae_lambda=0.95, optim_critic_iters=2, max_kl=0.01, backtrack_coeff=0.8, max_backtracks=5)
    return Workload("pg_continuous", cases=_online_cases(torch, ppo, "Pendulum-v1", "on", prefix="PPO")
                    + _online_cases(torch, npg, "Pendulum-v1", "on", prefix="NPG")
                    + _online_cases(torch, trpo, "Pendulum-v1", "on", prefix="TRPO"))


def _critic(torch, device, obs, act, linear=None, **kw):
    from tianshou.utils.net.common import Net
    from tianshou.utils.net.continuous import ContinuousCritic

    extra = {"linear_layer": linear} if linear else {}
    net = Net(state_shape=obs, action_shape=act, hidden_sizes=[64, 64], concat=True, **extra)
    return ContinuousCritic(preprocess_net=net, **extra, **kw).to(device)


def build_offpolicy_continuous(torch, device):
    """Off-policy on Pendulum: DDPG and TD3 (Gaussian exploration noise, policy smoothing, delayed actor),
    SAC with automatic entropy tuning, REDQ with an EnsembleLinear critic ensemble."""
    from tianshou.algorithm import DDPG, REDQ, SAC, TD3
    from tianshou.algorithm.modelfree.ddpg import ContinuousDeterministicPolicy
    from tianshou.algorithm.modelfree.redq import REDQPolicy
    from tianshou.algorithm.modelfree.sac import AutoAlpha, SACPolicy
    from tianshou.exploration import GaussianNoise
    from tianshou.utils.net.common import EnsembleLinear, Net
    from tianshou.utils.net.continuous import ContinuousActorDeterministic, ContinuousActorProbabilistic

    env, info = _space("Pendulum-v1")
    obs, act, max_a = info.observation_info.obs_shape, info.action_info.action_shape, info.action_info.max_action
    adim = info.action_info.action_dim

    def det_policy():
        actor = ContinuousActorDeterministic(preprocess_net=Net(state_shape=obs, hidden_sizes=[64, 64]),
                                             action_shape=act, max_action=max_a).to(device)
        return ContinuousDeterministicPolicy(actor=actor, action_space=env.action_space,
                                             exploration_noise=GaussianNoise(sigma=0.1))

    ddpg = DDPG(policy=det_policy(), policy_optim=_opt(), critic=_critic(torch, device, obs, act), critic_optim=_opt(),
                tau=0.005, gamma=0.99, n_step_return_horizon=1)
    td3 = TD3(policy=det_policy(), policy_optim=_opt(), critic=_critic(torch, device, obs, act), critic_optim=_opt(),
              critic2=_critic(torch, device, obs, act), critic2_optim=_opt(), tau=0.005, gamma=0.99, policy_noise=0.2,
              update_actor_freq=2, noise_clip=0.5, n_step_return_horizon=1)
    sactor = ContinuousActorProbabilistic(preprocess_net=Net(state_shape=obs, hidden_sizes=[64, 64]),
                                          action_shape=act, unbounded=True).to(device)
    alpha = AutoAlpha(-adim, 0.0, _opt(3e-4))
    sac = SAC(policy=SACPolicy(actor=sactor, action_space=env.action_space), policy_optim=_opt(),
              critic=_critic(torch, device, obs, act), critic_optim=_opt(), critic2=_critic(torch, device, obs, act),
              critic2_optim=_opt(), tau=0.005, gamma=0.99, alpha=alpha, n_step_return_horizon=1)

    def linear(x, y):
        return EnsembleLinear(4, x, y)

    ractor = ContinuousActorProbabilistic(preprocess_net=Net(state_shape=obs, hidden_sizes=[64, 64]),
                                          action_shape=act, unbounded=True, conditioned_sigma=True).to(device)
    redq = REDQ(policy=REDQPolicy(actor=ractor, action_space=env.action_space), policy_optim=_opt(),
                critic=_critic(torch, device, obs, act, linear=linear, flatten_input=False), critic_optim=_opt(),
                ensemble_size=4, subset_size=2, tau=0.005, gamma=0.99, alpha=AutoAlpha(-adim, 0.0, _opt(3e-4)),
                n_step_return_horizon=1, actor_delay=2, target_mode="min")
    return Workload("offpolicy_continuous", cases=_online_cases(torch, ddpg, "Pendulum-v1", "off", prefix="DDPG")
                    + _online_cases(torch, td3, "Pendulum-v1", "off", prefix="TD3")
                    + _online_cases(torch, sac, "Pendulum-v1", "off", prefix="SAC")
                    + _online_cases(torch, redq, "Pendulum-v1", "off", prefix="REDQ"))


def _gathered(task, n=400, buf=None):
    """A full replay buffer of random-action transitions (the offline examples gather theirs with a trained
    agent)."""
    from tianshou.algorithm.algorithm_base import RandomActionPolicy
    from tianshou.data import Collector, CollectStats, VectorReplayBuffer

    env = _make_env(task)
    buf = buf if buf is not None else VectorReplayBuffer(n, N_TRAIN)
    collector = Collector[CollectStats](RandomActionPolicy(env.action_space), _envs(task, N_TRAIN), buf)
    collector.reset()
    collector.collect(n_step=n, random=True)
    return buf


def _offline_cases(torch, algorithm, task, buffer, prefix):
    from tianshou.data import Collector, CollectStats
    from tianshou.trainer import OfflineTrainerParams
    from tianshou.utils.torch_utils import policy_within_training_step

    import copy

    test_c = Collector[CollectStats](algorithm, _envs(task, N_TEST))
    processed = algorithm.process_buffer(copy.deepcopy(buffer))  # as the offline trainer does first
    logger = _logger()

    def update():
        with policy_within_training_step(algorithm.policy):
            return algorithm.update(buffer=processed, sample_size=BATCH)

    def run_training():
        return algorithm.run_training(OfflineTrainerParams(
            buffer=copy.deepcopy(buffer), test_collector=test_c, max_epochs=1, epoch_num_steps=4,
            test_step_num_episodes=N_TEST,
            batch_size=BATCH, logger=logger, show_progress=False, verbose=False, save_best_fn=lambda alg: None,
            stop_fn=lambda r: r >= 1e9))

    return [(prefix + ":update", update),
            (prefix + ":test collect", lambda: test_c.collect(n_episode=N_TEST, reset_before_collect=True)),
            (prefix + ":run_training", run_training)]


def build_offline_continuous(torch, device):
    """Offline on a gathered Pendulum buffer: BCQ (VAE + Perturbation), CQL (with Lagrange), TD3+BC."""
    from tianshou.algorithm import BCQ, CQL, TD3BC
    from tianshou.algorithm.imitation.bcq import BCQPolicy
    from tianshou.algorithm.modelfree.ddpg import ContinuousDeterministicPolicy
    from tianshou.algorithm.modelfree.sac import SACPolicy
    from tianshou.exploration import GaussianNoise
    from tianshou.utils.net.common import MLP, Net
    from tianshou.utils.net.continuous import (VAE, ContinuousActorDeterministic, ContinuousActorProbabilistic,
                                               Perturbation)

    env, info = _space("Pendulum-v1")
    obs, act, max_a = info.observation_info.obs_shape, info.action_info.action_shape, info.action_info.max_action
    sdim, adim = info.observation_info.obs_dim, info.action_info.action_dim
    buf = _gathered("Pendulum-v1")

    pert = Perturbation(preprocess_net=MLP(input_dim=sdim + adim, output_dim=adim, hidden_sizes=[64, 64]),
                        max_action=max_a, phi=0.05).to(device)
    vae = VAE(encoder=MLP(input_dim=sdim + adim, hidden_sizes=[64, 64]),
              decoder=MLP(input_dim=sdim + 2 * adim, output_dim=adim, hidden_sizes=[64, 64]), hidden_dim=64,
              latent_dim=2 * adim, max_action=max_a).to(device)
    bcq = BCQ(policy=BCQPolicy(actor_perturbation=pert, critic=_critic(torch, device, obs, act), vae=vae,
                               action_space=env.action_space),
              actor_perturbation_optim=_opt(), critic_optim=_opt(), vae_optim=_opt(), gamma=0.99, tau=0.005,
              lmbda=0.75).to(device)
    cactor = ContinuousActorProbabilistic(preprocess_net=Net(state_shape=obs, action_shape=act, hidden_sizes=[64, 64]),
                                          action_shape=act, unbounded=True, conditioned_sigma=True).to(device)
    cql = CQL(policy=SACPolicy(actor=cactor, action_scaling=False, action_space=env.action_space), policy_optim=_opt(),
              critic=_critic(torch, device, obs, act), critic_optim=_opt(), cql_alpha_lr=1e-3, cql_weight=1.0,
              tau=0.005, gamma=0.99, alpha=0.2, temperature=1.0, with_lagrange=True, lagrange_threshold=10.0,
              min_action=-float(max_a), max_action=float(max_a))
    tactor = ContinuousActorDeterministic(preprocess_net=Net(state_shape=obs, hidden_sizes=[64, 64]),
                                          action_shape=act, max_action=max_a).to(device)
    td3bc = TD3BC(policy=ContinuousDeterministicPolicy(actor=tactor, action_space=env.action_space,
                                                       exploration_noise=GaussianNoise(sigma=0.1)),
                  policy_optim=_opt(), critic=_critic(torch, device, obs, act), critic_optim=_opt(),
                  critic2=_critic(torch, device, obs, act), critic2_optim=_opt(), tau=0.005, gamma=0.99,
                  policy_noise=0.2, update_actor_freq=2, noise_clip=0.5, alpha=2.5, n_step_return_horizon=1)
    return Workload("offline_continuous", cases=_offline_cases(torch, bcq, "Pendulum-v1", buf, "BCQ")
                    + _offline_cases(torch, cql, "Pendulum-v1", buf, "CQL")
                    + _offline_cases(torch, td3bc, "Pendulum-v1", buf, "TD3BC"))


def build_offline_discrete(torch, device):
    """Offline on a gathered CartPole buffer: discrete BCQ, discrete CQL (quantiles), discrete CRR."""
    from tianshou.algorithm import DiscreteBCQ, DiscreteCQL, DiscreteCRR
    from tianshou.algorithm.imitation.discrete_bcq import DiscreteBCQPolicy
    from tianshou.algorithm.modelfree.qrdqn import QRDQNPolicy
    from tianshou.algorithm.modelfree.reinforce import DiscreteActorPolicy
    from tianshou.utils.net.common import Net
    from tianshou.utils.net.discrete import DiscreteActor, DiscreteCritic

    env, info = _space("CartPole-v1")
    obs, act, adim = info.observation_info.obs_shape, info.action_info.action_shape, info.action_info.action_dim
    buf = _gathered("CartPole-v1")
    net = Net(state_shape=obs, action_shape=64)
    bcq = DiscreteBCQ(policy=DiscreteBCQPolicy(
        model=DiscreteActor(preprocess_net=net, action_shape=act, hidden_sizes=[64]).to(device),
        imitator=DiscreteActor(preprocess_net=net, action_shape=act, hidden_sizes=[64]).to(device),
        action_space=env.action_space, unlikely_action_threshold=0.6, eps_inference=0.001),
        optim=_opt(), gamma=0.99, n_step_return_horizon=3, target_update_freq=4, imitation_logits_penalty=0.01)
    qnet = Net(state_shape=obs, action_shape=act, hidden_sizes=[64, 64], softmax=False, num_atoms=20)
    cql = DiscreteCQL(policy=QRDQNPolicy(model=qnet, action_space=env.action_space), optim=_opt(), gamma=0.99,
                      num_quantiles=20, n_step_return_horizon=3, target_update_freq=4, min_q_weight=10.0).to(device)
    cnet = Net(state_shape=obs, action_shape=64)
    crr = DiscreteCRR(policy=DiscreteActorPolicy(
        actor=DiscreteActor(preprocess_net=cnet, action_shape=act, hidden_sizes=[64], softmax_output=False),
        action_space=env.action_space),
        critic=DiscreteCritic(preprocess_net=cnet, hidden_sizes=[64], last_size=adim), optim=_opt(), gamma=0.99,
        target_update_freq=4).to(device)
    return Workload("offline_discrete", cases=_offline_cases(torch, bcq, "CartPole-v1", buf, "DiscreteBCQ")
                    + _offline_cases(torch, cql, "CartPole-v1", buf, "DiscreteCQL")
                    + _offline_cases(torch, crr, "CartPole-v1", buf, "DiscreteCRR"))


def build_imitation_gail(torch, device):
    """Imitation: OffPolicyImitationLearning (deterministic continuous actor; discrete actor) trained on the
    collector's buffer, and GAIL (PPO with a discriminator against an expert buffer) on Pendulum."""
    import numpy as np

    from tianshou.algorithm import GAIL, OffPolicyImitationLearning
    from tianshou.algorithm.imitation.imitation_base import ImitationPolicy
    from tianshou.algorithm.modelfree.reinforce import ProbabilisticActorPolicy
    from tianshou.utils.net.common import Net
    from tianshou.utils.net.continuous import (ContinuousActorDeterministic, ContinuousActorProbabilistic,
                                               ContinuousCritic)
    from tianshou.utils.net.discrete import DiscreteActor

    env, info = _space("Pendulum-v1")
    obs, act, max_a = info.observation_info.obs_shape, info.action_info.action_shape, info.action_info.max_action
    il_actor = ContinuousActorDeterministic(preprocess_net=Net(state_shape=obs, hidden_sizes=[64]),
                                            action_shape=act, max_action=max_a).to(device)
    il = OffPolicyImitationLearning(policy=ImitationPolicy(actor=il_actor, action_space=env.action_space,
                                                           action_scaling=True, action_bound_method="clip"),
                                    optim=_opt())
    env2, info2 = _space("CartPole-v1")
    dil_actor = DiscreteActor(preprocess_net=Net(state_shape=info2.observation_info.obs_shape, hidden_sizes=[64]),
                              action_shape=info2.action_info.action_shape).to(device)
    dil = OffPolicyImitationLearning(policy=ImitationPolicy(actor=dil_actor, action_space=env2.action_space),
                                     optim=_opt())

    expert = _gathered("Pendulum-v1")
    actor = ContinuousActorProbabilistic(preprocess_net=Net(state_shape=obs, hidden_sizes=[64]), action_shape=act,
                                         max_action=max_a).to(device)
    critic = ContinuousCritic(preprocess_net=Net(state_shape=obs, hidden_sizes=[64])).to(device)
    disc = ContinuousCritic(preprocess_net=Net(state_shape=obs, action_shape=act, hidden_sizes=[64],
                                               activation=torch.nn.Tanh, concat=True)).to(device)
    for m in disc.modules():
        if isinstance(m, torch.nn.Linear):
            torch.nn.init.orthogonal_(m.weight, gain=np.sqrt(2))
            torch.nn.init.zeros_(m.bias)
    gail = GAIL(policy=ProbabilisticActorPolicy(actor=actor, dist_fn=_gauss, action_space=env.action_space),
                critic=critic, optim=_opt(), expert_buffer=expert, disc_net=disc, disc_optim=_opt(2.5e-5),
                disc_update_num=2, gamma=0.95, max_grad_norm=0.5, eps_clip=0.2, vf_coef=0.25, ent_coef=0.0,
                return_scaling=True, advantage_normalization=True, recompute_advantage=False, dual_clip=None,
                value_clip=False, gae_lambda=0.95)
    return Workload("imitation_gail", cases=_online_cases(torch, il, "Pendulum-v1", "off", prefix="IL-continuous")
                    + _online_cases(torch, dil, "CartPole-v1", "off", prefix="IL-discrete")
                    + _online_cases(torch, gail, "Pendulum-v1", "on", prefix="GAIL"))


def build_icm(torch, device):
    """Intrinsic curiosity: ICMOffPolicyWrapper around DQN and ICMOnPolicyWrapper around PPO on CartPole."""
    from tianshou.algorithm import DQN, PPO, ICMOffPolicyWrapper
    from tianshou.algorithm.modelbased.icm import ICMOnPolicyWrapper
    from tianshou.algorithm.modelfree.dqn import DiscreteQLearningPolicy
    from tianshou.algorithm.modelfree.reinforce import ProbabilisticActorPolicy
    from tianshou.utils.net.common import MLP, Net
    from tianshou.utils.net.discrete import DiscreteActor, DiscreteCritic, IntrinsicCuriosityModule

    env, info = _space("CartPole-v1")
    obs, act = info.observation_info.obs_shape, info.action_info.action_shape
    odim, adim = info.observation_info.obs_dim, info.action_info.action_dim

    def icm():
        return IntrinsicCuriosityModule(feature_net=MLP(input_dim=odim, output_dim=32, hidden_sizes=[64]),
                                        feature_dim=32, action_dim=adim, hidden_sizes=[32]).to(device)

    net = Net(state_shape=obs, action_shape=act, hidden_sizes=[64, 64]).to(device)
    dqn = DQN(policy=DiscreteQLearningPolicy(model=net, action_space=env.action_space, eps_training=0.1,
                                             eps_inference=0.05),
              optim=_opt(), gamma=0.9, n_step_return_horizon=3, target_update_freq=4)
    off = ICMOffPolicyWrapper(wrapped_algorithm=dqn, model=icm(), optim=_opt(), lr_scale=1.0, reward_scale=0.01,
                              forward_loss_weight=0.2)
    pnet = Net(state_shape=obs, hidden_sizes=[64, 64])
    actor = DiscreteActor(preprocess_net=pnet, action_shape=act).to(device)
    critic = DiscreteCritic(preprocess_net=pnet).to(device)
    ppo = PPO(policy=ProbabilisticActorPolicy(actor=actor, dist_fn=torch.distributions.Categorical,
                                              action_scaling=False, action_space=env.action_space,
                                              deterministic_eval=True),
              critic=critic, optim=_opt(), gamma=0.99, max_grad_norm=0.5, eps_clip=0.2, vf_coef=0.5, ent_coef=0.0,
              gae_lambda=0.95, return_scaling=False, dual_clip=None, value_clip=False, advantage_normalization=False,
              recompute_advantage=False)
    on = ICMOnPolicyWrapper(wrapped_algorithm=ppo, model=icm(), optim=_opt(), lr_scale=1.0, reward_scale=0.01,
                            forward_loss_weight=0.2)
    return Workload("icm", cases=_online_cases(torch, off, "CartPole-v1", "off", prefix="ICM-DQN")
                    + _online_cases(torch, on, "CartPole-v1", "on", prefix="ICM-PPO"))


def build_dqn_manual_step(torch, device):
    """A hand-written DQN step on a replay-buffer sample: Batch.to_torch, the policy's forward (Q values
    and greedy actions), a TD loss by hand; eval: Policy.compute_action on single observations."""
    import numpy as np

    from tianshou.algorithm.modelfree.dqn import DiscreteQLearningPolicy
    from tianshou.data import Batch
    from tianshou.utils.net.common import Net

    env, info = _space("CartPole-v1")
    net = Net(state_shape=info.observation_info.obs_shape, action_shape=info.action_info.action_shape,
              hidden_sizes=[64, 64]).to(device)
    policy = DiscreteQLearningPolicy(model=net, action_space=env.action_space, eps_training=0.1, eps_inference=0.05)
    buf = _gathered("CartPole-v1")
    obs1 = np.asarray(env.reset(seed=0)[0], dtype=np.float32)

    def train():
        batch, _ = buf.sample(BATCH)
        batch.to_torch_(device=device)
        out = policy(batch)
        q = out.logits.gather(1, batch.act.long().unsqueeze(1)).squeeze(1)
        with torch.no_grad():
            nxt = policy(Batch(obs=batch.obs_next, info=batch.info)).logits.max(dim=1)[0]
        target = batch.rew.float() + 0.9 * (1 - batch.terminated.float()) * nxt
        return torch.nn.functional.smooth_l1_loss(q, target)

    def evaluate():
        return [policy.compute_action(obs1) for _ in range(4)]

    return Workload("dqn_manual_step", train=train, modules=[policy], eval=evaluate, lr=1e-3)


def build_data(torch, device):
    """tianshou.data: Batch on the device (cat, stack, split, indexing, to_numpy / to_torch), the prioritized
    buffer's weight update from device TD errors, episodic (GAE) and n-step returns with device values and a
    device target-Q function, RunningMeanStd."""
    import numpy as np

    from tianshou.algorithm.algorithm_base import Algorithm
    from tianshou.data import Batch, PrioritizedVectorReplayBuffer, to_numpy, to_torch
    from tianshou.utils import RunningMeanStd

    buf = _gathered("CartPole-v1")
    gen = torch.Generator(device=device).manual_seed(0)
    prio = _gathered("CartPole-v1", buf=PrioritizedVectorReplayBuffer(400, buffer_num=N_TRAIN, alpha=0.6, beta=0.4))
    q_w = torch.randn(4, 2, device=device, generator=gen)

    def batch():
        return Batch(obs=torch.randn(16, 4, device=device, generator=gen),
                     info=Batch(x=torch.arange(16, device=device)), rew=np.zeros(16, dtype=np.float32))

    def cat_stack():
        b = batch()
        return Batch.cat([b, b]), Batch.stack([b[:4], b[4:8]])

    def split_index():
        b = batch()
        return list(b.split(8, shuffle=False)), b[np.arange(16) > 4], b[[1, 3, 5]]

    def convert():
        return to_torch(to_numpy(batch()), device=device)

    def prio_update():
        batch, idx = prio.sample(BATCH)
        td = torch.rand(len(idx), device=device, generator=gen)
        prio.update_weight(idx, td)
        return batch.weight

    def returns():
        batch, idx = buf.sample(0)
        v = torch.randn(len(idx), device=device, generator=gen)
        ret, adv = Algorithm.compute_episodic_return(batch, buf, idx, v_s_=v, v_s=v, gamma=0.99, gae_lambda=0.95)

        def target_q(buffer, indices):
            o = torch.as_tensor(buffer[indices].obs_next, device=device, dtype=torch.float32)
            return (o @ q_w).max(dim=1)[0]

        b2, idx2 = buf.sample(BATCH)
        nstep = Algorithm.compute_nstep_return(batch=b2, buffer=buf, indices=idx2, target_q_fn=target_q, gamma=0.99,
                                               n_step=3)
        return ret, adv, nstep

    def rms():
        r = RunningMeanStd()
        r.update(torch.randn(32, 4, device=device, generator=gen).cpu().numpy())
        return r.norm(np.zeros(4))

    return Workload("data", cases=[("Batch.cat/stack", cat_stack), ("Batch.split/index", split_index),
                                   ("to_numpy/to_torch", convert),
                                   ("PrioritizedVectorReplayBuffer.update_weight", prio_update),
                                   ("returns", returns), ("RunningMeanStd", rms)])


WORKLOADS = [build_dqn, build_dqn_dueling_prioritized, build_drqn, build_distributional, build_quantile,
             build_bdqn_discrete_sac, build_pg_discrete, build_pg_continuous, build_offpolicy_continuous,
             build_offline_continuous, build_offline_discrete, build_imitation_gail, build_icm, build_dqn_manual_step,
             build_data]
