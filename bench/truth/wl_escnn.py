"""escnn 1.0.11 workloads, as its examples and tutorials run them (``examples/model.ipynb``,
``introduction.ipynb``, ``mlp.ipynb``, ``se3_3Dconv.ipynb``): steerable CNNs built from ``escnn.nn`` modules on
the gspaces users pick, moved to the device with ``.to(device)``, fed ``GeometricTensor`` s of device batches;
training steps (forward, cross-entropy / MSE, backward, AdamW step: the filters are expanded from the basis on
every training forward), the eval forward (filters expanded once and cached in eval mode), and as cases
``export()`` to plain torch modules and their forward, ``GeometricTensor`` operations (``transform`` by group
elements, ``restrict``, ``split``, ``tensor_directsum``, arithmetic), the initialisers on device weights, and
module by module calls of the nonlinearities, batch norms, poolings, dropouts, invariant maps and utility
modules.

- C8 / D8 / SO(2) / O(2) on the plane (``rot2dOnR2``, ``flipRot2dOnR2``, ``flip2dOnR2``): the tutorial's C8
  steerable CNN (R2Conv, InnerBatchNorm, ReLU, PointwiseAvgPoolAntialiased, GroupPooling), an O(2) network on
  irreps (NormNonLinearity, GatedNonLinearity1/2, InducedGatedNonLinearity1, NormBatchNorm, GNormBatchNorm,
  InducedNormBatchNorm, NormPool, NormMaxPool, FourierELU, QuotientFourierELU), a small U-Net (R2ConvTransposed,
  R2Upsampling, PointwiseMaxPool, ConcatenatedNonLinearity, VectorFieldNonLinearity, FieldDropout,
  PointwiseDropout, MultipleModule, MaskModule);
- 3D (``rot3dOnR3``, ``flipRot3dOnR3``, ``octaOnR3``, ``icoOnR3``, ``rot2dOnR3``): R3Conv with FourierELU /
  GatedNonLinearity1 / IIDBatchNorm3d, R3IcoConv, R3ConvTransposed, R3Upsampling, PointwiseAvgPoolAntialiased3D,
  an octahedral regular-representation network;
- no base space (``no_base_space``): the equivariant MLP (Linear, IIDBatchNorm1d, FourierELU, TensorProductModule,
  HarmonicPolynomialR3 on point clouds), and R2PointConv / R3PointConv on random geometric graphs.

Synthetic data made on the device; no downloads. py3nj is not used (escnn falls back to its numerical
Clebsch-Gordan coefficients, as it does where py3nj is missing).
"""

from __future__ import annotations

import warnings

from harness import Workload

B = 4  # batch


def _esc():
    warnings.filterwarnings("ignore")
    import escnn  # noqa: F401
    from escnn import group, gspaces, nn
    from escnn.group import _numerical

    if _numerical.randomized_svd is not None and not getattr(_numerical.randomized_svd, "_asarray", False):
        # escnn hands scikit-learn's randomized_svd a dense np.matrix, which scikit-learn >= 1.6 refuses
        import numpy as np

        svd = _numerical.randomized_svd

        def randomized_svd(A, *args, **kwargs):
            return svd(np.asarray(A), *args, **kwargs)

        randomized_svd._asarray = True
        _numerical.randomized_svd = randomized_svd

    return gspaces, nn, group


def _net_workload(torch, device, name, model, in_type, shape, n_out, head=None, loss="ce", extra_cases=(),
                  lr=1e-3, export=True):
    """A training step (forward, loss), an eval forward, and export() + its forward and the exported model's
    training step as cases."""
    _, nn, _ = _esc()
    model = model.to(device)
    mods = [model] + ([head] if head is not None else [])
    if head is not None:
        head.to(device)
    g = torch.Generator(device="cpu").manual_seed(0)

    def batch():
        x = torch.randn(B, in_type.size, *shape, generator=g).to(device)
        return nn.GeometricTensor(x, in_type)

    def fwd(x):
        y = model(x)
        t = y.tensor
        if head is not None:
            t = head(t.reshape(t.shape[0], -1))
        return t

    def target(out):
        if loss == "ce":
            return torch.randint(0, n_out, (out.shape[0],), device=device)
        return torch.randn(out.shape, device=device)

    def train():
        out = fwd(batch())
        if loss == "ce":
            return torch.nn.functional.cross_entropy(out.reshape(out.shape[0], -1), target(out))
        return torch.nn.functional.mse_loss(out, target(out))

    def evaluate():
        return fwd(batch())

    def export_forward():
        model.eval()
        exported = model.export().to(device)
        with torch.no_grad():
            out = exported(batch().tensor)
        model.train()
        return out

    def transformed_forward():
        x = batch()
        el = in_type.fibergroup.sample()
        with torch.no_grad():
            return model(x.transform(el)).transform(el).tensor

    cases = [("transformed-input forward", transformed_forward)]
    if export:  # not every module converts (antialiased pooling, Fourier nonlinearities do not)
        cases.append(("export+forward", export_forward))
    cases += list(extra_cases)
    params = [p for m in mods for p in m.parameters()]
    return Workload(name, train=train, eval=evaluate, modules=mods, params=params, cases=cases, lr=lr)


