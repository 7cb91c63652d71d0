"""torchgeo 0.8.1 workloads: its Lightning trainers (classification, semantic segmentation, regression,
object detection, instance segmentation, change detection, SimCLR/MoCo/BYOL) stepped as Lightning
steps them and fitted with ``lightning.Trainer`` on a synthetic NonGeoDataModule, its models
(weights=None), losses, kornia-based transforms and geo samplers over an in-memory GeoDataset.
Random init, synthetic multispectral images made on the device; no files, no downloads.
"""

from __future__ import annotations

from harness import Workload, figure_logger

B, CH, H = 4, 4, 64  # batch, bands, side
NC = 5  # classes


def _images(torch, device, gen, b=B, c=CH, h=H):
    return torch.rand(b, c, h, h, device=device, generator=gen)


def _task_workload(torch, device, name, task, make_batch, val=True, predict=True):
    """A torchgeo BaseTask as Lightning drives it: training_step (the harness does backward and the
    optimizer step), validation_step in eval mode, predict_step as a case. batch_idx 10 in
    validation: the figure branch (batch_idx < 10) needs an attached Trainer (the fit workload has one).
    """
    task = task.to(device)
    step = [0]

    def train():
        step[0] += 1
        return task.training_step(make_batch(), step[0])

    def evaluate():
        return task.validation_step(make_batch(), 10)

    cases = []
    if predict:
        cases.append(("predict_step", lambda: task.predict_step(make_batch(), 0)))
    return Workload(name, train=train, modules=[task], eval=evaluate if val else None, cases=cases)


# ---- classification / segmentation / regression trainers --------------------------------------
def _cls_batch(torch, device, gen, task, c=CH, h=H):
    x = _images(torch, device, gen, c=c, h=h)
    if task == "multiclass":
        y = torch.randint(0, NC, (B,), device=device, generator=gen)
    elif task == "binary":
        y = torch.randint(0, 2, (B,), device=device, generator=gen)
    else:
        y = torch.randint(0, 2, (B, NC), device=device, generator=gen)
    return {"image": x, "label": y}


def build_classification_ce(torch, device):
    from torchgeo.trainers import ClassificationTask

    task = ClassificationTask(model="resnet18", in_channels=CH, task="multiclass", num_classes=NC, loss="ce",
                              class_weights=[1.0, 2.0, 1.0, 0.5, 1.0])
    gen = torch.Generator(device=device).manual_seed(0)
    return _task_workload(torch, device, "classification_ce", task,
                          lambda: _cls_batch(torch, device, gen, "multiclass"))


def build_classification_multilabel_bce(torch, device):
    from torchgeo.trainers import ClassificationTask

    task = ClassificationTask(model="efficientnet_b0", in_channels=CH, task="multilabel", num_labels=NC, loss="bce")
    gen = torch.Generator(device=device).manual_seed(0)
    return _task_workload(torch, device, "classification_multilabel_bce", task,
                          lambda: _cls_batch(torch, device, gen, "multilabel"))


def build_classification_binary_focal(torch, device):
    from torchgeo.trainers import ClassificationTask

    task = ClassificationTask(model="vit_tiny_patch16_224", in_channels=CH, task="binary", loss="focal",
                              freeze_backbone=True)
    if hasattr(task.model, "set_input_size"):  # timm ViT at the 64-pixel chips
        task.model.set_input_size(img_size=(H, H))
    gen = torch.Generator(device=device).manual_seed(0)
    return _task_workload(torch, device, "classification_binary_focal", task,
                          lambda: _cls_batch(torch, device, gen, "binary"))


def build_classification_jaccard(torch, device):
    from torchgeo.trainers import ClassificationTask

    task = ClassificationTask(model="resnet18", in_channels=CH, task="multiclass", num_classes=NC, loss="jaccard")
    gen = torch.Generator(device=device).manual_seed(0)
    return _task_workload(torch, device, "classification_jaccard", task,
                          lambda: _cls_batch(torch, device, gen, "multiclass"))


