"""Softmax over rows, written as a KernelBench problem (sizes as module-level integers). Test-only:
imported with `kforge tasks import module`, it gets the derived `small` variant, on which a kernel
that hard-codes the row length 4096 is refused."""

import torch
import torch.nn as nn

batch_size = 128
dim = 4096


class Model(nn.Module):
    def forward(self, x):
        return torch.softmax(x, dim=1)


def get_inputs():
    return [torch.randn(batch_size, dim)]


def get_init_inputs():
    return []
