"""The package's own tests call on the CPU: that says what the API takes, not where it runs."""
import torch

from kgkit.sampling import unique_heads


def test_unique_heads():
    assert unique_heads(torch.zeros(4, 3, dtype=torch.long)).numel() == 1
