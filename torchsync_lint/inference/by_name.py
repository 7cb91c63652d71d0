"""Calls whose receiver inference cannot place, reached by the method's name.

``self.processor.preprocess(batch)`` where the processor came in from outside: the method is one of
the project's methods named ``preprocess``. A name is the project's own when no torch framework
class (module, optimizer, scheduler, dataset, loader, distribution, transform, scaler; their hooks
``_call``, ``_inverse`` too), no Tensor and no Python container has a method of that name
(``torch_facts.framework_methods``, generated from torch), and few of the project's classes define
it. Such a call's arguments are what a parameter takes only where no call the project can place
passes it (``Project.param``): a guess, never joined with what is known.
"""

from __future__ import annotations

from typing import List, Sequence, Tuple

from torchsync_lint.inference import torch_facts as facts

# more classes defining a name than this: a protocol too widely shared to say which one runs
MAX_DEFINERS = 8
BY_NAME = "@by-name"  # a keyword no call can pass: marks the calls placed by name


def eligible(name: str) -> bool:
    """A method name that is the project's own, not one a framework class or a tensor answers to."""
    return not name.startswith("__") and facts.method(name) is None and name not in facts.framework_methods()


def targets(name: str, definers: Sequence[Tuple[str, str]]) -> List[str]:
    """The methods (keys) a call ``obj.name(...)`` of an unplaced receiver may run: every
    project method of that name, where the name is eligible and few classes define it."""
    if not eligible(name) or not 1 <= len(definers) <= MAX_DEFINERS:
        return []
    return [method for _cls, method in definers]
