"""The names users imported from ``torchsync_lint.engine`` before the package was laid out by stage
(``check/`` checks one file, ``run/`` a whole tree). New code imports them from there, or from
``torchsync_lint`` itself."""

from torchsync_lint.check.lint_source import SourceError, lint_source
from torchsync_lint.run.tree import lint_paths

__all__ = ["SourceError", "lint_paths", "lint_source"]
