"""Output shapes of aten's RNN ops during torch.export, without running their time loops.

torch.export keeps aten.lstm/gru/rnn_tanh/rnn_relu as one node each, but learns their outputs by
running torch's Python decomposition on fake tensors, one cell per time step, layer and direction:
some 75,000 fake ops for a 6-layer LSTM over 512 steps, most of the time of its import, once per
device. Inside `fake_rnn_shapes()` those ops give their outputs directly when their inputs are fake
tensors: the output sequence laid out as the decomposition lays it out, the final states stacked as
eager returns them (the decomposition records LSTM's h_n and c_n as (layers, 1, batch, hidden),
pytorch/pytorch#151200). Real tensors and calls the check below does not recognise still go to the
decomposition, which raises torch's own errors.
"""

import contextlib

import torch
from torch._decomp import decomposition_table
from torch._subclasses.fake_tensor import FakeTensor

aten = torch.ops.aten
GATES = {aten.lstm.input: 4, aten.gru.input: 3, aten.rnn_tanh.input: 1, aten.rnn_relu.input: 1}
_KEY = torch._C.DispatchKey.CompositeImplicitAutograd


def _consistent(gates, input, hiddens, params, has_biases, num_layers, bidirectional, batch_first):
    """True when the call is one the decomposition runs without error: 3-d input and states,
    matching sizes, every weight of the expected shape, one dtype and device throughout."""
    tensors = [input, *hiddens, *params]
    if not all(isinstance(t, FakeTensor) for t in tensors):
        return False
    if len({t.dtype for t in tensors}) != 1 or len({t.device for t in tensors}) != 1:
        return False
    directions = 2 if bidirectional else 1
    if input.dim() != 3 or any(h.dim() != 3 for h in hiddens):
        return False
    batch = input.size(0) if batch_first else input.size(1)
    out_size, cell_size = hiddens[0].size(2), hiddens[-1].size(2)  # LSTM: projected h, then c
    if any(h.size(0) != num_layers * directions or h.size(1) != batch for h in hiddens):
        return False
    projected = out_size != cell_size
    group = 2 + 2 * bool(has_biases) + projected
    if len(params) != num_layers * directions * group:
        return False
    rows = gates * cell_size
    for i in range(num_layers * directions):
        w_ih, w_hh, *rest = params[i * group:(i + 1) * group]
        in_size = input.size(2) if i < directions else directions * out_size
        expected = [(rows, in_size), (rows, out_size)]
        expected += [(rows,), (rows,)] if has_biases else []
        expected += [(out_size, cell_size)] if projected else []
        if [tuple(t.shape) for t in (w_ih, w_hh, *rest)] != expected:
            return False
    return True


def _kernel(op, decomposition):
    def kernel(*args, **kwargs):
        if len(args) == 9 and not kwargs:
            input, hx, params, has_biases, num_layers, _, _, bidirectional, batch_first = args
            hiddens = list(hx) if op is aten.lstm.input else [hx]
            if _consistent(GATES[op], input, hiddens, params, has_biases, num_layers, bidirectional, batch_first):
                # The last layer's steps concatenated in (time, batch, features) order, transposed
                # for batch_first; the final states stacked, contiguous.
                steps, batch = (input.size(1), input.size(0)) if batch_first else (input.size(0), input.size(1))
                directions = 2 if bidirectional else 1
                out = input.new_empty((steps, batch, directions * hiddens[0].size(2)))
                out = out.transpose(0, 1) if batch_first else out
                return (out, *[input.new_empty(h.shape) for h in hiddens])
        return decomposition(*args, **kwargs)
    return kernel


@contextlib.contextmanager
def fake_rnn_shapes():
    """Within: the RNN ops of GATES give their outputs' shapes directly on fake tensors."""
    saved = {op: (op.py_kernels.get(_KEY), decomposition_table.get(op)) for op in GATES}
    try:
        for op, (kernel, decomposition) in saved.items():
            if kernel is None:  # a torch without the Python decomposition: nothing to speed up
                continue
            op.py_kernels[_KEY] = _kernel(op, kernel)
            if decomposition is not None:
                decomposition_table[op] = _kernel(op, decomposition)
            op._dispatch_cache.clear()
        yield
    finally:
        for op, (kernel, decomposition) in saved.items():
            if kernel is None:
                continue
            op.py_kernels[_KEY] = kernel
            if decomposition is not None:
                decomposition_table[op] = decomposition
            op._dispatch_cache.clear()
