"""torchrl 0.14.1 workloads, as its tutorials, examples (sota-implementations) and tests run them: gymnasium's
CartPole-v1 / Pendulum-v1 through ``GymEnv(device=cuda)`` and torchrl's own stateless ``PendulumEnv`` and
``TicTacToeEnv`` running on the GPU, with ``TransformedEnv`` stacks (ObservationNorm, DoubleToFloat,
StepCounter, RewardSum, InitTracker, CatFrames, VecNorm, ...), policies and critics built from torchrl's
modules (MLP, ConvNet, QValueActor, ProbabilisticActor with TanhNormal / OneHotCategorical, ValueOperator,
LSTMModule, NoisyLinear, MultiAgentMLP, exploration modules), and per algorithm:

- the loss module's forward on a batch sampled from a replay buffer (the harness does backward and the
  optimizer step; ``after_step`` runs the target-network updater and the exploration annealing), and cases:
  a ``Collector`` iteration (rollout of the policy in the env on the device), the advantage / value
  estimator, the replay-buffer ``extend`` / ``sample`` / priority update, a policy rollout under
  ``ExplorationType.DETERMINISTIC`` (evaluation);
- algorithms: PPO (ClipPPOLoss, KLPENPPOLoss) with GAE; A2C, Reinforce; DQN (double, dueling), distributional
  DQN, DRQN with an LSTM; SAC, TD3, DDPG, REDQ, CrossQ, TQC; discrete SAC; offline IQL, CQL, TD3+BC, BC,
  discrete IQL / CQL; GAIL; multi-agent MAPPO / IPPO and QMIX on synthetic agent groups;
- the value functional (GAE, TD(0), TD(1), TD(lambda), V-trace, reward-to-go), replay buffers (storages,
  samplers, writers, slice sampling, prioritized sampling where the C++ extension loads), tensor specs, env
  transforms and batched envs (SerialEnv).

No files read, no downloads; random init. The prioritized sampler needs torchrl's C++ extension: its cases run
only where ``torchrl._torchrl`` imports (it is built against one torch; on another it is skipped).
"""

from __future__ import annotations

import tempfile
import warnings

from harness import Workload

FPB, BATCH = 64, 32  # frames per collector batch, minibatch


def _quiet():
    import logging

    logging.getLogger("torchrl").setLevel(logging.ERROR)
    warnings.filterwarnings("ignore", category=FutureWarning)
    warnings.filterwarnings("ignore", category=DeprecationWarning)
    warnings.filterwarnings("ignore", message=".*auto_register_policy_transforms.*")


def _has_ext():
    try:
        import torchrl._torchrl  # noqa: F401

        return True
    except Exception:
        return False


def _gym(name, device, transforms=()):
    import torch

    _quiet()
    from torchrl.envs import Compose, DoubleToFloat, GymEnv, RewardSum, StepCounter, TransformedEnv

    torch.manual_seed(0)
    env = TransformedEnv(GymEnv(name, device=device),
                         Compose(DoubleToFloat(), StepCounter(max_steps=50), RewardSum(), *transforms))
    env.set_seed(0)
    return env


def _collector(env, policy, device, **kw):
    from torchrl.collectors import Collector

    return Collector(env, policy, frames_per_batch=FPB, total_frames=-1, device=device, split_trajs=False,
                     auto_register_policy_transforms=False, **kw)


def _cycle(collector):
    it = iter(collector)

    def nxt():
        return next(it)

    return nxt


def _obs(env):
    return env.observation_spec["observation"].shape[-1]


def _act(env):
    return env.action_spec.shape[-1]


def _continuous_actor(env, device, tanh_normal=True, hidden=64):
    from tensordict.nn import NormalParamExtractor, TensorDictModule
    from torch import nn

    from torchrl.modules import MLP, ProbabilisticActor, TanhNormal, TruncatedNormal

    act = env.action_spec
    net = nn.Sequential(MLP(in_features=_obs(env), out_features=2 * act.shape[-1], num_cells=[hidden, hidden],
                            activation_class=nn.Tanh),
                        NormalParamExtractor()).to(device)
    module = TensorDictModule(net, in_keys=["observation"], out_keys=["loc", "scale"])
    return ProbabilisticActor(module=module, spec=act, in_keys=["loc", "scale"],
                              distribution_class=TanhNormal if tanh_normal else TruncatedNormal,
                              distribution_kwargs={"low": act.space.low, "high": act.space.high},
                              return_log_prob=True).to(device)


def _deterministic_actor(env, device):
    from torch import nn

    from torchrl.modules import MLP, Actor, TanhModule
    from tensordict.nn import TensorDictSequential

    act = env.action_spec
    net = MLP(in_features=_obs(env), out_features=act.shape[-1], num_cells=[64, 64], activation_class=nn.ReLU).to(device)
    return TensorDictSequential(Actor(net, in_keys=["observation"], out_keys=["param"]),
                                TanhModule(in_keys=["param"], out_keys=["action"], spec=act)).to(device)


def _qvalue(env, device, keys=("observation", "action"), out=1):
    from torch import nn

    from torchrl.modules import MLP, ValueOperator

    n_in = _obs(env) + (_act(env) if "action" in keys else 0)
    return ValueOperator(MLP(in_features=n_in, out_features=out, num_cells=[64, 64], activation_class=nn.ReLU).to(device),
                         in_keys=list(keys), out_keys=["state_action_value"] if "action" in keys else
                         ["state_value"]).to(device)


def _value(env, device):
    from torch import nn

    from torchrl.modules import MLP, ValueOperator

    return ValueOperator(MLP(in_features=_obs(env), out_features=1, num_cells=[64, 64], activation_class=nn.Tanh).to(device),
                         in_keys=["observation"]).to(device)


def _buffer(device, size=1000, sampler=None, batch=BATCH):
    from torchrl.data import LazyTensorStorage, TensorDictReplayBuffer
    from torchrl.data.replay_buffers.samplers import RandomSampler

    return TensorDictReplayBuffer(storage=LazyTensorStorage(size, device=device), sampler=sampler or RandomSampler(),
                                  batch_size=batch)


