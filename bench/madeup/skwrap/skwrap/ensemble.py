import numpy as np
import torch

from skwrap.estimator import NeuralClassifier


class BaggedClassifier:
    def __init__(self, n_members=3, **kwargs):
        self.members = [NeuralClassifier(**kwargs) for _ in range(n_members)]

    def fit(self, X, y):
        rng = np.random.default_rng(0)
        for m in self.members:
            idx = rng.integers(0, len(X), len(X))
            m.fit(X[idx], y[idx])
        return self

    def predict_proba(self, X):
        return np.mean([m.predict_proba(X) for m in self.members], axis=0)

    def uncertainty(self, X):
        probs = torch.stack([torch.from_numpy(m.predict_proba(X)) for m in self.members])
        return probs.var(0).sum(-1).numpy()
