import torch.nn as nn


class Processor(nn.Module):
    def __init__(self, device="cuda"):
        super().__init__()
        self.device = device

    def prepare(self, sample):
        # reached by name from a loop whose receiver is declared only `nn.Module`
        return {k: v.to(self.device) for k, v in sample.items()}  # error: TSL204


class Passthrough:
    def finish(self, sample):
        return sample["x"].to("cuda")
