"""Process-wide switches a file turns on or off, read from its calls and shared across the project.

``torch.distributions.Distribution.set_default_validate_args(False)`` (however imported, on the
class or a subclass) turns argument validation off for every distribution built afterwards; one
call in a training script or a package ``__init__`` covers the files it imports. The project pass
asks every file's interface (``validation_off``) and rechecks the files that met the question.
"""

from __future__ import annotations

from typing import Optional

import libcst as cst

from torchsync_lint.inference.values import UNKNOWN

SET_DEFAULT_VALIDATE = "set_default_validate_args"


def _first_arg(call: cst.Call) -> Optional[cst.BaseExpression]:
    for a in call.args:
        if a.keyword is None and not a.star:
            return a.value
        if a.keyword is not None and a.keyword.value == "value":
            return a.value
    return None


def leaves_validation_on(expr: cst.BaseExpression) -> bool:
    """`validate_args=True` or `=None` (torch's default, on); anything else (False, a variable)
    may turn it off."""
    return type(expr) is cst.Name and expr.value in ("True", "None")


def turns_validation_off(index) -> bool:
    """This file calls ``<torch.distributions class>.set_default_validate_args(False)``."""
    for name, calls in index.torch_calls.items():
        if name.startswith("torch.distributions.") and name.endswith("." + SET_DEFAULT_VALIDATE):
            for call in calls:
                v = _first_arg(call)
                if type(v) is cst.Name and v.value == "False":
                    return True
    return False


def validation_off(evaluator, index) -> bool:
    """Validation is off for this file: it, or some file of the project, turns it off."""
    if turns_validation_off(index):
        return True
    project = getattr(evaluator, "project", None)
    if project is not None:
        if evaluator.recorded is not None:
            evaluator.recorded[("validation_off",)] = project.resolve(("validation_off",))
        return bool(getattr(project, "validation_off", False))
    evaluator.refs.add(("validation_off",))  # another file may turn it off: the project will tell
    return False


# ``dist.log_prob(x)`` on a receiver inference cannot place: only torch's distributions (and
# their subclasses) answer to this name, and they check the sample when validation is on
BY_NAME_SAMPLE_CHECKS = frozenset(("log_prob",))


def by_name_validates(evaluator, index, name: str) -> bool:
    """``obj.<name>(x)`` of an unplaced receiver is a validating distribution's: no file of the
    project has a ``log_prob`` of its own or builds a distribution with ``validate_args=False``
    (there the unplaced ones may be built so), and none turns validation off. This file answers
    first; the others through the project (a reference, as for ``validation_off``)."""
    if name not in BY_NAME_SAMPLE_CHECKS or own_log_prob(index) or turns_validation_off(index):
        return False
    project = getattr(evaluator, "project", None)
    if project is None:
        evaluator.refs.add(("own_log_prob",))  # another file may have one: the project will tell
        return True
    if evaluator.recorded is not None:
        evaluator.recorded[("own_log_prob",)] = project.resolve(("own_log_prob",))
    return not project.own_log_prob


def method_defined(evaluator, name: str) -> bool:
    """Some class of the project defines a method ``name``: this file's, else another file's
    through the project (a reference, so that the project pass asks again)."""
    if any(name in c.methods for c in evaluator.index.classes.values()):
        return True
    return evaluator._ref(("defines", name)).kind != UNKNOWN


def own_log_prob(index) -> bool:
    """This file builds a distribution with ``validate_args=`` other than True/None, or defines a
    ``log_prob`` in a class not derived (through the file's own classes) from a torch distribution."""
    return index.validate_false or any(
        "log_prob" in c.methods and not _distribution_class(c, index) for c in index.classes.values())


def _distribution_class(cls, index, depth: int = 0) -> bool:
    """A class of the file derived from a torch distribution (through the file's own classes)."""
    for b in cls.bases:
        if b.startswith("torch.distributions."):
            return True
        local = index.classes.get(b.split(".")[-1])
        if local is not None and local is not cls and depth < 8 and _distribution_class(local, index, depth + 1):
            return True
    return False
