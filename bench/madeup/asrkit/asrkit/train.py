import torch

from asrkit.decode import greedy, wer


def collate(batch):
    feats = torch.nn.utils.rnn.pad_sequence([b["feats"] for b in batch], batch_first=True)
    lengths = torch.tensor([len(b["feats"]) for b in batch])
    targets = torch.cat([b["tokens"] for b in batch])
    target_lengths = torch.tensor([len(b["tokens"]) for b in batch])
    return feats, lengths, targets, target_lengths


class Trainer:
    def __init__(self, model, optimizer, device="cpu", clip=5.0):
        self.model = model
        self.optimizer = optimizer
        self.device = device
        self.clip = clip
        self.history = []

    def _move(self, batch):
        return [t.to(self.device) for t in batch]  # SYNC

    def train_epoch(self, loader):
        self.model.train()
        total = 0.0
        for step, batch in enumerate(loader):
            feats, lengths, targets, target_lengths = self._move(batch)
            loss = self.model.loss(feats, lengths, targets, target_lengths)
            self.optimizer.zero_grad()
            loss.backward()
            norm = torch.nn.utils.clip_grad_norm_(self.model.parameters(), self.clip)
            if torch.isfinite(norm):  # SYNC
                self.optimizer.step()
            total += loss.item()  # SYNC
        self.history.append(total)
        return total

    @torch.no_grad()
    def evaluate(self, loader, refs):
        self.model.eval()
        hyps = []
        for batch in loader:
            feats, lengths, _, _ = self._move(batch)
            log_probs, out_lengths = self.model(feats, lengths)
            hyps.extend(greedy(log_probs, out_lengths))
        return wer(refs, hyps)


def main():
    from asrkit.model import ConformerLite
    model = ConformerLite().to("cuda")  # SYNC
    opt = torch.optim.AdamW(model.parameters(), 1e-3)
    trainer = Trainer(model, opt, device="cuda")
    data = [{"feats": torch.randn(50, 80), "tokens": torch.randint(1, 32, (8,))} for _ in range(16)]
    loader = torch.utils.data.DataLoader(data, batch_size=4, collate_fn=collate)
    for _ in range(2):
        trainer.train_epoch(loader)
    print(trainer.evaluate(loader, [b["tokens"].tolist() for b in data]))
