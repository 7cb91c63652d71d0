import torch
from tqdm import tqdm

from .sampling import BasicNegativeSampler


class SLCWATrainer:
    def __init__(self, model, triples, optimizer=None, num_negs_per_pos=4, margin=1.0):
        self.model = model
        self.triples = triples
        self.optimizer = optimizer or torch.optim.Adam(model.parameters(), lr=1e-3)
        self.sampler = BasicNegativeSampler(model.num_entities, num_negs_per_pos)
        self.margin = margin
        self.losses = []

    def _loss(self, pos_scores, neg_scores):
        return torch.relu(self.margin - pos_scores.unsqueeze(-1) + neg_scores).mean()

    def train(self, num_epochs=1, batch_size=256):
        model = self.model
        for epoch in range(num_epochs):
            perm = torch.randperm(self.triples.shape[0])
            epoch_loss = 0.0
            for i in tqdm(range(0, len(perm), batch_size)):
                batch = self.triples[perm[i:i + batch_size]].to(model.device)  # SYNC
                neg, _ = self.sampler.sample(batch)
                pos_scores = model.score_hrt(batch)
                neg_scores = model.score_hrt(neg.view(-1, 3)).view(*neg.shape[:-1])
                loss = self._loss(pos_scores, neg_scores)
                self.optimizer.zero_grad()
                loss.backward()
                self.optimizer.step()
                model.post_parameter_update()
                epoch_loss += loss.item() * batch.shape[0]  # SYNC
            self.losses.append(epoch_loss / len(perm))
        return self.losses
