import torch
import torch.nn.functional as F


def greedy_decode(model, src, src_mask, max_len, bos_id, eos_id):
    memory = model.encode(src, src_mask)
    ys = torch.full((src.size(0), 1), bos_id, dtype=torch.long, device=src.device)
    finished = torch.zeros(src.size(0), dtype=torch.bool, device=src.device)
    for _ in range(max_len - 1):
        logits = model.decode(memory, src_mask, ys)[:, -1]
        next_word = logits.argmax(dim=-1)
        next_word = next_word.masked_fill(finished, eos_id)
        ys = torch.cat([ys, next_word.unsqueeze(1)], dim=1)
        finished |= next_word == eos_id
        if finished.all():  # SYNC
            break
    return ys


def beam_search(model, src, beam_size=4, max_len=50, bos_id=1, eos_id=2, length_penalty=0.6):
    memory = model.encode(src, None).repeat_interleave(beam_size, dim=0)
    batch = src.size(0)
    scores = torch.zeros(batch, beam_size, device=src.device)
    scores[:, 1:] = float("-inf")
    tokens = torch.full((batch * beam_size, 1), bos_id, dtype=torch.long, device=src.device)
    done = [False] * batch
    hyps = [[] for _ in range(batch)]
    for step in range(max_len):
        logp = F.log_softmax(model.decode(memory, None, tokens)[:, -1], dim=-1)
        vocab = logp.size(-1)
        cand = (scores.view(-1, 1) + logp).view(batch, -1)
        top_scores, top_idx = cand.topk(beam_size, dim=-1)
        beam_idx = top_idx // vocab
        word_idx = top_idx % vocab
        base = (torch.arange(batch, device=src.device) * beam_size).unsqueeze(1)
        tokens = torch.cat([tokens[(base + beam_idx).view(-1)], word_idx.view(-1, 1)], dim=1)
        scores = top_scores
        is_eos = word_idx == eos_id
        for b in range(batch):
            if done[b]:
                continue
            for k in range(beam_size):
                if is_eos[b, k]:  # SYNC
                    lp = ((5 + step + 1) / 6) ** length_penalty
                    hyps[b].append((scores[b, k].item() / lp, tokens[b * beam_size + k]))  # SYNC
                    scores[b, k] = float("-inf")
            if len(hyps[b]) >= beam_size:
                done[b] = True
        if all(done):
            break
    return [max(h, key=lambda x: x[0])[1] if h else None for h in hyps]


def ctc_greedy(log_probs, lengths, blank=0):
    best = log_probs.argmax(dim=-1)
    out = []
    for seq, n in zip(best, lengths):
        seq = seq[:n]  # SYNC
        seq = torch.unique_consecutive(seq)  # SYNC
        out.append(seq[seq != blank].tolist())  # SYNC
    return out
