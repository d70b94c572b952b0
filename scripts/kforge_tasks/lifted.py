"""The reference model lifted into a function of its inputs and its state: what the exporter packages,
and what the cost derivation traces."""

import torch
from torch.func import functional_call

from . import program
from .schema import TaskError


class Lifted(torch.nn.Module):
    """forward(inputs..., params..., buffers...) -> tuple of outputs, for the model in `model`."""

    def __init__(self, model, probe, param_names, buffer_names):
        super().__init__()
        object.__setattr__(self, "_model", model)  # not a submodule: its state comes in as inputs
        self._probe = probe
        self._param_names = param_names
        self._buffer_names = buffer_names

    def forward(self, *args):
        n = len(self._probe.tensors)
        inputs, state_args = args[:n], args[n:]
        np_ = len(self._param_names)
        state = dict(zip(self._param_names, state_args[:np_]))
        # Buffers are cloned so in-place updates (BatchNorm running stats) stay inside the graph.
        state.update({k: v.clone() for k, v in zip(self._buffer_names, state_args[np_:])})
        call = [None] * self._probe.count
        for (pos, _, _, _, _), t in zip(self._probe.tensors, inputs):
            call[pos] = t
        for pos, name in enumerate(self._probe.names):
            if name in self._probe.constants:
                call[pos] = self._probe.constants[name]
        with program.FreshState(self._model):
            out = functional_call(self._model, state, tuple(call))
        if isinstance(out, torch.Tensor):
            return (out,)
        if isinstance(out, (tuple, list)) and all(isinstance(o, torch.Tensor) for o in out):
            return tuple(out)
        raise TaskError(f"forward must return a tensor or a tuple of tensors, got {type(out).__name__}")


def model_state(model, path):
    """The model's (name, tensor) parameters and buffers, each of a dtype a task can hold."""
    params = [(n, p.detach()) for n, p in model.named_parameters()]
    buffers = [(n, b.detach()) for n, b in model.named_buffers()]
    for name, t in params + buffers:
        program.dtype_name(t.dtype, f"{path}: parameter '{name}'")
    return params, buffers
