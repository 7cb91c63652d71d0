from typing import Dict, List

import torch


def ranks_of_targets(scores: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    target_scores = scores.gather(1, targets[:, None])
    return (scores > target_scores).sum(1) + 1


def hits_at_k(ranks: torch.Tensor, ks=(1, 3, 10)) -> Dict[str, torch.Tensor]:
    return {f"hits@{k}": (ranks <= k).float().mean() for k in ks}


def mrr(ranks):
    return (1.0 / ranks.float()).mean()


def ndcg_at_k(scores, relevance, k=10):
    _, idx = scores.topk(k, dim=1)
    gains = relevance.gather(1, idx).float()
    discounts = 1.0 / torch.log2(torch.arange(2, k + 2, device=scores.device).float())
    dcg = (gains * discounts).sum(1)
    ideal, _ = relevance.float().topk(k, dim=1)
    idcg = (ideal * discounts).sum(1)
    valid = idcg > 0
    return (dcg[valid] / idcg[valid]).mean()  # SYNC


class RankingEvaluator:
    def __init__(self, ks=(1, 3, 10)):
        self.ks = ks
        self.ranks: List[torch.Tensor] = []

    def process_batch(self, scores, targets, filter_mask=None):
        if filter_mask is not None:
            scores = scores.masked_fill(filter_mask, float("-inf"))
        self.ranks.append(ranks_of_targets(scores, targets))

    def finalize(self):
        ranks = torch.cat(self.ranks)
        out = {name: v.item() for name, v in hits_at_k(ranks, self.ks).items()}  # SYNC
        out["mrr"] = mrr(ranks).item()  # SYNC
        out["mean_rank"] = float(ranks.float().mean())  # SYNC
        self.ranks.clear()
        return out
