"""Runtime sync guard: ``with no_sync(): ...`` fails (or warns, or records) at the user's line
that made the host wait for the GPU, with the op, the linter's rule code for that line and the
stall. See docs/guard.md. Importing this package does not import torch; entering a guard does.
"""

from torchsync_lint.guard.guard import MODES, GuardInactiveWarning, no_sync
from torchsync_lint.guard.state import SyncError, SyncWarning
from torchsync_lint.guard.events import SyncEvent

__all__ = ["no_sync", "SyncError", "SyncWarning", "SyncEvent", "GuardInactiveWarning", "MODES"]
