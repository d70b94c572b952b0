"""FLOP formulas for the ATen ops torch's FLOP counter counts as zero (docs/tasks.md, "Derived costs").

torch.utils.flop_counter counts matrix products, convolutions and attention. Everything else is
counted here with the conventions of the bundled tasks: one FLOP per output element of an
elementwise op (a few transcendental ones cost more), one per input element of a reduction,
5 per element for softmax, 8 for the norms, the window for pooling. Data movement (views,
copies, casts, indexing, concatenation, fills) is free. Each formula takes shapes (tuples of
ints or symbolic sizes), as the counter's own formulas do.
"""

from math import prod

import torch

aten = torch.ops.aten

# Elementwise ops that cost more than one FLOP per output element, and those torch does not tag
# pointwise (leaky_relu, hardtanh, hardswish).
_POINTWISE_WEIGHT = {
    "gelu": 8, "silu": 4, "sigmoid": 4, "mish": 8, "softplus": 4, "elu": 4, "selu": 4, "celu": 4,
    "hardswish": 3, "hardsigmoid": 2, "logit": 2, "leaky_relu": 1, "hardtanh": 1, "threshold": 1,
    "rrelu_with_noise": 1, "prelu": 1, "_prelu_kernel": 1, "softshrink": 1, "hardshrink": 1,
}
# Losses: FLOPs per element of the first input (the difference, its function, the reduction).
_LOSS_WEIGHT = {
    "mse_loss": 3, "l1_loss": 3, "smooth_l1_loss": 4, "huber_loss": 4, "soft_margin_loss": 4,
    "binary_cross_entropy": 6, "binary_cross_entropy_with_logits": 8, "kl_div": 3,
    "hinge_embedding_loss": 3, "margin_ranking_loss": 3, "multilabel_margin_loss_forward": 3,
}
_RNNS = ("lstm", "gru", "rnn_tanh", "rnn_relu")
_REDUCTION_WEIGHT = {  # FLOPs per input element
    "sum": 1, "mean": 1, "amax": 1, "amin": 1, "max": 1, "min": 1, "argmax": 1, "argmin": 1, "prod": 1,
    "any": 1, "all": 1, "cumsum": 1, "cumprod": 1, "logcumsumexp": 3, "logsumexp": 3, "nansum": 1,
    "linalg_vector_norm": 2, "norm": 2, "var": 3, "std": 3, "var_mean": 3, "std_mean": 3, "cummax": 1,
    "cummin": 1, "nll_loss_forward": 0, "nll_loss2d_forward": 0,
}
_PER_ELEMENT = {  # FLOPs per element of the first input
    "_softmax": 5, "_log_softmax": 5, "native_layer_norm": 8, "native_group_norm": 8,
    "native_batch_norm": 8, "_native_batch_norm_legit": 8, "_native_batch_norm_legit_no_training": 2,
    "_native_batch_norm_legit_functional": 8, "instance_norm": 8, "_fused_rms_norm": 4,
}
_POOLS = ("max_pool1d", "max_pool2d_with_indices", "max_pool3d_with_indices", "avg_pool1d", "avg_pool2d",
          "avg_pool3d", "max_pool2d", "max_pool3d")
_ADAPTIVE_POOLS = ("_adaptive_avg_pool2d", "_adaptive_avg_pool3d", "adaptive_max_pool2d",
                   "adaptive_max_pool3d", "adaptive_avg_pool1d", "adaptive_max_pool1d")
_ATTENTION = {"_scaled_dot_product_flash_attention_for_cpu": 1, "_scaled_dot_product_attention_math": 2}
_MATRIX = ("mv", "dot", "vdot", "addmv", "addbmm", "_int_mm")
_FREE = {  # data movement and bookkeeping: no arithmetic
    "clone", "_to_copy", "copy", "copy_", "to", "contiguous", "detach", "alias", "lift_fresh", "lift_fresh_copy",
    "cat", "stack", "constant_pad_nd", "reflection_pad1d", "reflection_pad2d", "replication_pad2d", "flip",
    "roll", "repeat", "repeat_interleave", "index", "index_select", "gather", "embedding", "scatter",
    "index_put", "index_put_", "slice_scatter", "select_scatter", "masked_select", "empty", "empty_like",
    "empty_strided", "zeros", "zeros_like", "ones", "ones_like", "full", "full_like", "new_zeros",
    "new_ones", "new_empty", "new_full", "new_empty_strided", "fill", "fill_", "zero_", "arange",
    "scalar_tensor", "_local_scalar_dense", "triu", "tril", "pixel_shuffle", "pixel_unshuffle", "sort",
    "topk", "randn", "rand", "randint", "bernoulli", "normal", "uniform", "native_dropout", "randperm",
    "set_", "resize_", "_unsafe_view", "col2im", "im2col", "upsample_nearest2d", "upsample_nearest1d",
    "split_with_sizes_copy", "unbind_copy", "eye", "linspace", "tensor", "one_hot", "unfold_copy",
    "diag_embed", "diagonal_copy", "masked_scatter", "as_strided", "as_strided_", "as_strided_scatter",
}


