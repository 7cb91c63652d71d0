"""torchsync-lint: find host-device synchronisations that stall PyTorch GPUs."""

__version__ = "0.1.0"
