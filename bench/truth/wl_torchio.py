"""torchio 1.2.1 workloads, as its tutorials and docs run it: synthetic MRI-like subjects (a T1 and a T2
``ScalarImage``, a brain ``LabelMap`` with a few classes; anisotropic affines), some written as NIfTI files
and read back, the rest made from tensors. torchio is a data library: its transforms, samplers, queue and
loaders run on CPU subjects inside the data pipeline (``num_workers=0`` here, so the recorder sees them), the
user's network runs on the device, and the batch is moved there by the user's loop
(``batch['t1'][tio.DATA].to(device)``), as in the tutorials. What reaches torchio from the device:

- the patch-based inference of the docs: ``GridSampler`` -> ``SubjectsLoader`` -> network on the device ->
  ``GridAggregator.add_batch(logits, locations)`` (crop, average and hann overlap modes, downsampling),
  ``get_output_tensor``;
- whole-volume inference with inverse transforms: ``history_collate``, ``get_subjects_from_batch``,
  ``add_images_from_batch`` with the network's device output, ``apply_inverse_transform``;
- GPU augmentation: ``tio.To(device)`` and the intensity / label / cropping transforms that take device tensors,
  the tensor-in tensor-out API on device batches, label statistics of device label maps.

Training steps: a small 3D U-Net-like network (plain torch, the user's model) on patches from ``tio.Queue``
(uniform, label and weighted samplers) and on whole volumes; the eval forward on a patch batch. Cases: every
transform family on CPU subjects (spatial: affine, elastic, anisotropy, flip, resample, resize, crop / pad,
orientation, reference space; intensity: noise, blur, gamma, bias field, motion, ghosting, spike, swap, labels to
image, rescale, z-normalisation, histogram standardisation, PCA, clamp, mask; labels: one-hot, remap, remove,
sequential, largest component, contour; composition: Compose, OneOf, Lambda, inverse), I/O of NIfTI files, and
subject utilities. No downloads.
"""

from __future__ import annotations

import os
import tempfile
import warnings

from harness import Workload

SHAPE = (32, 32, 24)
PATCH = (16, 16, 16)
BS = 2
_CACHE: dict = {}


def _tio():
    warnings.filterwarnings("ignore")
    import torchio as tio

    return tio


def _affine(spacing=(1.0, 1.0, 1.5)):
    import numpy as np

    a = np.diag(list(spacing) + [1.0])
    a[:3, 3] = [-10.0, 5.0, 2.0]
    return a


def _volumes(seed, shape=SHAPE):
    """A smooth 'brain': a blob with three tissue classes, T1/T2 contrasts, noise."""
    import torch

    g = torch.Generator().manual_seed(seed)
    zz, yy, xx = torch.meshgrid(*[torch.linspace(-1, 1, s) for s in shape], indexing="ij")
    r = (zz ** 2 + (1.2 * yy) ** 2 + (0.9 * xx) ** 2).sqrt() + 0.05 * torch.randn(shape, generator=g)
    label = torch.zeros(shape, dtype=torch.int64)  # int16 below, as label files are
    label[r < 0.85] = 1
    label[r < 0.6] = 2
    label[r < 0.3] = 3
    t1 = torch.tensor([0.0, 300.0, 600.0, 900.0])[label] + 30 * torch.randn(shape, generator=g)
    t2 = torch.tensor([0.0, 900.0, 500.0, 200.0])[label] + 30 * torch.randn(shape, generator=g)
    return t1[None].float(), t2[None].float(), label[None].to(torch.int16)


def _subject(seed=0, shape=SHAPE, age=40):
    tio = _tio()
    t1, t2, label = _volumes(seed, shape)
    return tio.Subject(t1=tio.ScalarImage(tensor=t1, affine=_affine()),
                       t2=tio.ScalarImage(tensor=t2, affine=_affine()),
                       seg=tio.LabelMap(tensor=label, affine=_affine()), age=age, name="sub-%02d" % seed)