def _module_case(torch, device, module, in_type, shape, train=True, backward=True):
    """A module's forward (and backward) on a device GeometricTensor, in train or eval mode."""
    _, nn, _ = _esc()
    module = module.to(device)

    def run():
        module.train(train)
        x = torch.randn(B, in_type.size, *shape, device=device, requires_grad=backward)
        y = module(nn.GeometricTensor(x, in_type))
        t = y.tensor if hasattr(y, "tensor") else y
        if backward:
            t.float().sum().backward()
        return t

    return run


# ---- 2D -------------------------------------------------------------------------------------------------


def build_c8_steerable_cnn(torch, device):
    """The tutorial's C8SteerableCNN on 29x29 images (examples/model.ipynb)."""
    gspaces, nn, _ = _esc()
    r2_act = gspaces.rot2dOnR2(N=8)
    in_type = nn.FieldType(r2_act, [r2_act.trivial_repr])

    def block(inp, c, k, pad, pool=False):
        out = nn.FieldType(r2_act, c * [r2_act.regular_repr])
        layers = [nn.R2Conv(inp, out, kernel_size=k, padding=pad, bias=False), nn.InnerBatchNorm(out),
                   nn.ReLU(out, inplace=True)]
        if pool:
            layers.append(nn.PointwiseAvgPoolAntialiased(out, sigma=0.66, stride=2))
        return layers, out

    l1, t1 = block(in_type, 6, 7, 1)
    l2, t2 = block(t1, 8, 5, 2, pool=True)
    l3, t3 = block(t2, 8, 5, 2)
    l4, t4 = block(t3, 12, 5, 2, pool=True)
    l5, t5 = block(t4, 12, 5, 2)
    l6, t6 = block(t5, 16, 5, 1)
    pool3 = nn.PointwiseAvgPoolAntialiased(t6, sigma=0.66, stride=1, padding=0)
    gpool = nn.GroupPooling(t6)
    model = nn.SequentialModule(*(l1 + l2 + l3 + l4 + l5 + l6), pool3, gpool)
    with torch.no_grad():
        n_flat = model(nn.GeometricTensor(torch.zeros(1, 1, 29, 29), in_type)).tensor.numel()
    head = torch.nn.Sequential(torch.nn.Linear(n_flat, 32), torch.nn.BatchNorm1d(32), torch.nn.ELU(),
                               torch.nn.Linear(32, 10))
    seq = model

    def per_layer():
        x = nn.GeometricTensor(torch.randn(B, 1, 29, 29, device=device), in_type)
        with torch.no_grad():
            for m in seq.children():
                x = m(x)
        return x.tensor

    def shapes():
        return seq.evaluate_output_shape((B, 1, 29, 29))

    mask = nn.MaskModule(in_type, 29, margin=1)  # the tutorial masks the input disc first
    return _net_workload(torch, device, "c8_steerable_cnn", model, in_type, (29, 29), 10, head=head, export=False,
                         extra_cases=[("layer by layer", per_layer), ("evaluate_output_shape", shapes),
                                      ("MaskModule", _module_case(torch, device, mask, in_type, (29, 29)))])


