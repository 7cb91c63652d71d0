"""Labels and names every stage reads without a syntax tree: the frequency classes of findings,
the step hooks and set-up methods of frameworks, and how a user's list names a function.

Kept apart from ``frequency`` and ``index`` (which walk LibCST trees) so that answering a file from
a stored report (``run.ondemand``, the flake8 plugin) imports no parser.
"""

from __future__ import annotations

EVERY_STEP = "every-step"
PERIODIC = "periodic"
ERROR_PATH = "error-path"
ONCE = "once"
TEST = "test"
# Code outside the training loop of the function that holds it: once per call of that function,
# which is once unless the function runs every step (decided by the engine, across files).
SETUP = "set-up"
# A finding of a hot-only rule (``Rule.hot_only``) in code not known to be hot: costly only if it
# runs every step, which nothing shows; shown, so labelled, with --include-cold.
NOT_HOT = "not-hot"
CLASSES = (EVERY_STEP, PERIODIC, ONCE, ERROR_PATH, TEST, NOT_HOT)
_RANK = {EVERY_STEP: 0, PERIODIC: 1, SETUP: 2, ONCE: 2, ERROR_PATH: 3}

# Methods that run every training or evaluation step in common frameworks (Lightning, HF Trainer,
# plain loops written as methods).
STEP_HOOKS = frozenset(
    "training_step validation_step test_step predict_step train_step eval_step evaluation_step "
    "compute_loss training_step_end shared_step".split()
)
# Methods that run once, at set-up or for display: syncs there cost nothing per step.
COLD_METHODS = frozenset(
    "__init__ __repr__ __str__ extra_repr reset_parameters _reset_parameters init_weights "
    "_init_weights __setstate__ __getstate__ load_state_dict _load_from_state_dict state_dict "
    "setup prepare_data configure_optimizers on_load_checkpoint on_save_checkpoint".split()
)


def names_function(key: str, name: str, patterns) -> bool:
    """Whether a user's list (hot-functions, cold-functions) names this function: by its name,
    its full dotted key, or a dotted tail of it (``Trainer.step``)."""
    return name in patterns or any(key == p or key.endswith("." + p) for p in patterns if "." in p)


def combine(outer: str, inner: str) -> str:
    return inner if _RANK.get(inner, 0) >= _RANK.get(outer, 0) else outer


def settle(freq: str, runs_every_step: bool) -> str:
    """The reported class of a finding labelled ``freq`` in a function that runs every step (or
    not): set-up code around a training loop is once, unless its function runs every step."""
    if freq == SETUP:
        return EVERY_STEP if runs_every_step else ONCE
    return freq