def _offpolicy(torch, device, name, env, loss, policy, explore=None, updater=None, extra_cases=(), rb=None,
               loss_keys=None):
    """Collect into a buffer; train: the loss on a sample; after_step: the target updater; cases: collector
    iteration, buffer sample, evaluation rollout."""
    from torchrl.envs.utils import ExplorationType, set_exploration_type

    rb = rb if rb is not None else _buffer(device)
    collect_policy = policy if explore is None else __import__("tensordict.nn", fromlist=["x"]).TensorDictSequential(
        policy, explore)
    nxt = _cycle(_collector(env, collect_policy, device))
    for _ in range(3):
        rb.extend(nxt().reshape(-1))

    def total(out):
        keys = loss_keys or [k for k in out.keys() if k.startswith("loss")]
        return sum(out[k] for k in keys)

    def train():
        return total(loss(rb.sample()))

    def after():
        if updater is not None:
            updater.step()
        if explore is not None and hasattr(explore, "step"):
            explore.step(FPB)

    def evaluate():
        with set_exploration_type(ExplorationType.DETERMINISTIC):
            return env.rollout(20, policy, break_when_any_done=True)

    def collect():
        td = nxt()
        rb.extend(td.reshape(-1))
        return td

    cases = [("Collector iteration + extend", collect), ("replay buffer sample", lambda: rb.sample())] + list(extra_cases)
    return Workload(name, train=train, modules=[loss], params=list(loss.parameters()), after_step=after,
                    eval=evaluate, cases=cases, lr=3e-4)


def build_ppo_pendulum(torch, device):
    """The PPO tutorial: Pendulum with ObservationNorm (init_stats), a TanhNormal actor, a value net, GAE,
    ClipPPOLoss with entropy bonus, a SamplerWithoutReplacement buffer; plus KLPENPPOLoss and PPOLoss."""
    _quiet()
    from torchrl.data import LazyTensorStorage, ReplayBuffer
    from torchrl.data.replay_buffers.samplers import SamplerWithoutReplacement
    from torchrl.envs import ObservationNorm
    from torchrl.envs.utils import ExplorationType, set_exploration_type
    from torchrl.objectives import ClipPPOLoss, KLPENPPOLoss, PPOLoss
    from torchrl.objectives.value import GAE

    env = _gym("Pendulum-v1", device, [ObservationNorm(in_keys=["observation"])])
    env.transform[-1].init_stats(num_iter=64, reduce_dim=0, cat_dim=0)
    actor = _continuous_actor(env, device)
    value = _value(env, device)
    actor(env.reset())
    value(env.reset())
    adv = GAE(gamma=0.99, lmbda=0.95, value_network=value, average_gae=True)
    loss = ClipPPOLoss(actor_network=actor, critic_network=value, clip_epsilon=0.2, entropy_bonus=True,
                       entropy_coeff=1e-4, critic_coeff=1.0, loss_critic_type="smooth_l1")
    kl = KLPENPPOLoss(actor_network=actor, critic_network=value, beta=1.0, decrement=0.5, increment=2.0)
    plain = PPOLoss(actor_network=actor, critic_network=value, entropy_coeff=0.01, normalize_advantage=True)
    rb = ReplayBuffer(storage=LazyTensorStorage(FPB, device=device), sampler=SamplerWithoutReplacement(),
                      batch_size=BATCH)
    nxt = _cycle(_collector(env, actor, device))
    state = {}

    def refill():
        td = nxt()
        with torch.no_grad():
            adv(td)
        rb.extend(td.reshape(-1))
        state["td"] = td
        return td

    refill()

    def train():
        out = loss(rb.sample())
        return out["loss_objective"] + out["loss_critic"] + out["loss_entropy"]

    def evaluate():
        with set_exploration_type(ExplorationType.DETERMINISTIC):
            return env.rollout(50, actor)

    def kl_loss():
        out = kl(rb.sample())
        (out["loss_objective"] + out["loss_critic"]).backward()
        return out

    def ppo_loss():
        out = plain(rb.sample())
        (out["loss_objective"] + out["loss_critic"] + out["loss_entropy"]).backward()
        return out

    return Workload("ppo_pendulum", train=train, modules=[loss], params=list(loss.parameters()), eval=evaluate, lr=3e-4,
                    cases=[("Collector iteration + GAE + extend", refill), ("GAE", lambda: adv(state["td"])),
                           ("KLPENPPOLoss", kl_loss), ("PPOLoss", ppo_loss)])


def build_onpolicy_discrete(torch, device):
    """CartPole with a OneHotCategorical actor: A2CLoss and ReinforceLoss with the TD(0), TD(1), TD(lambda) and
    V-trace estimators, ClipPPOLoss with a Categorical (index) actor."""
    _quiet()
    from tensordict.nn import TensorDictModule

    from torchrl.modules import MLP, OneHotCategorical, ProbabilisticActor
    from torchrl.objectives import A2CLoss, ClipPPOLoss, ReinforceLoss, ValueEstimators

    env = _gym("CartPole-v1", device)
    n = env.action_spec.shape[-1]
    net = TensorDictModule(MLP(in_features=4, out_features=n, num_cells=[64, 64]).to(device), in_keys=["observation"],
                           out_keys=["logits"])
    actor = ProbabilisticActor(net, in_keys=["logits"], spec=env.action_spec, distribution_class=OneHotCategorical,
                               return_log_prob=True).to(device)
    value = _value(env, device)
    a2c = A2CLoss(actor_network=actor, critic_network=value, entropy_coeff=0.01)
    a2c.make_value_estimator(ValueEstimators.GAE, gamma=0.99, lmbda=0.95)
    rein = ReinforceLoss(actor_network=actor, critic_network=value)
    rein.make_value_estimator(ValueEstimators.TD1, gamma=0.99)
    ppo = ClipPPOLoss(actor_network=actor, critic_network=value)
    ppo.make_value_estimator(ValueEstimators.TDLambda, gamma=0.99, lmbda=0.9)
    nxt = _cycle(_collector(env, actor, device))
    state = {"td": nxt()}

    def train():
        td = state["td"]
        with torch.no_grad():
            a2c.value_estimator(td)
        out = a2c(td)
        return out["loss_objective"] + out["loss_critic"] + out["loss_entropy"]

    def collect():
        state["td"] = nxt()
        return state["td"]

    def with_estimator(loss, kind, **kw):
        def run():
            loss.make_value_estimator(kind, **kw)
            td = state["td"].clone()
            out = loss(td)
            sum(v for k, v in out.items() if k.startswith("loss_")).backward()
            return out
        return run

    cases = [("Collector iteration", collect),
             ("ReinforceLoss TD1", with_estimator(rein, ValueEstimators.TD1, gamma=0.99)),
             ("ReinforceLoss TD0", with_estimator(rein, ValueEstimators.TD0, gamma=0.99)),
             ("ClipPPOLoss TDLambda", with_estimator(ppo, ValueEstimators.TDLambda, gamma=0.99, lmbda=0.9)),
             ("A2CLoss VTrace", with_estimator(A2CLoss(actor_network=actor, critic_network=value),
                                               ValueEstimators.VTrace, gamma=0.99, actor_network=actor))]
    return Workload("onpolicy_discrete", train=train, modules=[a2c], params=list(a2c.parameters()), cases=cases)