def build_o2_irreps_cnn(torch, device):
    """O(2) on irreps: norm and gated nonlinearities, norm / gnorm / induced batch norms, norm pooling."""
    gspaces, nn, _ = _esc()
    gs = gspaces.flipRot2dOnR2(N=-1, maximum_frequency=4)
    G = gs.fibergroup
    in_type = nn.FieldType(gs, 3 * [gs.trivial_repr])
    feat = nn.FieldType(gs, 4 * [G.irrep(1, 1)] + 4 * [G.irrep(1, 2)] + 2 * [G.irrep(1, 0)])
    gates = nn.FieldType(gs, 10 * [G.irrep(0, 0)])
    gated_in = gates + feat
    c1 = nn.R2Conv(in_type, gated_in, kernel_size=5, padding=2, frequencies_cutoff=3.0)
    gate = nn.GatedNonLinearity1(gated_in, gates=["gate"] * 10 + ["gated"] * 10)
    bn1 = nn.GNormBatchNorm(gate.out_type)
    c2 = nn.R2Conv(gate.out_type, feat, kernel_size=5, padding=2, frequencies_cutoff=3.0)
    bn2 = nn.NormBatchNorm(feat)
    act2 = nn.NormNonLinearity(feat, function="n_relu")
    pool = nn.NormMaxPool(feat, kernel_size=2)
    c3 = nn.R2Conv(feat, feat, kernel_size=3, padding=1, stride=1)
    inv = nn.NormPool(feat)
    model = nn.SequentialModule(c1, gate, bn1, c2, bn2, act2, pool, c3, inv)
    head = torch.nn.Linear(inv.out_type.size * 8 * 8, 5)

    so2 = gspaces.rot2dOnR2(N=-1, maximum_frequency=4)
    fourier = nn.FourierELU(so2, 4, irreps=so2.fibergroup.bl_irreps(2), N=8, inplace=False)
    qfourier = nn.QuotientFourierELU(gs, (None, -1), 4, irreps=G.bl_irreps(2), N=8, inplace=False)
    g2_in = nn.FieldType(gs, 4 * [G.irrep(1, 1)])
    g2_gates = nn.FieldType(gs, 4 * [G.irrep(0, 0)])
    gated2 = nn.GatedNonLinearity2((g2_gates, g2_in))
    induced_gs = gspaces.rot2dOnR2(N=-1, maximum_frequency=4)
    ind_repr = induced_gs.fibergroup.irrep(1)
    ind_feat = nn.FieldType(induced_gs, 4 * [ind_repr])
    sub_so2 = G.subgroup((None, -1))[0]
    ind_bn = nn.InducedNormBatchNorm(nn.FieldType(gs, 4 * [G.induced_representation((None, -1), sub_so2.irrep(1))]))
    cases = [
        ("FourierELU", _module_case(torch, device, fourier, fourier.in_type, (12, 12))),
        ("QuotientFourierELU", _module_case(torch, device, qfourier, qfourier.in_type, (12, 12))),
        ("GatedNonLinearity2", lambda: gated2(
            nn.GeometricTensor(torch.randn(B, g2_gates.size, 8, 8, device=device), g2_gates),
            nn.GeometricTensor(torch.randn(B, g2_in.size, 8, 8, device=device), g2_in)).tensor),
        ("InducedNormBatchNorm train", _module_case(torch, device, ind_bn, ind_bn.in_type, (8, 8))),
        ("InducedNormBatchNorm eval", _module_case(torch, device, ind_bn, ind_bn.in_type, (8, 8), train=False,
                                                   backward=False)),
        ("NormNonLinearity squash", _module_case(torch, device, nn.NormNonLinearity(ind_feat, "squash", bias=False),
                                                 ind_feat, (8, 8))),
        ("NormNonLinearity sigmoid", _module_case(torch, device, nn.NormNonLinearity(ind_feat, "n_sigmoid"),
                                                  ind_feat, (8, 8))),
    ]
    gated2.to(device)
    return _net_workload(torch, device, "o2_irreps_cnn", model, in_type, (16, 16), 5, head=head, export=False,
                         extra_cases=cases)