def _seg_batch(torch, device, gen, task, c=CH, h=H, ignore=None):
    x = _images(torch, device, gen, c=c, h=h)
    if task == "multiclass":
        y = torch.randint(0, NC, (B, h, h), device=device, generator=gen)
        if ignore is not None:
            y[:, :4] = ignore
    elif task == "binary":
        y = torch.randint(0, 2, (B, h, h), device=device, generator=gen)
    else:
        y = torch.randint(0, 2, (B, NC, h, h), device=device, generator=gen)
    return {"image": x, "mask": y}


def _seg(torch, device, name, task_kind, loss, **kwargs):
    from torchgeo.trainers import SemanticSegmentationTask

    num = {"multiclass": {"num_classes": NC}, "multilabel": {"num_labels": NC}}.get(task_kind, {})
    task = SemanticSegmentationTask(in_channels=CH, task=task_kind, loss=loss, **num, **kwargs)
    gen = torch.Generator(device=device).manual_seed(0)
    ignore = kwargs.get("ignore_index")
    return _task_workload(torch, device, name, task, lambda: _seg_batch(torch, device, gen, task_kind, ignore=ignore))


def build_segmentation_unet_ce(torch, device):
    return _seg(torch, device, "segmentation_unet_ce", "multiclass", "ce", model="unet", backbone="resnet18",
                ignore_index=0, class_weights=[0.5, 1.0, 1.0, 2.0, 1.0])


def build_segmentation_deeplab_bce(torch, device):
    return _seg(torch, device, "segmentation_deeplab_bce", "binary", "bce", model="deeplabv3+", backbone="resnet18")


def build_segmentation_fcn_jaccard(torch, device):
    return _seg(torch, device, "segmentation_fcn_jaccard", "multiclass", "jaccard", model="fcn", num_filters=16)


def build_segmentation_upernet_focal(torch, device):
    return _seg(torch, device, "segmentation_upernet_focal", "multilabel", "focal", model="upernet",
                backbone="resnet18", freeze_backbone=True)


def build_segmentation_segformer(torch, device):
    return _seg(torch, device, "segmentation_segformer", "multiclass", "focal", model="segformer", backbone="mit_b0",
                ignore_index=1)


def build_regression(torch, device):
    from torchgeo.trainers import RegressionTask

    task = RegressionTask(model="resnet18", in_channels=CH, num_outputs=1, loss="mse")
    gen = torch.Generator(device=device).manual_seed(0)

    def batch():
        return {"image": _images(torch, device, gen), "label": torch.rand(B, 1, device=device, generator=gen) * 10}

    return _task_workload(torch, device, "regression", task, batch)


def build_pixelwise_regression(torch, device):
    from torchgeo.trainers import PixelwiseRegressionTask

    task = PixelwiseRegressionTask(model="unet", backbone="resnet18", in_channels=CH, loss="mae")
    gen = torch.Generator(device=device).manual_seed(0)

    def batch():
        return {"image": _images(torch, device, gen), "mask": torch.rand(B, 1, H, H, device=device, generator=gen)}

    return _task_workload(torch, device, "pixelwise_regression", task, batch)


def build_pixelwise_regression_fcn(torch, device):
    from torchgeo.trainers import PixelwiseRegressionTask

    task = PixelwiseRegressionTask(model="fcn", in_channels=CH, loss="mse", num_filters=16)
    gen = torch.Generator(device=device).manual_seed(0)

    def batch():
        return {"image": _images(torch, device, gen), "mask": torch.rand(B, H, H, device=device, generator=gen)}

    return _task_workload(torch, device, "pixelwise_regression_fcn", task, batch)


# ---- detection / instance segmentation ---------------------------------------------------------
def _boxes(torch, device, gen, n, h=H * 2):
    xy = torch.rand(n, 2, device=device, generator=gen) * (h * 0.6)
    wh = torch.rand(n, 2, device=device, generator=gen) * (h * 0.3) + 8
    return torch.cat([xy, xy + wh], dim=1)


