import torch
import torch.nn.functional as F

from .sampling import temporal_subsample


def dense_features(model, video, clip_len=16):
    return model(temporal_subsample(video, clip_len * 4))


def train_step(model, opt, video, label, clip_len=16):
    clip = temporal_subsample(video, clip_len)
    loss = F.cross_entropy(model(clip[None]), label[None])
    opt.zero_grad()
    loss.backward()
    opt.step()
    return loss.detach()


def fit(model, loader, opt, device="cuda"):
    for video, label in loader:
        video, label = video.to(device), label.to(device)  # error: TSL204
        train_step(model, opt, video[0], label[0])
