import torch.nn as nn


def mlp(inp, hidden, out, dropout=0.1):
    return nn.Sequential(nn.Linear(inp, hidden), nn.ReLU(), nn.Dropout(dropout), nn.Linear(hidden, out))
