import torch

lib = torch
