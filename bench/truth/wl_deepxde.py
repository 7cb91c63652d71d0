"""deepxde 1.15.0 workloads (PyTorch backend: DDE_BACKEND=pytorch; deepxde puts torch's default device
on the GPU itself), as its examples run them: ``dde.Model.compile`` + ``Model.train`` (Adam with each
learning-rate decay, L-BFGS) on forward PDE problems (Poisson 1D/2D, Burgers, heat with Neumann / Robin /
periodic conditions, Helmholtz with hard constraints), an inverse problem with trainable variables and
point-set observations, integro-differential equations, function regression, DeepONet / MIONet operator
learning (Triple, TripleCartesianProd, PDEOperatorCartesianProd and its ZCS variant), the callbacks
(EarlyStopping, ModelCheckpoint, PDEPointResampler, VariableValue, OperatorPredictor, FirstDerivative,
Timer), ``Model.predict`` with and without an operator, save/restore, and the gradient helpers. Each
training call is a few iterations with ``display_every=1`` (the test/display path each step). Small
synthetic problems; no files read, no downloads.
"""

from __future__ import annotations

import os

os.environ.setdefault("DDE_BACKEND", "pytorch")

from harness import Workload  # noqa: E402

IT = 3  # iterations per Model.train call


def _dde():
    import deepxde as dde

    dde.config.set_random_seed(0)
    return dde


def _fit_cases(model, x_pred, operator=None, iterations=IT, callbacks=None, extra=()):
    def train():
        return model.train(iterations=iterations, display_every=1, callbacks=callbacks, verbose=0)

    def predict():
        out = model.predict(x_pred)
        if operator is not None:
            out = (out, model.predict(x_pred, operator=operator))
        return out

    return [("Model.train", train), ("Model.predict", predict)] + list(extra)


def build_poisson_1d_dirichlet(torch, device):
    import numpy as np

    dde = _dde()

    def pde(x, y):
        return -dde.grad.hessian(y, x) - np.pi ** 2 * torch.sin(np.pi * x)

    def sol(x):
        return np.sin(np.pi * x)

    geom = dde.geometry.Interval(-1, 1)
    bc = dde.icbc.DirichletBC(geom, sol, lambda x, on_b: on_b)
    data = dde.data.PDE(geom, pde, bc, 32, 2, solution=sol, num_test=64)
    net = dde.nn.FNN([1] + [32] * 3 + [1], "tanh", "Glorot uniform")
    model = dde.Model(data, net)
    model.compile("adam", lr=1e-3, metrics=["l2 relative error"])
    x = geom.uniform_points(50)
    return Workload("poisson_1d_dirichlet", cases=_fit_cases(model, x, operator=pde))


def build_poisson_lshape_lbfgs(torch, device):
    """Poisson on an L-shaped polygon: Adam, then L-BFGS (the example's two stages)."""
    dde = _dde()

    def pde(x, y):
        dy_xx = dde.grad.hessian(y, x, i=0, j=0)
        dy_yy = dde.grad.hessian(y, x, i=1, j=1)
        return -dy_xx - dy_yy - 1

    # the example's L-shape as a CSG difference (its Polygon needs np.cross of 2-d vectors, which NumPy 2 refuses)
    geom = dde.geometry.Rectangle([-1, -1], [1, 1]) - dde.geometry.Rectangle([0, 0], [1, 1])
    bc = dde.icbc.DirichletBC(geom, lambda x: 0, lambda x, on_b: on_b)
    data = dde.data.PDE(geom, pde, bc, num_domain=200, num_boundary=40, num_test=100)
    net = dde.nn.FNN([2] + [32] * 3 + [1], "tanh", "Glorot uniform")
    model = dde.Model(data, net)
    x = geom.random_points(64)

    def adam():
        model.compile("adam", lr=1e-3)
        return model.train(iterations=IT, display_every=1, verbose=0)

    def lbfgs():
        dde.optimizers.set_LBFGS_options(maxiter=4)
        # the per-call budget is worked out at import from the default maxiter (1000 iterations a call)
        dde.optimizers.LBFGS_options["iter_per_step"] = 2
        dde.optimizers.LBFGS_options["fun_per_step"] = 4
        model.compile("L-BFGS")
        return model.train(display_every=1, verbose=0)

    return Workload("poisson_lshape_lbfgs", cases=[("adam", adam), ("L-BFGS", lbfgs),
                                                   ("Model.predict", lambda: model.predict(x))])