def build_d4_unet(torch, device):
    """A D4 segmentation U-Net: regular fields, max pooling, transposed convolution, upsampling, dropout."""
    gspaces, nn, _ = _esc()
    gs = gspaces.flipRot2dOnR2(N=4)
    in_type = nn.FieldType(gs, [gs.trivial_repr])
    r1 = nn.FieldType(gs, 4 * [gs.regular_repr])
    r2 = nn.FieldType(gs, 8 * [gs.regular_repr])
    out_type = nn.FieldType(gs, 3 * [gs.trivial_repr])

    class UNet(nn.EquivariantModule):
        def __init__(self):
            super().__init__()
            self.in_type, self.out_type = in_type, out_type
            self.enc1 = nn.SequentialModule(nn.R2Conv(in_type, r1, 3, padding=1), nn.InnerBatchNorm(r1),
                                            nn.ELU(r1), nn.FieldDropout(r1, p=0.1))
            self.pool = nn.PointwiseMaxPool2D(r1, 2)
            self.enc2 = nn.SequentialModule(nn.R2Conv(r1, r2, 3, padding=1), nn.IIDBatchNorm2d(r2),
                                            nn.LeakyReLU(r2), nn.PointwiseDropout(r2, p=0.1))
            self.up = nn.R2ConvTransposed(r2, r1, 3, stride=2, padding=1, output_padding=1)
            self.up2 = nn.R2Upsampling(r2, scale_factor=2)
            self.dec = nn.SequentialModule(nn.R2Conv(r1 + r1 + r2, r1, 3, padding=1), nn.ReLU(r1))
            self.head = nn.R2Conv(r1, out_type, 1)

        def forward(self, x):
            e1 = self.enc1(x)
            e2 = self.enc2(self.pool(e1))
            d = nn.tensor_directsum([e1, self.up(e2), self.up2(e2)])
            return self.head(self.dec(d))

        def evaluate_output_shape(self, input_shape):
            return (input_shape[0], out_type.size) + tuple(input_shape[2:])

    model = UNet()

    def seg_train():
        x = nn.GeometricTensor(torch.randn(B, 1, 16, 16, device=device), in_type)
        return model(x).tensor

    c4 = gspaces.rot2dOnR2(N=4)
    creg = nn.FieldType(c4, 3 * [c4.regular_repr])
    vf = nn.VectorFieldNonLinearity(creg)
    cat_in = nn.FieldType(c4, 3 * [c4.irrep(1)] + 2 * [c4.trivial_repr])
    cat = nn.ConcatenatedNonLinearity(nn.FieldType(c4, 3 * [c4.trivial_repr]), function="c_relu")
    multi = nn.MultipleModule(creg, ["a", "b", "a"], [(nn.ReLU(nn.FieldType(c4, 2 * [c4.regular_repr])), "a"),
                                                      (nn.ELU(nn.FieldType(c4, [c4.regular_repr])), "b")])
    disent = nn.DisentangleModule(cat_in)
    resh = nn.ReshuffleModule(cat_in, [4, 0, 3, 1, 2])
    restr = nn.RestrictionModule(r1, (None, 2))
    branch = nn.BranchingModule(creg, ["x", "y", "x"])
    avg = nn.PointwiseAvgPool2D(r1, 2)
    adapt = nn.PointwiseAdaptiveAvgPool2D(r1, 3)
    adapt_max = nn.PointwiseAdaptiveMaxPool2D(r1, 3)
    maxaa = nn.PointwiseMaxPoolAntialiased2D(r1, 3, stride=2, padding=1)
    cases = [
        ("VectorFieldNonLinearity", _module_case(torch, device, vf, creg, (8, 8))),
        ("ConcatenatedNonLinearity", _module_case(torch, device, cat, cat.in_type, (8, 8))),
        ("MultipleModule", _module_case(torch, device, multi, creg, (8, 8))),
        ("DisentangleModule", _module_case(torch, device, disent, cat_in, (8, 8))),
        ("ReshuffleModule", _module_case(torch, device, resh, cat_in, (8, 8))),
        ("RestrictionModule", _module_case(torch, device, restr, r1, (8, 8))),
        ("BranchingModule", lambda: [t.tensor for t in branch.to(device)(
            nn.GeometricTensor(torch.randn(B, creg.size, 8, 8, device=device), creg)).values()]),
        ("PointwiseAvgPool2D", _module_case(torch, device, avg, r1, (8, 8))),
        ("PointwiseAdaptiveAvgPool2D", _module_case(torch, device, adapt, r1, (8, 8))),
        ("PointwiseAdaptiveMaxPool2D", _module_case(torch, device, adapt_max, r1, (8, 8))),
        ("PointwiseMaxPoolAntialiased2D", _module_case(torch, device, maxaa, r1, (8, 8))),
    ]
    return _net_workload(torch, device, "d4_unet", model, in_type, (16, 16), 3, loss="mse", extra_cases=cases,
                         export=False)


