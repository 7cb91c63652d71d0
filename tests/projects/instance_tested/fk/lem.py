import torch
from torch import nn

from fk.data import Dictionary


class Lem(nn.Module):
    def __init__(self, char_dict):
        super().__init__()
        self.char_dictionary = char_dict if isinstance(char_dict, Dictionary) else Dictionary.load(char_dict)
        self.start_index = self.char_dictionary.add_item("<S>")
        # the other spelling: the tested name is in the else branch (not followed: unknown)
        other = Dictionary.load(char_dict) if not isinstance(char_dict, Dictionary) else char_dict
        self.end_index = other.add_item("<E>")

    def forward(self, tokens, device):
        tensor = torch.zeros(len(tokens), 8, dtype=torch.long, device=device)
        for i in range(len(tokens)):
            tensor[i][0] = self.start_index  # error: TSL203
            tensor[i][1] = self.end_index  # ok: not known to be a Python number
        return tensor
