"""Devices named once, in a module of their own."""
import torch

HOST = torch.device("cpu")
ACCEL = torch.device("cuda")
