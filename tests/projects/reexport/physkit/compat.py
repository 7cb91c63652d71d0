"""Re-exports torch and one of its modules: the project's files import them from here."""
import torch
import torch.nn.functional as F  # noqa: F401

Tensor = torch.Tensor
