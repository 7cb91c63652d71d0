import torch

from flowkit.masks import create_mask, pad_to


class Masked(torch.nn.Module):
    def forward(self, x: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
        mask = create_mask(lengths.max(), lengths)
        return x.masked_fill(mask, 0.0) + pad_to(x.shape[1], x)
