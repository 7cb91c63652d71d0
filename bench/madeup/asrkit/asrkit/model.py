import torch
import torch.nn as nn
import torch.nn.functional as F


class ConvSubsample(nn.Module):
    def __init__(self, n_mels, dim):
        super().__init__()
        self.conv = nn.Conv1d(n_mels, dim, 3, stride=2, padding=1)

    def forward(self, feats, lengths):
        out = self.conv(feats.transpose(1, 2)).transpose(1, 2)
        return out, torch.div(lengths + 1, 2, rounding_mode="floor")


class ConformerLite(nn.Module):
    def __init__(self, n_mels=80, dim=144, vocab=32, layers=2):
        super().__init__()
        self.sub = ConvSubsample(n_mels, dim)
        layer = nn.TransformerEncoderLayer(dim, 4, dim * 2, batch_first=True)
        self.enc = nn.TransformerEncoder(layer, layers)
        self.head = nn.Linear(dim, vocab)
        self.blank = 0

    def forward(self, feats, lengths):
        x, out_lengths = self.sub(feats, lengths)
        steps = torch.arange(x.size(1), device=x.device)
        pad = steps[None, :] >= out_lengths[:, None]
        x = self.enc(x, src_key_padding_mask=pad)
        return self.head(x).log_softmax(-1), out_lengths

    def loss(self, feats, lengths, targets, target_lengths):
        log_probs, out_lengths = self(feats, lengths)
        return F.ctc_loss(log_probs.transpose(0, 1), targets, out_lengths, target_lengths,  # SYNC
                          blank=self.blank, zero_infinity=True)
