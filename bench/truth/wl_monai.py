"""monai 1.6.1 workloads: 3D segmentation training steps with its losses, sliding-window eval,
and its transforms and metrics on GPU tensors, as in its tutorials. Random init, synthetic volumes.
"""

from __future__ import annotations

from harness import Workload

B, C, S = 2, 3, 32  # batch, classes, volume side


def _data(torch, device, gen, channels=1, side=S):
    x = torch.rand(B, channels, side, side, side, device=device, generator=gen)
    y = torch.randint(0, C, (B, 1, side, side, side), device=device, generator=gen)
    return x, y


def _net_workload(torch, device, name, net, loss_fn, onehot_target=False, side=S):
    from monai.inferers import sliding_window_inference

    net = net.to(device)
    gen = torch.Generator(device=device).manual_seed(0)

    def train():
        x, y = _data(torch, device, gen, side=side)
        out = net(x)
        if isinstance(out, (list, tuple)):
            out = out[0]
        if onehot_target:
            y = torch.nn.functional.one_hot(y[:, 0], C).permute(0, 4, 1, 2, 3).float()
        return loss_fn(out, y)

    def evaluate():
        x = torch.rand(1, 1, side * 3 // 2, side * 3 // 2, side * 3 // 2, device=device, generator=gen)
        return sliding_window_inference(x, (side,) * 3, 4, net, overlap=0.25)

    return Workload(name, train=train, modules=[net], eval=evaluate)


def build_unet_dicece(torch, device):
    from monai.losses import DiceCELoss
    from monai.networks.nets import UNet

    net = UNet(spatial_dims=3, in_channels=1, out_channels=C, channels=(8, 16, 32), strides=(2, 2), num_res_units=1)
    return _net_workload(torch, device, "unet_dicece", net, DiceCELoss(to_onehot_y=True, softmax=True))


def build_segresnet_dicefocal(torch, device):
    from monai.losses import DiceFocalLoss
    from monai.networks.nets import SegResNet

    net = SegResNet(spatial_dims=3, in_channels=1, out_channels=C, init_filters=8, blocks_down=(1, 2, 2),
                    blocks_up=(1, 1))
    return _net_workload(torch, device, "segresnet_dicefocal", net, DiceFocalLoss(to_onehot_y=True, softmax=True))


def build_swinunetr_dice(torch, device):
    from monai.losses import DiceLoss
    from monai.networks.nets import SwinUNETR

    net = SwinUNETR(in_channels=1, out_channels=C, feature_size=12, depths=(1, 1, 1, 1), num_heads=(1, 2, 3, 6),
                    spatial_dims=3)
    return _net_workload(torch, device, "swinunetr_dice", net, DiceLoss(to_onehot_y=True, softmax=True),
                         side=64)


def build_dynunet_deepsup(torch, device):
    from monai.losses import DeepSupervisionLoss, DiceCELoss
    from monai.networks.nets import DynUNet

    net = DynUNet(spatial_dims=3, in_channels=1, out_channels=C, kernel_size=[3, 3, 3], strides=[1, 2, 2],
                  upsample_kernel_size=[2, 2], filters=[8, 16, 32], deep_supervision=True, deep_supr_num=1).to(device)
    loss = DeepSupervisionLoss(DiceCELoss(to_onehot_y=True, softmax=True))
    gen = torch.Generator(device=device).manual_seed(0)

    def train():
        x, y = _data(torch, device, gen)
        out = net(x)  # (B, heads, C, ...) in training mode
        return loss(torch.unbind(out, dim=1), y)

    return Workload("dynunet_deepsup", train=train, modules=[net], eval=lambda: net(_data(torch, device, gen)[0]))


def build_losses(torch, device):
    """Each loss in a training step on a 1x1x1 conv: the loss code is what runs."""
    import monai.losses as L

    conv = torch.nn.Conv3d(1, C, 1).to(device)
    gen = torch.Generator(device=device).manual_seed(0)
    losses = {
        "DiceLoss-sigmoid": (L.DiceLoss(sigmoid=True), "onehot"),
        "DiceLoss-batch": (L.DiceLoss(to_onehot_y=True, softmax=True, batch=True), "index"),
        "GeneralizedDiceLoss": (L.GeneralizedDiceLoss(to_onehot_y=True, softmax=True), "index"),
        "GeneralizedWassersteinDiceLoss": (L.GeneralizedWassersteinDiceLoss(
            dist_matrix=torch.ones(C, C) - torch.eye(C), weighting_mode="GDL"), "index0"),
        "FocalLoss": (L.FocalLoss(to_onehot_y=True, gamma=2.0), "index"),
        "FocalLoss-sigmoid-alpha": (L.FocalLoss(alpha=0.25, use_softmax=False), "onehot"),
        "TverskyLoss": (L.TverskyLoss(to_onehot_y=True, softmax=True, alpha=0.3, beta=0.7), "index"),
        "DiceCELoss-weighted": (L.DiceCELoss(to_onehot_y=True, softmax=True,
                                             weight=torch.tensor([0.2, 0.3, 0.5], device=device)), "index"),
        "GeneralizedDiceFocalLoss": (L.GeneralizedDiceFocalLoss(to_onehot_y=True, softmax=True), "index"),
        "MaskedDiceLoss": (L.MaskedDiceLoss(sigmoid=True), "masked"),
        "HausdorffDTLoss": (L.HausdorffDTLoss(to_onehot_y=True, softmax=True), "index"),
        "SoftclDiceLoss": (L.SoftclDiceLoss(), "onehot"),
        "SSIMLoss": (L.SSIMLoss(spatial_dims=3, data_range=1.0), "image"),
        "TverskyLoss-sigmoid": (L.TverskyLoss(sigmoid=True), "onehot"),
    }

    def case(loss, kind):
        def train_step():
            x, y = _data(torch, device, gen)
            out = conv(x)
            if kind == "onehot":
                target = torch.nn.functional.one_hot(y[:, 0], C).permute(0, 4, 1, 2, 3).float()
                value = loss(out, target)
            elif kind == "index0":
                value = loss(out, y[:, 0])
            elif kind == "masked":
                target = torch.nn.functional.one_hot(y[:, 0], C).permute(0, 4, 1, 2, 3).float()
                value = loss(out, target, mask=(x > 0.2).float())
            elif kind == "image":
                value = loss(torch.sigmoid(out[:, :1]), x)
            else:
                value = loss(out, y)
            value.backward()
            return value
        return train_step

    return Workload("losses", cases=[(n, case(loss, kind)) for n, (loss, kind) in losses.items()])


def build_transforms(torch, device):
    """Array and dictionary transforms on GPU tensors (pre- and post-processing)."""
    import monai.transforms as T

    gen = torch.Generator(device=device).manual_seed(0)

    def img():
        return torch.rand(1, S, S, S, device=device, generator=gen)

    def seg():
        return (torch.rand(1, S, S, S, device=device, generator=gen) > 0.7).float()

    def logits():
        return torch.rand(C, S, S, S, device=device, generator=gen)

    cases = {
        "ScaleIntensityRange": (T.ScaleIntensityRange(0.0, 1.0, -1.0, 1.0, clip=True), img),
        "ScaleIntensity": (T.ScaleIntensity(), img),
        "NormalizeIntensity-nonzero": (T.NormalizeIntensity(nonzero=True), img),
        "RandGaussianNoise": (T.RandGaussianNoise(prob=1.0), img),
        "RandScaleIntensity": (T.RandScaleIntensity(0.1, prob=1.0), img),
        "RandShiftIntensity": (T.RandShiftIntensity(0.1, prob=1.0), img),
        "RandAdjustContrast": (T.RandAdjustContrast(prob=1.0), img),
        "RandFlip": (T.RandFlip(prob=1.0, spatial_axis=0), img),
        "RandRotate90": (T.RandRotate90(prob=1.0), img),
        "RandAffine": (T.RandAffine(prob=1.0, rotate_range=(0.3, 0.3, 0.3), scale_range=(0.1,) * 3,
                                    padding_mode="zeros", device=device), img),
        "Rand3DElastic": (T.Rand3DElastic(sigma_range=(5, 7), magnitude_range=(50, 100), prob=1.0,
                                          device=device), img),
        "Resize": (T.Resize((24, 24, 24)), img),
        "Spacing-like Zoom": (T.Zoom(0.75, keep_size=False), img),
        "RandSpatialCrop": (T.RandSpatialCrop((16, 16, 16), random_size=False), img),
        "CropForeground": (T.CropForeground(), seg),
        "SpatialPad": (T.SpatialPad((40, 40, 40)), img),
        "RandGaussianSmooth": (T.RandGaussianSmooth(prob=1.0), img),
        "RandHistogramShift": (T.RandHistogramShift(prob=1.0), img),
        "ThresholdIntensity": (T.ThresholdIntensity(0.5), img),
        "AsDiscrete-argmax-onehot": (T.AsDiscrete(argmax=True, to_onehot=C), logits),
        "AsDiscrete-threshold": (T.AsDiscrete(threshold=0.5), logits),
        "Activations-softmax": (T.Activations(softmax=True), logits),
        "KeepLargestConnectedComponent": (T.KeepLargestConnectedComponent(applied_labels=[1]), seg),
        "FillHoles": (T.FillHoles(applied_labels=[1]), seg),
        "RemoveSmallObjects": (T.RemoveSmallObjects(min_size=5), seg),
        "LabelToContour": (T.LabelToContour(), seg),
    }
    out = [(n, (lambda t, mk: (lambda: t(mk())))(t, mk)) for n, (t, mk) in cases.items()]
    crop_pos_neg = T.RandCropByPosNegLabeld(keys=["image", "label"], label_key="label", spatial_size=(16, 16, 16),
                                            pos=1, neg=1, num_samples=2)
    crop_classes = T.RandCropByLabelClassesd(keys=["image", "label"], label_key="label", spatial_size=(16, 16, 16),
                                             num_classes=2, num_samples=2)
    compose = T.Compose([T.EnsureChannelFirstd(keys=["image", "label"], channel_dim=0),
                         T.ScaleIntensityd(keys="image"), T.RandFlipd(keys=["image", "label"], prob=0.5),
                         T.RandCropByPosNegLabeld(keys=["image", "label"], label_key="label",
                                                  spatial_size=(16, 16, 16), num_samples=2),
                         T.EnsureTyped(keys=["image", "label"], device=device)])
    out += [("RandCropByPosNegLabeld", lambda: crop_pos_neg({"image": img(), "label": seg()})),
            ("RandCropByLabelClassesd", lambda: crop_classes({"image": img(), "label": seg()})),
            ("Compose-dict", lambda: compose({"image": img(), "label": seg()}))]
    return Workload("transforms", cases=out)


def build_metrics(torch, device):
    """Validation metrics as in the tutorials: accumulate a batch, aggregate, reset."""
    import monai.metrics as M

    gen = torch.Generator(device=device).manual_seed(0)

    def onehot_pair():
        p = torch.randint(0, C, (B, S, S, S), device=device, generator=gen)
        y = torch.randint(0, C, (B, S, S, S), device=device, generator=gen)
        oh = lambda t: torch.nn.functional.one_hot(t, C).permute(0, 4, 1, 2, 3).float()  # noqa: E731
        return oh(p), oh(y)

    def metric_case(metric):
        def run():
            metric(*onehot_pair())
            value = metric.aggregate()
            metric.reset()
            return value
        return run

    metrics = {
        "DiceMetric": M.DiceMetric(include_background=False, reduction="mean"),
        "DiceMetric-batch": M.DiceMetric(include_background=True, reduction="mean_batch", ignore_empty=False),
        "MeanIoU": M.MeanIoU(include_background=False),
        "GeneralizedDiceScore": M.GeneralizedDiceScore(include_background=False),
        "ConfusionMatrixMetric": M.ConfusionMatrixMetric(metric_name=["sensitivity", "precision"]),
        "HausdorffDistanceMetric": M.HausdorffDistanceMetric(include_background=False, percentile=95),
        "SurfaceDistanceMetric": M.SurfaceDistanceMetric(include_background=False),
        "SurfaceDiceMetric": M.SurfaceDiceMetric(class_thresholds=[1.0, 1.0], include_background=False),
    }
    cases = [(n, metric_case(m)) for n, m in metrics.items()]
    auc = M.ROCAUCMetric()

    def roc():
        auc(torch.rand(16, C, device=device, generator=gen),
            torch.nn.functional.one_hot(torch.randint(0, C, (16,), device=device, generator=gen), C))
        value = auc.aggregate()
        auc.reset()
        return value

    cases.append(("ROCAUCMetric", roc))
    psnr = M.PSNRMetric(max_val=1.0)
    cases.append(("PSNRMetric", lambda: psnr(torch.rand(B, 1, S, S, S, device=device, generator=gen),
                                             torch.rand(B, 1, S, S, S, device=device, generator=gen))))
    return Workload("metrics", cases=cases)


WORKLOADS = [build_unet_dicece, build_segresnet_dicefocal, build_swinunetr_dice, build_dynunet_deepsup,
             build_losses, build_transforms, build_metrics]