def build_dqn(torch, device):
    """DQN on CartPole as the DQN example: QValueActor over an MLP, EGreedyModule annealed per frame, DQNLoss
    (double DQN, delayed target) with SoftUpdate; a dueling network with HardUpdate; distributional DQN."""
    _quiet()
    from torch import nn

    from torchrl.modules import MLP, DistributionalQValueActor, EGreedyModule, QValueActor
    from torchrl.modules.models.models import DuelingMlpDQNet
    from torchrl.objectives import DistributionalDQNLoss, DQNLoss, HardUpdate, SoftUpdate

    env = _gym("CartPole-v1", device)
    n = env.action_spec.shape[-1]
    qnet = QValueActor(MLP(in_features=4, out_features=n, num_cells=[64, 64]).to(device), in_keys=["observation"],
                       spec=env.action_spec).to(device)
    greedy = EGreedyModule(spec=env.action_spec, eps_init=1.0, eps_end=0.05, annealing_num_steps=1000).to(device)
    loss = DQNLoss(qnet, delay_value=True, double_dqn=True, action_space=env.action_spec, loss_function="l2")
    loss.make_value_estimator(gamma=0.99)
    updater = SoftUpdate(loss, eps=0.995)

    dueling = QValueActor(DuelingMlpDQNet(n, 1, mlp_kwargs_feature={"num_cells": [32], "out_features": 32, "in_features": 4}).to(device),
                          in_keys=["observation"], spec=env.action_spec).to(device)
    dloss = DQNLoss(dueling, delay_value=True, action_space=env.action_spec)
    dloss.make_value_estimator(gamma=0.99)
    hard = HardUpdate(dloss, value_network_update_interval=2)

    support = torch.linspace(-10, 10, 11, device=device)

    class Dist(nn.Module):
        def __init__(self):
            super().__init__()
            self.mlp = MLP(in_features=4, out_features=n * 11, num_cells=[64])

        def forward(self, x):
            return self.mlp(x).view(*x.shape[:-1], 11, n).log_softmax(-2)

    dist_actor = DistributionalQValueActor(Dist().to(device), in_keys=["observation"], spec=env.action_spec,
                                           support=support).to(device)
    dist_loss = DistributionalDQNLoss(dist_actor, gamma=0.99, delay_value=True)
    wl = _offpolicy(torch, device, "dqn", env, loss, qnet, explore=greedy, updater=updater)

    def dueling_step():
        sample = wl.cases[1][1]()
        out = dloss(sample)
        out["loss"].backward()
        hard.step()
        return out

    def dist_step():
        sample = wl.cases[1][1]()
        out = dist_loss(sample)
        out["loss"].backward()
        return out

    wl.cases = list(wl.cases) + [("dueling DQNLoss + HardUpdate", dueling_step), ("DistributionalDQNLoss", dist_step)]
    return wl


def build_drqn(torch, device):
    """Recurrent Q-learning as the DRQN tutorial: LSTMModule with InitTracker and the module's TensorDictPrimer in the
    env, a QValueModule, trajectories in a SliceSampler buffer, DQNLoss over sequences."""
    _quiet()
    from tensordict.nn import TensorDictModule as Mod
    from tensordict.nn import TensorDictSequential as Seq

    from torchrl.data import LazyTensorStorage, TensorDictReplayBuffer
    from torchrl.data.replay_buffers.samplers import SliceSampler
    from torchrl.envs import InitTracker
    from torchrl.modules import MLP, EGreedyModule, LSTMModule, QValueModule
    from torchrl.objectives import DQNLoss, SoftUpdate

    env = _gym("CartPole-v1", device, [InitTracker()])
    n = env.action_spec.shape[-1]
    feature = Mod(MLP(in_features=4, out_features=32, num_cells=[32]).to(device), in_keys=["observation"], out_keys=["embed"])
    lstm = LSTMModule(input_size=32, hidden_size=32, device=device, in_key="embed", out_key="embed")
    env.append_transform(lstm.make_tensordict_primer())
    head = Mod(MLP(in_features=32, out_features=n, num_cells=[32]).to(device), in_keys=["embed"], out_keys=["action_value"])
    qval = QValueModule(spec=env.action_spec)
    policy = Seq(feature, lstm, head, qval)
    greedy = EGreedyModule(spec=env.action_spec, annealing_num_steps=1000, eps_init=0.5).to(device)
    loss = DQNLoss(policy, action_space=env.action_spec, delay_value=True)
    loss.make_value_estimator(gamma=0.99)
    updater = SoftUpdate(loss, eps=0.95)
    rb = TensorDictReplayBuffer(storage=LazyTensorStorage(2000, device=device),
                                sampler=SliceSampler(slice_len=8, traj_key=("collector", "traj_ids")), batch_size=64)
    policy(env.reset())

    def sample_sequences():
        return rb.sample().reshape(-1, 8)

    wl = _offpolicy(torch, device, "drqn", env, loss, policy, explore=greedy, updater=updater, rb=rb,
                    loss_keys=["loss"])
    wl.train = lambda: loss(sample_sequences())["loss"]
    wl.cases = list(wl.cases) + [("LSTM sequence forward (recurrent mode)", lambda: _recurrent(policy, sample_sequences()))]
    return wl


def _recurrent(policy, td):
    from torchrl.modules import set_recurrent_mode

    with set_recurrent_mode(True):
        return policy(td)


