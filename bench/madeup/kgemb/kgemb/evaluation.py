import torch


def compute_ranks(scores, true_idx):
    true_scores = scores.gather(1, true_idx.unsqueeze(1))
    optimistic = (scores > true_scores).sum(dim=1) + 1
    pessimistic = (scores >= true_scores).sum(dim=1)
    return 0.5 * (optimistic + pessimistic).float()


class RankBasedEvaluator:
    def __init__(self, ks=(1, 3, 10), filtered=True):
        self.ks = ks
        self.filtered = filtered
        self.ranks = []

    def process_batch(self, model, hrt_batch, all_pos=None):
        scores = model.score_t(hrt_batch[:, :2])
        if self.filtered and all_pos is not None:
            for j, (h, r, t) in enumerate(hrt_batch.tolist()):  # SYNC
                mask = (all_pos[:, 0] == h) & (all_pos[:, 1] == r) & (all_pos[:, 2] != t)
                scores[j, all_pos[mask, 2]] = float("-inf")  # SYNC
        self.ranks.append(compute_ranks(scores, hrt_batch[:, 2]))

    def finalize(self):
        ranks = torch.cat(self.ranks)
        result = {"mrr": (1.0 / ranks).mean().item()}  # SYNC
        for k in self.ks:
            result[f"hits@{k}"] = float((ranks <= k).float().mean())  # SYNC
        self.ranks.clear()
        return result

    def evaluate(self, model, mapped_triples, batch_size=128):
        model.eval()
        with torch.no_grad():
            for i in range(0, mapped_triples.shape[0], batch_size):
                batch = mapped_triples[i:i + batch_size].to(model.device)  # SYNC
                self.process_batch(model, batch, all_pos=mapped_triples.to(model.device))  # SYNC
        return self.finalize()
