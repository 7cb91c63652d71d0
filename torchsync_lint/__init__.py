"""torchsync-lint: find host-device synchronisations that stall PyTorch GPUs.

The public API: ``lint_paths`` (files and folders, the whole project) and ``lint_source`` (one
file's text), loaded on first use so that ``import torchsync_lint`` (the pytest plugin, the guard)
stays cheap.
"""

__version__ = "0.1.0"

_API = {
    "lint_paths": "torchsync_lint.run.tree",
    "lint_source": "torchsync_lint.check.lint_source",
    "SourceError": "torchsync_lint.check.lint_source",
    "Config": "torchsync_lint.config",
    "Finding": "torchsync_lint.finding",
}
__all__ = ["__version__", *_API]


def __getattr__(name: str):
    if name in _API:
        import importlib

        return getattr(importlib.import_module(_API[name]), name)
    raise AttributeError(f"module 'torchsync_lint' has no attribute {name!r}")