def build_offpolicy_continuous(torch, device):
    """SAC (auto alpha), TD3, DDPG, REDQ, CrossQ and TQC on Pendulum; exploration by the TanhNormal actor, by
    AdditiveGaussianModule (TD3) and OrnsteinUhlenbeckProcessModule (DDPG); SoftUpdate target networks."""
    _quiet()
    from tensordict.nn import TensorDictSequential

    from torchrl.modules import AdditiveGaussianModule, OrnsteinUhlenbeckProcessModule
    from torchrl.objectives import CrossQLoss, DDPGLoss, REDQLoss, SACLoss, SoftUpdate, TD3Loss, TQCLoss

    env = _gym("Pendulum-v1", device)
    actor = _continuous_actor(env, device)
    q = _qvalue(env, device)
    actor(env.reset())
    q(actor(env.reset()))
    sac = SACLoss(actor_network=actor, qvalue_network=q, num_qvalue_nets=2, loss_function="l2", delay_qvalue=True,
                  alpha_init=1.0)
    sac.make_value_estimator(gamma=0.99)
    upd = SoftUpdate(sac, eps=0.995)

    det = _deterministic_actor(env, device)
    q2 = _qvalue(env, device)
    q2(det(env.reset()))
    td3 = TD3Loss(actor_network=det, qvalue_network=q2, action_spec=env.action_spec, policy_noise=0.2, noise_clip=0.5)
    td3.make_value_estimator(gamma=0.99)
    td3_up = SoftUpdate(td3, eps=0.995)
    gauss = AdditiveGaussianModule(spec=env.action_spec, annealing_num_steps=1000, device=device)
    ddpg = DDPGLoss(actor_network=det, value_network=q2, delay_actor=True, delay_value=True)
    ddpg.make_value_estimator(gamma=0.99)
    ou = OrnsteinUhlenbeckProcessModule(spec=env.action_spec, annealing_num_steps=1000, device=device)
    redq = REDQLoss(actor_network=actor, qvalue_network=_qvalue(env, device), num_qvalue_nets=4, sub_sample_len=2)
    redq.make_value_estimator(gamma=0.99)
    crossq = CrossQLoss(actor_network=actor, qvalue_network=_qvalue(env, device), num_qvalue_nets=2)
    crossq.make_value_estimator(gamma=0.99)
    tqc_q = _qvalue(env, device, out=5)
    tqc = TQCLoss(actor_network=actor, qvalue_network=tqc_q, num_qvalue_nets=3, top_quantiles_to_drop_per_net=1)
    tqc.make_value_estimator(gamma=0.99)
    wl = _offpolicy(torch, device, "offpolicy_continuous", env, sac, actor, updater=upd)
    sample = wl.cases[1][1]
    td3_collect = _cycle(_collector(env, TensorDictSequential(det, gauss), device))
    ddpg_collect = _cycle(_collector(env, TensorDictSequential(det, ou), device))

    def step(loss, up=None):
        def run():
            out = loss(sample())
            sum(v for k, v in out.items() if k.startswith("loss_") and v.requires_grad).backward()
            if up is not None:
                up.step()
            return out
        return run

    wl.cases = list(wl.cases) + [
        ("TD3Loss + SoftUpdate", step(td3, td3_up)), ("DDPGLoss", step(ddpg)), ("REDQLoss", step(redq)),
        ("CrossQLoss", step(crossq)), ("TQCLoss", step(tqc)),
        ("Collector TD3 AdditiveGaussian", lambda: (td3_collect(), gauss.step(FPB))),
        ("Collector DDPG OrnsteinUhlenbeck", lambda: (ddpg_collect(), ou.step(FPB)))]
    return wl


def build_discrete_sac(torch, device):
    """DiscreteSACLoss on CartPole (a OneHotCategorical actor, a Q-network over actions, target entropy)."""
    _quiet()
    from tensordict.nn import TensorDictModule

    from torchrl.modules import MLP, OneHotCategorical, ProbabilisticActor
    from torchrl.objectives import DiscreteSACLoss, SoftUpdate

    env = _gym("CartPole-v1", device)
    n = env.action_spec.shape[-1]
    actor = ProbabilisticActor(TensorDictModule(MLP(in_features=4, out_features=n, num_cells=[64, 64]).to(device),
                                                in_keys=["observation"], out_keys=["logits"]),
                               in_keys=["logits"], spec=env.action_spec, distribution_class=OneHotCategorical,
                               return_log_prob=True).to(device)
    q = TensorDictModule(MLP(in_features=4, out_features=n, num_cells=[64, 64]).to(device), in_keys=["observation"],
                         out_keys=["action_value"])
    loss = DiscreteSACLoss(actor_network=actor, qvalue_network=q, action_space=env.action_spec, num_actions=n,
                           num_qvalue_nets=2, target_entropy_weight=0.2)
    loss.make_value_estimator(gamma=0.99)
    return _offpolicy(torch, device, "discrete_sac", env, loss, actor, updater=SoftUpdate(loss, eps=0.99))


def build_offline(torch, device):
    """Offline RL on a gathered Pendulum buffer: IQLLoss, CQLLoss (Lagrange), TD3BCLoss, BCLoss; discrete IQL and CQL
    on a CartPole buffer."""
    _quiet()
    from tensordict.nn import TensorDictModule

    from torchrl.modules import MLP, OneHotCategorical, ProbabilisticActor, QValueActor
    from torchrl.objectives import BCLoss, CQLLoss, DiscreteCQLLoss, DiscreteIQLLoss, IQLLoss, SoftUpdate, TD3BCLoss

    env = _gym("Pendulum-v1", device)
    actor = _continuous_actor(env, device)
    q = _qvalue(env, device)
    v = _value(env, device)
    actor(env.reset())
    q(actor(env.reset()))
    iql = IQLLoss(actor_network=actor, qvalue_network=q, value_network=v, temperature=3.0, expectile=0.7)
    iql.make_value_estimator(gamma=0.99)
    cql = CQLLoss(actor_network=actor, qvalue_network=_qvalue(env, device), with_lagrange=True, lagrange_thresh=5.0,
                  num_random=4)
    cql.make_value_estimator(gamma=0.99)
    det = _deterministic_actor(env, device)
    q2 = _qvalue(env, device)
    q2(det(env.reset()))
    td3bc = TD3BCLoss(actor_network=det, qvalue_network=q2, action_spec=env.action_spec, alpha=2.5)
    td3bc.make_value_estimator(gamma=0.99)
    bc = BCLoss(det, loss_function="l2")

    denv = _gym("CartPole-v1", device)
    n = denv.action_spec.shape[-1]
    dactor = ProbabilisticActor(TensorDictModule(MLP(in_features=4, out_features=n, num_cells=[32]).to(device), in_keys=["observation"],
                                                 out_keys=["logits"]), in_keys=["logits"], spec=denv.action_spec,
                                distribution_class=OneHotCategorical, return_log_prob=True).to(device)
    dq = TensorDictModule(MLP(in_features=4, out_features=n, num_cells=[32]).to(device), in_keys=["observation"],
                          out_keys=["state_action_value"])
    dv = _value(denv, device)
    diql = DiscreteIQLLoss(actor_network=dactor, qvalue_network=dq, value_network=dv, action_space=denv.action_spec)
    diql.make_value_estimator(gamma=0.99)
    dcql = DiscreteCQLLoss(QValueActor(MLP(in_features=4, out_features=n, num_cells=[32]).to(device), in_keys=["observation"],
                                       spec=denv.action_spec).to(device), action_space=denv.action_spec)
    dcql.make_value_estimator(gamma=0.99)
    drb = _buffer(device)
    dcol = _cycle(_collector(denv, dactor, device))
    for _ in range(3):
        drb.extend(dcol().reshape(-1))

    wl = _offpolicy(torch, device, "offline", env, iql, actor, updater=SoftUpdate(iql, eps=0.995))
    sample = wl.cases[1][1]

    def step(loss, samp=sample):
        def run():
            out = loss(samp())
            sum(v for k, v in out.items() if k.startswith("loss") and v.requires_grad).backward()
            return out
        return run

    wl.cases = list(wl.cases[1:]) + [("CQLLoss", step(cql)), ("TD3BCLoss", step(td3bc)), ("BCLoss", step(bc)),
                                     ("DiscreteIQLLoss", step(diql, drb.sample)),
                                     ("DiscreteCQLLoss", step(dcql, drb.sample))]
    return wl


