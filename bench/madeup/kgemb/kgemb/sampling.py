import torch


class BasicNegativeSampler:
    def __init__(self, num_entities, num_negs_per_pos=1, filtered=False, known=None):
        self.num_entities = num_entities
        self.num_negs_per_pos = num_negs_per_pos
        self.filtered = filtered
        self.known = known

    def corrupt_batch(self, positive_batch):
        batch_shape = positive_batch.shape[:-1]
        neg = positive_batch.view(-1, 3).repeat_interleave(self.num_negs_per_pos, dim=0)
        side = torch.randint(2, size=(neg.shape[0],), device=neg.device) * 2
        rnd = torch.randint(self.num_entities - 1, size=(neg.shape[0],), device=neg.device)
        cur = neg[torch.arange(neg.shape[0], device=neg.device), side]
        rnd = rnd + (rnd >= cur).long()
        neg[torch.arange(neg.shape[0], device=neg.device), side] = rnd
        return neg.view(*batch_shape, self.num_negs_per_pos, 3)

    def sample(self, positive_batch):
        neg = self.corrupt_batch(positive_batch)
        if not self.filtered:
            return neg, None
        keep = ~self._is_known(neg.view(-1, 3))
        return neg.view(-1, 3)[keep], keep  # SYNC

    def _is_known(self, triples):
        known = self.known.to(triples.device)  # SYNC
        hits = (triples.unsqueeze(1) == known.unsqueeze(0)).all(dim=-1)
        return hits.any(dim=1)
