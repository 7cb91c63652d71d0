"""Process-wide switches a file turns on or off, read from its calls and shared across the project.

``torch.distributions.Distribution.set_default_validate_args(False)`` (however imported, on the
class or a subclass) turns argument validation off for every distribution built afterwards; one
call in a training script or a package ``__init__`` covers the files it imports. The project pass
asks every file's interface (``validation_off``) and rechecks the files that met the question.
"""

from __future__ import annotations

from typing import Optional

import libcst as cst

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
