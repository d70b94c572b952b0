"""Builds a tiny task folder with exported packages, params and a golden file, as the exporter does.

usage: make_fixture.py OUT_ROOT DEVICE[,DEVICE]
Creates OUT_ROOT/fixture/affine: forward(x, lin.weight, lin.bias, scale) -> (relu(x @ W.T + b) * scale, x.sum(-1))
"""
import json
import os
import struct
import sys

import torch

ROOT, DEVICES = sys.argv[1], sys.argv[2].split(",")
DIR = os.path.join(ROOT, "fixture", "affine")
os.makedirs(DIR, exist_ok=True)

SOURCE = '''import torch


class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(8, 4)
        self.register_buffer("scale", torch.full((4,), 0.5))

    def forward(self, x):
        return torch.relu(self.lin(x)) * self.scale, x.sum(-1)
'''
with open(os.path.join(DIR, "reference.py"), "w") as f:
    f.write(SOURCE)
namespace = {}
exec(SOURCE, namespace)
torch.manual_seed(0)
model = namespace["Model"]().eval()
state = {k: v.detach() for k, v in list(model.named_parameters()) + list(model.named_buffers())}
names = list(state)


class Lifted(torch.nn.Module):
    def forward(self, x, *params):
        return torch.func.functional_call(model, dict(zip(names, params)), (x,))


DT = {torch.float32: "F32", torch.float16: "F16", torch.bfloat16: "BF16", torch.float64: "F64", torch.int64: "I64"}


def save(path, tensors):
    header, blobs, off = {}, [], 0
    for k in sorted(tensors):
        t = tensors[k].detach().cpu().contiguous()
        b = t.view(torch.uint8).numpy().tobytes() if t.numel() else b""
        header[k] = {"dtype": DT[t.dtype], "shape": list(t.shape), "data_offsets": [off, off + len(b)]}
        blobs.append(b)
        off += len(b)
    h = json.dumps(header).encode()
    h += b" " * ((8 - len(h) % 8) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)) + h + b"".join(blobs))


packages = {}
for device in DEVICES:
    x = torch.randn(3, 8, device=device)
    params = [state[n].to(device) for n in names]
    ep = torch.export.export(Lifted(), (x, *params))
    path = os.path.join(DIR, f"ref.default.{device}.pt2")
    torch.export.pt2_archive._package.package_pt2(path, exported_programs={"forward": ep})
    packages[device] = os.path.basename(path)

save(os.path.join(DIR, "params.safetensors"), state)
gx = torch.randn(3, 8, generator=torch.Generator().manual_seed(7))
with torch.no_grad():
    y0, y1 = model(gx)
save(os.path.join(DIR, "golden.safetensors"), {"input.x": gx, "output.out0": y0, "output.out1": y1})

task = {
    "schema": "kforge.task/1",
    "id": "fixture/affine",
    "tags": ["matmul"],
    "description": "relu(x W^T + b) * scale, and the row sums of x",
    "reference": "reference.py",
    "symbols": {"B": 3},
    "inputs": [{"name": "x", "dtype": "float32", "shape": ["B", 8]}],
    "params": [{"name": n, "dtype": "float32", "shape": list(state[n].shape)} for n in names],
    "outputs": [{"name": "out0", "dtype": "float32", "shape": ["B", 4]},
                {"name": "out1", "dtype": "float32", "shape": ["B"]}],
    "artifacts": {"packages": {"default": packages}, "params": "params.safetensors",
                  "golden": {"seed": 7, "variant": "default", "file": "golden.safetensors"}},
}
with open(os.path.join(DIR, "task.json"), "w") as f:
    json.dump(task, f, indent=2)
print(DIR)