def _files():
    """Six subjects written as NIfTI files (nibabel), as a dataset on disk is."""
    if "files" in _CACHE:
        return _CACHE["files"]
    import nibabel as nib
    import numpy as np

    d = tempfile.mkdtemp(prefix="tio-")
    out = []
    for i in range(6):
        t1, t2, label = _volumes(100 + i)
        paths = {}
        for key, arr, dtype in (("t1", t1, np.float32), ("t2", t2, np.float32), ("seg", label, np.int16)):
            p = os.path.join(d, "sub-%02d_%s.nii.gz" % (i, key))
            nib.save(nib.Nifti1Image(arr[0].numpy().astype(dtype), _affine()), p)
            paths[key] = p
        out.append(paths)
    _CACHE["files"] = out
    return out


def _file_subjects():
    tio = _tio()
    return [tio.Subject(t1=tio.ScalarImage(p["t1"]), t2=tio.ScalarImage(p["t2"]), seg=tio.LabelMap(p["seg"]))
            for p in _files()]


def _net(torch, in_ch=2, n_cls=4):
    """The user's network: a small 3D encoder-decoder."""

    class Net(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.enc = torch.nn.Sequential(torch.nn.Conv3d(in_ch, 8, 3, padding=1), torch.nn.InstanceNorm3d(8),
                                           torch.nn.ReLU())
            self.down = torch.nn.Sequential(torch.nn.Conv3d(8, 16, 3, stride=2, padding=1), torch.nn.ReLU())
            self.up = torch.nn.ConvTranspose3d(16, 8, 2, stride=2)
            self.head = torch.nn.Conv3d(16, n_cls, 1)

        def forward(self, x):
            e = self.enc(x)
            u = self.up(self.down(e))
            u = u[..., :e.shape[-3], :e.shape[-2], :e.shape[-1]]
            return self.head(torch.cat([e, u], 1))

    return Net()


def _train_transform(tio):
    return tio.Compose([
        tio.ToCanonical(),
        tio.RescaleIntensity(out_min_max=(0, 1), percentiles=(0.5, 99.5)),
        tio.RandomAffine(scales=0.1, degrees=10, p=0.75),
        tio.RandomFlip(axes=("LR",)),
        tio.OneOf({tio.RandomNoise(std=0.02): 0.5, tio.RandomBiasField(coefficients=0.3): 0.5}),
        tio.RandomGamma(log_gamma=0.2, p=0.5),
    ])


def _cycle(loader):
    state = {"it": iter(loader)}

    def nxt():
        try:
            return next(state["it"])
        except StopIteration:
            state["it"] = iter(loader)
            return next(state["it"])

    return nxt


def _loss(torch, logits, seg):
    return torch.nn.functional.cross_entropy(logits, seg[:, 0].long())


def build_queue_patch_training(torch, device):
    """The patch-based training of the tutorials: SubjectsDataset -> Queue(UniformSampler) -> SubjectsLoader, the
    batch moved to the device by the loop; cases iterate queues over label and weighted samplers."""
    tio = _tio()
    subjects = [_subject(i) for i in range(4)]
    dataset = tio.SubjectsDataset(subjects, transform=_train_transform(tio))
    queue = tio.Queue(dataset, max_length=8, samples_per_volume=2, sampler=tio.UniformSampler(PATCH),
                      num_workers=0, shuffle_subjects=True, shuffle_patches=True)
    loader = tio.SubjectsLoader(queue, batch_size=BS, num_workers=0)
    nxt = _cycle(loader)
    net = _net(torch).to(device)

    def inputs(batch):
        x = torch.cat([batch["t1"][tio.DATA], batch["t2"][tio.DATA]], 1).to(device)
        return x, batch["seg"][tio.DATA].to(device)

    def train():
        x, y = inputs(nxt())
        return _loss(torch, net(x), y)

    def evaluate():
        x, _ = inputs(nxt())
        return net(x).argmax(1)

    def queue_with(sampler, **kw):
        q = tio.Queue(tio.SubjectsDataset(subjects), max_length=6, samples_per_volume=3, sampler=sampler,
                      num_workers=0, **kw)
        ld = tio.SubjectsLoader(q, batch_size=3)

        def run():
            out = []
            for batch in ld:
                out.append(batch[tio.LOCATION])
            return out, len(q), q.get_max_memory_pretty() if hasattr(q, "get_max_memory_pretty") else None

        return run

    weighted_subjects = []
    for s in subjects:
        s2 = tio.Subject(t1=s["t1"], seg=s["seg"], prob=tio.LabelMap(tensor=(s["seg"].data > 1).float(),
                                                                     affine=_affine()))
        weighted_subjects.append(s2)

    def weighted_queue():
        q = tio.Queue(tio.SubjectsDataset(weighted_subjects), max_length=6, samples_per_volume=3,
                      sampler=tio.WeightedSampler(PATCH, "prob"), num_workers=0)
        return [b[tio.LOCATION] for b in tio.SubjectsLoader(q, batch_size=3)]

    def sampler_direct():
        s = tio.LabelSampler(PATCH, "seg", label_probabilities={0: 1, 1: 2, 2: 2, 3: 1})
        u = tio.UniformSampler(PATCH)
        return [p["seg"].data.sum() for p in s(subjects[1], 3)] + [p.spatial_shape for p in u(subjects[2], 2)]

    return Workload("queue_patch_training", train=train, eval=evaluate, modules=[net], lr=1e-3, cases=[
        ("Queue LabelSampler", queue_with(tio.LabelSampler(PATCH, "seg", label_probabilities={0: 1, 1: 1, 2: 1,
                                                                                               3: 1}))),
        ("Queue UniformSampler unshuffled", queue_with(tio.UniformSampler(PATCH), shuffle_patches=False,
                                                       shuffle_subjects=False)),
        ("Queue WeightedSampler", weighted_queue),
        ("samplers called directly", sampler_direct)])


def build_whole_volume_training(torch, device):
    """Whole volumes from NIfTI files through SubjectsDataset + SubjectsLoader (history_collate); inference with
    inverse transforms: predictions added back to the subjects and mapped to the original space."""
    tio = _tio()
    subjects = _file_subjects()
    transform = tio.Compose([tio.ToCanonical(), tio.Resample((1.0, 1.0, 1.0)), tio.CropOrPad(SHAPE, mask_name="seg"),
                             tio.ZNormalization(masking_method=tio.ZNormalization.mean),
                             tio.RandomElasticDeformation(num_control_points=5, max_displacement=3, p=0.5)])
    dataset = tio.SubjectsDataset(subjects, transform=transform)
    loader = tio.SubjectsLoader(dataset, batch_size=BS, num_workers=0, collate_fn=tio.utils.history_collate)
    nxt = _cycle(loader)
    net = _net(torch).to(device)

    def inputs(batch):
        return torch.cat([batch["t1"][tio.DATA], batch["t2"][tio.DATA]], 1).to(device)

    def train():
        batch = nxt()
        return _loss(torch, net(inputs(batch)), batch["seg"][tio.DATA].to(device))

    def evaluate():
        return net(inputs(nxt()))

    test_tf = tio.Compose([tio.ToCanonical(), tio.Resample((1.0, 1.0, 1.0)), tio.CropOrPad(SHAPE),
                           tio.ZNormalization()])
    test_loader = tio.SubjectsLoader(tio.SubjectsDataset(subjects[:2], transform=test_tf), batch_size=2,
                                     collate_fn=tio.utils.history_collate)

    def inverse_inference():
        batch = next(iter(test_loader))
        with torch.no_grad():
            logits = net(inputs(batch))
        labels = logits.argmax(dim=1, keepdim=True).cpu()
        subs = tio.utils.get_subjects_from_batch(batch)
        tio.utils.add_images_from_batch(subs, labels, tio.LabelMap)
        return [s.apply_inverse_transform(warn=False).spatial_shape for s in subs]

    def device_probabilities():
        batch = next(iter(test_loader))
        with torch.no_grad():
            probs = net(inputs(batch)).softmax(1)
        subs = tio.utils.get_subjects_from_batch(batch)
        tio.utils.add_images_from_batch(subs, probs, tio.ScalarImage, name="probs")
        return [s["probs"].shape for s in subs], [s.get_images_names() for s in subs]

    def batch_helpers():
        batch = next(iter(test_loader))
        names, size = tio.utils.get_batch_images_and_size(batch)
        return names, size, tio.utils.get_first_item(test_loader)["t1"][tio.DATA].shape

    return Workload("whole_volume_training", train=train, eval=evaluate, modules=[net], lr=1e-3, cases=[
        ("inverse-transform inference", inverse_inference), ("device predictions added", device_probabilities),
        ("batch helpers", batch_helpers)])


def build_grid_inference(torch, device):
    """Patch-based inference of the docs: GridSampler -> SubjectsLoader -> network on the device ->
    GridAggregator.add_batch (crop / average / hann), get_output_tensor; a downsampling network too."""
    tio = _tio()
    subject = tio.Compose([tio.RescaleIntensity(out_min_max=(0, 1))])(_subject(7, shape=(40, 36, 28)))
    net = _net(torch).to(device).eval()

    class Down(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.c = torch.nn.Conv3d(2, 3, 2, stride=2)

        def forward(self, x):
            return self.c(x)

    down = Down().to(device).eval()

    def infer(mode, overlap=(4, 4, 4), padding_mode=None, model=net, factor=1):
        def run():
            sampler = tio.inference.GridSampler(subject, PATCH, overlap, padding_mode=padding_mode)
            loader = tio.SubjectsLoader(sampler, batch_size=4)
            agg = tio.inference.GridAggregator(sampler, overlap_mode=mode, downsampling_factor=factor)
            with torch.no_grad():
                for batch in loader:
                    x = torch.cat([batch["t1"][tio.DATA], batch["t2"][tio.DATA]], 1).to(device)
                    agg.add_batch(model(x), batch[tio.LOCATION])
            return agg.get_output_tensor()

        return run

    def train():
        x = torch.cat([subject["t1"].data, subject["t2"].data], 0)[None, :, :16, :16, :16].to(device)
        return _loss(torch, net(x), subject["seg"].data[None, :, :16, :16, :16].to(device))

    return Workload("grid_inference", train=train, modules=[net], lr=1e-3, cases=[
        ("GridAggregator crop", infer("crop")),
        ("GridAggregator average", infer("average")),
        ("GridAggregator hann", infer("hann")),
        ("GridSampler padded + crop", infer("crop", overlap=(4, 4, 4), padding_mode="constant")),
        ("GridAggregator average no overlap", infer("average", overlap=(0, 0, 0))),
        ("GridAggregator downsampling", infer("crop", overlap=(0, 0, 0), model=down, factor=2))])


def _on_cpu(tio, transform, subject_fn=_subject, seed=3):
    def run():
        out = transform(subject_fn(seed))
        return out.get_images(intensity_only=False)[0].data.shape

    return run


def build_spatial_transforms(torch, device):
    """Spatial transforms on CPU subjects, as the data pipeline applies them, and their inverses."""
    tio = _tio()
    ref = _subject(1, shape=(28, 30, 20))
    tfs = {
        "RandomAffine": tio.RandomAffine(scales=(0.9, 1.1), degrees=15, translation=3, isotropic=False),
        "RandomAffine default_pad minimum": tio.RandomAffine(degrees=10, default_pad_value="minimum",
                                                             image_interpolation="bspline"),
        "Affine": tio.Affine(scales=(1.1, 0.9, 1.0), degrees=(5, 0, 0), translation=(1, 2, 0)),
        "RandomElasticDeformation": tio.RandomElasticDeformation(num_control_points=6, max_displacement=4),
        "RandomAffineElasticDeformation": tio.RandomAffineElasticDeformation(),
        "RandomAnisotropy": tio.RandomAnisotropy(downsampling=(1.5, 3)),
        "RandomFlip": tio.RandomFlip(axes=(0, 1, 2), flip_probability=1.0),
        "Resample": tio.Resample(2.0),
        "Resample to reference": tio.Resample("t1"),
        "Resize": tio.Resize((20, 20, 16)),
        "CropOrPad": tio.CropOrPad((24, 40, 20)),
        "CropOrPad mask": tio.CropOrPad((20, 20, 20), mask_name="seg"),
        "Crop": tio.Crop((2, 3, 1)),
        "Pad constant": tio.Pad(3),
        "Pad mean": tio.Pad((2, 2, 1), padding_mode="mean"),
        "Pad reflect": tio.Pad(2, padding_mode="reflect"),
        "ToCanonical": tio.ToCanonical(),
        "ToOrientation": tio.ToOrientation("LPS"),
        "Transpose": tio.Transpose(),
        "EnsureShapeMultiple": tio.EnsureShapeMultiple(8),
        "CopyAffine": tio.CopyAffine("t1"),
        "ToReferenceSpace": tio.ToReferenceSpace(ref["t1"]),
    }
    cases = [(k, _on_cpu(tio, v)) for k, v in tfs.items()]
    composed = tio.Compose([tio.RandomAffine(), tio.RandomFlip(), tio.Pad(2), tio.Crop(2)])

    def inverse():
        out = composed(_subject(4))
        back = out.apply_inverse_transform(warn=False)
        return back.spatial_shape, out.get_composed_history(), out.get_inverse_transform(warn=False)

    def tensor_api():
        t1, _, _ = _volumes(5)
        return tio.RandomAffine()(t1).shape, tio.RandomFlip(axes=(0,))(t1).shape, tio.Resize((16, 16, 16))(t1).shape

    def from_tensor():
        return tio.ToReferenceSpace.from_tensor(torch.rand(1, 16, 16, 12), ref["t1"]).shape

    def image_2d():
        img = tio.ScalarImage(tensor=torch.rand(1, 40, 32, 1))
        return tio.RandomAffine(degrees=(0, 0, 10))(img).shape, tio.Resize((20, 16, 1))(img).shape

    cases += [("inverse of Compose", inverse), ("tensor in, tensor out", tensor_api), ("2D image", image_2d),
              ("ToReferenceSpace.from_tensor", from_tensor)]
    return Workload("spatial_transforms", cases=cases)


def build_intensity_transforms(torch, device):
    """Intensity transforms and artefacts on CPU subjects; histogram standardisation trained on NIfTI files."""
    tio = _tio()
    paths = [p["t1"] for p in _files()]
    landmarks = tio.HistogramStandardization.train(paths, output_path=None)
    tfs = {
        "RandomNoise": tio.RandomNoise(mean=0.1, std=(0, 0.2)),
        "RandomBlur": tio.RandomBlur(std=(0, 2)),
        "RandomGamma": tio.RandomGamma(log_gamma=(-0.3, 0.3)),
        "RandomBiasField": tio.RandomBiasField(coefficients=0.5, order=3),
        "RandomMotion": tio.RandomMotion(degrees=5, translation=5, num_transforms=2),
        "RandomGhosting": tio.RandomGhosting(num_ghosts=(2, 5), intensity=(0.5, 1)),
        "RandomSpike": tio.RandomSpike(num_spikes=2, intensity=(0.5, 1)),
        "RandomSwap": tio.RandomSwap(patch_size=6, num_iterations=10),
        "RandomLabelsToImage": tio.RandomLabelsToImage(label_key="seg", image_key="synth"),
        "LabelsToImage": tio.LabelsToImage(label_key="seg", image_key="synth", mean=[0.1, 0.3, 0.6, 0.9],
                                           std=[0.01, 0.05, 0.05, 0.05]),
        "RescaleIntensity": tio.RescaleIntensity(out_min_max=(-1, 1), percentiles=(1, 99)),
        "RescaleIntensity masked": tio.RescaleIntensity(masking_method="seg"),
        "ZNormalization": tio.ZNormalization(),
        "ZNormalization masked": tio.ZNormalization(masking_method="seg"),
        "HistogramStandardization": tio.HistogramStandardization({"t1": landmarks}, include=["t1"]),
        "Clamp": tio.Clamp(out_min=0, out_max=500),
        "Mask": tio.Mask(masking_method="seg", outside_value=0),
        "Mask labels": tio.Mask(masking_method="seg", labels=[1, 2]),
        "OneOf": tio.OneOf([tio.RandomNoise(), tio.RandomBlur(), tio.RandomGamma()]),
        "Lambda": tio.Lambda(lambda x: x * 2, types_to_apply=[tio.INTENSITY]),
        "To dtype": tio.To(torch.float16),
    }
    cases = [(k, _on_cpu(tio, v)) for k, v in tfs.items()]

    def train_hist_masks():
        masks = [p["seg"] for p in _files()]
        return tio.HistogramStandardization.train(paths[:3], mask_path=masks[:3], output_path=None)

    def keep_original():
        tf = tio.Compose([tio.RandomNoise(), tio.RescaleIntensity()], keep={"t1": "t1_orig"})
        return tf(_subject(2)).get_images_names()

    def pca():
        emb = tio.ScalarImage(tensor=torch.randn(8, 16, 16, 12), affine=_affine())
        return tio.PCA(num_components=3)(tio.Subject(emb=emb))["emb"].shape

    cases += [("HistogramStandardization.train masked", train_hist_masks), ("Compose keep", keep_original),
              ("PCA", pca)]
    return Workload("intensity_transforms", cases=cases)


def build_label_transforms(torch, device):
    """Label-map transforms on CPU subjects."""
    tio = _tio()
    tfs = {
        "OneHot": tio.OneHot(),
        "RemapLabels": tio.RemapLabels({1: 3, 3: 1}),
        "RemoveLabels": tio.RemoveLabels([2]),
        "SequentialLabels": tio.SequentialLabels(),
        "KeepLargestComponent": tio.KeepLargestComponent(),
        "Contour": tio.Contour(),
    }

    def binary_subject(seed):
        s = _subject(seed)
        s["seg"].set_data((s["seg"].data == 2).to(torch.int64))
        return s

    cases = []
    for k, v in tfs.items():
        fn = binary_subject if k in ("KeepLargestComponent", "Contour") else _subject
        cases.append((k, _on_cpu(tio, v, fn)))

    def remap_inverse():
        tf = tio.RemapLabels({1: 3, 3: 1})
        out = tf(_subject(6))
        return out.apply_inverse_transform(warn=False)["seg"].data.sum()

    cases.append(("RemapLabels inverse", remap_inverse))
    return Workload("label_transforms", cases=cases)


def build_device_transforms(torch, device):
    """GPU augmentation: subjects moved with tio.To(device), then intensity / label / crop transforms on device
    tensors; the tensor API on a device batch's volumes; label statistics of device label maps. The loss of a
    network trained on the augmented device volumes is the training step."""
    tio = _tio()
    net = _net(torch, in_ch=1).to(device)

    def dev_subject(seed=0):
        s = _subject(seed)
        s = tio.To(device)(s)
        s["seg"].set_data(s["seg"].data.to(device))
        return s

    aug = tio.Compose([tio.ZNormalization(), tio.RandomGamma(log_gamma=0.1)])
    tfs = {
        "To(device)": tio.To(device),
        "ZNormalization": tio.ZNormalization(),
        "ZNormalization masked": tio.ZNormalization(masking_method="seg"),
        "RandomGamma": tio.RandomGamma(),
        "Clamp": tio.Clamp(out_min=0, out_max=500),
        "Mask": tio.Mask(masking_method="seg"),
        "OneHot": tio.OneHot(num_classes=4),
        "RemapLabels": tio.RemapLabels({1: 2, 2: 1}),
        "SequentialLabels": tio.SequentialLabels(),
        "Crop": tio.Crop((2, 2, 2)),
        "RandomSwap": tio.RandomSwap(patch_size=4, num_iterations=5),
    }  # the transforms that go through NumPy (rescale, flip, pad, blur, resampling) or add CPU tensors (noise)
    # stay in the CPU workloads
    cases = []
    for k, v in tfs.items():
        def run(v=v):
            out = v(dev_subject(1))
            return out["t1"].data.shape
        cases.append((k, run))

    def tensor_api():
        x = torch.rand(BS, 1, *SHAPE, device=device)
        return [tio.RandomGamma()(v).shape for v in x] + [tio.ZNormalization()(v).shape for v in x]

    def label_stats():
        s = dev_subject(2)
        return s["seg"].count_nonzero(), s["seg"].count_labels(), s["t1"].get_center(), s["seg"].get_bounds()

    def train():
        s = aug(dev_subject(3))
        x = s["t1"].data[None]
        return _loss(torch, net(x), s["seg"].data[None])

    cases += [("tensor API on device volumes", tensor_api), ("LabelMap statistics", label_stats)]
    return Workload("device_transforms", train=train, modules=[net], lr=1e-3, cases=cases)


def build_io_subjects(torch, device):
    """Images read from NIfTI files (lazy loading, SimpleITK and nibabel readers), saved, converted; Subject and
    Image utilities; a dummy dataset; a CLI-style apply to a file."""
    tio = _tio()
    files = _files()
    d = tempfile.mkdtemp(prefix="tio-out-")

    def read():
        s = tio.Subject(t1=tio.ScalarImage(files[0]["t1"]), seg=tio.LabelMap(files[0]["seg"]))
        s.load()
        return s.spatial_shape, s["t1"].spacing, s["t1"].orientation, s["t1"].memory, s["seg"].count_labels()

    def save_convert():
        img = tio.ScalarImage(files[1]["t1"])
        img.save(os.path.join(d, "out.nii.gz"))
        sitk_img = img.as_sitk()
        back = tio.ScalarImage.from_sitk(sitk_img)
        return back.shape, img.numpy().mean(), img.get_bounds(), img.to_ras().orientation

    def subject_utils():
        s = _subject(3)
        s.add_image(tio.ScalarImage(tensor=torch.rand(1, *SHAPE), affine=_affine()), "extra")
        s.remove_image("extra")
        s.check_consistent_space()
        return s.get_images_names(), s.shape, s.get_first_image().spatial_shape, s.get_images_dict(
            intensity_only=True).keys()

    def dummy():
        sd = tio.SubjectsDataset(_file_subjects()[:2], load_getitem=True)
        return [sd[i].spatial_shape for i in range(len(sd))], sd.dry_iter()

    def apply_to_file():
        out = os.path.join(d, "flipped.nii.gz")
        tio.utils.apply_transform_to_file(files[2]["t1"], tio.RandomFlip(axes=(0,)), out)
        return os.path.getsize(out)

    def gif_pil():
        img = tio.ScalarImage(tensor=torch.rand(1, 32, 32, 1) * 255)
        return img.as_pil().size

    return Workload("io_subjects", cases=[("read NIfTI", read), ("save / sitk round trip", save_convert),
                                          ("Subject utilities", subject_utils), ("SubjectsDataset", dummy),
                                          ("apply_transform_to_file", apply_to_file), ("as_pil", gif_pil)])


WORKLOADS = [build_queue_patch_training, build_whole_volume_training, build_grid_inference, build_spatial_transforms,
             build_intensity_transforms, build_label_transforms, build_device_transforms, build_io_subjects]
