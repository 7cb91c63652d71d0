"""What torch's functions and tensor methods return, as far as inference needs to know.

Facts only about *types and devices*; which ops synchronise is the rules' business.
"""

from __future__ import annotations

# Tensor methods that reshape or recast a host batch and leave it one (`x.view(n, -1).to(d)`)
RELAYOUTS = frozenset(("view", "reshape", "flatten", "float", "long", "half", "double", "int", "contiguous",
                       "permute", "squeeze", "unsqueeze", "transpose", "type"))

# Factories that copy Python or numpy data from the host into a new tensor.
HOST_DATA_FACTORIES = frozenset(
    "torch." + n
    for n in (
        "tensor as_tensor asarray Tensor from_numpy FloatTensor DoubleTensor HalfTensor BFloat16Tensor "
        "LongTensor IntTensor ShortTensor ByteTensor CharTensor BoolTensor"
    ).split()
)
# Factories that make a tensor without host data; device from `device=` else the CPU.
FACTORIES = frozenset(
    "torch." + n
    for n in (
        "zeros ones empty full arange range rand randn randint randperm linspace logspace eye "
        "scalar_tensor empty_strided normal tril_indices triu_indices bernoulli_ poisson "
        "complex polar empty_like_placeholder"
    ).split()
)
LIKE_FACTORIES = frozenset(
    "torch." + n for n in "zeros_like ones_like empty_like full_like rand_like randn_like randint_like".split()
)

# torch.* callables that return no tensor (value kind given).
TORCH_NON_TENSOR = {
    "torch.numel": "number",
    "torch.is_tensor": "number",
    "torch.is_floating_point": "number",
    "torch.is_complex": "number",
    "torch.is_nonzero": "number",
    "torch.equal": "number",
    "torch.allclose": "number",
    "torch.is_grad_enabled": "number",
    "torch.is_storage": "number",
    "torch.Size": "size",
    "torch.device": "device",
    "torch.get_default_dtype": "dtype",
    "torch.result_type": "dtype",
    "torch.promote_types": "dtype",
}
# Namespaces under torch whose callables are not tensor ops.
TORCH_NON_TENSOR_PREFIXES = (
    "torch.cuda.",
    # other accelerators' device APIs (is_available, device_count, synchronize...)
    "torch.npu.",
    "torch.xpu.",
    "torch.mps.",
    "torch.mtia.",
    "torch.hpu.",
    "torch.accelerator.",
    "torch.distributed.",
    "torch.distributions.",
    "torch.utils.",
    "torch.jit.",
    "torch.optim.",
    "torch.amp.",
    "torch.autograd.",
    "torch.backends.",
    "torch.testing.",
    "torch.onnx.",
    "torch.fx.",
    "torch.compiler.",
    "torch._dynamo.",
    "torch.library.",
    "torch.hub.",
    "torch.profiler.",
    "torch.nn.init.",
    "torch.nn.utils.",
    "torch.nn.parallel.",
    "torch.finfo",
    "torch.iinfo",
    "torch.no_grad",
    "torch.enable_grad",
    "torch.inference_mode",
    "torch.set_",
    "torch.manual_seed",
    "torch.seed",  # torch.seed() / torch.initial_seed(): Python ints
    "torch.initial_seed",
    "torch.compile",
    "torch.save",
    "torch.load",
    "torch.autocast",
    "torch.get_",
    "torch.use_deterministic_algorithms",
    "torch.chunk_placeholder",
    "torch.version.",  # strings: torch.version.cuda.split(".")
)
# Predicates on torch's state or on a tensor's kind, all returning a Python bool
# (torch.is_grad_enabled(), torch.is_tensor(x), torch.are_deterministic_algorithms_enabled()).
TORCH_PREDICATE_PREFIXES = ("torch.is_", "torch.are_")
# Callables that return a stream or an event (host handles on GPU work queues).
STREAM_FACTORIES = frozenset(
    p + n
    for p in ("torch.cuda.", "torch.cuda.streams.", "torch.xpu.", "torch.accelerator.", "torch.")
    for n in ("Stream", "ExternalStream", "current_stream", "default_stream")
)
# CPU scalers (torch.cpu.amp) are left out: their step() does not wait for a GPU.
GRAD_SCALER_FACTORIES = frozenset(
    p + "GradScaler" for p in ("torch.", "torch.amp.", "torch.amp.grad_scaler.", "torch.cuda.amp.",
                               "torch.cuda.amp.grad_scaler.")
)
EVENT_FACTORIES = frozenset(
    p + "Event" for p in ("torch.cuda.", "torch.cuda.streams.", "torch.xpu.", "torch.mps.event.", "torch.")
)
# Ops returning several tensors (a tuple or list).
TORCH_MULTI = frozenset(
    "torch." + n
    for n in (
        "sort topk kthvalue mode split chunk unbind tensor_split hsplit vsplit dsplit meshgrid "
        "broadcast_tensors aminmax frexp lu slogdet svd qr eig eigh lobpcg "
        "std_mean var_mean histogram linalg.eigh linalg.eig linalg.svd linalg.qr linalg.slogdet "
        "linalg.lu linalg.lu_factor linalg.inv_ex linalg.cholesky_ex linalg.solve_ex linalg.lstsq"
    ).split()
)
# Ops and methods whose tensor result is boolean / integer.
BOOL_OPS = frozenset(
    "eq ne lt gt le ge greater less greater_equal less_equal not_equal isnan isinf isfinite isposinf "
    "isneginf isreal logical_and logical_or logical_not logical_xor bool any all isin signbit isclose "
    "bitwise_not".split()
)
INT_OPS = frozenset(
    "long int short argmax argmin argsort nonzero count_nonzero searchsorted bucketize randint randperm "
    "bincount argwhere tril_indices triu_indices".split()
)
# Methods that keep the dtype of the tensor they are called on.
DTYPE_KEEPING = frozenset(
    "view view_as reshape reshape_as unsqueeze squeeze expand expand_as permute transpose t flatten "
    "unflatten contiguous clone detach repeat flip fliplr flipud roll narrow select index_select "
    "masked_select masked_fill masked_fill_ gather take movedim moveaxis swapaxes squeeze_ unsqueeze_ "
    "detach_ requires_grad_ cpu cuda to pin_memory share_memory_ tile repeat_interleave diagonal tril triu "
    "clamp clamp_ clip abs neg sign fill_ zero_ index_fill index_fill_ scatter scatter_ where "
    "contiguous_ cummax cummin maximum minimum max min amax amin __getitem__".split()
)
# Tensor methods (and attributes) that return a Python value, not a tensor.
# Methods of dicts, strings and lists that a Tensor lacks: a "tensor" receiving them was
# mis-inferred (`sd = sd["model"]` of a `Dict[str, Tensor]`), so the result is unknown.
NOT_TENSOR_METHODS = frozenset(
    "items keys values get setdefault popitem update startswith endswith replace join format lower "
    "upper strip lstrip rstrip encode decode append extend insert".split()
)
METHOD_NUMBER = frozenset(
    "item dim ndimension numel nelement element_size get_device data_ptr storage_offset "
    "is_contiguous is_floating_point is_complex is_nonzero equal allclose is_pinned is_shared "
    "is_set_to is_signed is_inference __len__ __bool__ __int__ __float__ __index__".split()
)
METHOD_MULTI = frozenset(
    "split chunk unbind tensor_split sort topk kthvalue mode aminmax frexp slogdet svd qr eig "
    "hsplit vsplit".split()
)
# Methods that may return several tensors depending on a `dim=` argument.
METHOD_MULTI_WITH_DIM = frozenset("max min median nanmedian".split())
ATTR_NUMBER = frozenset("ndim is_cuda requires_grad is_leaf is_sparse is_quantized is_meta itemsize nbytes".split())
ATTR_TENSOR = frozenset("T mT H mH real imag data grad".split())
# Python floats outside torch (torch's own, `torch.inf`..., come from torch_facts.float_constants).
HOST_FLOAT_CONSTANTS = frozenset(
    "math.inf math.nan math.pi math.e math.tau numpy.inf numpy.nan numpy.pi numpy.e".split()
)
# Data loaders: iterating one yields batches of host tensors (pinned with `pin_memory=True`).
# A keyword that asks a tokenizer or processor for torch tensors (Hugging Face's convention:
# `tokenizer(texts, return_tensors="pt")`): what the call returns is a batch of host tensors.
HOST_BATCH_KEYWORD = ("return_tensors", "pt")
# `pad_packed_sequence` returns (padded, lengths): the padded tensor where the packed data is,
# the lengths on the CPU whatever that device (made from the CPU `batch_sizes`; tests/gpu checks).
PAD_PACKED = frozenset(("torch.nn.utils.rnn.pad_packed_sequence",))
# torch functions that call the function given first with the arguments that follow it
# (gradient checkpointing: ``checkpoint(self.block, x, mask, use_reentrant=False)``)
CALLS_FIRST_ARGUMENT = frozenset(("torch.utils.checkpoint.checkpoint",))
DATA_LOADERS = frozenset(("torch.utils.data.DataLoader", "torch.utils.data.dataloader.DataLoader"))
# Iterables that yield their first argument's items (progress bars, builtins).
PASS_THROUGH_ITERABLES = frozenset(("tqdm.tqdm", "tqdm.auto.tqdm", "tqdm.notebook.tqdm", "tqdm.std.tqdm",
                                    "builtins.iter", "builtins.reversed"))