def build_geometric_tensor_ops(torch, device):
    """GeometricTensor and FieldType operations on device tensors, and the initialisers on device weights."""
    gspaces, nn, _ = _esc()
    gs = gspaces.rot2dOnR2(N=8)
    ft = nn.FieldType(gs, 2 * [gs.regular_repr] + 3 * [gs.irrep(1)] + [gs.trivial_repr])
    ft2 = nn.FieldType(gs, [gs.irrep(2), gs.trivial_repr])
    conv = nn.R2Conv(ft, ft, 3, padding=1, initialize=False).to(device)

    def x():
        return nn.GeometricTensor(torch.randn(B, ft.size, 8, 8, device=device), ft)

    def ops():
        a, b = x(), x()
        c = a + b
        c = c - a
        c = c * 2.0
        c += b
        parts = c.split([2, 5])
        d = nn.tensor_directsum(parts)
        return d.tensor, c.restrict(2).tensor, d.to(device).tensor, d.shape, d[:2].tensor

    def transform():
        a = x()
        outs = [a.transform(el).tensor for el in gs.testing_elements]
        return outs, a.transform_fibers(gs.fibergroup.sample()).tensor

    def rotate_coords():
        y = nn.GeometricTensor(torch.randn(6, ft2.size, device=device), ft2, coords=torch.randn(6, 2, device=device))
        z = y.transform(gs.fibergroup.sample())
        return z.tensor, z.coords

    def init_he():
        nn.init.generalized_he_init(conv.weights.data, conv.basisexpansion)
        return conv.weights

    def init_delta():
        nn.init.deltaorthonormal_init(conv.weights.data, conv.basisexpansion)
        return conv.weights

    def fieldtype_ops():
        idx = ft.fields_start, ft.fields_end
        return ft.transform(torch.randn(2, ft.size, 8, 8, device=device), gs.fibergroup.sample()), idx, ft.restrict(4)

    def expand():
        conv.train()
        return conv.expand_parameters()

    reg = nn.FieldType(gs, 4 * [gs.regular_repr])
    small = nn.SequentialModule(nn.R2Conv(nn.FieldType(gs, [gs.trivial_repr]), reg, 5, padding=2),
                                nn.InnerBatchNorm(reg), nn.ReLU(reg), nn.PointwiseMaxPool2D(reg, 2),
                                nn.R2Conv(reg, reg, 3, padding=1), nn.GroupPooling(reg)).to(device)

    def export():
        small.eval()
        return small.export().to(device)(torch.randn(B, 1, 16, 16, device=device))

    return Workload("geometric_tensor_ops", cases=[
        ("arithmetic/split/directsum/restrict", ops), ("transform", transform), ("coords transform", rotate_coords),
        ("generalized_he_init", init_he), ("deltaorthonormal_init", init_delta), ("FieldType.transform", fieldtype_ops),
        ("R2Conv.expand_parameters", expand), ("export+forward", export)])