def build_burgers_resampler(torch, device):
    """Burgers on GeometryXTime with IC + Dirichlet, PDEPointResampler, step LR decay."""
    import numpy as np

    dde = _dde()

    def pde(x, y):
        dy_x = dde.grad.jacobian(y, x, i=0, j=0)
        dy_t = dde.grad.jacobian(y, x, i=0, j=1)
        dy_xx = dde.grad.hessian(y, x, i=0, j=0)
        return dy_t + y * dy_x - 0.01 / np.pi * dy_xx

    geom = dde.geometry.Interval(-1, 1)
    timedomain = dde.geometry.TimeDomain(0, 0.99)
    geomtime = dde.geometry.GeometryXTime(geom, timedomain)
    bc = dde.icbc.DirichletBC(geomtime, lambda x: 0, lambda _, on_b: on_b)
    ic = dde.icbc.IC(geomtime, lambda x: -np.sin(np.pi * x[:, 0:1]), lambda _, on_initial: on_initial)
    data = dde.data.TimePDE(geomtime, pde, [bc, ic], num_domain=256, num_boundary=32, num_initial=64,
                            num_test=128)
    net = dde.nn.FNN([2] + [20] * 3 + [1], "tanh", "Glorot normal")
    model = dde.Model(data, net)
    model.compile("adam", lr=1e-3, decay=("step", 2, 0.9))
    resampler = dde.callbacks.PDEPointResampler(period=1, pde_points=True, bc_points=True)
    x = geomtime.random_points(64)
    return Workload("burgers_resampler", cases=_fit_cases(model, x, operator=pde, callbacks=[resampler]))


def build_heat_neumann_robin(torch, device):
    """Heat equation with Neumann and Robin boundaries, loss weights, inverse-time decay, EarlyStopping."""
    import numpy as np

    dde = _dde()

    def pde(x, y):
        dy_t = dde.grad.jacobian(y, x, i=0, j=1)
        dy_xx = dde.grad.hessian(y, x, i=0, j=0)
        return dy_t - 0.4 * dy_xx

    geom = dde.geometry.Interval(0, 1)
    geomtime = dde.geometry.GeometryXTime(geom, dde.geometry.TimeDomain(0, 1))
    left = dde.icbc.NeumannBC(geomtime, lambda x: 0, lambda x, on_b: on_b and np.isclose(x[0], 0))
    right = dde.icbc.RobinBC(geomtime, lambda x, y: -y, lambda x, on_b: on_b and np.isclose(x[0], 1))
    ic = dde.icbc.IC(geomtime, lambda x: np.sin(np.pi * x[:, 0:1]), lambda _, on_i: on_i)
    data = dde.data.TimePDE(geomtime, pde, [left, right, ic], num_domain=200, num_boundary=40, num_initial=40,
                            train_distribution="LHS", num_test=100)
    net = dde.nn.FNN([2] + [20] * 3 + [1], "sin", "Glorot uniform")
    model = dde.Model(data, net)
    model.compile("adam", lr=1e-3, loss_weights=[1, 1, 1, 10], decay=("inverse time", 1, 0.5))
    stop = dde.callbacks.EarlyStopping(min_delta=1e-8, patience=100)
    return Workload("heat_neumann_robin", cases=_fit_cases(model, geomtime.random_points(32), callbacks=[stop]))


def build_periodic_operator_bc(torch, device):
    """Periodic and operator boundary conditions on a rectangle, cosine LR decay, ModelCheckpoint + Timer."""
    import tempfile

    import numpy as np

    dde = _dde()

    def pde(x, y):
        return dde.grad.hessian(y, x, i=0, j=0) + dde.grad.hessian(y, x, i=1, j=1) + torch.sin(x[:, 0:1])

    geom = dde.geometry.Rectangle([0, 0], [2 * np.pi, 1])
    periodic = dde.icbc.PeriodicBC(geom, 0, lambda x, on_b: on_b and np.isclose(x[0], 0))
    op_bc = dde.icbc.OperatorBC(geom, lambda x, y, _: dde.grad.jacobian(y, x, i=0, j=1),
                                lambda x, on_b: on_b and np.isclose(x[1], 1))
    bottom = dde.icbc.DirichletBC(geom, lambda x: 0, lambda x, on_b: on_b and np.isclose(x[1], 0))
    data = dde.data.PDE(geom, pde, [periodic, op_bc, bottom], num_domain=200, num_boundary=60,
                        train_distribution="Sobol")
    net = dde.nn.FNN([2] + [24] * 3 + [1], "silu", "He normal")
    model = dde.Model(data, net)
    model.compile("adam", lr=1e-3, decay=("cosine", 10, 0.0))
    ckpt = dde.callbacks.ModelCheckpoint(os.path.join(tempfile.mkdtemp(prefix="dde-"), "model"),
                                         save_better_only=True, period=1)
    timer = dde.callbacks.Timer(available_time=10.0)
    return Workload("periodic_operator_bc", cases=_fit_cases(model, geom.random_points(32), callbacks=[ckpt, timer]))


