"""Rational-quadratic spline transforms, elementwise, with linear tails outside [-B, B]."""
import torch
import torch.nn.functional as F

MIN_BIN_WIDTH = 1e-3
MIN_BIN_HEIGHT = 1e-3
MIN_DERIVATIVE = 1e-3


def searchsorted(bin_locations, inputs, eps=1e-6):
    bin_locations[..., -1] += eps
    return torch.sum(inputs[..., None] >= bin_locations, dim=-1) - 1


def unconstrained_rqs(inputs, widths, heights, derivatives, inverse=False, tail_bound=3.0):
    inside = (inputs >= -tail_bound) & (inputs <= tail_bound)
    outside = ~inside
    outputs = torch.zeros_like(inputs)
    logabsdet = torch.zeros_like(inputs)
    derivatives = F.pad(derivatives, pad=(1, 1))
    outputs[outside] = inputs[outside]  # SYNC
    logabsdet[outside] = 0
    if torch.any(inside):  # SYNC
        out, lad = rqs(inputs[inside], widths[inside, :], heights[inside, :], derivatives[inside, :],  # SYNC
                       inverse=inverse, left=-tail_bound, right=tail_bound, bottom=-tail_bound, top=tail_bound)
        outputs[inside], logabsdet[inside] = out, lad  # SYNC
    return outputs, logabsdet


def rqs(inputs, widths, heights, derivatives, inverse=False, left=0.0, right=1.0, bottom=0.0, top=1.0):
    if torch.min(inputs) < left or torch.max(inputs) > right:  # SYNC
        raise ValueError("input outside the spline's domain")
    num_bins = widths.shape[-1]
    if MIN_BIN_WIDTH * num_bins > 1.0 or MIN_BIN_HEIGHT * num_bins > 1.0:  # ok: Python numbers
        raise ValueError("too many bins for the minimal bin size")
    widths = F.softmax(widths, dim=-1)
    widths = MIN_BIN_WIDTH + (1 - MIN_BIN_WIDTH * num_bins) * widths
    cumwidths = F.pad(torch.cumsum(widths, dim=-1), pad=(1, 0), mode="constant", value=0.0)
    cumwidths = (right - left) * cumwidths + left
    cumwidths[..., 0] = left
    cumwidths[..., -1] = right
    widths = cumwidths[..., 1:] - cumwidths[..., :-1]
    derivatives = MIN_DERIVATIVE + F.softplus(derivatives)
    heights = F.softmax(heights, dim=-1)
    heights = MIN_BIN_HEIGHT + (1 - MIN_BIN_HEIGHT * num_bins) * heights
    cumheights = F.pad(torch.cumsum(heights, dim=-1), pad=(1, 0), mode="constant", value=0.0)
    cumheights = (top - bottom) * cumheights + bottom
    heights = cumheights[..., 1:] - cumheights[..., :-1]
    bin_idx = (searchsorted(cumheights, inputs) if inverse else searchsorted(cumwidths, inputs))[..., None]
    in_cumwidths = cumwidths.gather(-1, bin_idx)[..., 0]
    in_widths = widths.gather(-1, bin_idx)[..., 0]
    in_cumheights = cumheights.gather(-1, bin_idx)[..., 0]
    delta = heights / widths
    in_delta = delta.gather(-1, bin_idx)[..., 0]
    in_derivatives = derivatives.gather(-1, bin_idx)[..., 0]
    in_derivatives_plus_one = derivatives[..., 1:].gather(-1, bin_idx)[..., 0]
    in_heights = heights.gather(-1, bin_idx)[..., 0]
    if inverse:
        a = (inputs - in_cumheights) * (in_derivatives + in_derivatives_plus_one - 2 * in_delta) + in_heights * (
            in_delta - in_derivatives)
        b = in_heights * in_derivatives - (inputs - in_cumheights) * (
            in_derivatives + in_derivatives_plus_one - 2 * in_delta)
        c = -in_delta * (inputs - in_cumheights)
        discriminant = b.pow(2) - 4 * a * c
        assert (discriminant >= 0).all()  # SYNC
        root = (2 * c) / (-b - torch.sqrt(discriminant))
        outputs = root * in_widths + in_cumwidths
        return outputs, -torch.log(in_derivatives.abs() + 1e-8)
    theta = (inputs - in_cumwidths) / in_widths
    theta_one_minus_theta = theta * (1 - theta)
    numerator = in_heights * (in_delta * theta.pow(2) + in_derivatives * theta_one_minus_theta)
    denominator = in_delta + (in_derivatives + in_derivatives_plus_one - 2 * in_delta) * theta_one_minus_theta
    outputs = in_cumheights + numerator / denominator
    logabsdet = torch.log(in_delta.pow(2)) - 2 * torch.log(denominator)
    return outputs, logabsdet