def build_gail(torch, device):
    """GAILLoss (with gradient penalty) on expert and collected transitions; RNDLoss (random network distillation)
    where torchrl has it."""
    _quiet()
    from tensordict.nn import TensorDictModule, TensorDictSequential

    from torchrl.modules import MLP
    from torchrl.objectives import GAILLoss

    env = _gym("Pendulum-v1", device)
    actor = _continuous_actor(env, device)
    disc = TensorDictSequential(
        TensorDictModule(MLP(in_features=4, out_features=1, num_cells=[64]).to(device), in_keys=["observation", "action"],
                         out_keys=["d_logits"]),
        TensorDictModule(torch.sigmoid, in_keys=["d_logits"], out_keys=["d_logits"]))
    loss = GAILLoss(disc, use_grad_penalty=True, gp_lambda=10.0)
    nxt = _cycle(_collector(env, actor, device))
    expert = nxt().reshape(-1)

    def train():
        td = nxt().reshape(-1)
        batch = td.select("observation", "action").clone()
        batch.set("collector_observation", td["observation"])
        batch.set("collector_action", td["action"])
        batch.set("observation", expert["observation"])
        batch.set("action", expert["action"])
        out = loss(batch)
        return out["loss"]

    return Workload("gail", train=train, modules=[loss], params=list(loss.parameters()))


def build_multiagent(torch, device):
    """Multi-agent on synthetic agent groups (no env): MultiAgentMLP policies and critics (shared and centralised),
    MAPPOLoss / IPPOLoss with GAE, QMixerLoss with a QMixer over per-agent QValueActors."""
    _quiet()
    from tensordict import TensorDict
    from tensordict.nn import NormalParamExtractor, TensorDictModule
    from torch import nn

    from torchrl.data import Bounded, Composite
    from torchrl.modules import MultiAgentMLP, ProbabilisticActor, QMixer, QValueModule, TanhNormal
    from torchrl.objectives import IPPOLoss, MAPPOLoss, QMixerLoss, ValueEstimators

    A, obs, act, B, T = 3, 8, 2, 16, 10
    g = torch.Generator().manual_seed(0)
    spec = Composite({("agents", "action"): Bounded(-1.0, 1.0, shape=(A, act), device=device)}, device=device)

    def batch():
        td = TensorDict({
            "agents": TensorDict({"observation": torch.randn(B, T, A, obs, generator=g)}, batch_size=(B, T, A)),
            "next": TensorDict({
                "agents": TensorDict({"observation": torch.randn(B, T, A, obs, generator=g),
                                      "reward": torch.randn(B, T, A, 1, generator=g),
                                      "done": torch.zeros(B, T, A, 1, dtype=torch.bool),
                                      "terminated": torch.zeros(B, T, A, 1, dtype=torch.bool)}, batch_size=(B, T, A)),
                "done": torch.zeros(B, T, 1, dtype=torch.bool), "terminated": torch.zeros(B, T, 1, dtype=torch.bool),
                "reward": torch.randn(B, T, 1, generator=g)}, batch_size=(B, T)),
            "done": torch.zeros(B, T, 1, dtype=torch.bool), "terminated": torch.zeros(B, T, 1, dtype=torch.bool),
        }, batch_size=(B, T))
        return td.to(device)

    net = nn.Sequential(MultiAgentMLP(n_agent_inputs=obs, n_agent_outputs=2 * act, n_agents=A, centralized=False,
                                      share_params=True, device=device, depth=2, num_cells=32), NormalParamExtractor())
    actor = ProbabilisticActor(TensorDictModule(net, in_keys=[("agents", "observation")],
                                                out_keys=[("agents", "loc"), ("agents", "scale")]),
                               spec=spec, in_keys=[("agents", "loc"), ("agents", "scale")],
                               out_keys=[("agents", "action")], distribution_class=TanhNormal,
                               distribution_kwargs={"low": -1.0, "high": 1.0}, return_log_prob=True,
                               log_prob_key=("agents", "sample_log_prob"))
    critic = TensorDictModule(MultiAgentMLP(n_agent_inputs=obs, n_agent_outputs=1, n_agents=A, centralized=True,
                                            share_params=True, device=device, depth=2, num_cells=32),
                              in_keys=[("agents", "observation")], out_keys=[("agents", "state_value")])
    mappo = MAPPOLoss(actor_network=actor, critic_network=critic, clip_epsilon=0.2, entropy_coeff=0.01)
    mappo.set_keys(reward=("agents", "reward"), action=("agents", "action"), done=("agents", "done"),
                   terminated=("agents", "terminated"), sample_log_prob=("agents", "sample_log_prob"),
                   value=("agents", "state_value"), advantage=("agents", "advantage"),
                   value_target=("agents", "value_target"))
    mappo.make_value_estimator(ValueEstimators.GAE, gamma=0.99, lmbda=0.9)

    def rollout():
        td = batch()
        with torch.no_grad():
            actor(td)
            mappo.value_estimator(td, params=mappo.critic_network_params, target_params=mappo.target_critic_network_params)
        return td

    def train():
        out = mappo(rollout())
        return out["loss_objective"] + out["loss_critic"] + out["loss_entropy"]

    ippo = IPPOLoss(actor_network=actor, critic_network=critic)
    ippo.set_keys(reward=("agents", "reward"), action=("agents", "action"), done=("agents", "done"),
                  terminated=("agents", "terminated"), sample_log_prob=("agents", "sample_log_prob"),
                  value=("agents", "state_value"), advantage=("agents", "advantage"),
                  value_target=("agents", "value_target"))

    n_act = 4
    local = TensorDictModule(MultiAgentMLP(n_agent_inputs=obs, n_agent_outputs=n_act, n_agents=A, centralized=False,
                                           share_params=True, device=device, depth=1, num_cells=32),
                             in_keys=[("agents", "observation")], out_keys=[("agents", "action_value")])
    qvm = QValueModule(action_value_key=("agents", "action_value"), out_keys=[("agents", "action"),
                                                                             ("agents", "action_value"),
                                                                             ("agents", "chosen_action_value")],
                       action_space="categorical")
    from tensordict.nn import TensorDictSequential

    qnet = TensorDictSequential(local, qvm)
    mixer = TensorDictModule(QMixer(state_shape=(A * obs,), mixing_embed_dim=8, n_agents=A, device=device),
                             in_keys=[("agents", "chosen_action_value"), "state"], out_keys=["chosen_action_value"])
    qmix = QMixerLoss(qnet, mixer, delay_value=True, action_space="categorical")
    qmix.set_keys(action_value=("agents", "action_value"), local_value=("agents", "chosen_action_value"),
                  global_value="chosen_action_value", action=("agents", "action"))
    qmix.make_value_estimator(gamma=0.99)

    def qmix_step():
        td = batch()
        td.set("state", td["agents", "observation"].flatten(-2, -1))
        td.set(("next", "state"), td["next", "agents", "observation"].flatten(-2, -1))
        qnet(td)
        out = qmix(td)
        out["loss"].backward()
        return out

    def ippo_step():
        td = rollout()
        out = ippo(td)
        (out["loss_objective"] + out["loss_critic"]).backward()
        return out

    return Workload("multiagent", train=train, modules=[mappo], params=list(mappo.parameters()),
                    cases=[("IPPOLoss", ippo_step), ("QMixerLoss", qmix_step)])


