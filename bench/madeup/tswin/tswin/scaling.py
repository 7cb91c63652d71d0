import torch


class StandardScaler:
    def __init__(self, eps=1e-8):
        self.eps = eps
        self.mean = None
        self.std = None

    def fit(self, x, dim=0):
        self.mean = x.mean(dim, keepdim=True)
        self.std = x.std(dim, keepdim=True)
        if (self.std < self.eps).any():  # SYNC
            self.std = torch.where(self.std < self.eps, torch.ones_like(self.std), self.std)
        return self

    def transform(self, x):
        return (x - self.mean.to(x.device)) / self.std.to(x.device)

    def inverse_transform(self, x):
        return x * self.std.to(x.device) + self.mean.to(x.device)


class RevIN(torch.nn.Module):
    def __init__(self, num_features, eps=1e-5, affine=True):
        super().__init__()
        self.eps = eps
        if affine:
            self.weight = torch.nn.Parameter(torch.ones(num_features))
            self.bias = torch.nn.Parameter(torch.zeros(num_features))
        self.affine = affine

    def forward(self, x, mode):
        if mode == "norm":
            self.mean = x.mean(1, keepdim=True).detach()
            self.stdev = torch.sqrt(x.var(1, keepdim=True, unbiased=False) + self.eps).detach()
            x = (x - self.mean) / self.stdev
            return x * self.weight + self.bias if self.affine else x
        x = (x - self.bias) / (self.weight + self.eps * self.eps) if self.affine else x
        return x * self.stdev + self.mean