def _det_batch(torch, device, gen, masks=False, h=H * 2):
    x = torch.rand(2, 3, h, h, device=device, generator=gen)
    boxes = [_boxes(torch, device, gen, n) for n in (3, 2)]
    labels = [torch.randint(1, NC, (len(b),), device=device, generator=gen) for b in boxes]
    batch = {"image": x, "bbox_xyxy": boxes, "label": labels}
    if masks:
        ms = []
        for b in boxes:
            m = torch.zeros(len(b), h, h, dtype=torch.uint8, device=device)
            for i, (x0, y0, x1, y1) in enumerate(b.round().long().tolist()):
                m[i, y0:y1, x0:x1] = 1
            ms.append(m)
        batch["mask"] = ms
    return batch


def _detection(torch, device, name, model):
    from torchgeo.trainers import ObjectDetectionTask

    task = ObjectDetectionTask(model=model, backbone="resnet18", in_channels=3, num_classes=NC, trainable_layers=3)
    gen = torch.Generator(device=device).manual_seed(0)
    wl = _task_workload(torch, device, name, task, lambda: _det_batch(torch, device, gen))

    def epoch_metrics():  # what on_validation_epoch_end logs: mAP over the epoch's updates
        task.eval()
        with torch.no_grad():
            task.validation_step(_det_batch(torch, device, gen), 10)
        out = task.val_metrics.compute()
        task.val_metrics.reset()
        return out

    wl.cases = list(wl.cases) + [("val_metrics.compute", epoch_metrics)]
    return wl


def build_detection_faster_rcnn(torch, device):
    return _detection(torch, device, "detection_faster_rcnn", "faster-rcnn")


def build_detection_fcos(torch, device):
    return _detection(torch, device, "detection_fcos", "fcos")


def build_detection_retinanet(torch, device):
    return _detection(torch, device, "detection_retinanet", "retinanet")


def build_instance_segmentation(torch, device):
    from torchgeo.trainers import InstanceSegmentationTask

    task = InstanceSegmentationTask(model="mask-rcnn", backbone="resnet50", in_channels=3, num_classes=NC)
    gen = torch.Generator(device=device).manual_seed(0)

    return _task_workload(torch, device, "instance_segmentation", task,
                          lambda: _det_batch(torch, device, gen, masks=True))  # as collate_fn_detection gives


# ---- change detection ---------------------------------------------------------------------------
def _change(torch, device, name, model, task_kind="binary", loss="bce", c=3, h=H, **kwargs):
    from torchgeo.trainers import ChangeDetectionTask

    num = {"num_classes": NC} if task_kind == "multiclass" else {}
    task = ChangeDetectionTask(model=model, in_channels=c, task=task_kind, loss=loss, **num, **kwargs)
    gen = torch.Generator(device=device).manual_seed(0)

    def batch():
        x = torch.rand(B, 2, c, h, h, device=device, generator=gen)
        hi = NC if task_kind == "multiclass" else 2
        return {"image": x, "mask": torch.randint(0, hi, (B, 1, h, h), device=device, generator=gen)}

    return _task_workload(torch, device, name, task, batch)


def build_change_unet_bce(torch, device):
    return _change(torch, device, "change_unet_bce", "unet", backbone="resnet18",
                   pos_weight=torch.tensor([2.0]))


def build_change_fcsiamdiff_dice(torch, device):
    return _change(torch, device, "change_fcsiamdiff_dice", "fcsiamdiff", loss="dice", backbone="resnet18")


def build_change_fcsiamconc_ce(torch, device):
    return _change(torch, device, "change_fcsiamconc_ce", "fcsiamconc", task_kind="multiclass", loss="ce",
                   backbone="resnet18", ignore_index=0)


def build_change_changevit(torch, device):
    return _change(torch, device, "change_changevit", "changevit", loss="focal", backbone="vit_tiny_patch16_224")


