import numpy as np
import torch
from torch import nn


class CatEmbeddings(nn.Module):
    def __init__(self, column_idx, embed_input, dropout=0.1):
        super().__init__()
        self.column_idx = column_idx
        self.embed_input = embed_input
        self.embs = nn.ModuleDict({col: nn.Embedding(n + 1, dim, padding_idx=0) for col, n, dim in embed_input})
        self.drop = nn.Dropout(dropout)

    def forward(self, X):
        parts = [self.embs[col](X[:, self.column_idx[col]].long()) for col, _, _ in self.embed_input]
        return self.drop(torch.cat(parts, 1))


class ContNorm(nn.Module):
    def __init__(self, column_idx, continuous_cols):
        super().__init__()
        self.cont_idx = [column_idx[c] for c in continuous_cols]
        self.norm = nn.BatchNorm1d(len(continuous_cols))

    def forward(self, X):
        return self.norm(X[:, self.cont_idx].float())  # SYNC


class TabMlp(nn.Module):
    def __init__(self, column_idx, embed_input, continuous_cols, hidden=(64, 32)):
        super().__init__()
        self.cat = CatEmbeddings(column_idx, embed_input)
        self.cont = ContNorm(column_idx, continuous_cols)
        dims = [sum(d for _, _, d in embed_input) + len(continuous_cols)] + list(hidden)
        self.mlp = nn.Sequential(*[nn.Sequential(nn.Linear(a, b), nn.ReLU()) for a, b in zip(dims[:-1], dims[1:])])
        self.output_dim = dims[-1]

    def forward(self, X):
        return self.mlp(torch.cat([self.cat(X), self.cont(X)], 1))


class WideDeep(nn.Module):
    def __init__(self, deeptabular, pred_dim=1):
        super().__init__()
        self.deeptabular = deeptabular
        self.head = nn.Linear(deeptabular.output_dim, pred_dim)

    def forward(self, X):
        return self.head(self.deeptabular(X["deeptabular"]))


class Trainer:
    def __init__(self, model, objective="binary", lr=1e-3, device=None):
        self.device = device or ("cuda" if torch.cuda.is_available() else "cpu")
        self.model = model.to(self.device)  # SYNC
        self.objective = objective
        self.opt = torch.optim.AdamW(model.parameters(), lr=lr)
        self.history = {"train_loss": [], "train_acc": []}

    def _loss(self, y_pred, y):
        if self.objective == "binary":
            return nn.functional.binary_cross_entropy_with_logits(y_pred.squeeze(1), y.float())
        return nn.functional.cross_entropy(y_pred, y.long())

    def _acc(self, y_pred, y):
        if self.objective == "binary":
            return ((y_pred.squeeze(1) > 0).long() == y).float().mean()
        return (y_pred.argmax(1) == y).float().mean()

    def fit(self, X_tab, target, n_epochs=1, batch_size=64):
        X_t = torch.from_numpy(X_tab)
        y_t = torch.from_numpy(target)
        n = len(X_t)
        for epoch in range(n_epochs):
            perm = np.random.permutation(n)
            losses, accs = [], []
            for i in range(0, n, batch_size):
                idx = perm[i:i + batch_size]
                X = {"deeptabular": X_t[idx].to(self.device)}  # SYNC
                y = y_t[idx].to(self.device)  # SYNC
                y_pred = self.model(X)
                loss = self._loss(y_pred, y)
                self.opt.zero_grad()
                loss.backward()
                self.opt.step()
                losses.append(loss.item())  # SYNC
                accs.append(self._acc(y_pred, y))
            self.history["train_loss"].append(np.mean(losses))
            self.history["train_acc"].append(torch.stack(accs).mean().item())  # SYNC
        return self

    def predict_proba(self, X_tab, batch_size=256):
        self.model.eval()
        X_t = torch.from_numpy(X_tab)
        out = []
        with torch.no_grad():
            for i in range(0, len(X_t), batch_size):
                logits = self.model({"deeptabular": X_t[i:i + batch_size].to(self.device)})  # SYNC
                out.append(torch.sigmoid(logits).cpu().numpy())  # SYNC
        return np.vstack(out)
