"""The value lattice: maybe-a-tensor joins, function-value joins, and their plain-data form."""

from torchsync_lint.inference.values import (
    CUDA,
    FUNC,
    NUMBER,
    TENSOR,
    UNKNOWN,
    Value,
    element_of,
    from_data,
    join,
    join_maybe,
    join_members,
    number,
    tensor,
    to_data,
)


def test_join_of_a_number_and_a_tensor_is_unknown_but_join_maybe_marks_it():
    t = tensor(CUDA, "bool").with_(zero_dim=True)
    assert join(number("bool"), t).kind == UNKNOWN  # two branches of an if: either is as likely
    m = join_maybe(number("bool"), t)
    assert m.kind == TENSOR and m.maybe and m.device == CUDA and m.dtype == "bool" and m.zero_dim
    assert join(m, t).maybe  # a maybe-a-tensor stays one through further joins
    assert join_maybe(tensor(CUDA), tensor(CUDA)) == tensor(CUDA)


def test_members_of_one_container_are_not_one_maybe_name():
    assert join_members(number(), tensor()).kind == UNKNOWN
    assert join_members(join_maybe(number(), tensor()), tensor()).maybe


def test_function_values_keep_their_members_and_round_trip():
    lt, gt = Value(FUNC, cls="torch.lt"), Value(FUNC, cls="torch.gt")
    both = join(lt, gt)
    assert both.kind == FUNC and both.cls is None and {m.cls for m in both.elts} == {"torch.lt", "torch.gt"}
    assert from_data(to_data(both)) == both
    maybe = join_maybe(number(), tensor())
    assert from_data(to_data(maybe)).maybe
    assert join(Value(NUMBER), Value(NUMBER)).kind == NUMBER


def test_nested_references_round_trip_through_json():
    """A reference inside a reference (``("iter", ("attr", cls, name))``: what iterating another
    file's attribute yields) comes back from the cache's JSON as a hashable tuple."""
    import json

    v = Value(UNKNOWN, ref=("iter", ("attr", "pkg.sched.Scheduler", "timesteps")))
    back = from_data(json.loads(json.dumps(to_data(v))))
    assert back == v
    assert hash(back.ref)
    assert element_of(tensor(CUDA, "int").with_(ndim=1)) == tensor(CUDA, "int").with_(ndim=0, zero_dim=True)


def test_values_inside_nested_references_are_data_too():
    """``join`` of two references nests a value whose own reference is a tuple holding values
    (transformers' ``modeling_utils`` and ``generation/utils`` interfaces have such entries): all of
    it is JSON, and comes back equal, so the cache can keep the interface and the report."""
    import json

    inner = Value(UNKNOWN, ref=("join", Value(UNKNOWN, ref=("value", "pkg.a.X")), tensor(CUDA)))
    v = Value(UNKNOWN, ref=("invoked", ("elt", 0, 2, ("iter", ("method", "pkg.m.C", "items", inner)))))
    data = to_data(v)
    text = json.dumps(data)  # raised TypeError: a Value inside the nested tuple
    assert from_data(json.loads(text)) == v == from_data(data)
    assert hash(from_data(json.loads(text)).ref)


def test_a_host_batch_joined_with_a_tensor_is_a_tensor_where_both_are():
    """A loader's batch is on the host until moved: joined with a CPU tensor, a CPU tensor."""
    from torchsync_lint.inference.values import BATCH, CPU

    assert join(tensor(CPU), Value(BATCH)) == tensor(CPU)
    assert join(Value(BATCH, assumed=True), tensor(CPU)).device == CPU
    assert join(tensor(CUDA), Value(BATCH)).device is None
    assert join(tensor(CUDA), Value(BATCH, device=CUDA)).device == CUDA