def build_helmholtz_hard_constraint(torch, device):
    """Helmholtz on a square with the boundary imposed by an output transform and a Fourier feature
    transform on the input (the hard-constraint example)."""
    import numpy as np

    dde = _dde()
    k0 = 2 * np.pi

    def pde(x, y):
        dy_xx = dde.grad.hessian(y, x, i=0, j=0)
        dy_yy = dde.grad.hessian(y, x, i=1, j=1)
        f = k0 ** 2 * torch.sin(k0 * x[:, 0:1]) * torch.sin(k0 * x[:, 1:2])
        return -dy_xx - dy_yy - k0 ** 2 * y - f

    def sol(x):
        return np.sin(k0 * x[:, 0:1]) * np.sin(k0 * x[:, 1:2])

    geom = dde.geometry.Rectangle([0, 0], [1, 1])
    data = dde.data.PDE(geom, pde, [], num_domain=256, solution=sol, num_test=128)
    net = dde.nn.FNN([4] + [32] * 3 + [1], "sin", "Glorot uniform")
    net.apply_feature_transform(lambda x: torch.cat([x, torch.sin(k0 * x)], dim=1))
    net.apply_output_transform(lambda x, y: x[:, 0:1] * (1 - x[:, 0:1]) * x[:, 1:2] * (1 - x[:, 1:2]) * y)
    model = dde.Model(data, net)
    model.compile("adam", lr=1e-3, metrics=["l2 relative error", "MSE"], decay=("exponential", 0.9))
    return Workload("helmholtz_hard_constraint", cases=_fit_cases(model, geom.uniform_points(64), operator=pde))


def build_inverse_diffusion(torch, device):
    """Inverse problem: an unknown diffusion coefficient as dde.Variable, PointSetBC observations,
    external_trainable_variables and the VariableValue callback."""
    import tempfile

    import numpy as np

    dde = _dde()
    C = dde.Variable(2.0)

    def pde(x, y):
        dy_t = dde.grad.jacobian(y, x, i=0, j=1)
        dy_xx = dde.grad.hessian(y, x, i=0, j=0)
        return dy_t - C * dy_xx + torch.exp(-x[:, 1:]) * (torch.sin(np.pi * x[:, 0:1])
                                                           - np.pi ** 2 * torch.sin(np.pi * x[:, 0:1]))

    def sol(x):
        return np.sin(np.pi * x[:, 0:1]) * np.exp(-x[:, 1:])

    geomtime = dde.geometry.GeometryXTime(dde.geometry.Interval(-1, 1), dde.geometry.TimeDomain(0, 1))
    bc = dde.icbc.DirichletBC(geomtime, sol, lambda _, on_b: on_b)
    ic = dde.icbc.IC(geomtime, sol, lambda _, on_i: on_i)
    obs_x = np.vstack((np.linspace(-1, 1, num=10), np.full(10, 1))).T
    obs = dde.icbc.PointSetBC(obs_x, sol(obs_x), component=0)
    data = dde.data.TimePDE(geomtime, pde, [bc, ic, obs], num_domain=128, num_boundary=16, num_initial=16,
                            anchors=obs_x, solution=sol, num_test=64)
    net = dde.nn.FNN([2] + [32] * 3 + [1], "tanh", "Glorot uniform")
    model = dde.Model(data, net)
    model.compile("adam", lr=1e-3, metrics=["l2 relative error"], external_trainable_variables=C)
    var = dde.callbacks.VariableValue(C, period=1, filename=os.path.join(tempfile.mkdtemp(prefix="dde-"), "C.dat"))
    return Workload("inverse_diffusion", cases=_fit_cases(model, geomtime.random_points(32), callbacks=[var]))