def build_conv_options(torch, device):
    """R2Conv / Linear options users set: recomputed bases, grouped convolutions, circular padding, dilation,
    custom rings and sigma, basis filters; train -> eval switches (the eval filter is cached) and back."""
    gspaces, nn, _ = _esc()
    gs = gspaces.rot2dOnR2(N=4)
    t_in = nn.FieldType(gs, 2 * [gs.regular_repr])
    t_out = nn.FieldType(gs, 4 * [gs.regular_repr])
    convs = {
        "recompute": nn.R2Conv(t_in, t_out, 3, padding=1, recompute=True),
        "groups": nn.R2Conv(t_in, t_out, 3, padding=1, groups=2),
        "circular": nn.R2Conv(t_in, t_out, 5, padding=2, padding_mode="circular"),
        "dilation+stride": nn.R2Conv(t_in, t_out, 3, padding=2, dilation=2, stride=2),
        "rings+sigma": nn.R2Conv(t_in, t_out, 5, padding=2, rings=[0.0, 1.0, 2.0], sigma=[0.6, 0.6, 0.4],
                                 maximum_offset=0),
        "basis_filter": nn.R2Conv(t_in, t_out, 5, padding=2,
                                  basis_filter=lambda attr: attr.get("irrep:frequency", 0) <= 1),
    }
    lin_gs = gspaces.no_base_space(gs.fibergroup)
    lin = nn.Linear(nn.FieldType(lin_gs, 2 * [gs.regular_repr]), nn.FieldType(lin_gs, 3 * [gs.regular_repr]),
                    recompute=True)
    mods = torch.nn.ModuleList(list(convs.values()) + [lin]).to(device)

    def train():
        x = nn.GeometricTensor(torch.randn(B, t_in.size, 12, 12, device=device), t_in)
        loss = 0
        for c in convs.values():
            loss = loss + c(x).tensor.pow(2).mean()
        y = lin(nn.GeometricTensor(torch.randn(B, lin.in_type.size, device=device), lin.in_type))
        return loss + y.tensor.pow(2).mean()

    def evaluate():
        x = nn.GeometricTensor(torch.randn(B, t_in.size, 12, 12, device=device), t_in)
        return [c(x).tensor for c in convs.values()]

    def switch():
        out = []
        for c in convs.values():
            c.train()
            c.eval()
            out.append(c.filter)
        mods.train()
        return out

    def expand_each():
        return [c.expand_parameters() for c in convs.values()] + [lin.expand_parameters()]

    return Workload("conv_options", train=train, eval=evaluate, modules=[mods], lr=1e-3,
                    cases=[("train/eval switch", switch), ("expand_parameters", expand_each)])


# ---- 3D -------------------------------------------------------------------------------------------------


def build_so3_cnn(torch, device):
    """SE(3) steerable CNN as in se3_3Dconv.ipynb: R3Conv, FourierELU on SO(3) bandlimited irreps, gated units,
    IIDBatchNorm3d, GNormBatchNorm, NormPool."""
    gspaces, nn, _ = _esc()
    gs = gspaces.rot3dOnR3(maximum_frequency=2)
    G = gs.fibergroup
    in_type = nn.FieldType(gs, [gs.trivial_repr])
    act1 = nn.FourierELU(gs, 3, irreps=G.bl_irreps(1), inplace=True, type="thomson", N=24)
    c1 = nn.R3Conv(in_type, act1.in_type, kernel_size=3, padding=1)
    bn1 = nn.IIDBatchNorm3d(act1.in_type)
    feat = nn.FieldType(gs, 3 * [G.irrep(1)] + 2 * [G.irrep(2)])
    gates = nn.FieldType(gs, 5 * [G.trivial_representation])
    c2 = nn.R3Conv(act1.out_type, gates + feat, kernel_size=3, padding=1)
    gate = nn.GatedNonLinearity1(gates + feat)
    bn2 = nn.GNormBatchNorm(gate.out_type)
    pool = nn.PointwiseAvgPoolAntialiased3D(gate.out_type, sigma=0.6, stride=2)
    inv = nn.NormPool(gate.out_type)
    model = nn.SequentialModule(c1, bn1, act1, c2, gate, bn2, pool, inv)
    head = torch.nn.Linear(inv.out_type.size * 4 * 4 * 4, 4)
    up = nn.R3Upsampling(gate.out_type, scale_factor=2)
    tconv = nn.R3ConvTransposed(gate.out_type, feat, 3, stride=2, padding=1, output_padding=1)
    avg3 = nn.PointwiseAvgPool3D(act1.in_type, 2)
    cases = [("R3Upsampling", _module_case(torch, device, up, gate.out_type, (4, 4, 4))),
             ("R3ConvTransposed", _module_case(torch, device, tconv, gate.out_type, (4, 4, 4))),
             ("PointwiseAvgPool3D", _module_case(torch, device, avg3, act1.in_type, (6, 6, 6)))]
    return _net_workload(torch, device, "so3_cnn", model, in_type, (8, 8, 8), 4, head=head, extra_cases=cases,
                         export=False)


