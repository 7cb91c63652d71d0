"""segmentation-models-pytorch 0.6.0 workloads: architectures with encoder_weights=None trained with
its losses, and its metrics, as in its examples. Random init, synthetic images and masks on the device.
"""

from __future__ import annotations

from harness import Workload

B, C, H = 4, 3, 64


def _batch(torch, device, gen, mode, h=H):
    x = torch.rand(B, 3, h, h, device=device, generator=gen)
    if mode == "multiclass":
        y = torch.randint(0, C, (B, h, h), device=device, generator=gen)
    else:  # binary / multilabel: float masks
        y = (torch.rand(B, 1 if mode == "binary" else C, h, h, device=device, generator=gen) > 0.5).float()
    return x, y


def _arch(torch, device, name, arch, mode, loss, h=H, **kwargs):
    import segmentation_models_pytorch as smp

    classes = 1 if mode == "binary" else C
    model = getattr(smp, arch)(encoder_weights=None, classes=classes, **kwargs).to(device)
    gen = torch.Generator(device=device).manual_seed(0)

    def train():
        x, y = _batch(torch, device, gen, mode, h)
        return loss(model(x), y)

    def evaluate():
        x, y = _batch(torch, device, gen, mode, h)
        logits = model(x)
        if mode == "multiclass":
            pred = logits.argmax(1)
            stats = smp.metrics.get_stats(pred, y, mode="multiclass", num_classes=C)
        else:
            stats = smp.metrics.get_stats(logits.sigmoid(), y.long(), mode=mode, threshold=0.5)
        return smp.metrics.iou_score(*stats, reduction="micro"), smp.metrics.f1_score(*stats, reduction="macro")

    return Workload(name, train=train, modules=[model], eval=evaluate)


def build_unet_dice(torch, device):
    from segmentation_models_pytorch.losses import DiceLoss
    return _arch(torch, device, "unet_dice", "Unet", "multiclass", DiceLoss("multiclass"), encoder_name="resnet18")


def build_fpn_focal(torch, device):
    from segmentation_models_pytorch.losses import FocalLoss
    return _arch(torch, device, "fpn_focal", "FPN", "multiclass", FocalLoss("multiclass"), encoder_name="resnet18")


def build_deeplabv3plus_lovasz(torch, device):
    from segmentation_models_pytorch.losses import LovaszLoss
    return _arch(torch, device, "deeplabv3plus_lovasz", "DeepLabV3Plus", "multiclass", LovaszLoss("multiclass"),
                 encoder_name="resnet18")


def build_unetplusplus_jaccard_binary(torch, device):
    from segmentation_models_pytorch.losses import JaccardLoss
    return _arch(torch, device, "unetplusplus_jaccard_binary", "UnetPlusPlus", "binary", JaccardLoss("binary"),
                 encoder_name="resnet18", encoder_depth=4, decoder_channels=(128, 64, 32, 16))


def build_segformer_tversky(torch, device):
    from segmentation_models_pytorch.losses import TverskyLoss
    return _arch(torch, device, "segformer_tversky", "Segformer", "multilabel", TverskyLoss("multilabel"),
                 encoder_name="mit_b0")


def build_pan_softce(torch, device):
    from segmentation_models_pytorch.losses import SoftCrossEntropyLoss
    return _arch(torch, device, "pan_softce", "PAN", "multiclass", SoftCrossEntropyLoss(smooth_factor=0.1),
                 h=128, encoder_name="resnet18")


def build_upernet_timm(torch, device):
    from segmentation_models_pytorch.losses import SoftBCEWithLogitsLoss
    return _arch(torch, device, "upernet_timm_softbce", "UPerNet", "binary", SoftBCEWithLogitsLoss(smooth_factor=0.1),
                 encoder_name="tu-convnext_atto")


def build_dpt_dice(torch, device):
    from segmentation_models_pytorch.losses import DiceLoss
    return _arch(torch, device, "dpt_dice", "DPT", "multiclass", DiceLoss("multiclass", ignore_index=0),
                 encoder_name="tu-vit_tiny_patch16_224", dynamic_img_size=True)