def build_change_btc(torch, device):
    return _change(torch, device, "change_btc", "btc", loss="jaccard", backbone="swin_tiny")


# ---- self-supervised trainers -------------------------------------------------------------------
def build_simclr(torch, device):
    from torchgeo.trainers import SimCLRTask

    task = SimCLRTask(model="resnet18", in_channels=CH, version=2, layers=3, hidden_dim=64, output_dim=32,
                      memory_bank_size=64, size=48)
    gen = torch.Generator(device=device).manual_seed(0)
    return _task_workload(torch, device, "simclr", task, lambda: {"image": _images(torch, device, gen, b=8)},
                          val=False, predict=False)


def build_moco_v2(torch, device):
    from torchgeo.trainers import MoCoTask

    task = MoCoTask(model="resnet18", in_channels=CH, version=2, layers=2, hidden_dim=64, output_dim=32,
                    memory_bank_size=64, size=48)
    gen = torch.Generator(device=device).manual_seed(0)
    return _task_workload(torch, device, "moco_v2", task,
                          lambda: {"image": _images(torch, device, gen, b=8, c=2 * CH)}, val=False, predict=False)


def build_byol(torch, device):
    from torchgeo.trainers import BYOLTask

    task = BYOLTask(model="resnet18", in_channels=CH)
    gen = torch.Generator(device=device).manual_seed(0)
    return _task_workload(torch, device, "byol", task, lambda: {"image": _images(torch, device, gen, b=4, h=96)},
                          predict=False)


# ---- models ------------------------------------------------------------------------------------
def _model_workload(torch, device, name, model, make_input, reduce=None):
    model = model.to(device)
    gen = torch.Generator(device=device).manual_seed(0)

    def out():
        y = model(*make_input(gen))
        return reduce(y) if reduce is not None else y

    def train():
        y = out()
        return y.float().pow(2).mean()

    return Workload(name, train=train, modules=[model], eval=out)


def build_model_farseg(torch, device):
    from torchgeo.models import FarSeg
    model = FarSeg(backbone="resnet18", classes=NC, backbone_pretrained=False)
    return _model_workload(torch, device, "model_farseg", model, lambda gen: (_images(torch, device, gen, c=3),))


def build_model_changestar(torch, device):
    from torchgeo.models import ChangeStarFarSeg

    model = ChangeStarFarSeg(backbone="resnet18", classes=NC, backbone_pretrained=False)
    return _model_workload(torch, device, "model_changestar", model,
                           lambda gen: (torch.rand(B, 2, 3, H, H, device=device, generator=gen),),
                           reduce=lambda d: sum(v.float().mean() for v in d.values()))


def build_model_fcsiam(torch, device):
    from torchgeo.models import FCSiamConc, FCSiamDiff

    nets = torch.nn.ModuleList([FCSiamDiff(encoder_name="resnet18", encoder_weights=None, in_channels=CH, classes=2),
                                FCSiamConc(encoder_name="resnet18", encoder_weights=None, in_channels=CH,
                                           classes=2)]).to(device)
    gen = torch.Generator(device=device).manual_seed(0)

    def out():
        x = torch.rand(B, 2, CH, H, H, device=device, generator=gen)
        return nets[0](x) + nets[1](x)

    return Workload("model_fcsiam", train=lambda: out().pow(2).mean(), modules=[nets], eval=out)


def build_model_dofa(torch, device):
    from torchgeo.models import DOFA

    model = DOFA(img_size=H, patch_size=16, embed_dim=192, depth=2, num_heads=3, num_classes=NC)
    wavelengths = [0.665, 0.56, 0.49, 0.842]
    return _model_workload(torch, device, "model_dofa", model,
                           lambda gen: (_images(torch, device, gen), wavelengths))


def build_model_croma(torch, device):
    from torchgeo.models import CROMA

    model = CROMA(modalities=["sar", "optical"], encoder_dim=128, encoder_depth=2, num_heads=16, patch_size=8,
                  image_size=H)
    return _model_workload(torch, device, "model_croma", model,
                           lambda gen: (_images(torch, device, gen, c=2), _images(torch, device, gen, c=12)),
                           reduce=lambda d: sum(v.float().mean() for v in d.values()))


