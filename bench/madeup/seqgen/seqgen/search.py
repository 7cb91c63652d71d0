from dataclasses import dataclass
from typing import List, Optional

import torch
import torch.nn.functional as F


@dataclass
class Hypothesis:
    tokens: torch.Tensor
    score: float


@dataclass
class SearchState:
    tokens: torch.Tensor
    scores: torch.Tensor
    finished: torch.Tensor
    lengths: Optional[torch.Tensor] = None


def top_k_top_p_filtering(logits, top_k=0, top_p=1.0, filter_value=-float("inf")):
    if top_k > 0:
        top_k = min(top_k, logits.size(-1))
        indices_to_remove = logits < torch.topk(logits, top_k)[0][..., -1, None]
        logits = logits.masked_fill(indices_to_remove, filter_value)
    if top_p < 1.0:
        sorted_logits, sorted_indices = torch.sort(logits, descending=True)
        cumulative_probs = torch.cumsum(F.softmax(sorted_logits, dim=-1), dim=-1)
        sorted_indices_to_remove = cumulative_probs > top_p
        sorted_indices_to_remove[..., 1:] = sorted_indices_to_remove[..., :-1].clone()
        sorted_indices_to_remove[..., 0] = 0
        indices_to_remove = sorted_indices_to_remove.scatter(1, sorted_indices, sorted_indices_to_remove)
        logits[indices_to_remove] = filter_value
    return logits


def init_state(batch_size, bos_id, device):
    tokens = torch.full((batch_size, 1), bos_id, dtype=torch.long, device=device)
    scores = torch.zeros(batch_size, device=device)
    finished = torch.zeros(batch_size, dtype=torch.bool, device=device)
    return SearchState(tokens, scores, finished)


def advance(state: SearchState, logits, eos_id, temperature=1.0):
    probs = F.softmax(logits / temperature, dim=-1)
    next_tokens = torch.multinomial(probs, num_samples=1).squeeze(1)
    next_tokens = torch.where(state.finished, torch.full_like(next_tokens, eos_id), next_tokens)
    logp = torch.log(probs.gather(1, next_tokens[:, None]).squeeze(1))
    state.scores = state.scores + logp * (~state.finished)
    state.tokens = torch.cat([state.tokens, next_tokens[:, None]], dim=1)
    state.finished = state.finished | (next_tokens == eos_id)
    return state


@torch.no_grad()
def sample(model, prompt, max_new_tokens=64, eos_id=2, top_k=50, top_p=0.9):
    state = init_state(prompt.shape[0], 1, prompt.device)
    state.tokens = prompt
    for _ in range(max_new_tokens):
        logits = model(state.tokens)[:, -1, :]
        logits = top_k_top_p_filtering(logits, top_k=top_k, top_p=top_p)
        state = advance(state, logits, eos_id)
        if state.finished.all():  # SYNC
            break
    return state


@torch.no_grad()
def beam_search(model, src, beam_size=4, max_len=50, bos_id=1, eos_id=2, length_penalty=1.0):
    device = src.device
    memory = model.encode(src)
    memory = memory.repeat_interleave(beam_size, dim=0)
    tokens = torch.full((beam_size, 1), bos_id, dtype=torch.long, device=device)
    scores = torch.zeros(beam_size, device=device)
    scores[1:] = -1e9
    done: List[Hypothesis] = []
    for step in range(max_len):
        logits = model.decode(tokens, memory[: tokens.shape[0]])[:, -1]
        logp = F.log_softmax(logits, dim=-1)
        cand = (scores[:, None] + logp).view(-1)
        top_scores, top_idx = cand.topk(beam_size)
        beam_idx = top_idx // logp.shape[-1]
        tok_idx = top_idx % logp.shape[-1]
        tokens = torch.cat([tokens[beam_idx], tok_idx[:, None]], dim=1)
        scores = top_scores
        is_eos = tok_idx == eos_id
        if is_eos.any():  # SYNC
            for b in is_eos.nonzero().flatten().tolist():  # SYNC
                done.append(Hypothesis(tokens[b], scores[b].item() / (tokens.shape[1] ** length_penalty)))  # SYNC
            keep = ~is_eos
            tokens, scores = tokens[keep], scores[keep]  # SYNC
        if len(done) >= beam_size or tokens.shape[0] == 0:
            break
    if not done:
        best = scores.argmax()
        return tokens[best]  # SYNC
    return max(done, key=lambda h: h.score).tokens


def lengths_from_eos(tokens, eos_id):
    is_eos = tokens == eos_id
    first = torch.where(is_eos.any(1), is_eos.float().argmax(1), torch.full_like(tokens[:, 0], tokens.shape[1]))
    return first


def strip_padding(state: SearchState, eos_id):
    lengths = lengths_from_eos(state.tokens, eos_id)
    state.lengths = lengths
    max_len = int(lengths.max())  # SYNC
    return state.tokens[:, :max_len]