def build_o3_quotient_cnn(torch, device):
    """O(3) with quotient Fourier nonlinearities (fields on the sphere) and induced gated units."""
    gspaces, nn, _ = _esc()
    gs = gspaces.flipRot3dOnR3(maximum_frequency=2)
    G = gs.fibergroup
    in_type = nn.FieldType(gs, [gs.trivial_repr])
    sub = (False, False, -1)  # SO(2) inside O(3): fields on the sphere
    act = nn.QuotientFourierELU(gs, sub, 2, irreps=G.bl_irreps(1), grid=G.sphere_grid(type="thomson", N=16))
    c1 = nn.R3Conv(in_type, act.in_type, kernel_size=3, padding=1)
    c2 = nn.R3Conv(act.out_type, nn.FieldType(gs, 4 * [G.trivial_representation]), kernel_size=3, padding=1)
    gpool = nn.PointwiseAdaptiveAvgPool3D(c2.out_type, 1)
    model = nn.SequentialModule(c1, act, c2, gpool)
    head = torch.nn.Linear(4, 3)
    return _net_workload(torch, device, "o3_quotient_cnn", model, in_type, (7, 7, 7), 3, head=head, export=False)


def build_octa_ico_cnn(torch, device):
    """Octahedral regular-representation CNN (pointwise ReLU, max pooling, group pooling), and R3IcoConv."""
    gspaces, nn, _ = _esc()
    gs = gspaces.octaOnR3()
    in_type = nn.FieldType(gs, [gs.trivial_repr])
    reg = nn.FieldType(gs, 2 * [gs.regular_repr])
    # IIDBatchNorm3d: InnerBatchNorm reshapes 3D fields to 6 dimensions, which cuDNN's batch norm refuses
    model = nn.SequentialModule(nn.R3Conv(in_type, reg, 3, padding=1), nn.IIDBatchNorm3d(reg), nn.ReLU(reg),
                                nn.PointwiseMaxPool3D(reg, 2), nn.R3Conv(reg, reg, 3, padding=1), nn.ELU(reg),
                                nn.GroupPooling(reg), )
    head = torch.nn.Linear(2 * 3 * 3 * 3, 3)
    ico = gspaces.icoOnR3()
    ico_in = nn.FieldType(ico, [ico.trivial_repr])
    ico_out = nn.FieldType(ico, [ico.fibergroup.irrep(1), ico.trivial_repr])
    ico_conv = nn.R3IcoConv(ico_in, ico_out, 3, padding=1)
    cyl = gspaces.rot2dOnR3(n=4)
    cyl_in = nn.FieldType(cyl, [cyl.trivial_repr])
    cyl_out = nn.FieldType(cyl, 2 * [cyl.regular_repr])
    cyl_conv = nn.R3Conv(cyl_in, cyl_out, 3, padding=1)
    adapt = nn.PointwiseAdaptiveMaxPool3D(reg, 2)
    cases = [("R3IcoConv", _module_case(torch, device, ico_conv, ico_in, (6, 6, 6))),
             ("R3Conv rot2dOnR3", _module_case(torch, device, cyl_conv, cyl_in, (6, 6, 6))),
             ("PointwiseAdaptiveMaxPool3D", _module_case(torch, device, adapt, reg, (5, 5, 5)))]
    return _net_workload(torch, device, "octa_ico_cnn", model, in_type, (6, 6, 6), 3, head=head, extra_cases=cases)


# ---- no base space: equivariant MLPs, point clouds --------------------------------------------------------


