"""Inference fixes found by scoring the linter on torchvision's detection models (bench/realcode_*.py).

Each case is a reduced copy of a pattern in torchvision 0.26.0 whose sync the GPU recorded (or whose
finding was a false positive), checked both as inferred values and end to end through the rules.
"""

import textwrap

from test_inference import probe
from torchsync_lint import lint_source


def codes(source: str):
    return sorted((f.line, f.code) for f in lint_source(textwrap.dedent(source), "realcode_case.py"))


def test_container_annotations_carry_their_element_type():
    # generalized_rcnn.py: `for target in targets: boxes = target["boxes"]`
    vals = probe("""
    from typing import Dict, List, Optional, Tuple
    from torch import Tensor
    def f(targets: Optional[list[dict[str, Tensor]]], feats: List[Tensor], outs: Dict[str, Tensor],
          shapes: tuple[Tensor, ...]):
        for target in targets:
            probe(target)
            probe(target["boxes"])
        probe(feats[0])
        probe(feats[1:])
        a, b = feats
        probe(b)
        probe(outs.get("x"))
        for v in outs.values():
            probe(v)
        for k, v in outs.items():
            probe(v)
        probe(shapes[3])
    """)
    kinds = [(v.kind, v.item.kind if v.item is not None else None) for v in vals]
    assert kinds == [("dict", "tensor"), ("tensor", None), ("tensor", None), ("list", "tensor"),
                     ("tensor", None), ("tensor", None), ("tensor", None), ("tensor", None), ("tensor", None)]


def test_bare_containers_stay_unknown_inside():
    vals = probe("""
    def f(xs: list, d: dict[str, "Foo"]):
        probe(xs[0])
        probe(d["k"])
        for k in d:
            probe(k)
    """)
    assert [v.kind for v in vals] == ["unknown", "unknown", "unknown"]


def test_parameter_keeps_its_declared_type_when_reassigned_from_the_unknown():
    # generalized_rcnn.py: `images, targets = self.transform(images, targets)` (a module from __init__)
    src = """
    import torch
    from torch import Tensor
    class GeneralizedRCNN(torch.nn.Module):
        def __init__(self, transform):
            super().__init__()
            self.transform = transform
        def forward(self, images: list[Tensor], targets: list[dict[str, Tensor]] = None):
            images, targets = self.transform(images, targets)
            for target in targets:
                boxes = target["boxes"]
                degenerate_boxes = boxes[:, 2:] <= boxes[:, :2]
                if degenerate_boxes.any():
                    raise ValueError("degenerate")
            return images
    """
    assert (13, "TSL302") in codes(src)


def test_a_known_reassignment_still_wins_over_the_declaration():
    vals = probe("""
    from torch import Tensor
    def f(x: Tensor):
        x = x.tolist()
        probe(x)
    """)
    assert vals[0].kind == "list"


def test_pep484_signature_type_comments():
    # roi_heads.py: paste_mask_in_image(mask, box, im_h, im_w) with `# type: (Tensor, Tensor, int, int) -> Tensor`
    src = """
    import torch
    def paste_mask_in_image(mask, box, im_h, im_w):
        # type: (Tensor, Tensor, int, int) -> Tensor
        w = int(box[2] - box[0] + 1)
        x_0 = max(box[0], 0)
        return mask

    def helper(x, n):  # type: (Tensor, int) -> tuple[Tensor, float]
        return x, 1.0

    class Heads(torch.nn.Module):
        def compute_loss(self, targets, head_outputs):
            # type: (list[dict[str, Tensor]], dict[str, Tensor]) -> Tensor
            for t in targets:
                if t["labels"].any():
                    pass
            return head_outputs["cls_logits"]
    """
    got = codes(src)
    assert (5, "TSL004") in got and (6, "TSL005") in got
    assert (16, "TSL302") in got
    vals = probe("""
    def g(x, n):  # type: (Tensor, int) -> tuple[Tensor, float]
        probe(x)
        probe(n)
        return x, 1.0
    def h(*xs):
        # type: (*Tensor) -> None
        probe(xs)
    probe(g(1, 2))
    """)
    assert [v.kind for v in vals[:2]] == ["tensor", "number"]
    assert vals[2].kind == "tuple" and [e.kind for e in vals[3].elts] == ["tensor", "number"]


def test_torch_jit_annotate_gives_the_annotated_type():
    vals = probe("""
    import torch
    from torch import Tensor
    def f():
        result = torch.jit.annotate(list[dict[str, Tensor]], [])
        probe(result)
    """)
    assert vals[0].kind == "list" and vals[0].item.kind == "dict"