def build_pointset_operator_bc(torch, device):
    """PointSetBC on several components and PointSetOperatorBC on a 2-output PFNN (parallel subnetworks)."""
    import numpy as np

    dde = _dde()

    def pde(x, y):
        u, v = y[:, 0:1], y[:, 1:2]
        return [dde.grad.jacobian(y, x, i=0, j=0) - v, dde.grad.jacobian(y, x, i=1, j=0) + u]

    geom = dde.geometry.Interval(0, np.pi)
    pts = np.linspace(0, np.pi, 8)[:, None]
    vals = np.hstack([np.sin(pts), np.cos(pts)])
    obs = dde.icbc.PointSetBC(pts, vals, component=[0, 1], batch_size=4, shuffle=True)
    op = dde.icbc.PointSetOperatorBC(pts, np.cos(pts), lambda x, y, X: dde.grad.jacobian(y, x, i=0, j=0))
    data = dde.data.PDE(geom, pde, [obs, op], num_domain=64, num_boundary=2, anchors=pts)
    net = dde.nn.PFNN([1, [16, 16], [16, 16], 2], "tanh", "Glorot uniform")
    model = dde.Model(data, net)
    model.compile("adam", lr=1e-3, loss="MAE")
    return Workload("pointset_operator_bc", cases=_fit_cases(model, geom.uniform_points(20)))


def build_ide(torch, device):
    """Integro-differential equation (dde.data.IDE with a Gauss-Legendre quadrature matrix)."""
    import numpy as np

    dde = _dde()

    def ide(x, y, int_mat):
        rhs = torch.mm(torch.as_tensor(int_mat, dtype=y.dtype, device=y.device), y)  # a numpy matrix here
        lhs1 = dde.grad.jacobian(y, x, i=0, j=0)
        return (lhs1 + y)[: len(rhs)] - rhs

    def kernel(x, s):
        return np.exp(s - x)

    geom = dde.geometry.TimeDomain(0, 5)
    ic = dde.icbc.IC(geom, lambda x: 0, lambda _, on_initial: on_initial)
    data = dde.data.IDE(geom, ide, ic, quad_deg=16, kernel=kernel, num_domain=16, num_boundary=2,
                        train_distribution="uniform")
    net = dde.nn.FNN([1] + [20] * 3 + [1], "tanh", "Glorot uniform")
    model = dde.Model(data, net)
    model.compile("adam", lr=1e-3)
    return Workload("ide", cases=_fit_cases(model, geom.uniform_points(20)))


def build_function_regression(torch, device):
    """dde.data.Function: plain regression of a 1D function, L2 regularisation, MAPE / MSE metrics."""
    import numpy as np

    dde = _dde()
    geom = dde.geometry.Interval(-1, 1)
    data = dde.data.Function(geom, lambda x: x * np.sin(5 * x), 32, 64, train_distribution="pseudo")
    net = dde.nn.FNN([1] + [32] * 2 + [1], "relu", "Glorot uniform", regularization=["l2", 1e-5])
    model = dde.Model(data, net)
    model.compile("adam", lr=1e-3, metrics=["l2 relative error", "MAPE", "MSE"])
    return Workload("function_regression", cases=_fit_cases(model, geom.uniform_points(30)))


def _antiderivative_data(np, n_funcs=24, m=20, n_pts=16, seed=0):
    rng = np.random.default_rng(seed)
    xs = np.linspace(0, 1, m, dtype=np.float32)
    coef = rng.normal(size=(n_funcs, 3)).astype(np.float32)
    v = coef[:, :1] + coef[:, 1:2] * xs + coef[:, 2:] * xs ** 2
    x = np.linspace(0, 1, n_pts, dtype=np.float32)[:, None]
    u = coef[:, :1] * x.T + coef[:, 1:2] * x.T ** 2 / 2 + coef[:, 2:] * x.T ** 3 / 3
    return v, x, u.astype(np.float32)


def build_deeponet_cartesian(torch, device):
    """DeepONetCartesianProd on TripleCartesianProd (the antiderivative operator), mean l2 relative error,
    minibatches, then OperatorPredictor and FirstDerivative callbacks."""
    import numpy as np

    dde = _dde()
    v, x, u = _antiderivative_data(np)
    data = dde.data.TripleCartesianProd(X_train=(v[:16], x), y_train=u[:16], X_test=(v[16:], x), y_test=u[16:])
    net = dde.nn.DeepONetCartesianProd([20, 32, 32], [1, 32, 32], "relu", "Glorot normal")
    model = dde.Model(data, net)
    model.compile("adam", lr=1e-3, metrics=["mean l2 relative error"])

    def train_batches():
        return model.train(iterations=IT, batch_size=8, display_every=1, verbose=0)

    return Workload("deeponet_cartesian", cases=[
        ("Model.train", lambda: model.train(iterations=IT, display_every=1, verbose=0)),
        ("Model.train-batch_size", train_batches),
        ("Model.predict", lambda: model.predict((v[16:], x)))])


