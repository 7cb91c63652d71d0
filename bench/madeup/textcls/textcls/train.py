import functools

import torch
from torch.utils.data import DataLoader

from .model import collate_batch


def accuracy(logits, labels):
    return (logits.argmax(-1) == labels).float().mean()


def train(model, dataset, vocab, epochs=3, lr=1e-3, device="cuda", batch_size=32):
    loader = DataLoader(dataset, batch_size=batch_size, shuffle=True,
                        collate_fn=functools.partial(collate_batch, vocab=vocab))
    model.to(device)  # SYNC
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    for epoch in range(epochs):
        running, accs = 0.0, []
        for tokens, lengths, labels in loader:
            tokens, labels = tokens.to(device), labels.to(device)  # SYNC
            logits = model(tokens, lengths)
            loss = torch.nn.functional.cross_entropy(logits, labels)
            opt.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 5.0)
            opt.step()
            running += loss.item()  # SYNC
            accs.append(accuracy(logits, labels))
        acc = torch.stack(accs).mean()
        print(f"epoch {epoch}: loss {running / len(loader):.3f} acc {acc:.3f}")  # SYNC
    return model


@torch.no_grad()
def predict(model, texts, vocab, device="cuda"):
    model.eval()
    out = []
    for words in texts:
        ids = torch.tensor([vocab.encode(words)], device=device)  # SYNC
        lengths = torch.tensor([ids.shape[1]])
        pred = model(ids, lengths).argmax(-1)
        out.append(pred.item())  # SYNC
    return out