def build_so3_mlp(torch, device):
    """The mlp.ipynb SO(3)-equivariant MLP: Linear on irreps, IIDBatchNorm1d, FourierELU; point-cloud features
    from HarmonicPolynomialR3; a TensorProductModule; an O(2) MLP with gated units."""
    gspaces, nn, group = _esc()
    G = group.so3_group(2)
    gs = gspaces.no_base_space(G)
    in_type = nn.FieldType(gs, [G.standard_representation()] * 2)
    act1 = nn.FourierELU(gs, 4, irreps=G.bl_irreps(2), inplace=True, type="thomson", N=32)
    act2 = nn.FourierELU(gs, 4, irreps=G.bl_irreps(2), inplace=True, type="thomson", N=32)
    out_type = nn.FieldType(gs, [G.trivial_representation] * 3)
    model = nn.SequentialModule(nn.Linear(in_type, act1.in_type), nn.IIDBatchNorm1d(act1.in_type), act1,
                                nn.Linear(act2.in_type, act2.in_type), act2, nn.Linear(act2.out_type, out_type))

    hp = nn.HarmonicPolynomialR3(2, "so3").to(device)
    tp_in = nn.FieldType(gs, 2 * [G.irrep(1)])
    gs3 = gspaces.rot3dOnR3(maximum_frequency=2)
    tp3_in = nn.FieldType(gs3, 2 * [gs3.fibergroup.irrep(1)])
    tp = nn.TensorProductModule(tp3_in, nn.FieldType(gs3, 2 * [gs3.fibergroup.irrep(1)]))
    o2 = group.o2_group(3)
    o2s = gspaces.no_base_space(o2)
    o2_feat = nn.FieldType(o2s, 3 * [o2.irrep(1, 1)])
    o2_gates = nn.FieldType(o2s, 3 * [o2.trivial_representation])
    o2_mlp = nn.SequentialModule(
        nn.Linear(nn.FieldType(o2s, [o2.standard_representation(), o2.trivial_representation]), o2_gates + o2_feat),
        nn.GatedNonLinearity1(o2_gates + o2_feat), nn.Linear(o2_feat, nn.FieldType(o2s, [o2.irrep(1, 1)] * 2)))
    bn1d = nn.GNormBatchNorm(tp_in)

    def harmonics():
        pts = torch.randn(64, 3, device=device)
        return hp(nn.GeometricTensor(pts, hp.in_type)).tensor

    cases = [("HarmonicPolynomialR3", harmonics),
             ("TensorProductModule", _module_case(torch, device, tp, tp3_in, (4, 4, 4))),
             ("O(2) gated MLP", _module_case(torch, device, o2_mlp, o2_mlp.in_type, ())),
             ("GNormBatchNorm 1d", _module_case(torch, device, bn1d, tp_in, ()))]
    return _net_workload(torch, device, "so3_mlp", model, in_type, (), 3, loss="mse", extra_cases=cases,
                         export=False)


def build_point_convs(torch, device):
    """R2PointConv / R3PointConv on random geometric graphs (positions, radius edges), batched as in PyG."""
    gspaces, nn, _ = _esc()
    r2 = gspaces.rot2dOnR2(N=6)
    t2_in = nn.FieldType(r2, [r2.trivial_repr])
    t2_out = nn.FieldType(r2, 2 * [r2.regular_repr])
    pc2 = nn.R2PointConv(t2_in, t2_out, width=1.0, n_rings=3)
    pc2b = nn.R2PointConv(t2_out, nn.FieldType(r2, [r2.trivial_repr] * 2), width=1.0, n_rings=3)
    r3 = gspaces.rot3dOnR3(maximum_frequency=1)
    t3_in = nn.FieldType(r3, [r3.trivial_repr])
    t3_out = nn.FieldType(r3, [r3.fibergroup.irrep(1), r3.trivial_repr])
    pc3 = nn.R3PointConv(t3_in, t3_out, width=1.0, n_rings=3)
    act = nn.ReLU(t2_out)
    mods = torch.nn.ModuleList([pc2, pc2b, pc3, act]).to(device)
    n = 48

    def graph(d):
        pos = torch.rand(n, d, device=device) * 3
        dist = torch.cdist(pos, pos)
        edge_index = (dist < 1.0).nonzero().t().contiguous()
        return pos, edge_index

    def train():
        pos, ei = graph(2)
        x = nn.GeometricTensor(torch.randn(n, 1, device=device), t2_in, coords=pos)
        h = act(pc2(x, ei))
        y = pc2b(h, ei)
        pos3, ei3 = graph(3)
        z = pc3(nn.GeometricTensor(torch.randn(n, 1, device=device), t3_in, coords=pos3), ei3)
        return y.tensor.pow(2).mean() + z.tensor.pow(2).mean()

    def evaluate():
        pos, ei = graph(2)
        return pc2(nn.GeometricTensor(torch.randn(n, 1, device=device), t2_in, coords=pos), ei).tensor

    return Workload("point_convs", train=train, eval=evaluate, modules=[mods], lr=1e-3)


WORKLOADS = [build_c8_steerable_cnn, build_o2_irreps_cnn, build_d4_unet, build_geometric_tensor_ops, build_conv_options,
             build_so3_cnn,
             build_o3_quotient_cnn, build_octa_ico_cnn, build_so3_mlp, build_point_convs]
