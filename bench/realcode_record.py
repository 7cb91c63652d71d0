"""Record every host-device sync that torchvision's detection models make on a CUDA GPU.

    PYTHONUNBUFFERED=1 python3 bench/realcode_record.py --out $OUT/torchvision-0.26.0-syncs.json
    PYTHONUNBUFFERED=1 python3 bench/realcode_record.py --suite more --out $OUT/torchvision-0.26.0-syncs-more.json
    python3 bench/realcode_record.py --dry-run --out /tmp/dry.json   # CPU: corpus sources, fake nms

Suite ``detection`` (default): the eight detection models; suite ``more``: three v2 detection models,
classification (resnet50, swin_t, maxvit_t, vit_b_16), segmentation, optical flow (raft_small), video
(mvit_v1_b), and 42 transforms (v1 tensor API and v2 with boxes/masks) on GPU images, 3 calls each.
Runs each model in training mode (forward, summed loss, backward, SGD step) and one eval-mode
forward, after a warm-up pass that is not recorded (lazy initialisation syncs once). Synthetic
batches: two images of different sizes, random boxes/labels/masks/keypoints created on the device.

Three oracles (DESIGN.md section 4), each attributed to a source line:
- ``warning``: ``torch.cuda.set_sync_debug_mode("warn")`` raises a Python warning per sync; a
  ``showwarning`` hook walks the stack from the innermost frame outwards past torch's and the
  standard library's frames; the first other frame is the line (torchvision's, or ``<harness>``).
- ``stderr``: ops reached through ``torch.ops.*`` (torchvision's nms, roi ops) print the debug-mode
  warning to fd 2 instead. fd 2 goes to a file; a line tracer on torchvision frames checks the file's
  size at every call/line/return event, so a new message belongs to the torchvision line that ran
  before the event. Validated against the stack-based oracles (``validation`` in the output).
- ``trace``: ``torch.cuda._gpu_trace`` device/stream/event synchronisation callbacks (explicit
  ``synchronize()`` calls; blocking copies report a stream synchronisation too), stack-attributed.

The same tracer records which torchvision lines executed, so the scorer knows which statements ran.
Output (JSON): versions, device, and per model: sync events (file relative to site-packages, e.g.
``torchvision/ops/boxes.py``, line, oracle, phase, count, the chain of enclosing torchvision call
lines, and the torch function it went through) and the executed lines per file.
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import sys
import sysconfig
import tempfile
import time
import warnings
from typing import Dict, List, Optional, Tuple

HERE = os.path.dirname(os.path.abspath(__file__))
SYNC_WORDS = "synchronizing CUDA operation"
Loc = Tuple[str, int]


class SyncRecorder:
    """Collects sync events and executed torchvision lines while ``active``."""

    def __init__(self, pkg_dir: str, torch_dir: str) -> None:
        self.pkg_root = os.path.dirname(pkg_dir) + os.sep  # site-packages/ (paths keep "torchvision/")
        self.pkg_prefix = pkg_dir + os.sep
        self.torch_prefix = torch_dir + os.sep
        self.stdlib_prefix = sysconfig.get_paths()["stdlib"] + os.sep
        self.skip_codes = set()  # code objects of hooks (and dry-run fakes) that stand in for torch
        self._rel_cache: Dict[str, str] = {}
        self.phase = "setup"
        self.events: collections.Counter = collections.Counter()
        self.executed: Dict[str, set] = collections.defaultdict(set)
        self.samples: Dict[tuple, str] = {}
        self.validation = collections.Counter()
        self.disagreements: List[dict] = []
        self.active = False
        # tracer state: the torchvision line that ran last, and its frame
        self.last_loc: Optional[Loc] = None
        self.last_frame = None
        self.err_fd = -1
        self.err_pos = 0
        self.saved_fd2 = -1
        self.other_stderr: List[str] = []

    # ---- paths -------------------------------------------------------------------------------
    def rel(self, filename: str) -> str:
        """'torchvision/...' for torchvision files, '' otherwise (cached)."""
        r = self._rel_cache.get(filename)
        if r is None:
            r = filename[len(self.pkg_root):] if filename.startswith(self.pkg_prefix) else ""
            self._rel_cache[filename] = r
        return r

    def _skipped(self, frame) -> bool:
        fn = frame.f_code.co_filename
        if frame.f_code in self.skip_codes or fn.startswith(self.torch_prefix) or fn.startswith("<"):
            return True
        return fn.startswith(self.stdlib_prefix) and "-packages" not in fn

    def _tv_chain(self, frame) -> List[Loc]:
        chain = []
        while frame is not None:
            r = self.rel(frame.f_code.co_filename)
            if r:
                chain.append((r, frame.f_lineno))
            frame = frame.f_back
        return chain

    def attribute_stack(self, frame) -> Tuple[Loc, List[Loc], str]:
        """(innermost non-torch line, torchvision chain, the torch function it went through)."""
        via = ""
        while frame is not None and self._skipped(frame):
            fn = frame.f_code.co_filename
            if fn.startswith(self.torch_prefix) and not via:
                via = "torch/%s:%s" % (fn[len(self.torch_prefix):], frame.f_code.co_name)
            frame = frame.f_back
        if frame is None:
            return ("<unknown>", 0), [], via
        r = self.rel(frame.f_code.co_filename)
        loc = (r, frame.f_lineno) if r else ("<harness>", frame.f_lineno)
        return loc, self._tv_chain(frame), via

    # ---- event recording ---------------------------------------------------------------------
    def record(self, oracle: str, loc: Loc, chain: List[Loc], via: str, what: str = "") -> None:
        if not self.active:
            return
        key = (self.phase, loc[0], loc[1], oracle, tuple(chain[1:4]), via)
        self.events[key] += 1
        if what and key not in self.samples:
            self.samples[key] = what[:200]

    def on_stack_event(self, oracle: str, what: str) -> None:
        if not self.active:
            return
        frame = sys._getframe(1)
        loc, chain, via = self.attribute_stack(frame)
        if loc[0].startswith("torchvision/"):
            # validate the line tracer used for the stderr oracle against the stack
            traced = self.last_loc
            self.validation["agree" if traced == loc else "disagree"] += 1
            if traced != loc and len(self.disagreements) < 20:
                self.disagreements.append({"stack": loc, "tracer": traced, "oracle": oracle})
        self.record(oracle, loc, chain or [loc], via, what)

    def showwarning(self, message, category, filename, lineno, file=None, line=None):
        text = str(message)
        if SYNC_WORDS in text or "dry-run sync" in text:
            self.on_stack_event("warning", text)
        else:
            print("[warning] %s:%s: %s" % (filename, lineno, text.splitlines()[0][:200]), flush=True)

    def trace_callback(self, kind: str):
        def callback(*args):
            self.on_stack_event("trace", kind)
        self.skip_codes.add(callback.__code__)
        return callback

    # ---- stderr oracle -----------------------------------------------------------------------
    def start_stderr_capture(self) -> None:
        sys.stderr.flush()
        self.saved_fd2 = os.dup(2)
        fd, _path = tempfile.mkstemp(prefix="tsl-stderr-")
        os.dup2(fd, 2)
        self.err_fd = fd
        self.err_pos = 0

    def stop_stderr_capture(self) -> None:
        if self.saved_fd2 < 0:
            return
        sys.stderr.flush()
        self.poll_stderr(None)
        os.dup2(self.saved_fd2, 2)
        os.close(self.saved_fd2)
        self.saved_fd2 = -1
        for text in self.other_stderr[-40:]:
            sys.stderr.write("[stderr] " + text + "\n")

    def poll_stderr(self, frame_hint) -> None:
        """Attribute sync messages written to fd 2 since the last poll to the last traced line."""
        size = os.fstat(self.err_fd).st_size
        if size <= self.err_pos:
            return
        data = os.pread(self.err_fd, size - self.err_pos, self.err_pos).decode("utf-8", "replace")
        self.err_pos = size
        n = data.count(SYNC_WORDS) + data.count("dry-run sync")
        for text in data.splitlines():
            if text.strip() and SYNC_WORDS not in text and "dry-run sync" not in text:
                self.other_stderr.append(text[:300])
        if not n:
            return
        if self.last_loc is None:
            loc, chain = ("<harness>", 0), []
        else:
            outer = self._tv_chain(self.last_frame.f_back) if self.last_frame is not None else []
            loc, chain = self.last_loc, [self.last_loc] + outer
        for _ in range(n):
            self.record("stderr", loc, chain, "torch.ops", "stderr message")

    # ---- line tracer (torchvision frames only) -----------------------------------------------
    def global_trace(self, frame, event, arg):
        if not self.rel(frame.f_code.co_filename):
            return None
        self.poll_stderr(frame)  # anything pending ran under the caller's line
        return self.local_trace

    def local_trace(self, frame, event, arg):
        if event == "line":
            self.poll_stderr(frame)
            r = self.rel(frame.f_code.co_filename)
            self.last_loc = (r, frame.f_lineno)
            self.last_frame = frame
            if self.active:
                self.executed[r].add(frame.f_lineno)
        elif event == "return":
            self.poll_stderr(frame)
            outer = frame.f_back
            while outer is not None and not self.rel(outer.f_code.co_filename):
                outer = outer.f_back
            self.last_frame = outer
            self.last_loc = (self.rel(outer.f_code.co_filename), outer.f_lineno) if outer else None
        return self.local_trace

    def flush(self) -> None:
        """Attribute what the harness itself (backward, optimizer step) printed."""
        self.last_loc, self.last_frame = None, None
        self.poll_stderr(None)


# ---- the models ------------------------------------------------------------------------------
MODELS = (
    # name, builder kwargs (eval thresholds low so postprocessing has detections to work on), targets
    ("fasterrcnn_resnet50_fpn", dict(box_score_thresh=0.0, box_detections_per_img=50), "boxes"),
    ("fasterrcnn_mobilenet_v3_large_fpn", dict(box_score_thresh=0.0, box_detections_per_img=50), "boxes"),
    ("maskrcnn_resnet50_fpn", dict(box_score_thresh=0.0, box_detections_per_img=20), "masks"),
    ("keypointrcnn_resnet50_fpn", dict(box_score_thresh=0.0, box_detections_per_img=20), "keypoints"),
    ("retinanet_resnet50_fpn", dict(score_thresh=0.0, detections_per_img=100), "boxes"),
    ("fcos_resnet50_fpn", dict(score_thresh=0.0, detections_per_img=100), "boxes"),
    ("ssd300_vgg16", dict(score_thresh=0.0, detections_per_img=100), "boxes"),
    ("ssdlite320_mobilenet_v3_large", dict(score_thresh=0.0, detections_per_img=100), "boxes"),
)
IMAGE_SIZES = ((480, 640), (512, 400))


def make_batch(torch, device, kind: str, num_classes: int, gen):
    images, targets = [], []
    for h, w in IMAGE_SIZES:
        images.append(torch.rand(3, h, w, device=device, generator=gen))
        n = 4
        u = torch.rand(n, 4, device=device, generator=gen)  # scaled per column with Python numbers
        x, y = u[:, 0:1] * (w / 2), u[:, 1:2] * (h / 2)
        bw, bh = u[:, 2:3] * (w / 3) + 16, u[:, 3:4] * (h / 3) + 16
        boxes = torch.cat([x, y, x + bw, y + bh], dim=1)
        t = {"boxes": boxes, "labels": torch.randint(1, num_classes, (n,), device=device, generator=gen)}
        if kind == "masks":
            t["masks"] = (torch.rand(n, h, w, device=device, generator=gen) > 0.5).to(torch.uint8)
        if kind == "keypoints":
            k = 17
            frac = torch.rand(n, k, 2, device=device, generator=gen)
            pts = boxes[:, None, :2] + frac * (boxes[:, None, 2:] - boxes[:, None, :2])
            t["keypoints"] = torch.cat([pts, torch.ones(n, k, 1, device=device)], dim=2)
        targets.append(t)
    return images, targets


def run_model(torch, detection, rec: SyncRecorder, name: str, kwargs: dict, kind: str, device, steps: int):
    builder = getattr(detection, name)
    num_classes = 2 if kind == "keypoints" else 91
    model = builder(weights=None, weights_backbone=None, num_classes=num_classes, **kwargs).to(device)
    opt = torch.optim.SGD(model.parameters(), lr=1e-5, momentum=0.9)
    gen = torch.Generator(device=device)
    gen.manual_seed(0)

    def train_step():
        model.train()
        images, targets = make_batch(torch, device, kind, num_classes, gen)
        rec.flush()
        rec.phase = "train"
        losses = model(images, targets)
        rec.flush()
        rec.phase = "train-backward"
        loss = sum(losses.values())
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        rec.flush()
        rec.phase = "harness"

    def eval_step():
        model.eval()
        images, _ = make_batch(torch, device, kind, num_classes, gen)
        rec.flush()
        rec.phase = "eval"
        with torch.no_grad():
            out = model(images)
        rec.flush()
        rec.phase = "harness"
        return out

    rec.active = False
    train_step()  # warm-up, unrecorded
    eval_step()
    if device.type == "cuda":
        torch.cuda.synchronize()
    rec.active = True
    for _ in range(steps):
        train_step()
    out = eval_step()
    if device.type == "cuda":
        torch.cuda.synchronize()
    rec.active = False
    return [len(o["boxes"]) for o in out]


# ---- suite "more": other model families and the transforms, on GPU tensors --------------------
OTHER_MODELS = (
    # name, family; weights=None everywhere
    ("fasterrcnn_resnet50_fpn_v2", "detection"),
    ("maskrcnn_resnet50_fpn_v2", "detection-masks"),
    ("retinanet_resnet50_fpn_v2", "detection"),
    ("resnet50", "classify"),
    ("swin_t", "classify"),
    ("maxvit_t", "classify"),
    ("vit_b_16", "classify"),
    ("deeplabv3_mobilenet_v3_large", "segment"),
    ("raft_small", "flow"),
    ("mvit_v1_b", "video"),
)


def run_other_model(torch, tv, rec: SyncRecorder, name: str, family: str, device, steps: int):
    import torch.nn.functional as F

    if family.startswith("detection"):
        kind = "masks" if family.endswith("masks") else "boxes"
        kwargs = dict(score_thresh=0.0, detections_per_img=50) if "retinanet" in name else \
            dict(box_score_thresh=0.0, box_detections_per_img=20)
        return run_model(torch, tv.models.detection, rec, name, kwargs, kind, device, steps)
    gen = torch.Generator(device=device)
    gen.manual_seed(0)
    if family == "classify":
        model = getattr(tv.models, name)(weights=None, num_classes=10)
        batch = lambda: (torch.rand(2, 3, 224, 224, device=device, generator=gen),)  # noqa: E731
        loss_of = lambda out: F.cross_entropy(out, torch.zeros(2, dtype=torch.long, device=device))  # noqa: E731
    elif family == "segment":
        model = getattr(tv.models.segmentation, name)(weights=None, weights_backbone=None, num_classes=5)
        batch = lambda: (torch.rand(2, 3, 256, 256, device=device, generator=gen),)  # noqa: E731
        seg_target = torch.zeros(2, 256, 256, dtype=torch.long, device=device)
        loss_of = lambda out: F.cross_entropy(out["out"], seg_target)  # noqa: E731
    elif family == "flow":
        model = getattr(tv.models.optical_flow, name)(weights=None)
        batch = lambda: (torch.rand(2, 3, 128, 128, device=device, generator=gen),  # noqa: E731
                         torch.rand(2, 3, 128, 128, device=device, generator=gen))
        loss_of = lambda out: sum(f.abs().mean() for f in out)  # noqa: E731
    elif family == "video":
        model = getattr(tv.models.video, name)(weights=None, num_classes=10)
        batch = lambda: (torch.rand(1, 3, 16, 224, 224, device=device, generator=gen),)  # noqa: E731
        loss_of = lambda out: F.cross_entropy(out, torch.zeros(1, dtype=torch.long, device=device))  # noqa: E731
    else:
        raise ValueError(family)
    model = model.to(device)
    opt = torch.optim.SGD(model.parameters(), lr=1e-5, momentum=0.9)

    def step(train: bool):
        model.train(train)
        args = batch()
        rec.flush()
        rec.phase = "train" if train else "eval"
        with torch.set_grad_enabled(train):
            out = model(*args)
        rec.flush()
        if train:
            rec.phase = "train-backward"
            opt.zero_grad(set_to_none=True)
            loss_of(out).backward()
            opt.step()
            rec.flush()
        rec.phase = "harness"

    rec.active = False
    step(True)
    step(False)
    torch.cuda.synchronize() if device.type == "cuda" else None
    rec.active = True
    for _ in range(steps):
        step(True)
    step(False)
    torch.cuda.synchronize() if device.type == "cuda" else None
    rec.active = False
    return []


def transform_cases(torch, tv, device):
    """(name, callable(gen) -> output): tensor-API transforms on GPU images, v1 and v2."""
    import torchvision.transforms as T
    import torchvision.transforms.v2 as v2
    from torchvision import tv_tensors

    def img_u8(gen, h=240, w=320):
        return (torch.rand(3, h, w, device=device, generator=gen) * 255).to(torch.uint8)

    def img_f(gen, h=240, w=320):
        return torch.rand(3, h, w, device=device, generator=gen)

    def sample(gen, fmt="XYXY"):
        img = tv_tensors.Image(img_u8(gen))
        u = torch.rand(4, 4, device=device, generator=gen)
        xyxy = torch.cat([u[:, :2] * 150, u[:, :2] * 150 + 20 + u[:, 2:] * 100], dim=1)
        boxes = tv_tensors.BoundingBoxes(xyxy, format="XYXY", canvas_size=(240, 320))
        if fmt in ("XYWHR", "XYXYXYXY"):  # rotated: corner, size, angle in degrees
            xywhr = torch.cat([xyxy[:, :2], xyxy[:, 2:] - xyxy[:, :2], u[:, :1] * 90], dim=1)
            boxes = tv_tensors.BoundingBoxes(xywhr, format="XYWHR", canvas_size=(240, 320))
        if fmt not in ("XYXY", "XYWHR"):
            boxes = v2.ConvertBoundingBoxFormat(fmt)(boxes)
        mask = tv_tensors.Mask((torch.rand(240, 320, device=device, generator=gen) > 0.5).to(torch.uint8))
        return img, boxes, mask, torch.arange(4, device=device)

    mean, std = [0.485, 0.456, 0.406], [0.229, 0.224, 0.225]
    v1 = [
        ("v1.Pad-symmetric", T.Pad(10, padding_mode="symmetric"), img_f),
        ("v1.RandomAffine", T.RandomAffine(30, translate=(0.1, 0.1), scale=(0.8, 1.2), shear=10,
                                           fill=[0.5, 0.5, 0.5]), img_f),
        ("v1.RandomRotation", T.RandomRotation(30, fill=[0.1, 0.2, 0.3]), img_f),
        ("v1.RandomPerspective", T.RandomPerspective(p=1.0), img_f),
        ("v1.ColorJitter", T.ColorJitter(0.4, 0.4, 0.4, 0.1), img_f),
        ("v1.Normalize", T.Normalize(mean, std), img_f),
        ("v1.RandomEqualize", T.RandomEqualize(p=1.0), img_u8),
        ("v1.AutoAugment", T.AutoAugment(), img_u8),
        ("v1.RandAugment", T.RandAugment(), img_u8),
        ("v1.TrivialAugmentWide", T.TrivialAugmentWide(), img_u8),
        ("v1.AugMix", T.AugMix(), img_u8),
        ("v1.GaussianBlur", T.GaussianBlur(5), img_f),
        ("v1.RandomErasing", T.RandomErasing(p=1.0), img_f),
        ("v1.ElasticTransform", T.ElasticTransform(), img_f),
        ("v1.RandomResizedCrop", T.RandomResizedCrop(224, antialias=True), img_f),
        ("v1.RandomAdjustSharpness", T.RandomAdjustSharpness(2, p=1.0), img_f),
    ]
    cases = [(n, (lambda t, mk: (lambda gen: t(mk(gen))))(t, mk)) for n, t, mk in v1]
    v2_cases = [
        ("v2.RandomHorizontalFlip", v2.RandomHorizontalFlip(p=1.0)),
        ("v2.RandomVerticalFlip", v2.RandomVerticalFlip(p=1.0)),
        ("v2.RandomAffine", v2.RandomAffine(30, translate=(0.1, 0.1), scale=(0.8, 1.2), shear=10)),
        ("v2.RandomRotation", v2.RandomRotation(30)),
        ("v2.RandomPerspective", v2.RandomPerspective(p=1.0)),
        ("v2.ColorJitter", v2.ColorJitter(0.4, 0.4, 0.4, 0.1)),
        ("v2.RandomChannelPermutation", v2.RandomChannelPermutation()),
        ("v2.RandomAdjustSharpness", v2.RandomAdjustSharpness(2, p=1.0)),
        ("v2.RandomZoomOut", v2.RandomZoomOut(p=1.0)),
        ("v2.ClampBoundingBoxes", v2.ClampBoundingBoxes()),
        ("v2.RandomResizedCrop", v2.RandomResizedCrop(224, antialias=True)),
        ("v2.ConvertBoundingBoxFormat", v2.ConvertBoundingBoxFormat("CXCYWH")),
    ]
    for n, t in v2_cases:
        cases.append((n, (lambda t: (lambda gen: t(*sample(gen))))(t)))
    image_only = [("v2.AutoAugment", v2.AutoAugment()), ("v2.RandAugment", v2.RandAugment()),
                  ("v2.TrivialAugmentWide", v2.TrivialAugmentWide()), ("v2.AugMix", v2.AugMix()),
                  ("v2.ElasticTransform", v2.ElasticTransform()), ("v2.RandomEqualize", v2.RandomEqualize(p=1.0))]
    for n, t in image_only:
        cases.append((n, (lambda t: (lambda gen: t(sample(gen)[0])))(t)))
    iou_crop = v2.Compose([v2.RandomIoUCrop(), v2.SanitizeBoundingBoxes()])

    def with_target(gen):
        img, boxes, _mask, labels = sample(gen)
        return iou_crop(img, {"boxes": boxes, "labels": labels})
    cases.append(("v2.RandomIoUCrop+Sanitize", with_target))
    for fmt in ("XYWHR", "XYXYXYXY"):  # rotated boxes
        for n, t in (("RandomAffine", v2.RandomAffine(30)), ("RandomHorizontalFlip", v2.RandomHorizontalFlip(p=1.0)),
                     ("RandomRotation", v2.RandomRotation(30))):
            cases.append(("v2.%s-%s" % (n, fmt), (lambda t, fmt: (lambda gen: t(*sample(gen, fmt))))(t, fmt)))
    return cases


def run_transforms(torch, tv, rec: SyncRecorder, device, steps: int) -> dict:
    gen = torch.Generator(device=device)
    gen.manual_seed(0)
    errors = {}
    for name, fn in transform_cases(torch, tv, device):
        try:
            rec.active = False
            torch.manual_seed(0)
            fn(gen)  # warm-up
            torch.cuda.synchronize() if device.type == "cuda" else None
            rec.active = True
            for _ in range(steps):
                rec.flush()
                rec.phase = "transform:" + name
                fn(gen)
                rec.flush()
                rec.phase = "harness"
        except Exception as e:
            errors[name] = "%s: %s" % (type(e).__name__, str(e)[:200])
        rec.active = False
    torch.cuda.synchronize() if device.type == "cuda" else None
    return errors


def fake_ops_for_dry_run(torch, rec: SyncRecorder) -> None:
    """CPU dry run: torchvision's C++ ops are missing; a Python nms that 'syncs' on both channels."""
    lib = torch.library.Library("torchvision", "DEF")
    lib.define("nms(Tensor dets, Tensor scores, float iou_threshold) -> Tensor")

    def nms_cpu(dets, scores, iou_threshold):
        os.write(2, b"[W] Warning: dry-run sync (stderr)\n")
        warnings.warn("dry-run sync (warning)")
        order = scores.argsort(descending=True)
        keep = []
        area = (dets[:, 2] - dets[:, 0]) * (dets[:, 3] - dets[:, 1])
        suppressed = torch.zeros(len(dets), dtype=torch.bool)
        for i in order.tolist():
            if suppressed[i]:
                continue
            keep.append(i)
            lt = torch.maximum(dets[i, :2], dets[:, :2])
            rb = torch.minimum(dets[i, 2:], dets[:, 2:])
            inter = (rb - lt).clamp(min=0).prod(1)
            suppressed |= inter / (area[i] + area - inter) > iou_threshold
        return torch.tensor(keep, dtype=torch.long)

    lib.impl("nms", nms_cpu, "CPU")
    rec.skip_codes.add(nms_cpu.__code__)
    rec._fake_lib = lib  # keep the registration alive


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--steps", type=int, default=2, help="recorded training steps per model")
    ap.add_argument("--models", default="", help="comma-separated subset")
    ap.add_argument("--deadline", type=float, default=400.0, help="seconds; later models are skipped")
    ap.add_argument("--dry-run", action="store_true", help="CPU, torchvision sources from bench/corpus")
    ap.add_argument("--suite", choices=("detection", "more"), default="detection",
                    help="detection: the eight detection models; more: other families and the transforms")
    args = ap.parse_args(argv)
    t0 = time.time()

    if args.dry_run:
        sys.path.insert(0, os.path.join(HERE, "corpus", "torchvision-0.26.0"))
    import torch

    rec_holder: List[SyncRecorder] = []
    if args.dry_run:
        # torchvision's meta registrations need the op schemas before import
        import importlib.util
        spec = importlib.util.find_spec("torchvision")
        rec_holder.append(SyncRecorder(os.path.dirname(spec.origin), os.path.dirname(torch.__file__)))
        fake_ops_for_dry_run(torch, rec_holder[0])
    import torchvision
    from torchvision.models import detection

    if args.dry_run:
        import torchvision.ops.boxes as tv_boxes
        tv_boxes._assert_has_ops = lambda: None
        rec = rec_holder[0]
    else:
        rec = SyncRecorder(os.path.dirname(torchvision.__file__), os.path.dirname(torch.__file__))

    cuda = torch.cuda.is_available() and not args.dry_run
    device = torch.device("cuda" if cuda else "cpu")
    result = {
        "torch": torch.__version__, "torchvision": torchvision.__version__,
        "python": sys.version.split()[0], "cuda": torch.version.cuda,
        "device": torch.cuda.get_device_name(0) if cuda else "cpu (dry run)",
        "image_sizes": IMAGE_SIZES, "recorded_train_steps": args.steps, "recorded_eval_forwards": 1,
        "oracles": {
            "warning": "set_sync_debug_mode('warn') Python warning, stack-attributed",
            "stderr": "debug-mode message on fd 2 (torch.ops paths), attributed by the line tracer",
            "trace": "torch.cuda._gpu_trace synchronization callback, stack-attributed",
        },
        "models": {},
    }

    warnings.simplefilter("always")
    warnings.showwarning = rec.showwarning
    rec.skip_codes.add(rec.showwarning.__func__.__code__)
    if cuda:
        from torch.cuda import _gpu_trace
        torch._C._activate_gpu_trace()
        _gpu_trace.register_callback_for_device_synchronization(rec.trace_callback("device-sync"))
        _gpu_trace.register_callback_for_stream_synchronization(rec.trace_callback("stream-sync"))
        _gpu_trace.register_callback_for_event_synchronization(rec.trace_callback("event-sync"))
        torch.cuda.set_sync_debug_mode("warn")
    torch.backends.cudnn.benchmark = False

    wanted = [m for m in args.models.split(",") if m]
    rec.start_stderr_capture()
    sys.settrace(rec.global_trace)
    try:
        if args.suite == "detection":
            jobs = [(n, (lambda n, kw, kind: lambda: run_model(torch, detection, rec, n, kw, kind, device, args.steps))(
                n, kw, kind), {"kind": kind, "kwargs": kw}) for n, kw, kind in MODELS]
        else:
            jobs = [(n, (lambda n, fam: lambda: run_other_model(torch, torchvision, rec, n, fam, device, args.steps))(
                n, fam), {"family": fam}) for n, fam in OTHER_MODELS]
            jobs.append(("transforms", lambda: run_transforms(torch, torchvision, rec, device, 3),
                         {"kind": "transforms"}))
        result["suite"] = args.suite
        for name, job, info in jobs:
            if wanted and name not in wanted:
                continue
            if time.time() - t0 > args.deadline:
                print("deadline: skipping", name, flush=True)
                continue
            t1 = time.time()
            for table in (rec.events, rec.executed, rec.samples, rec.validation, rec.disagreements):
                table.clear()
            entry = dict(info)
            try:
                entry["result"] = job()
            except Exception as e:  # record and go on with the next model
                rec.active = False
                entry["error"] = "%s: %s" % (type(e).__name__, e)
            entry["events"] = [
                {"phase": ph, "file": f, "line": ln, "oracle": o, "chain": [list(c) for c in ch], "via": via,
                 "count": n, **({"what": rec.samples[k]} if k in rec.samples else {})}
                for k, n in sorted(rec.events.items()) for (ph, f, ln, o, ch, via) in [k]
            ]
            entry["executed"] = {f: sorted(v) for f, v in sorted(rec.executed.items())}
            entry["validation"] = dict(rec.validation)
            entry["disagreements"] = rec.disagreements[:]
            entry["seconds"] = round(time.time() - t1, 1)
            result["models"][name] = entry
            by_oracle = collections.Counter()
            for e in entry["events"]:
                by_oracle[e["oracle"]] += e["count"]
            print("%-36s %5.1fs events %s lines %d %s" % (
                name, entry["seconds"], dict(by_oracle), sum(map(len, entry["executed"].values())),
                entry.get("error", "")), flush=True)
            result["elapsed_s"] = round(time.time() - t0, 1)
            with open(args.out, "w") as fh:  # after each model, so a timeout keeps what was done
                json.dump(result, fh, indent=1)
    finally:
        sys.settrace(None)
        rec.stop_stderr_capture()
    print("done in %.1fs -> %s" % (time.time() - t0, args.out), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