def build_losses(torch, device):
    """Every loss in a training step on a 1x1 conv, in each mode it supports."""
    from segmentation_models_pytorch import losses as L

    conv = torch.nn.Conv2d(3, C, 1).to(device)
    conv1 = torch.nn.Conv2d(3, 1, 1).to(device)
    gen = torch.Generator(device=device).manual_seed(0)
    specs = {
        "DiceLoss-binary": (L.DiceLoss("binary"), "binary"),
        "DiceLoss-multilabel": (L.DiceLoss("multilabel", classes=[0, 2]), "multilabel"),
        "DiceLoss-multiclass-ignore": (L.DiceLoss("multiclass", ignore_index=2), "multiclass"),
        "JaccardLoss-multiclass": (L.JaccardLoss("multiclass"), "multiclass"),
        "JaccardLoss-multilabel": (L.JaccardLoss("multilabel"), "multilabel"),
        "TverskyLoss-multiclass": (L.TverskyLoss("multiclass", alpha=0.3, beta=0.7), "multiclass"),
        "FocalLoss-binary": (L.FocalLoss("binary", alpha=0.25), "binary"),
        "FocalLoss-multilabel": (L.FocalLoss("multilabel"), "multilabel"),
        "FocalLoss-ignore": (L.FocalLoss("multiclass", ignore_index=1), "multiclass"),
        "LovaszLoss-binary": (L.LovaszLoss("binary"), "binary"),
        "LovaszLoss-multilabel": (L.LovaszLoss("multilabel", per_image=True), "multilabel"),
        "LovaszLoss-multiclass-per-image": (L.LovaszLoss("multiclass", per_image=True), "multiclass"),
        "SoftBCEWithLogitsLoss-ignore": (L.SoftBCEWithLogitsLoss(ignore_index=-100, smooth_factor=0.05), "binary"),
        "SoftCrossEntropyLoss": (L.SoftCrossEntropyLoss(smooth_factor=0.1, ignore_index=-100), "multiclass"),
        "MCCLoss": (L.MCCLoss(), "binary"),
    }

    def case(loss, mode):
        def train_step():
            x, y = _batch(torch, device, gen, mode)
            value = loss((conv1 if mode == "binary" else conv)(x), y)
            value.backward()
            return value
        return train_step

    return Workload("losses", cases=[(n, case(loss, mode)) for n, (loss, mode) in specs.items()])


def build_metrics(torch, device):
    """get_stats in each mode, then the scores with their reductions."""
    import segmentation_models_pytorch as smp

    gen = torch.Generator(device=device).manual_seed(0)

    def multiclass():
        pred = torch.randint(0, C, (B, H, H), device=device, generator=gen)
        y = torch.randint(0, C, (B, H, H), device=device, generator=gen)
        y[:, :4] = -1  # an ignored border
        stats = smp.metrics.get_stats(pred, y, mode="multiclass", num_classes=C, ignore_index=-1)
        return [f(*stats, reduction=r, class_weights=[0.2, 0.3, 0.5])
                for f in (smp.metrics.iou_score, smp.metrics.accuracy, smp.metrics.recall)
                for r in ("micro", "macro", "micro-imagewise", "weighted")]

    def multilabel():
        p = torch.rand(B, C, H, H, device=device, generator=gen)
        y = (torch.rand(B, C, H, H, device=device, generator=gen) > 0.5).long()
        stats = smp.metrics.get_stats(p, y, mode="multilabel", threshold=0.5)
        return smp.metrics.fbeta_score(*stats, beta=2, reduction="macro-imagewise"), \
            smp.metrics.balanced_accuracy(*stats, reduction="micro")

    return Workload("metrics", cases=[("multiclass", multiclass), ("multilabel", multilabel)])


def build_linknet_dice_binary(torch, device):
    from segmentation_models_pytorch.losses import DiceLoss
    return _arch(torch, device, "linknet_dice_binary", "Linknet", "binary", DiceLoss("binary", from_logits=True),
                 encoder_name="resnet18")


def build_pspnet_focal_multilabel(torch, device):
    from segmentation_models_pytorch.losses import FocalLoss
    return _arch(torch, device, "pspnet_focal_multilabel", "PSPNet", "multilabel", FocalLoss("multilabel"),
                 encoder_name="resnet18")


def build_manet_jaccard(torch, device):
    from segmentation_models_pytorch.losses import JaccardLoss
    return _arch(torch, device, "manet_jaccard", "MAnet", "multiclass", JaccardLoss("multiclass", classes=[1, 2]),
                 encoder_name="resnet18")


WORKLOADS = [build_linknet_dice_binary, build_pspnet_focal_multilabel, build_manet_jaccard, build_unet_dice,
             build_fpn_focal, build_deeplabv3plus_lovasz, build_unetplusplus_jaccard_binary, build_segformer_tversky,
             build_pan_softce, build_upernet_timm, build_dpt_dice, build_losses, build_metrics]
