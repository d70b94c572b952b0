"""Matrix-vector product."""

import torch
import torch.nn as nn
import torch.nn.functional as F

M = 2048
K = 1024


class Model(nn.Module):
    def forward(self, A, x):
        return torch.mv(A, x)


def get_inputs():
    return [torch.randn(M, K), torch.randn(K)]


def get_init_inputs():
    return []