def test_torch_predicates_and_private_bindings_are_no_tensors():
    # roi_heads.py / transform.py: `if torch._C._get_tracing_state():`;
    # roi_align.py: `if not _has_ops() or (torch.are_deterministic_algorithms_enabled() and ...)`
    src = """
    import torch
    class M(torch.nn.Module):
        def forward(self, x):
            if torch._C._get_tracing_state():
                return x
            if torch.are_deterministic_algorithms_enabled() and x.is_cuda:
                return x
            if torch.is_grad_enabled():
                return x
            return x
    """
    assert codes(src) == []
    vals = probe("""
    import torch
    probe(torch.is_autocast_enabled())
    probe(torch._C._get_tracing_state())
    probe(torch._C._nn.pad(torch.zeros(3), (1, 1)))
    """)
    assert [v.kind for v in vals] == ["number", "unknown", "tensor"]


def test_private_torch_helpers_and_version_strings_are_no_tensors():
    # ops/roi_align.py: `output_size = _pair(output_size)` then `torch.arange(output_size[0], device=d)`;
    # extension.py: `t_version = torch_version_cuda.split(".")` then `int(t_version[0])`
    src = """
    import torch
    from torch.nn.modules.utils import _pair
    from torch.version import cuda as torch_version_cuda
    class M(torch.nn.Module):
        def forward(self, x, output_size):
            output_size = _pair(output_size)
            ph = torch.arange(output_size[0], device=x.device)
            t_version = torch_version_cuda.split(".")
            major = int(t_version[0])
            return x + ph + major
    """
    assert codes(src) == []


def test_annotated_return_takes_the_device_from_the_body():
    # transforms.py ColorJitter: get_params() -> tuple[Tensor, ...] returns torch.randperm(4) (CPU):
    # `for fn_id in fn_idx: if fn_id == 0:` tests a CPU tensor, which costs no GPU sync
    src = """
    import torch
    from torch import Tensor
    from typing import Optional
    class ColorJitter(torch.nn.Module):
        @staticmethod
        def get_params(b: float) -> tuple[Tensor, Optional[float]]:
            fn_idx = torch.randperm(4)
            return fn_idx, b

        def forward(self, img):
            fn_idx, b = self.get_params(0.5)
            for fn_id in fn_idx:
                if fn_id == 0 and b is not None:
                    img = img * b
            return img
    """
    assert codes(src) == []
    vals = probe("""
    import torch
    from torch import Tensor
    def f() -> Tensor:
        return torch.zeros(3, device="cuda")
    def g() -> Tensor:
        return unknown_call()
    probe(f())
    probe(g())
    """)
    assert (vals[0].kind, vals[0].device) == ("tensor", "cuda")
    assert (vals[1].kind, vals[1].device) == ("tensor", None)


def test_dict_literals_and_tuple_joins_keep_cpu_tensors_on_the_cpu():
    # transforms/autoaugment.py: `_augmentation_space() -> dict[str, tuple[Tensor, bool]]` builds its
    # magnitudes with torch.linspace on the CPU; `.item()` of them costs no GPU sync
    src = """
    import torch
    from torch import Tensor
    class TrivialAugmentWide(torch.nn.Module):
        def _augmentation_space(self, num_bins: int) -> dict[str, tuple[Tensor, bool]]:
            return {
                "ShearX": (torch.linspace(0.0, 0.99, num_bins), True),
                "Posterize": (8 - (torch.arange(num_bins) / ((num_bins - 1) / 4)).round().int(), False),
                "Equalize": (torch.tensor(0.0), False),
            }

        def forward(self, img):
            op_meta = self._augmentation_space(31)
            magnitudes, signed = op_meta["ShearX"]
            magnitude = float(magnitudes[torch.randint(len(magnitudes), (1,), dtype=torch.long)].item())
            return img * magnitude
    """
    assert codes(src) == []
    vals = probe("""
    import torch
    d = {"a": (torch.zeros(2), True), "b": (torch.ones(2), False)}
    probe(d)
    probe({**d})
    probe({"a": 1, "b": torch.zeros(1)})
    """)
    assert vals[0].kind == "dict" and [e.kind for e in vals[0].item.elts] == ["tensor", "number"]
    assert vals[0].item.elts[0].device == "cpu"
    assert vals[1].item is None and vals[2].item is None


def test_comprehensions_carry_their_element_and_its_device():
    # transforms/_functional_tensor.py: _create_identity_grid() builds a CPU grid that
    # elastic_transform() then copies to the image's device
    vals = probe("""
    import torch
    from torch import Tensor
    def _create_identity_grid(size: list[int]) -> Tensor:
        hw_space = [torch.linspace((-s + 1) / s, (s - 1) / s, s) for s in size]
        probe(hw_space)
        grid_y, grid_x = torch.meshgrid(hw_space, indexing="ij")
        return torch.stack([grid_x, grid_y], -1).unsqueeze(0)
    probe(_create_identity_grid([4, 4]))
    probe([x for x in undefined_thing])
    """)
    assert vals[0].kind == "list" and vals[0].item.device == "cpu"
    assert (vals[1].kind, vals[1].device) == ("tensor", "cpu")
    assert vals[2].kind == "list" and vals[2].item is None