def build_model_scalemae(torch, device):
    from torchgeo.models import ScaleMAE

    model = ScaleMAE(res=10.0, img_size=H, patch_size=16, embed_dim=96, depth=2, num_heads=3, in_chans=CH,
                     num_classes=NC)
    return _model_workload(torch, device, "model_scalemae", model, lambda gen: (_images(torch, device, gen),))


def build_model_copernicusfm(torch, device):
    from torchgeo.models import CopernicusFM

    model = CopernicusFM(img_size=H, patch_size=16, embed_dim=96, depth=2, num_heads=3, num_classes=NC)
    meta = torch.tensor([[10.0, 45.0, 19000.0, float("nan")]] * B, device=device)
    return _model_workload(torch, device, "model_copernicusfm", model,
                           lambda gen: (_images(torch, device, gen), meta, [665.0, 560.0, 490.0, 842.0],
                                        [30.0, 35.0, 65.0, 115.0]))


def build_model_earthloc(torch, device):
    from torchgeo.models import EarthLoc

    model = EarthLoc(in_channels=3, image_size=H * 2, desc_dim=256, backbone="resnet50", pretrained=False)
    return _model_workload(torch, device, "model_earthloc", model,
                           lambda gen: (_images(torch, device, gen, c=3, h=H * 2),))


def build_model_panopticon(torch, device):
    from torchgeo.models import Panopticon

    model = Panopticon(attn_dim=128, embed_dim=768, img_size=56)
    chn = torch.tensor([[665.0, 560.0, 490.0, -1.0]] * 2, device=device)
    return _model_workload(torch, device, "model_panopticon", model,
                           lambda gen: ({"imgs": torch.rand(2, 4, 56, 56, device=device, generator=gen),
                                         "chn_ids": chn},))


def build_model_temporal(torch, device):
    """ConvLSTM (trained) and LTAE on satellite image time series. LTAE's in-place dropout after an
    in-place ReLU breaks its backward in training mode (torchgeo 0.8.1), so it runs forward only."""
    from torchgeo.models import LTAE, ConvLSTM

    conv = ConvLSTM(input_dim=CH, hidden_dim=[8, 8], kernel_size=3, num_layers=2, batch_first=True,
                    return_all_layers=True).to(device)
    ltae = LTAE(in_channels=32, n_head=4, d_k=8, n_neurons=[64, 32], d_model=64, len_max_seq=6).to(device)
    gen = torch.Generator(device=device).manual_seed(0)

    def out():
        layers, last = conv(torch.rand(B, 6, CH, 32, 32, device=device, generator=gen))
        return layers[-1].mean() + last[-1][0].mean()

    def ltae_forward():
        return ltae(torch.rand(B, 6, 32, device=device, generator=gen))

    def ltae_train_forward():
        ltae.train()
        with torch.no_grad():
            return ltae(torch.rand(B, 6, 32, device=device, generator=gen))

    def evaluate():
        return out(), ltae_forward()

    return Workload("model_temporal", train=out, modules=[conv, ltae], eval=evaluate,
                    cases=[("LTAE-train-mode", ltae_train_forward)])


def build_model_btc_changevit(torch, device):
    from torchgeo.models import BTC, ChangeViT

    btc = BTC(backbone="swin_tiny", classes=1).to(device)
    cvit = ChangeViT(backbone="vit_tiny_patch16_224", img_size=H, in_channels=3, num_classes=1).to(device)
    gen = torch.Generator(device=device).manual_seed(0)

    def out():
        return btc(torch.rand(B, 6, H, H, device=device, generator=gen)).mean() + \
            cvit(torch.rand(B, 2, 3, H, H, device=device, generator=gen)).mean()

    return Workload("model_btc_changevit", train=out, modules=[btc, cvit], eval=out)


