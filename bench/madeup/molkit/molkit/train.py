import torch
from torch.utils.data import DataLoader

from molkit.graph import collate
from molkit.model import SchNetLike


def train(dataset, device="cuda", epochs=10):
    model = SchNetLike().to(device)  # SYNC
    opt = torch.optim.AdamW(model.parameters(), lr=5e-4)
    loader = DataLoader(dataset, batch_size=32, shuffle=True, collate_fn=collate)
    for epoch in range(epochs):
        total, n = 0.0, 0
        for data in loader:
            data = data.to(device)  # SYNC (the copies in Batch.to)
            pred = model(data.z, data.pos, data.batch, data.num_graphs)
            loss = torch.nn.functional.l1_loss(pred.squeeze(-1), data.y)
            opt.zero_grad()
            loss.backward()
            opt.step()
            total += loss.item() * data.num_graphs  # SYNC
            n += data.num_graphs
        print(f"epoch {epoch}: mae {total / n:.4f}")