def build_value_functional(torch, device):
    """torchrl.objectives.value.functional on device trajectories (batch 8, time 32, episodes cut at random steps):
    generalized_advantage_estimate and its vectorised form, TD(0), TD(1), TD(lambda) (vectorised too),
    vtrace_advantage_estimate, reward2go; and the estimator modules GAE / TD0Estimator / TD1Estimator /
    TDLambdaEstimator / VTrace on a tensordict."""
    _quiet()
    from tensordict import TensorDict

    from torchrl.objectives.value import GAE, TD0Estimator, TD1Estimator, TDLambdaEstimator
    from torchrl.objectives.value import functional as F

    g = torch.Generator().manual_seed(0)
    B, T = 8, 32
    r = torch.randn(B, T, 1, generator=g).to(device)
    v = torch.randn(B, T, 1, generator=g).to(device)
    nv = torch.randn(B, T, 1, generator=g).to(device)
    done = (torch.rand(B, T, 1, generator=g) < 0.05).to(device)
    term = done.clone()
    logp = torch.randn(B, T, 1, generator=g).to(device) * 0.1
    cases = [
        ("generalized_advantage_estimate", lambda: F.generalized_advantage_estimate(0.99, 0.95, v, nv, r, done=done,
                                                                                     terminated=term)),
        ("vec_generalized_advantage_estimate", lambda: F.vec_generalized_advantage_estimate(
            0.99, 0.95, v, nv, r, done=done, terminated=term)),
        ("td0_return_estimate", lambda: F.td0_return_estimate(0.99, nv, r, terminated=term, done=done)),
        ("td1_return_estimate", lambda: F.td1_return_estimate(0.99, nv, r, done=done, terminated=term)),
        ("vec_td1_return_estimate", lambda: F.vec_td1_return_estimate(0.99, nv, r, done=done, terminated=term)),
        ("td_lambda_return_estimate", lambda: F.td_lambda_return_estimate(0.99, 0.9, nv, r, done=done,
                                                                           terminated=term)),
        ("vec_td_lambda_return_estimate", lambda: F.vec_td_lambda_return_estimate(0.99, 0.9, nv, r, done=done,
                                                                                   terminated=term)),
        ("vtrace_advantage_estimate", lambda: F.vtrace_advantage_estimate(0.99, logp, logp * 0.9, v, nv, r, done=done,
                                                                          terminated=term)),
        ("reward2go", lambda: F.reward2go(r, done, gamma=0.99)),
    ]
    from tensordict.nn import TensorDictModule
    from torch import nn

    vnet = TensorDictModule(nn.Linear(4, 1).to(device), in_keys=["observation"], out_keys=["state_value"])
    td = TensorDict({"observation": torch.randn(B, T, 4, generator=g), "action": torch.randn(B, T, 1, generator=g),
                     "sample_log_prob": torch.randn(B, T, generator=g) * 0.1,
                     "next": {"observation": torch.randn(B, T, 4, generator=g), "reward": r.cpu(), "done": done.cpu(),
                              "terminated": term.cpu()}}, batch_size=(B, T)).to(device)
    for est in (GAE(gamma=0.99, lmbda=0.95, value_network=vnet), TD0Estimator(gamma=0.99, value_network=vnet),
                TD1Estimator(gamma=0.99, value_network=vnet),
                TDLambdaEstimator(gamma=0.99, lmbda=0.9, value_network=vnet, vectorized=True),
                TDLambdaEstimator(gamma=0.99, lmbda=0.9, value_network=vnet, vectorized=False)):
        cases.append(("%s%s" % (type(est).__name__, "" if getattr(est, "vectorized", True) else " (loop)"),
                      lambda est=est: est(td.clone())))
    return Workload("value_functional", cases=cases)