class _SyntheticImages:
    """A NonGeoDataset of random multispectral images (numpy-free, CPU tensors)."""

    def __init__(self, split="train", n=16, c=CH, h=H, kind="classification", seed=0):
        import torch

        self.split, self.n, self.kind = split, n, kind
        g = torch.Generator().manual_seed(seed + (split == "val"))
        self.images = torch.rand(n, c, h, h, generator=g) * 255
        self.labels = torch.randint(0, NC, (n,), generator=g)
        self.masks = torch.randint(0, NC, (n, h, h), generator=g)

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        if self.kind == "segmentation":
            return {"image": self.images[i], "mask": self.masks[i]}
        if self.kind == "detection":
            import torch
            box = torch.tensor([[4.0 + i, 6.0, 30.0 + i, 40.0], [20.0, 10.0, 50.0, 33.0 + i]])
            return {"image": self.images[i, :3], "bbox_xyxy": box, "label": torch.tensor([1, 1 + i % (NC - 1)])}
        return {"image": self.images[i], "label": self.labels[i]}


def build_model_rcf(torch, device):
    """RCF random convolutional features, gaussian and empirical (patches from a dataset), and MOSAIKS."""
    from torchgeo.datasets import NonGeoDataset
    from torchgeo.models import MOSAIKS, RCF

    class Synthetic(_SyntheticImages, NonGeoDataset):
        pass

    ds = Synthetic(n=8)
    nets = [RCF(in_channels=CH, features=16, kernel_size=3, mode="gaussian", seed=0),
            RCF(in_channels=CH, features=16, kernel_size=3, mode="empirical", dataset=ds, seed=0),
            MOSAIKS(dataset=ds, in_channels=CH, features=16, kernel_size=3, seed=0)]
    nets = [n.to(device) for n in nets]
    gen = torch.Generator(device=device).manual_seed(0)

    def feats():
        x = _images(torch, device, gen)
        return [n(x) for n in nets]

    return Workload("model_rcf", modules=nets, eval=feats, cases=[("forward", feats)])


# ---- losses, transforms ----------------------------------------------------------------------
def build_losses(torch, device):
    from torchgeo.losses import QRLoss, RQLoss

    conv = torch.nn.Conv2d(CH, NC, 1).to(device)
    gen = torch.Generator(device=device).manual_seed(0)

    def case(loss):
        def train_step():
            probs = conv(_images(torch, device, gen)).softmax(1)
            prior = torch.rand(B, NC, H, H, device=device, generator=gen).softmax(1)
            value = loss(probs, prior)
            value.backward()
            return value
        return train_step

    return Workload("losses", cases=[("QRLoss", case(QRLoss())), ("RQLoss", case(RQLoss()))])