def build_deeponet_triple_mionet(torch, device):
    """DeepONet on aligned (Triple) data and MIONetCartesianProd on QuadrupleCartesianProd."""
    import numpy as np

    dde = _dde()
    v, x, u = _antiderivative_data(np)
    rows = np.repeat(np.arange(len(v)), len(x))
    X = (v[rows], np.tile(x, (len(v), 1)))
    y = u.reshape(-1, 1)
    n = len(rows) * 2 // 3
    tri = dde.data.Triple(X_train=(X[0][:n], X[1][:n]), y_train=y[:n], X_test=(X[0][n:], X[1][n:]), y_test=y[n:])
    don = dde.Model(tri, dde.nn.DeepONet([20, 32, 32], [1, 32, 32], "tanh", "Glorot normal"))
    don.compile("adam", lr=1e-3, metrics=["l2 relative error"])
    quad = dde.data.QuadrupleCartesianProd(X_train=(v[:16], v[:16] * 0.5, x), y_train=u[:16],
                                           X_test=(v[16:], v[16:] * 0.5, x), y_test=u[16:])
    mio = dde.Model(quad, dde.nn.MIONetCartesianProd([20, 32, 32], [20, 32, 32], [1, 32, 32], "relu",
                                                     "Glorot normal"))
    mio.compile("adam", lr=1e-3, metrics=["mean l2 relative error"])
    return Workload("deeponet_triple_mionet", cases=[
        ("DeepONet.train", lambda: don.train(iterations=IT, batch_size=64, display_every=1, verbose=0)),
        ("MIONet.train", lambda: mio.train(iterations=IT, display_every=1, verbose=0)),
        ("MIONet.predict", lambda: mio.predict((v[16:], v[16:] * 0.5, x)))])


def _pde_operator(dde, np, cls):
    def pde(x, u, v):
        du_x = dde.grad.jacobian(u, x)
        return du_x - v

    geom = dde.geometry.TimeDomain(0, 1)
    ic = dde.icbc.IC(geom, lambda _: 0, lambda _, on_initial: on_initial)
    pde_data = dde.data.PDE(geom, pde, ic, num_domain=20, num_boundary=2)
    space = dde.data.GRF(length_scale=0.2)
    pts = geom.uniform_points(20, boundary=True)
    return cls(pde_data, space, pts, num_function=16, num_test=8, batch_size=8), pts


def build_pde_operator(torch, device):
    """Physics-informed DeepONet: PDEOperatorCartesianProd over a Gaussian random field function space."""
    import numpy as np

    dde = _dde()
    data, pts = _pde_operator(dde, np, dde.data.PDEOperatorCartesianProd)
    net = dde.nn.DeepONetCartesianProd([20, 32, 32], [1, 32, 32], "tanh", "Glorot normal")
    model = dde.Model(data, net)
    model.compile("adam", lr=1e-3)
    v = dde.data.GRF(length_scale=0.2).random(4)
    feats = dde.data.GRF(length_scale=0.2).eval_batch(v, pts)
    return Workload("pde_operator", cases=_fit_cases(model, (feats.astype(np.float32), pts.astype(np.float32))))


def build_pde_operator_zcs(torch, device):
    """The zero-coordinate-shift variant: dde.zcs.PDEOperatorCartesianProd with dde.zcs.Model and LazyGrad."""
    import numpy as np

    dde = _dde()

    def pde(zcs_parameters, u, v):
        grad_u = dde.zcs.LazyGrad(zcs_parameters, u)
        return grad_u.compute((1,)) - v

    geom = dde.geometry.TimeDomain(0, 1)
    ic = dde.icbc.IC(geom, lambda _: 0, lambda _, on_initial: on_initial)
    pde_data = dde.data.PDE(geom, pde, ic, num_domain=20, num_boundary=2)
    pts = geom.uniform_points(20, boundary=True)
    data = dde.zcs.PDEOperatorCartesianProd(pde_data, dde.data.GRF(length_scale=0.2), pts, num_function=16,
                                            num_test=8, batch_size=8)
    net = dde.nn.DeepONetCartesianProd([20, 32, 32], [1, 32, 32], "tanh", "Glorot normal")
    model = dde.zcs.Model(data, net)
    model.compile("adam", lr=1e-3)
    return Workload("pde_operator_zcs", cases=[
        ("Model.train", lambda: model.train(iterations=IT, display_every=1, verbose=0))])


