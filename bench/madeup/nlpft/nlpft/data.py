import torch
from torch.utils.data import Dataset


class TextDataset(Dataset):
    def __init__(self, encodings, labels):
        self.encodings = encodings
        self.labels = labels

    def __len__(self):
        return len(self.labels)

    def __getitem__(self, idx):
        item = {k: torch.tensor(v[idx]) for k, v in self.encodings.items()}
        item["labels"] = torch.tensor(self.labels[idx])
        return item


def dynamic_padding_collate(features, pad_id=0):
    max_len = max(len(f["input_ids"]) for f in features)
    batch = {}
    for key in ("input_ids", "attention_mask"):
        pad = pad_id if key == "input_ids" else 0
        batch[key] = torch.stack([torch.cat([f[key], f[key].new_full((max_len - len(f[key]),), pad)]) for f in features])
    batch["labels"] = torch.stack([f["labels"] for f in features])
    return batch


def trim_batch(input_ids, attention_mask):
    keep = int(attention_mask.sum(dim=1).max())  # SYNC
    return input_ids[:, :keep], attention_mask[:, :keep]
