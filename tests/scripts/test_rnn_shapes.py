"""Tests of scripts/kforge_tasks/rnn_shapes.py: RNN outputs during torch.export without the time loop."""

import json
import subprocess
import sys
from pathlib import Path

import pytest
import torch
import torch._decomp.decompositions as decompositions
from safetensors.torch import load_file

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "scripts"))

from kforge_tasks import rnn_shapes  # noqa: E402


class Outputs(torch.nn.Module):
    def __init__(self, rnn):
        super().__init__()
        self.rnn = rnn

    def forward(self, x):
        out, state = self.rnn(x)
        return (out, *state) if isinstance(state, tuple) else (out, state)


def exported_outputs(model, *args):
    ep = torch.export.export(model, args, strict=False)
    return [node.meta["val"] for node in ep.graph.find_nodes(op="output")[0].args[0]]


CASES = [
    ("LSTM", dict(num_layers=2, batch_first=True)),
    ("LSTM", dict(bidirectional=True, bias=False)),
    ("LSTM", dict(num_layers=2, bidirectional=True, proj_size=3)),
    ("GRU", dict(num_layers=2, batch_first=True, bidirectional=True)),
    ("GRU", dict()),
    ("RNN", dict(num_layers=2, nonlinearity="relu", batch_first=True)),
    ("RNN", dict(bidirectional=True, bias=False)),
]


@pytest.mark.parametrize("kind,options", CASES)
def test_outputs_match_eager_and_the_decomposition_without_its_loop(kind, options, monkeypatch):
    torch.manual_seed(0)
    model = Outputs(getattr(torch.nn, kind)(5, 4, **options))
    x = torch.rand(2, 7, 5)
    eager = model(x)
    unrolled = exported_outputs(model, x)  # torch's decomposition, one cell per step
    calls = []
    helper = decompositions._rnn_helper
    monkeypatch.setattr(decompositions, "_rnn_helper", lambda *a, **k: calls.append(1) or helper(*a, **k))
    with rnn_shapes.fake_rnn_shapes():
        direct = exported_outputs(model, x)
    assert not calls, "the decomposition ran"
    assert [tuple(t.shape) for t in direct] == [tuple(t.shape) for t in eager]
    assert direct[0].stride() == unrolled[0].stride()  # the output sequence, as the decomposition lays it out
    assert all(t.is_contiguous() for t in direct[1:])  # final states, stacked
    assert all(t.dtype == x.dtype for t in direct)


class RawLSTM(torch.nn.Module):
    """torch.lstm called directly, with weights of the given shapes: no nn.LSTM checks first."""

    def __init__(self, *shapes):
        super().__init__()
        self.weights = torch.nn.ParameterList([torch.nn.Parameter(torch.rand(s)) for s in shapes])

    def forward(self, x, h, c):
        return torch.lstm(x, (h, c), list(self.weights), True, 1, 0.0, False, False, False)


def test_real_tensors_and_bad_calls_go_to_the_decomposition():
    lstm = torch.nn.LSTM(5, 4)
    x, h, c = torch.rand(7, 2, 5), torch.zeros(1, 2, 4), torch.zeros(1, 2, 4)
    with rnn_shapes.fake_rnn_shapes():
        with torch._dispatch.python.enable_python_dispatcher():
            out, _ = lstm(x)  # real tensors: computed, not shaped
        assert torch.allclose(out, lstm(x)[0])
        good = RawLSTM((16, 5), (16, 4), (16,), (16,))
        assert [tuple(t.shape) for t in exported_outputs(good, x, h, c)] == [(7, 2, 4), (1, 2, 4), (1, 2, 4)]
        wrong = RawLSTM((16, 6), (16, 4), (16,), (16,))  # input features do not match the weights
        with pytest.raises(Exception, match="same reduction dim"):  # from the decomposition's matmul
            torch.export.export(wrong, (x, h, c), strict=False)
    assert torch.ops.aten.lstm.input.py_kernels[torch._C.DispatchKey.CompositeImplicitAutograd] is \
        decompositions.lstm_impl  # put back on exit


LSTM_HN = '''import torch
batch_size, seq_len, features, hidden, layers = 3, 6, 5, 4, 2
class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lstm = torch.nn.LSTM(features, hidden, layers, batch_first=True)
    def forward(self, x, h0, c0):
        out, state = self.lstm(x, (h0, c0))
        return state[0]
def get_inputs():
    return [torch.rand(batch_size, seq_len, features), torch.rand(layers, batch_size, hidden),
            torch.rand(layers, batch_size, hidden)]
def get_init_inputs():
    return []
'''


def test_lstm_final_state_output_has_the_eager_shape(tmp_path):
    # torch's decomposition records h_n as (layers, 1, batch, hidden) (pytorch/pytorch#151200).
    ref = tmp_path / "lstm_hn.py"
    ref.write_text(LSTM_HN)
    proc = subprocess.run([sys.executable, str(REPO / "scripts/export_reference.py"), "module", str(ref),
                           "--out", str(tmp_path / "out"), "--id", "user/lstm_hn", "--device", "cpu"],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    task = tmp_path / "out/user/lstm_hn"
    doc = json.loads((task / "task.json").read_text())
    assert doc["outputs"][0]["shape"] == ["layers", "batch_size", "hidden"]
    assert tuple(load_file(str(task / "golden.safetensors"))["output.out0"].shape) == (2, 3, 4)