def _numel(shape):
    return prod(shape) if shape else 1


def _first_shape(out_shape):
    """The shape of the first output (a tuple of shapes for multi-output ops)."""
    if isinstance(out_shape, (tuple, list)) and out_shape and isinstance(out_shape[0], (tuple, list, torch.Size)):
        return out_shape[0]
    return out_shape


def _pointwise(weight):
    def formula(*args, out_shape=None, **kwargs):
        return weight * _numel(_first_shape(out_shape))
    return formula


def _reduction(weight):
    def formula(x_shape, *args, out_shape=None, **kwargs):
        return weight * _numel(x_shape)
    return formula


def _pool():
    def formula(x_shape, kernel_size, *args, out_shape=None, **kwargs):
        window = kernel_size if isinstance(kernel_size, (list, tuple)) else [kernel_size]
        dims = len(x_shape) - 2 if len(x_shape) > 2 else len(x_shape) - 1
        window = list(window) * dims if len(window) == 1 else list(window)
        return prod(window) * _numel(_first_shape(out_shape))
    return formula


def _rnn(input_shape, hx, params, *args, out_shape=None, **kwargs):
    """Every weight matrix multiplies once per time step and sequence (2 FLOPs per weight), every
    bias adds once; the gates' elementwise work is left out."""
    steps_times_batch = _numel(input_shape[:-1])
    per_step = sum(2 * _numel(w) if len(w) == 2 else _numel(w) for w in params)
    return steps_times_batch * per_step


def _adaptive_pool(x_shape, *args, out_shape=None, **kwargs):
    return _numel(x_shape)


def _attention(causal_position):
    """torch's sdpa formula (QK^T and PV), halved for a causal mask as the bundled tasks count it."""
    def formula(q_shape, k_shape, v_shape, *args, out_shape=None, is_causal=False, **kwargs):
        flops = torch.utils.flop_counter.sdpa_flop_count(q_shape, k_shape, v_shape)
        if is_causal or (len(args) > causal_position and args[causal_position] is True):
            b, h, s_q, d_q = q_shape
            return b * h * s_q * k_shape[2] * (d_q + v_shape[3])
        return flops
    return formula


def _matrix(name):
    def formula(*shapes, out_shape=None, **kwargs):
        t = [s for s in shapes if isinstance(s, (tuple, list, torch.Size))]
        if name == "mv":
            return 2 * _numel(t[0])
        if name in ("dot", "vdot"):
            return 2 * _numel(t[0])
        if name == "addmv":
            return 2 * _numel(t[1])
        if name == "addbmm":
            b, m, k = t[1]
            return 2 * b * m * k * t[2][2]
        m, k = t[0]
        return 2 * m * k * t[1][1]
    return formula


def _base_name(packet):
    return packet._qualified_op_name.split("::")[-1] if hasattr(packet, "_qualified_op_name") else str(packet)


def _tags(packet):
    """The tags of every overload of the packet (the op's own and its out= forms)."""
    tags = set()
    try:
        for name in packet.overloads():
            tags.update(getattr(packet, name).tags)
    except Exception:  # not an ATen op (a higher-order op): no tags
        pass
    return tags


def formula_for(packet):
    """(formula, counted) for an op packet: formula(shapes..., out_shape=...) -> FLOPs, or
    (None, False) for an op that no convention covers (the derivation says which)."""
    name = _base_name(packet)
    namespace = getattr(packet, "_qualified_op_name", "aten::").split("::")[0]
    if namespace == "prim":  # metadata (prim.device)
        return (lambda *a, **k: 0), True
    if namespace != "aten":
        return None, False
    if name in _FREE or name.rstrip("_") in _FREE:
        return (lambda *a, **k: 0), True
    if name in _PER_ELEMENT:
        return _reduction(_PER_ELEMENT[name]), True
    if name in _POOLS:
        return _pool(), True
    if name in _ADAPTIVE_POOLS:
        return _adaptive_pool, True
    if name in _ATTENTION:
        return _attention(_ATTENTION[name]), True
    if name in _MATRIX:
        return _matrix(name), True
    if name in _RNNS:
        return _rnn, True
    if name in _LOSS_WEIGHT:
        return _reduction(_LOSS_WEIGHT[name]), True
    base = name.rstrip("_")
    if base in _REDUCTION_WEIGHT:
        return _reduction(_REDUCTION_WEIGHT[base]), True
    tags = _tags(packet)
    if torch.Tag.pointwise in tags or base in _POINTWISE_WEIGHT:
        return _pointwise(_POINTWISE_WEIGHT.get(base, 1)), True
    if torch.Tag.view_copy in tags or _is_view(packet):
        return (lambda *a, **k: 0), True
    return None, False


def _is_view(packet):
    try:
        return any(getattr(packet, name).is_view for name in packet.overloads())
    except Exception:  # not an ATen op
        return False
