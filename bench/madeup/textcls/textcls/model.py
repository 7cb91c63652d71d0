import torch
from torch import nn
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence


class Vocab:
    def __init__(self, tokens, pad="<pad>", unk="<unk>"):
        self.itos = [pad, unk] + sorted(set(tokens))
        self.stoi = {t: i for i, t in enumerate(self.itos)}
        self.pad_id, self.unk_id = 0, 1

    def encode(self, words):
        return [self.stoi.get(w, self.unk_id) for w in words]


def collate_batch(batch, vocab):
    ids = [torch.tensor(vocab.encode(words), dtype=torch.long) for words, _ in batch]
    labels = torch.tensor([y for _, y in batch])
    lengths = torch.tensor([len(x) for x in ids])
    padded = nn.utils.rnn.pad_sequence(ids, batch_first=True, padding_value=vocab.pad_id)
    return padded, lengths, labels


class BiLSTMClassifier(nn.Module):
    def __init__(self, vocab_size, emb=100, hidden=128, classes=2, pad_id=0):
        super().__init__()
        self.emb = nn.Embedding(vocab_size, emb, padding_idx=pad_id)
        self.rnn = nn.LSTM(emb, hidden, batch_first=True, bidirectional=True)
        self.att = nn.Linear(2 * hidden, 1)
        self.out = nn.Linear(2 * hidden, classes)

    def forward(self, tokens, lengths):
        x = self.emb(tokens)
        packed = pack_padded_sequence(x, lengths.cpu(), batch_first=True, enforce_sorted=False)  # SYNC
        h, _ = self.rnn(packed)
        h, _ = pad_packed_sequence(h, batch_first=True)  # SYNC
        mask = torch.arange(h.size(1), device=h.device)[None, :] < lengths.to(h.device)[:, None]  # SYNC
        scores = self.att(h).squeeze(-1).masked_fill(~mask, -1e9)
        pooled = (scores.softmax(-1).unsqueeze(-1) * h).sum(1)
        return self.out(pooled)


class TransformerClassifier(nn.Module):
    def __init__(self, vocab_size, d=128, heads=4, layers=2, classes=2, max_len=512, pad_id=0):
        super().__init__()
        self.pad_id = pad_id
        self.emb = nn.Embedding(vocab_size, d, padding_idx=pad_id)
        self.pos = nn.Parameter(torch.zeros(1, max_len, d))
        enc = nn.TransformerEncoderLayer(d, heads, 4 * d, batch_first=True)
        self.encoder = nn.TransformerEncoder(enc, layers)
        self.out = nn.Linear(d, classes)

    def forward(self, tokens, lengths=None):
        pad = tokens == self.pad_id
        max_len = int((~pad).sum(1).max())  # SYNC
        tokens, pad = tokens[:, :max_len], pad[:, :max_len]
        x = self.emb(tokens) + self.pos[:, :max_len]
        x = self.encoder(x, src_key_padding_mask=pad)
        keep = (~pad).unsqueeze(-1).float()
        return self.out((x * keep).sum(1) / keep.sum(1).clamp(min=1))