def build_transforms(torch, device):
    """torchgeo.transforms inside kornia AugmentationSequential on GPU batches, as datamodules use them."""
    import kornia.augmentation as K

    import torchgeo.transforms as T

    gen = torch.Generator(device=device).manual_seed(0)
    bands = 6  # blue green red nir swir1 swir2

    def sample():
        return {"image": torch.rand(B, bands, H, H, device=device, generator=gen),
                "mask": torch.randint(0, NC, (B, 1, H, H), device=device, generator=gen).float()}

    indices = K.AugmentationSequential(
        T.AppendNDVI(index_nir=3, index_red=2), T.AppendNDWI(index_green=1, index_nir=3),
        T.AppendNDBI(index_swir=4, index_nir=3), T.AppendNBR(index_nir=3, index_swir=5),
        T.AppendNDSI(index_green=1, index_swir=4), T.AppendSWI(index_vre1=3, index_swir2=5),
        T.AppendGNDVI(index_nir=3, index_green=1), T.AppendBNDVI(index_nir=3, index_blue=0),
        T.AppendNDRE(index_nir=3, index_vre1=2), T.AppendGRNDVI(index_nir=3, index_green=1, index_red=2),
        T.AppendGBNDVI(index_nir=3, index_green=1, index_blue=0),
        T.AppendRBNDVI(index_nir=3, index_red=2, index_blue=0), data_keys=None)
    gray = K.AugmentationSequential(T.RandomGrayscale(weights=torch.ones(bands) / bands, p=1.0),
                                    K.RandomHorizontalFlip(p=0.5), data_keys=None)
    slide = K.AugmentationSequential(T.SatSlideMix(gamma=2, beta=(0.0, 1.0), p=1.0), data_keys=None)
    rearr = K.AugmentationSequential(T.Rearrange("b t c h w -> b (t c) h w"), data_keys=None)

    def slidemix():
        return slide(sample())

    def rearrange():
        return rearr({"image": torch.rand(B, 3, bands, H, H, device=device, generator=gen)})

    from torchgeo.trainers.simclr import simclr_augmentations
    from torchgeo.trainers.moco import moco_augmentations
    simclr = simclr_augmentations(48, torch.ones(bands) / bands).to(device)
    moco = [a.to(device) for a in moco_augmentations(3, 48, torch.ones(bands) / bands)]
    return Workload("transforms", cases=[
        ("indices", lambda: indices(sample())), ("RandomGrayscale", lambda: gray(sample())),
        ("SatSlideMix", slidemix), ("Rearrange", rearrange),
        ("simclr_augmentations", lambda: simclr(sample()["image"])),
        ("moco_augmentations", lambda: [a(sample()["image"]) for a in moco])])


# ---- geo samplers over an in-memory GeoDataset --------------------------------------------------
def build_samplers(torch, device):
    """RandomGeoSampler, GridGeoSampler, RandomBatchGeoSampler and PreChippedGeoSampler over a GeoDataset
    whose index is built in memory; samples are tensors made on the device (stack_samples collates)."""
    import geopandas as gpd
    import pandas as pd
    import shapely
    from torch.utils.data import DataLoader

    from torchgeo.datasets import GeoDataset
    from torchgeo.datasets.utils import stack_samples
    from torchgeo.samplers import (GridGeoSampler, PreChippedGeoSampler, RandomBatchGeoSampler,
                                   RandomGeoSampler, Units, get_random_bounding_box, tile_to_chips)

    class InMemoryGeo(GeoDataset):
        def __init__(self):
            t = pd.Timestamp("2024-01-01")
            geoms = [shapely.box(0, 0, 100, 100), shapely.box(50, 50, 200, 160)]
            interval = pd.IntervalIndex.from_tuples([(t, t + pd.Timedelta(days=30))] * 2, closed="both",
                                                    name="datetime")
            self.index = gpd.GeoDataFrame(index=interval, geometry=geoms, crs="EPSG:3857")
            self.res = (1.0, 1.0)

        def __getitem__(self, query):
            x, y, _t = query
            h = max(1, int(round(y.stop - y.start)))
            w = max(1, int(round(x.stop - x.start)))
            return {"image": torch.rand(CH, h, w, device=device), "bounds": query}

    ds = InMemoryGeo()

    def random_sampler():
        s = RandomGeoSampler(ds, size=32, length=6, generator=torch.Generator().manual_seed(0))
        return next(iter(DataLoader(ds, batch_size=3, sampler=s, collate_fn=stack_samples)))

    def grid_sampler():
        s = GridGeoSampler(ds, size=(32, 32), stride=24)
        return [ds[q]["image"].sum() for q in s], len(s)

    def batch_sampler():
        s = RandomBatchGeoSampler(ds, size=16.0, batch_size=4, length=8, units=Units.CRS)
        return next(iter(DataLoader(ds, batch_sampler=s, collate_fn=stack_samples)))

    def prechipped():
        return [q for q in PreChippedGeoSampler(ds, shuffle=True)]

    def utils():
        bounds = (0.0, 0.0, 100.0, 120.0)
        g = torch.Generator().manual_seed(0)
        return get_random_bounding_box(bounds, 10, 1.0, g), tile_to_chips(bounds, (16, 16), (8, 8))

    return Workload("samplers", cases=[("RandomGeoSampler", random_sampler), ("GridGeoSampler", grid_sampler),
                                       ("RandomBatchGeoSampler", batch_sampler),
                                       ("PreChippedGeoSampler", prechipped), ("utils", utils)])


