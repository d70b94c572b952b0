"""Mean cross-entropy loss of logits against int64 class targets."""

import torch
import torch.nn as nn
import torch.nn.functional as F

M = 1024
C = 1000


class Model(nn.Module):
    def forward(self, logits, target):
        return F.cross_entropy(logits, target)


def get_inputs():
    return [torch.randn(M, C) * 2, torch.randint(0, C, (M,))]


def get_init_inputs():
    return []