# Optimizers whose `step(closure)` reads the loss and the gradients' norms on the host (truth row
# optim-07; TSL413)
HOST_CHECKING_OPTIMIZERS = frozenset(("torch.optim.LBFGS",))

# Distribution classes of torch.distributions whose constructor or log_prob validates its
# arguments when `validate_args` is on (its default). Independent only delegates to its base.
# A value built from one (or declared as one, or as `Distribution`) is a distribution object:
# its `log_prob` checks the sample (TSL404).
VALIDATING_DISTRIBUTIONS = frozenset(
    (
        "Bernoulli Beta Binomial Categorical Cauchy Chi2 ContinuousBernoulli Dirichlet Exponential "
        "FisherSnedecor Gamma GeneralizedPareto Geometric Gumbel HalfCauchy HalfNormal InverseGamma "
        "Kumaraswamy LKJCholesky Laplace LogNormal LogisticNormal LowRankMultivariateNormal "
        "MixtureSameFamily Multinomial MultivariateNormal NegativeBinomial Normal OneHotCategorical "
        "OneHotCategoricalStraightThrough Pareto Poisson RelaxedBernoulli RelaxedOneHotCategorical "
        "StudentT TransformedDistribution Uniform VonMises Weibull Wishart LogitRelaxedBernoulli "
        "ExpRelaxedCategorical"
    ).split()
)
DISTRIBUTION_PREFIX = "torch.distributions."
# the class of a distribution built with `validate_args=False` (or a variable): its methods' returns
# are known, and it is no validating one (``rules.tsl404``'s test reads the class's last name)
UNCHECKED = ":unchecked"
