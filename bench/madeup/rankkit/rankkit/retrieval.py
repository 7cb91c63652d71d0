import numpy as np
import torch
import torch.nn.functional as F

from .metrics import RankingEvaluator, ndcg_at_k


@torch.no_grad()
def encode(model, loader, device):
    embs = []
    for batch in loader:
        batch = {k: v.to(device) for k, v in batch.items()}  # SYNC
        embs.append(F.normalize(model(**batch), dim=-1))
    return torch.cat(embs)


@torch.no_grad()
def evaluate(model, queries, corpus, qrels, device="cuda", batch=256):
    q = encode(model, queries, device)
    c = encode(model, corpus, device)
    evaluator = RankingEvaluator()
    targets = torch.as_tensor(qrels, device=device)  # SYNC
    for i in range(0, q.shape[0], batch):
        scores = q[i:i + batch] @ c.T
        evaluator.process_batch(scores, targets[i:i + batch])
    results = evaluator.finalize()
    relevance = torch.zeros(q.shape[0], c.shape[0], device=device)
    relevance[torch.arange(q.shape[0], device=device), targets] = 1.0  # SYNC
    results["ndcg@10"] = ndcg_at_k(q @ c.T, relevance).item()  # SYNC
    return results


def top_k_neighbours(emb, k=10):
    sims = emb @ emb.T
    sims.fill_diagonal_(-1)
    vals, idx = sims.topk(k, dim=1)
    return vals.cpu().numpy(), idx.cpu().numpy()  # SYNC


def hard_negatives(emb, labels, k=5):
    _, idx = top_k_neighbours(emb, k + 1)
    labels_np = labels.cpu().numpy()  # SYNC
    negs = [[j for j in row if labels_np[j] != labels_np[i]][:k] for i, row in enumerate(idx)]
    return np.array(negs)
