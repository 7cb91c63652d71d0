"""The front doors: the ``torchsync-lint`` command (``command.main``), one module per command or
step (``lint``, ``fix``, ``add_noqa``, ``trace``, ``catalog``), output formats and docs generation.

``main`` and ``build_parser`` are loaded on first use, so ``python -m torchsync_lint.cli.docgen``
does not import the whole command first.
"""

_COMMAND = ("main", "build_parser")
__all__ = list(_COMMAND)


def __getattr__(name: str):
    if name in _COMMAND:
        from torchsync_lint.cli import command

        return getattr(command, name)
    raise AttributeError(f"module 'torchsync_lint.cli' has no attribute {name!r}")
