"""open-clip-torch 3.3.0 workloads: CLIP / CoCa / SigLIP training steps from create_model(...,
pretrained=None), zero-shot evaluation, and its own training loop (open_clip_train.train) driven
over a few synthetic batches. Random init; images and tokenized captions on the device.
"""

from __future__ import annotations

import argparse

from harness import Workload

B = 8
CAPTIONS = ["a photo of a dog", "a diagram of a circuit", "two cats on a sofa", "a red car at night",
            "a bowl of soup", "mountains under snow", "a person riding a bike", "an empty street"]


def _tokens(open_clip, model_name, device):
    tok = open_clip.get_tokenizer(model_name)
    return tok, tok(CAPTIONS[:B]).to(device)


def _clip_workload(torch, device, name, model_name, loss_kind):
    import open_clip

    model = open_clip.create_model(model_name, pretrained=None, device=device, output_dict=True)
    tok, texts = _tokens(open_clip, model_name, device)
    gen = torch.Generator(device=device).manual_seed(0)
    size = model.visual.image_size
    size = size if isinstance(size, tuple) else (size, size)
    if loss_kind == "siglip":
        loss = open_clip.loss.SigLipLoss()
        bias = torch.nn.Parameter(torch.full((), -10.0, device=device))
    else:
        loss = open_clip.loss.ClipLoss(cache_labels=True)
        bias = None
    classifier = {}

    def train():
        images = torch.rand(B, 3, *size, device=device, generator=gen)
        out = model(images, texts)
        if bias is not None:
            return loss(out["image_features"], out["text_features"], out["logit_scale"], bias)
        return loss(out["image_features"], out["text_features"], out["logit_scale"])

    def evaluate():
        if "w" not in classifier:
            classifier["w"] = open_clip.build_zero_shot_classifier(
                model, tok, ["dog", "cat", "car"], ["a photo of a {}.", "a drawing of a {}."], device=device)
        images = torch.rand(B, 3, *size, device=device, generator=gen)
        feats = model.encode_image(images, normalize=True)
        return (100.0 * feats @ classifier["w"]).softmax(dim=-1)

    params = list(model.parameters()) + ([bias] if bias is not None else [])
    return Workload(name, train=train, modules=[model], params=params, eval=evaluate)


def build_vit_b32_clip(torch, device):
    return _clip_workload(torch, device, "vit_b32_clip", "ViT-B-32", "clip")


def build_rn50_clip(torch, device):
    return _clip_workload(torch, device, "rn50_clip", "RN50", "clip")


def build_vit_b32_siglip(torch, device):
    return _clip_workload(torch, device, "vit_b32_siglip", "ViT-B-32", "siglip")


def build_coca(torch, device):
    """CoCa: contrastive + captioning loss; eval encodes images and texts (generate() needs
    transformers' beam-search classes that open_clip 3.3.0 no longer finds in transformers 5)."""
    import open_clip

    model = open_clip.create_model("coca_ViT-B-32", pretrained=None, device=device, output_dict=True)
    _tok, texts = _tokens(open_clip, "coca_ViT-B-32", device)
    loss = open_clip.loss.CoCaLoss(caption_loss_weight=2.0, clip_loss_weight=1.0)
    gen = torch.Generator(device=device).manual_seed(0)

    def train():
        out = model(torch.rand(B, 3, 224, 224, device=device, generator=gen), texts)
        clip_loss, caption_loss = loss(**out)
        return clip_loss + caption_loss

    def evaluate():
        return model(torch.rand(2, 3, 224, 224, device=device, generator=gen), texts[:2])

    return Workload("coca", train=train, modules=[model], eval=evaluate)


class _Loader:
    """What open_clip_train reads from its DataInfo: batches, counts and set_epoch."""

    def __init__(self, batches):
        self.batches = batches
        self.num_batches = len(batches)
        self.num_samples = sum(len(b[0]) for b in batches)

    def __iter__(self):
        return iter(self.batches)


class _DataInfo:
    def __init__(self, batches):
        self.dataloader = _Loader(batches)

    def set_epoch(self, epoch):
        pass


def build_train_loop(torch, device):
    """open_clip_train.train.train_one_epoch + evaluate, as main.py runs them (amp on CUDA)."""
    import open_clip
    from open_clip_train.scheduler import cosine_lr
    from open_clip_train.train import evaluate, train_one_epoch

    model = open_clip.create_model("ViT-B-32", pretrained=None, device=device, output_dict=True)
    _tok, texts = _tokens(open_clip, "ViT-B-32", device)
    gen = torch.Generator(device=device).manual_seed(0)
    batches = [(torch.rand(B, 3, 224, 224, device=device, generator=gen), texts) for _ in range(4)]
    cuda = device.type == "cuda"
    args = argparse.Namespace(
        device=str(device), precision="amp" if cuda else "fp32", accum_freq=1, distill=False, skip_scheduler=False,
        grad_clip_norm=1.0, horovod=False, world_size=1, rank=0, local_rank=0, batch_size=B, log_every_n_steps=2,
        wandb=False, val_frequency=1, epochs=1, distributed=False, save_logs=False, checkpoint_path="",
        zeroshot_frequency=0, model="ViT-B-32", siglip=False, local_loss=False, gather_with_grad=False,
        coca_caption_loss_weight=2.0, coca_contrastive_loss_weight=1.0, loss_dist_impl=None)
    loss = open_clip.create_loss(args)
    opt = torch.optim.AdamW(model.parameters(), lr=5e-4, weight_decay=0.2)
    scaler = torch.amp.GradScaler("cuda") if cuda else None
    scheduler = cosine_lr(opt, 5e-4, 2, 100)
    data = {"train": _DataInfo(batches), "val": _DataInfo(batches[:2])}
    epoch = [0]

    def one_epoch():
        train_one_epoch(model, data, loss, epoch[0], opt, scaler, scheduler, None, args)
        epoch[0] += 1
        return evaluate(model, data, epoch[0], args)

    return Workload("train_loop", cases=[("train_one_epoch+evaluate", one_epoch)])


WORKLOADS = [build_vit_b32_clip, build_rn50_clip, build_vit_b32_siglip, build_coca, build_train_loop]