def build_geometry_csg_3d(torch, device):
    """Poisson on constructive geometry (rectangle minus disk) and on a cuboid; Hammersley / Halton sampling."""
    dde = _dde()

    def pde(x, y):
        return dde.grad.hessian(y, x, i=0, j=0) + dde.grad.hessian(y, x, i=1, j=1) + 1

    def pde3(x, y):
        lap = sum(dde.grad.hessian(y, x, i=i, j=i) for i in range(3))
        return lap + 1

    geom = dde.geometry.Rectangle([-1, -1], [1, 1]) - dde.geometry.Disk([0, 0], 0.4)
    bc = dde.icbc.DirichletBC(geom, lambda x: 0, lambda x, on_b: on_b)
    m2 = dde.Model(dde.data.PDE(geom, pde, bc, num_domain=200, num_boundary=60, train_distribution="Halton"),
                   dde.nn.FNN([2] + [24] * 3 + [1], "tanh", "Glorot uniform"))
    m2.compile("adam", lr=1e-3)
    cube = dde.geometry.Cuboid([0, 0, 0], [1, 1, 1])
    bc3 = dde.icbc.DirichletBC(cube, lambda x: 0, lambda x, on_b: on_b)
    m3 = dde.Model(dde.data.PDE(cube, pde3, bc3, num_domain=200, num_boundary=60),
                   dde.nn.FNN([3] + [24] * 3 + [1], "tanh", "Glorot uniform"))
    m3.compile("adam", lr=1e-3)
    return Workload("geometry_csg_3d", cases=[
        ("csg.train", lambda: m2.train(iterations=IT, display_every=1, verbose=0)),
        ("cuboid.train", lambda: m3.train(iterations=IT, display_every=1, verbose=0)),
        ("csg.predict-residual", lambda: m2.predict(geom.random_points(32), operator=pde))])


def build_save_restore(torch, device):
    """Model.save and Model.restore around training (the checkpoint round trip)."""
    import tempfile

    import numpy as np

    dde = _dde()
    geom = dde.geometry.Interval(-1, 1)
    data = dde.data.Function(geom, lambda x: np.cos(3 * x), 32, 32)
    model = dde.Model(data, dde.nn.FNN([1, 32, 32, 1], "tanh", "Glorot uniform"))
    model.compile("adam", lr=1e-3)
    d = tempfile.mkdtemp(prefix="dde-save-")

    def roundtrip():
        model.train(iterations=2, display_every=1, verbose=0)
        path = model.save(os.path.join(d, "m"), verbose=0)
        model.restore(path, verbose=0)
        return model.predict(geom.uniform_points(8))

    return Workload("save_restore", cases=[("save+restore", roundtrip)])


def build_gradients_losses(torch, device):
    """dde.grad.jacobian / hessian on network outputs (reverse mode), and dde.losses on device tensors."""
    dde = _dde()
    net = dde.nn.FNN([2, 32, 32, 2], "tanh", "Glorot uniform")
    dev = next(net.parameters()).device
    gen = torch.Generator(device=dev).manual_seed(0)

    def grads():
        x = torch.rand(64, 2, device=dev, generator=gen, requires_grad=True)
        y = net(x)
        dde.grad.clear()
        out = [dde.grad.jacobian(y, x, i=i, j=j) for i in range(2) for j in range(2)]
        out += [dde.grad.hessian(y, x, component=c, i=0, j=1) for c in range(2)]
        return out

    def losses():
        a = torch.rand(32, 3, device=dev, generator=gen)
        b = torch.rand(32, 3, device=dev, generator=gen)
        return [dde.losses.get(n)(a, b) for n in ("MSE", "MAE", "mean l2 relative error")]

    return Workload("gradients_losses", cases=[("jacobian+hessian", grads), ("losses", losses)])


WORKLOADS = [build_poisson_1d_dirichlet, build_poisson_lshape_lbfgs, build_burgers_resampler,
             build_heat_neumann_robin, build_periodic_operator_bc, build_helmholtz_hard_constraint,
             build_inverse_diffusion, build_pointset_operator_bc, build_ide, build_function_regression,
             build_deeponet_cartesian, build_deeponet_triple_mionet, build_pde_operator, build_pde_operator_zcs,
             build_geometry_csg_3d, build_save_restore, build_gradients_losses]
