import torch
import torch.nn.functional as F

from .sampling import ClipSampler, temporal_subsample


@torch.no_grad()
def multi_clip_eval(model, dataset, device="cuda", clip_len=16, num_clips=4):
    sampler = ClipSampler(clip_len, num_clips)
    correct = torch.zeros((), device=device)
    total = 0
    for video, label in dataset:
        video = video.to(device)  # SYNC
        clips = sampler(video)
        logits = model(clips).softmax(-1).mean(0)
        correct += (logits.argmax() == label).float()
        total += 1
    return (correct / total).item()  # SYNC


@torch.no_grad()
def dense_features(model, video, clip_len=16):
    video = temporal_subsample(video, clip_len * 4)
    feats = []
    for s in range(0, video.shape[1] - clip_len + 1, clip_len):
        feats.append(model(video[None, :, s:s + clip_len]))
    feats = torch.cat(feats)
    return F.normalize(feats, dim=-1)


def train_step(model, opt, video, label, clip_len=16):
    clip = temporal_subsample(video, clip_len)
    loss = F.cross_entropy(model(clip[None]), label[None])
    opt.zero_grad()
    loss.backward()
    opt.step()
    return loss.detach()


def fit(model, loader, opt, device="cuda", epochs=1):
    for _ in range(epochs):
        running = 0.0
        for i, (video, label) in enumerate(loader):
            video, label = video.to(device), label.to(device)  # SYNC
            running += train_step(model, opt, video[0], label[0])
            if i % 50 == 49:
                print(f"loss {running / 50:.3f}")  # SYNC
                running = 0.0
