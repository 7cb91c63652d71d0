import torch
from torch.nn.utils.rnn import pad_sequence


class Vocab:
    def __init__(self, tokens):
        self.itos = ["<pad>", "<bos>", "<eos>", "<unk>"] + list(tokens)
        self.stoi = {t: i for i, t in enumerate(self.itos)}

    def encode(self, text):
        return torch.tensor([1] + [self.stoi.get(t, 3) for t in text.split()] + [2])

    def decode(self, ids):
        return " ".join(self.itos[i] for i in ids.tolist() if i > 3)  # SYNC


def collate(batch, pad_id=0):
    src = pad_sequence([b[0] for b in batch], batch_first=True, padding_value=pad_id)
    tgt = pad_sequence([b[1] for b in batch], batch_first=True, padding_value=pad_id)
    src_len = torch.tensor([len(b[0]) for b in batch])
    return src, tgt, src_len


def decode_batch(vocab, model, loader, device):
    out = []
    for src, tgt, src_len in loader:
        src = src.to(device)  # SYNC
        from .search import beam_search
        for row in src:
            best = beam_search(model, row[None])
            out.append(vocab.decode(best))
    return out