def build_replay_buffers(torch, device):
    """Replay buffers as users build them: LazyTensorStorage on the device, LazyMemmapStorage, ListStorage; Random,
    WithoutReplacement, Slice (with and without replacement) and Prioritized samplers (C++ extension); RoundRobin
    and TensorDictMaxValueWriter writers; extend, sample, update_priority, MultiStep n-step postprocessing,
    TensorDictPrioritizedReplayBuffer; save with dumps."""
    _quiet()
    from tensordict import TensorDict

    from torchrl.data import (LazyMemmapStorage, LazyTensorStorage, ListStorage, MultiStep, ReplayBuffer,
                              TensorDictMaxValueWriter, TensorDictPrioritizedReplayBuffer, TensorDictReplayBuffer)
    from torchrl.data.replay_buffers.samplers import (PrioritizedSampler, RandomSampler, SamplerWithoutReplacement,
                                                      SliceSampler, SliceSamplerWithoutReplacement)

    g = torch.Generator().manual_seed(0)
    N, T = 4, 32

    def traj():
        done = torch.zeros(N, T, 1, dtype=torch.bool)
        done[:, -1] = True
        done[:, T // 2] = True
        return TensorDict({"obs": torch.randn(N, T, 3, generator=g), "action": torch.randn(N, T, 1, generator=g),
                           "episode": torch.arange(N).unsqueeze(1).expand(N, T).clone(),
                           "next": {"obs": torch.randn(N, T, 3, generator=g), "reward": torch.randn(N, T, 1, generator=g),
                                    "done": done, "terminated": done.clone(), "truncated": torch.zeros_like(done)}},
                          batch_size=(N, T)).to(device)

    data = traj()
    flat = data.reshape(-1)
    cases = []
    bufs = {
        "LazyTensorStorage+Random": TensorDictReplayBuffer(storage=LazyTensorStorage(512, device=device), batch_size=32),
        "LazyMemmapStorage+WithoutReplacement": TensorDictReplayBuffer(
            storage=LazyMemmapStorage(512, scratch_dir=tempfile.mkdtemp(prefix="trl-")),
            sampler=SamplerWithoutReplacement(), batch_size=32),
        "Slice": TensorDictReplayBuffer(storage=LazyTensorStorage(512, device=device),
                                        sampler=SliceSampler(slice_len=8, traj_key="episode"), batch_size=32),
        "SliceWithoutReplacement": TensorDictReplayBuffer(storage=LazyTensorStorage(512, device=device),
                                                          sampler=SliceSamplerWithoutReplacement(num_slices=4,
                                                                                                 end_key=("next", "done")),
                                                          batch_size=32),
        "MaxValueWriter": TensorDictReplayBuffer(storage=LazyTensorStorage(64, device=device),
                                                 writer=TensorDictMaxValueWriter(rank_key=("next", "reward")),
                                                 batch_size=16, sampler=RandomSampler()),
    }
    for name, rb in bufs.items():
        rb.extend(flat)

        def run(rb=rb):
            rb.extend(flat)
            return rb.sample()

        cases.append((name, run))
    lst = ReplayBuffer(storage=ListStorage(256), batch_size=16)

    def list_storage():
        lst.extend([(flat[i]["obs"], flat[i]["action"]) for i in range(16)])
        return lst.sample()

    cases.append(("ListStorage", list_storage))
    ms = MultiStep(gamma=0.99, n_steps=3)
    cases.append(("MultiStep", lambda: ms(data.clone())))
    if _has_ext():
        prb = TensorDictPrioritizedReplayBuffer(alpha=0.7, beta=0.5, storage=LazyTensorStorage(512, device=device),
                                                batch_size=32, priority_key="td_error")
        prb.extend(flat)

        def prioritized():
            s = prb.sample()
            s.set("td_error", torch.rand(s.shape, device=device))
            prb.update_tensordict_priority(s)
            return s

        ps = TensorDictReplayBuffer(storage=LazyTensorStorage(512, device=device),
                                    sampler=PrioritizedSampler(512, alpha=0.6, beta=0.4), batch_size=32)
        ps.extend(flat)

        def sampler_priority():
            s, info = ps.sample(return_info=True)
            ps.update_priority(info["index"], torch.rand(32, device=device))
            return s

        cases += [("TensorDictPrioritizedReplayBuffer", prioritized), ("PrioritizedSampler", sampler_priority)]
    return Workload("replay_buffers", cases=cases)


def build_specs(torch, device):
    """Tensor specs on the device: Bounded, Unbounded, Categorical, OneHot, MultiOneHot, MultiCategorical, Binary and
    Composite: rand, zero, is_in, project, encode, to_numpy, index, expand, squeeze."""
    _quiet()
    import numpy as np

    from torchrl.data import (Binary, Bounded, Categorical, Composite, MultiCategorical, MultiOneHot, OneHot,
                              Unbounded)

    specs = {"Bounded": Bounded(-1.0, 2.0, shape=(4, 3), device=device),
             "Unbounded": Unbounded(shape=(4, 3), device=device),
             "Categorical": Categorical(5, shape=(4,), device=device),
             "OneHot": OneHot(5, shape=(4, 5), device=device),
             "MultiOneHot": MultiOneHot([2, 3], shape=(4, 5), device=device),
             "MultiCategorical": MultiCategorical([2, 3], shape=(4, 2), device=device),
             "Binary": Binary(n=4, shape=(4, 4), device=device)}
    comp = Composite(obs=specs["Bounded"], action=specs["OneHot"], shape=(4,), device=device)
    cases = []
    for name, s in specs.items():
        def run(s=s):
            x = s.rand()
            s.is_in(x)
            s.project(x * 3 if x.dtype.is_floating_point else x)
            s.zero()
            s.encode(s.to_numpy(x))
            return s.expand(2, *s.shape)
        cases.append((name, run))
    cases.append(("Composite", lambda: (comp.rand(), comp.is_in(comp.rand()), comp.zero(), comp[0], comp.clone())))
    cases.append(("Bounded.encode numpy", lambda: specs["Bounded"].encode(np.zeros((4, 3), dtype="float32"))))
    return Workload("specs", cases=cases)


def build_envs_transforms(torch, device):
    """Envs on the device: torchrl's stateless PendulumEnv (a batch of 8) with the tutorial's transforms
    (UnsqueezeTransform, CatTensors, ObservationNorm, VecNorm, CatFrames, RewardScaling, RewardSum, StepCounter,
    InitTracker), rollout / step_mdp / reset with partial resets; TicTacToeEnv; a SerialEnv of
    gym CartPoles; check_env_specs."""
    _quiet()
    from tensordict.nn import TensorDictModule
    from torch import nn

    from torchrl.envs import (CatFrames, CatTensors, Compose, InitTracker, ObservationNorm, RewardScaling,
                              RewardSum, SerialEnv, StepCounter, TransformedEnv, UnsqueezeTransform, VecNorm)
    from torchrl.envs.custom.pendulum import PendulumEnv
    from torchrl.envs.custom.tictactoeenv import TicTacToeEnv
    from torchrl.envs.utils import check_env_specs, step_mdp

    base = PendulumEnv(device=device)
    env = TransformedEnv(base, Compose(
        UnsqueezeTransform(dim=-1, in_keys=["th", "thdot"], in_keys_inv=["th", "thdot"]),
        CatTensors(in_keys=["th", "thdot"], dim=-1, out_key="observation", del_keys=False),
        ObservationNorm(in_keys=["observation"], loc=0.0, scale=2.0, standard_normal=True),
        VecNorm(in_keys=["observation"], decay=0.99),
        CatFrames(N=4, dim=-1, in_keys=["observation"], out_keys=["stacked"]),
        RewardScaling(loc=0.0, scale=0.1), RewardSum(), StepCounter(max_steps=30), InitTracker(),
    ))
    env = env.to(device)
    env.set_seed(0)
    policy = TensorDictModule(nn.Sequential(nn.Linear(8, 16), nn.Tanh(), nn.Linear(16, 1)).to(device),
                              in_keys=["stacked"], out_keys=["action"])
    batched = TransformedEnv(PendulumEnv(device=device), Compose(
        UnsqueezeTransform(dim=-1, in_keys=["th", "thdot"], in_keys_inv=["th", "thdot"]),
        CatTensors(in_keys=["th", "thdot"], dim=-1, out_key="observation", del_keys=False), StepCounter(max_steps=10)))

    def batched_rollout():
        td = batched.reset(batched.gen_params(batch_size=[8]))
        return batched.rollout(25, auto_reset=False, tensordict=td, break_when_any_done=False)

    ttt = TicTacToeEnv(device=device)
    serial = SerialEnv(2, lambda: _gym("CartPole-v1", device))
    serial.set_seed(0)

    def manual_loop():
        td = env.reset()
        for _ in range(10):
            td = policy(td)
            td = env.step(td)
            td = step_mdp(td)
        return td

    def partial_reset():
        td = serial.reset()
        td = serial.rand_step(td)
        td = step_mdp(td)
        reset = torch.zeros(2, 1, dtype=torch.bool, device=device)
        reset[0] = True
        td.set("_reset", reset)
        return serial.reset(td)

    cases = [("TransformedEnv.rollout", lambda: env.rollout(30, policy)),
             ("step / step_mdp loop", manual_loop),
             ("batched PendulumEnv rollout", batched_rollout),
             ("TicTacToeEnv rand rollout", lambda: ttt.rollout(9, break_when_any_done=True)),
             ("SerialEnv rollout", lambda: serial.rollout(20, break_when_any_done=False)),
             ("SerialEnv partial reset", partial_reset),
             ("check_env_specs", lambda: check_env_specs(env, seed=0))]
    return Workload("envs_transforms", cases=cases)


def build_modules(torch, device):
    """torchrl.modules on device inputs: MLP, ConvNet, DuelingCnnDQNet, NoisyLinear (reset_noise), LSTMModule / GRUModule
    step-by-step and in recurrent mode, the distributions (TanhNormal, TruncatedNormal, TanhDelta, Delta,
    OneHotCategorical, MaskedCategorical, IndependentNormal) with sample / rsample / log_prob / mode / entropy,
    ActorCriticWrapper and ActorValueOperator."""
    _quiet()
    from tensordict import TensorDict
    from tensordict.nn import TensorDictModule
    from torch import nn

    from torchrl.modules import (MLP, ActorCriticWrapper, ActorValueOperator, ConvNet, DuelingCnnDQNet, GRUModule,
                                 IndependentNormal, LSTMModule, MaskedCategorical, NoisyLinear, OneHotCategorical,
                                 ProbabilisticActor, TanhDelta, TanhNormal, TruncatedNormal, ValueOperator)
    from torchrl.modules import set_recurrent_mode

    g = torch.Generator().manual_seed(0)
    x = torch.randn(16, 6, generator=g).to(device)
    img = torch.randn(4, 3, 32, 32, generator=g).to(device)
    mlp = MLP(in_features=6, out_features=4, num_cells=[32, 32], dropout=0.1, norm_class=nn.LayerNorm,
              norm_kwargs={"normalized_shape": 32}).to(device)
    conv = ConvNet(num_cells=[8, 16], kernel_sizes=3, strides=2).to(device)
    duel = DuelingCnnDQNet(out_features=4, out_features_value=1, cnn_kwargs={"num_cells": [8], "kernel_sizes": [3], "strides": [2]},
                           mlp_kwargs={"num_cells": [16], "depth": 1}).to(device)
    noisy = NoisyLinear(6, 4, device=device)
    lstm = LSTMModule(input_size=6, hidden_size=8, in_key="x", out_key="h", device=device)
    gru = GRUModule(input_size=6, hidden_size=8, in_key="x", out_key="h", device=device)
    seq = TensorDict({"x": torch.randn(4, 10, 6, generator=g), "is_init": torch.zeros(4, 10, 1, dtype=torch.bool)},
                     batch_size=(4, 10)).to(device)
    seq["is_init"][:, 0] = True
    step_td = TensorDict({"x": x[:4], "is_init": torch.ones(4, 1, dtype=torch.bool)}, batch_size=(4,)).to(device)
    loc, scale = x[:, :2], x[:, 2:4].abs() + 0.1
    mask = torch.rand(16, 6, generator=g).to(device) > 0.3
    mask[:, 0] = True

    def dists():
        out = []
        for d in (TanhNormal(loc, scale, low=-2.0, high=2.0), TruncatedNormal(loc, scale, low=-1.0, high=1.0),
                  IndependentNormal(loc, scale)):
            s = d.rsample()
            out += [d.log_prob(s), d.deterministic_sample]
        td_ = TanhDelta(loc, low=-1.0, high=1.0)
        out.append(td_.log_prob(td_.sample()))
        oh = OneHotCategorical(logits=x)
        out += [oh.log_prob(oh.sample()), oh.mode, oh.entropy()]
        mc = MaskedCategorical(logits=x, mask=mask)
        out += [mc.log_prob(mc.sample()), mc.entropy()]
        return out

    common = TensorDictModule(MLP(in_features=6, out_features=16, num_cells=[16]).to(device), in_keys=["observation"],
                              out_keys=["hidden"])
    from tensordict.nn import NormalParamExtractor

    pol = ProbabilisticActor(TensorDictModule(nn.Sequential(nn.Linear(16, 4), NormalParamExtractor()).to(device),
                                              in_keys=["hidden"], out_keys=["loc", "scale"]),
                             in_keys=["loc", "scale"], distribution_class=TanhNormal, return_log_prob=True)
    val = ValueOperator(nn.Linear(16, 1).to(device), in_keys=["hidden"])
    avo = ActorValueOperator(common, pol, val)
    acw = ActorCriticWrapper(TensorDictModule(nn.Linear(6, 2).to(device), in_keys=["observation"], out_keys=["action"]),
                             ValueOperator(nn.Linear(6, 1).to(device), in_keys=["observation"]))
    obs = TensorDict({"observation": x}, batch_size=(16,))

    def recurrent(mod):
        def run():
            mod(step_td.clone())
            with set_recurrent_mode(True):
                return mod(seq.clone())
        return run

    cases = [("MLP", lambda: mlp(x)), ("ConvNet", lambda: conv(img)), ("DuelingCnnDQNet", lambda: duel(img)),
             ("NoisyLinear", lambda: (noisy.reset_noise(), noisy(x))), ("LSTMModule", recurrent(lstm)),
             ("GRUModule", recurrent(gru)), ("distributions", dists),
             ("ActorValueOperator", lambda: (avo(obs.clone()), avo.get_policy_operator()(obs.clone()),
                                             avo.get_value_operator()(obs.clone()))),
             ("ActorCriticWrapper", lambda: acw(TensorDict({"observation": x}, batch_size=(16,))))]
    return Workload("modules", cases=cases)


WORKLOADS = [build_ppo_pendulum, build_onpolicy_discrete, build_dqn, build_drqn, build_offpolicy_continuous,
             build_discrete_sac, build_offline, build_gail, build_multiagent, build_value_functional,
             build_replay_buffers, build_specs, build_envs_transforms, build_modules]