# ---- whole Lightning fits ----------------------------------------------------------------------
def build_trainer_fit(torch, device):
    """lightning.Trainer(max_steps=2).fit / validate / predict of torchgeo trainers on a NonGeoDataModule
    over a synthetic dataset (its GPU-side batch augmentation runs in on_after_batch_transfer)."""
    import lightning
    import matplotlib

    matplotlib.use("Agg")
    import kornia.augmentation as K

    from torchgeo.datamodules import NonGeoDataModule
    from torchgeo.datamodules.utils import collate_fn_detection
    from torchgeo.trainers import ClassificationTask, ObjectDetectionTask, SemanticSegmentationTask

    accel = "gpu" if device.type == "cuda" else "cpu"

    class DM(NonGeoDataModule):
        def __init__(self, kind, collate=None):
            super().__init__(_SyntheticImages, batch_size=4, num_workers=0, kind=kind,
                             c=3 if kind == "detection" else CH)
            if collate is not None:
                self.collate_fn = collate
            self.train_aug = K.AugmentationSequential(K.Normalize(mean=self.mean, std=self.std),
                                                      K.RandomHorizontalFlip(), K.RandomVerticalFlip(),
                                                      data_keys=None, keepdim=True)

    def fit(make_task, kind, collate=None, predict=False):
        def run():
            task = make_task()
            dm = DM(kind, collate)
            trainer = lightning.Trainer(max_steps=2, accelerator=accel, devices=1, logger=figure_logger(),
                                        enable_checkpointing=False, enable_progress_bar=False,
                                        enable_model_summary=False, limit_val_batches=1, num_sanity_val_steps=0,
                                        log_every_n_steps=1)
            trainer.fit(task, datamodule=dm)
            trainer.validate(task, datamodule=dm, verbose=False)
            if predict:
                trainer.predict(task, dataloaders=dm.val_dataloader())
            return trainer.callback_metrics
        return run

    return Workload("trainer_fit", cases=[
        ("fit_classification", fit(lambda: ClassificationTask(model="resnet18", in_channels=CH, num_classes=NC,
                                                              task="multiclass"), "classification", predict=True)),
        ("fit_segmentation", fit(lambda: SemanticSegmentationTask(model="unet", backbone="resnet18", in_channels=CH,
                                                                  num_classes=NC, task="multiclass"),
                                 "segmentation")),
        ("fit_detection", fit(lambda: ObjectDetectionTask(model="faster-rcnn", backbone="resnet18", num_classes=NC),
                              "detection", collate_fn_detection)),
    ])


WORKLOADS = [build_classification_ce, build_classification_multilabel_bce, build_classification_binary_focal,
             build_classification_jaccard, build_segmentation_unet_ce, build_segmentation_deeplab_bce,
             build_segmentation_fcn_jaccard, build_segmentation_upernet_focal, build_segmentation_segformer,
             build_regression, build_pixelwise_regression, build_pixelwise_regression_fcn,
             build_detection_faster_rcnn, build_detection_fcos, build_detection_retinanet, build_instance_segmentation,
             build_change_unet_bce, build_change_fcsiamdiff_dice, build_change_fcsiamconc_ce, build_change_changevit,
             build_change_btc, build_simclr, build_moco_v2, build_byol, build_model_farseg,
             build_model_changestar, build_model_fcsiam, build_model_dofa, build_model_croma,
             build_model_scalemae, build_model_copernicusfm, build_model_earthloc, build_model_panopticon,
             build_model_temporal, build_model_btc_changevit, build_model_rcf, build_losses, build_transforms,
             build_samplers, build_trainer_fit]
