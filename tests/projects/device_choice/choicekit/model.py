import torch

import choicekit
from choicekit import device


def encode(tokens, opt, model):
    for batch in tokens:
        ids = torch.tensor(batch, dtype=torch.long, device=choicekit.device)  # error: TSL202
        lengths = torch.tensor([len(batch)]).to(device)  # error: TSL202
        loss = model(ids, lengths).mean()
        loss.backward()
        opt.step()
        if loss > 10:  # error: TSL302
            print("diverged")
