import numpy as np
import torch
import torch.nn.functional as F

from skwrap.nets import mlp


class NeuralClassifier:
    def __init__(self, hidden=64, epochs=10, batch_size=128, lr=1e-3, device=None, patience=3):
        self.hidden = hidden
        self.epochs = epochs
        self.batch_size = batch_size
        self.lr = lr
        self.device = device or ("cuda" if torch.cuda.is_available() else "cpu")
        self.patience = patience

    def _to_tensor(self, X, dtype=torch.float32):
        return torch.as_tensor(np.asarray(X), dtype=dtype, device=self.device)  # SYNC

    def fit(self, X, y, X_val=None, y_val=None):
        self.classes_ = np.unique(y)
        Xt = self._to_tensor(X)
        yt = self._to_tensor(np.searchsorted(self.classes_, y), torch.long)
        self.model_ = mlp(Xt.shape[1], self.hidden, len(self.classes_)).to(self.device)  # SYNC
        opt = torch.optim.Adam(self.model_.parameters(), lr=self.lr)
        best, wait = np.inf, 0
        n = Xt.shape[0]
        for epoch in range(self.epochs):
            perm = torch.randperm(n, device=Xt.device)
            self.model_.train()
            for i in range(0, n, self.batch_size):
                idx = perm[i:i + self.batch_size]
                loss = F.cross_entropy(self.model_(Xt[idx]), yt[idx])
                opt.zero_grad()
                loss.backward()
                opt.step()
            if X_val is not None:
                val = self.score_loss(X_val, y_val)
                if val < best - 1e-4:
                    best, wait = val, 0
                else:
                    wait += 1
                    if wait >= self.patience:
                        break
        return self

    @torch.no_grad()
    def score_loss(self, X, y):
        self.model_.eval()
        logits = self.model_(self._to_tensor(X))
        yt = self._to_tensor(np.searchsorted(self.classes_, y), torch.long)
        return F.cross_entropy(logits, yt).item()  # SYNC

    @torch.no_grad()
    def predict_proba(self, X):
        self.model_.eval()
        out = []
        Xt = self._to_tensor(X)
        for i in range(0, Xt.shape[0], self.batch_size):
            out.append(torch.softmax(self.model_(Xt[i:i + self.batch_size]), -1))
        return torch.cat(out).cpu().numpy()  # SYNC

    def predict(self, X):
        return self.classes_[self.predict_proba(X).argmax(1)]
