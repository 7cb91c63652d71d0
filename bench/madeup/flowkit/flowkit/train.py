import torch
from torch.utils.data import DataLoader, TensorDataset

from flowkit.flows import Flow, StandardNormal
from flowkit.transforms import ActNorm, CompositeTransform, RandomPermutation, SplineCoupling, checkerboard


def build(features, layers=4):
    blocks = []
    for i in range(layers):
        blocks += [ActNorm(features), SplineCoupling(checkerboard(features, even=i % 2 == 0)),
                   RandomPermutation(features)]
    return Flow(CompositeTransform(blocks), StandardNormal(features))


def train(data, device="cuda", epochs=5, batch_size=256):
    flow = build(data.shape[1]).to(device)  # SYNC
    opt = torch.optim.Adam(flow.parameters(), lr=1e-3)
    loader = DataLoader(TensorDataset(torch.as_tensor(data, dtype=torch.float32)), batch_size=batch_size,
                        shuffle=True)
    history = []
    for epoch in range(epochs):
        for (x,) in loader:
            x = x.to(device)  # SYNC
            loss = -flow.log_prob(x).mean()
            opt.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(flow.parameters(), 5.0)
            opt.step()
            history.append(loss.item())  # SYNC
        flow.eval()
        with torch.no_grad():
            samples = flow.sample(1000)
            if not torch.isfinite(samples).all():  # SYNC
                print(f"epoch {epoch}: non-finite samples")
        flow.train()
    return flow, history
