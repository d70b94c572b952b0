"""python/kforge_client against a real `kforge serve --compile-only` (no GPU): judge(), the TRL reward
function on string and conversational completions, the multi-turn environment, the bearer token on
TCP, the caps, two servers sharing one batch, and a client killed mid-batch.

Run by ctest as rl_client, with KFORGE_BIN set to the kforge binary.
"""

import json
import os
import re
import signal
import socket
import subprocess
import sys
import textwrap
import time

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "python"))

import kforge_client  # noqa: E402
from kforge_client import Client, JudgeError, KernelEnv, KforgeReward  # noqa: E402

KFORGE = os.environ.get("KFORGE_BIN") or os.path.join(ROOT, "build", "kforge")
TOKEN = "py-test-token-0123456789abcdef"

RELU = textwrap.dedent("""\
    Here is the kernel.
    ```cuda
    extern "C" __global__ void relu(const float* __restrict__ x, float* __restrict__ y, long long n) {
      long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
      if (i < n) y[i] = fmaxf(x[i], 0.0f);%s
    }
    ```
    ```json
    {"launches": [{"kernel": "relu", "grid": ["cdiv(numel(x), 256)"], "block": [256],
                   "args": ["x", "out0", "i64:numel(x)"]}]}
    ```
    """)
BROKEN = RELU.replace("fmaxf(x[i], 0.0f);", "fmaxf(x[i], 0.0f) this is not C++;")


def relu(variant=""):
    """A compiling relu; `variant` makes its source differ (no compile cache hit)."""
    return RELU % (f"  // {variant}" if variant else "")


class Server:
    """A `kforge serve --compile-only` in a folder of its own, stopped at the end."""

    def __init__(self, tmp, name, *flags, tcp=False):
        self.dir = tmp / name
        self.dir.mkdir()
        self.socket = str(self.dir / "judge.sock")
        self.token_file = self.dir / "token"
        self.token_file.write_text(TOKEN + "\n")
        os.chmod(self.token_file, 0o600)
        self.err_path = self.dir / "serve.err"
        args = [KFORGE, "serve", "--compile-only", "--idle-timeout", "300", "--tasks", os.path.join(ROOT, "tasks"),
                "--socket", self.socket, *flags]
        if tcp:
            args += ["--listen", "127.0.0.1:0", "--token-file", str(self.token_file)]
        self.err = open(self.err_path, "w")
        self.proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=self.err)
        self.port = None
        for _ in range(1000):
            said = self.said()
            if "serve: listening on" in said:
                m = re.search(r"tcp 127\.0\.0\.1:(\d+)", said)
                self.port = int(m.group(1)) if m else None
                return
            if self.proc.poll() is not None:
                break
            time.sleep(0.01)
        raise RuntimeError("kforge serve did not start: " + self.said())

    def said(self):
        return self.err_path.read_text() if self.err_path.exists() else ""

    def stop(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            self.proc.wait(timeout=60)
        self.err.close()


@pytest.fixture
def server(tmp_path):
    s = Server(tmp_path, "one", tcp=True)
    yield s
    s.stop()


def test_judge_text_tools_and_junk_with_rewards_and_feedback(server):
    client = Client(server.socket)
    assert client.about()["compile_only"] is True
    call = {"id": "call_1", "type": "function",
            "function": {"name": "run", "arguments": json.dumps({
                "source": 'extern "C" __global__ void relu(const float* x, float* y, long long n) '
                          "{ long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; "
                          "if (i < n) y[i] = fmaxf(x[i], 0.0f); }",
                "launches": [{"kernel": "relu", "grid": ["cdiv(numel(x), 256)"], "block": [256],
                              "args": ["x", "out0", "i64:numel(x)"]}]})}}
    results = client.judge([
        {"task": "demo/relu", "completion": relu()},
        {"task": "demo/relu", "completion": BROKEN},
        {"task": "demo/relu", "completion": "\x00\x01 binary junk \udcff".encode("utf-8", "surrogatepass")
         .decode("utf-8", "replace")},
        {"task": "demo/relu", "completion": {"role": "assistant", "content": None, "tool_calls": [call]}},
        {"task": "no/such/task", "completion": relu()},
    ])
    assert [r["status"] for r in results] == ["ok", "compile_error", "no_solution", "ok", "refused"]
    assert [r["reward"] for r in results] == [0.1, 0.0, 0.0, 0.1, None]
    assert results[0]["components"] == {"compiled": 1, "correct": 0, "speedup": None, "suspect_timing": 0}
    assert "Compiled; the plan checks out." in results[0]["feedback"]
    assert "Compile error" in results[1]["feedback"]
    assert results[3]["tool_results"][0]["tool_call_id"] == "call_1"
    assert "no task" in results[4]["error"]
    client.close()


def test_reward_function_takes_string_and_conversational_completions(server):
    reward = KforgeReward(servers=[server.socket])
    assert reward.__name__ == "kforge"
    # As GRPOTrainer calls it: prompts, completions, and every dataset column as a keyword.
    rewards = reward(prompts=["p1", "p2", "p3"], completions=[relu("a"), BROKEN, "no code"],
                     task_id=["demo/relu"] * 3, completion_ids=[[1], [2], [3]], trainer_state=None)
    assert rewards == [0.1, 0.0, 0.0]
    conversational = [[{"role": "assistant", "content": relu("b")}], [{"role": "assistant", "content": BROKEN}]]
    assert reward(prompts=[[{"role": "user", "content": "x"}]] * 2, completions=conversational,
                  task_id=["demo/relu", "demo/relu"]) == [0.1, 0.0]
    with pytest.raises(KeyError, match="task_id"):
        reward(prompts=["p"], completions=["c"], task=["demo/relu"])


def test_environment_follows_generates_loop(server):
    env = KernelEnv(Client(server.socket), protocol="text", max_turns=3)
    messages = env.reset("demo/relu")
    assert [m["role"] for m in messages] == ["system", "user"]
    assert "demo/relu" in messages[1]["content"]
    feedback, reward, done, info = env.step(BROKEN)
    assert (reward, done) == (0.0, False)
    assert "Compile error" in feedback and "Fix the problem" in feedback
    assert env.messages[-1] == {"role": "user", "content": feedback}
    feedback, reward, done, info = env.step(relu("c"))
    assert (reward, done, info["status"]) == (0.1, True, "ok")
    assert feedback.rstrip().endswith("Done.")
    assert [m["role"] for m in env.messages] == ["system", "user", "assistant", "user", "assistant", "user"]
    with pytest.raises(RuntimeError):
        env.step(relu())

    tools = KernelEnv(Client(server.socket), protocol="tools")
    tools.reset("demo/relu")
    assert {t["function"]["name"] for t in tools.tools} == {"run", "submit"}  # OpenAI/TRL tool form


def test_tcp_needs_the_token(server):
    assert server.port
    address = f"127.0.0.1:{server.port}"
    with pytest.raises(JudgeError, match="needs the server's token"):
        Client(address).tasks()
    with pytest.raises(JudgeError, match="wrong token"):
        Client(address, token="not-the-token-0123456789").tasks()
    client = Client(address, token_file=str(server.token_file))
    assert client.judge([{"task": "demo/relu", "completion": relu("tcp")}])[0]["status"] == "ok"
    assert TOKEN not in server.said()


def test_caps_refuse_a_huge_completion_and_the_client_splits_big_batches(tmp_path):
    s = Server(tmp_path, "capped", "--max-batch", "3", "--max-completion-kib", "2")
    try:
        client = Client(s.socket)
        results = client.judge([{"task": "demo/relu", "completion": relu(str(i))} for i in range(7)]
                               + [{"task": "demo/relu", "completion": relu() + "x" * 4096}])
        assert [r["status"] for r in results] == ["ok"] * 7 + ["refused"]
        assert "over the server's limit of 2048" in results[7]["error"]
        with pytest.raises(JudgeError, match="over the server's limit of 3"):
            client._request(s.socket, {"op": "judge", "batch": [{"task": "demo/relu", "completion": "x"}] * 4})
    finally:
        s.stop()


def test_two_servers_share_one_batch(tmp_path):
    a, b = Server(tmp_path, "a"), Server(tmp_path, "b")
    try:
        client = Client([a.socket, b.socket])
        batch = [{"task": "demo/relu", "completion": relu(f"two-{i}") if i % 2 else BROKEN} for i in range(10)]
        results = client.judge(batch)
        assert [r["status"] for r in results] == ["compile_error", "ok"] * 5
        assert [r["id"] for r in results] == [str(i) for i in range(10)]
        assert client.judged_by == {a.socket: 5, b.socket: 5}
        print(f"two servers: {client.judged_by}")
    finally:
        a.stop()
        b.stop()


def test_a_client_killed_mid_batch_leaves_the_server_serving(server):
    # A child sends a batch of 200 kernels never compiled before (no compile cache hits) and is killed
    # while the server judges it.
    nonce = f"{os.getpid()}-{time.time_ns()}"
    batch = [{"task": "demo/relu", "completion": relu(f"killed-{nonce}-{i}")} for i in range(200)]
    child = subprocess.Popen([sys.executable, "-c", textwrap.dedent(f"""\
        import json, socket, sys, time
        s = socket.socket(socket.AF_UNIX); s.connect({server.socket!r})
        s.sendall(json.dumps({{"protocol": "kforge.rl/1"}}).encode() + b"\\n"); s.recv(65536)
        s.sendall(json.dumps({{"op": "judge", "batch": json.load(sys.stdin)}}).encode() + b"\\n")
        print("sent", flush=True); time.sleep(60)
        """)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    child.stdin.write(json.dumps(batch))
    child.stdin.close()
    assert child.stdout.readline().strip() == "sent"
    time.sleep(0.5)
    child.kill()
    child.wait()
    for _ in range(600):  # the server notices and drops what it had not started
        if "left mid-request" in server.said():
            break
        time.sleep(0.1)
    said = server.said()
    assert "left mid-request" in said, said
    m = re.search(r"(\d+) of 200 completions not judged", said)
    assert m and int(m.group(1)) > 0, said
    print("server: " + said.strip().splitlines()[-1])
    # Nothing of that batch is left running: the completions in flight go back to none.
    client = Client(server.socket)
    for _ in range(600):
        stats = client.stats()[server.socket]
        if stats["in_flight"] == 0:
            break
        time.sleep(0.1)
    assert stats["in_flight"] == 0 and stats["abandoned"] == int(m.group(1)), stats
    print(f"server state afterwards: {stats}")
    # ... and goes on serving.
    assert Client(server.socket).judge([{"task": "demo/relu", "completion": relu("after")}])[0]["status"] == "ok"


def test_servers_from_the_environment(monkeypatch, server):
    monkeypatch.setenv("KFORGE_SERVERS", f"{server.socket}, 127.0.0.1:{server.port}")
    monkeypatch.setenv("KFORGE_TOKEN_FILE", str(server.token_file))
    client = kforge_client.Client()
    assert client.servers == [server.socket, f"127.0.0.1:{server.port}"]
    assert [r["status"] for r in client.judge([{"task": "demo/relu", "completion": relu(f"env{i}")}
                                                 for i in range(4)])] == ["ok"] * 4
    assert set(client.judged_by.values()) == {2}


def test_slurm_serve_nodes_are_found_by_their_address_files(tmp_path):
    token = tmp_path / "token"
    token.write_text(TOKEN + "\n")
    os.chmod(token, 0o600)
    job = tmp_path / "job"
    rendered = subprocess.run([KFORGE, "slurm", "serve", "--nodes", "2", "--port", "0", "--gpus-per-node", "0",
                               "--out", str(job), "--token-file", str(token), "--dry-run", "--",
                               "--compile-only", "--tasks", os.path.join(ROOT, "tasks")],
                              capture_output=True, text=True)
    assert rendered.returncode == 0, rendered.stderr
    assert "#SBATCH --nodes=2" in rendered.stdout
    # The job's two tasks, run here as srun would start them on two nodes.
    nodes = [subprocess.Popen(["bash", str(job / "slurm" / "serve-node.sh")], stderr=subprocess.DEVNULL,
                              env=dict(os.environ, SLURM_PROCID=str(rank))) for rank in range(2)]
    try:
        for _ in range(1000):
            if len(kforge_client.servers_in(str(job / "servers"))) == 2:
                break
            time.sleep(0.01)
        client = Client(str(job / "servers"), token_file=str(token))
        assert len(client.servers) == 2 and all(":" in s for s in client.servers)
        results = client.judge([{"task": "demo/relu", "completion": relu(f"slurm-{i}")} for i in range(6)])
        assert [r["status"] for r in results] == ["ok"] * 6
        assert sorted(client.judged_by.values()) == [3, 3]
        print(f"slurm serve: {client.judged_by}")
        client.close()
    finally:
        for node in nodes:
            node.send_signal(signal.SIGTERM)
            node.wait(timeout=60)
    assert kforge_client.servers_in(str(job / "servers")) == []


def tool_call_args(source_note=""):
    return {"source": 'extern "C" __global__ void relu(const float* x, float* y, long long n) '
                      "{ long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; "
                      "if (i < n) y[i] = fmaxf(x[i], 0.0f); }" + source_note,
            "launches": [{"kernel": "relu", "grid": ["cdiv(numel(x), 256)"], "block": [256],
                          "args": ["x", "out0", "i64:numel(x)"]}]}


def test_trl_environment_runs_kforge_tools_and_owns_the_reward(server):
    factory = kforge_client.kforge_environment(server.socket)
    env = factory()
    assert env.reset(task_id="demo/relu", prompt=[{"role": "user", "content": "x"}]) is None
    broken = tool_call_args(" this is not C++")
    assert "Compile error" in env.run(**broken)
    assert env.get_reward() == 0.0
    assert "Compiled; the plan checks out." in env.run(**tool_call_args("// trl env"))
    assert env.get_reward() == 0.1 and env.done  # compile-only: a clean compile ends the episode
    assert env.run(**broken).startswith("Not run")
    assert env.get_reward() == 0.1
    env.reset(task_id="demo/relu")
    assert env.get_reward() == 0.0 and not env.results


def test_trl_grpo_trainer_takes_the_environment(server, tmp_path):
    trl = pytest.importorskip("trl", reason="TRL is not installed (scripts/setup.sh --finetune)")
    from datasets import Dataset
    from transformers import AutoTokenizer
    from transformers.utils import get_json_schema

    schema = get_json_schema(kforge_client.KforgeToolEnv.run)
    assert schema["function"]["name"] == "run"
    assert schema["function"]["parameters"]["required"] == ["source", "launches"]
    tiny = tmp_path / "tiny"
    subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "finetune", "make_tiny_model.py"), str(tiny)],
                   check=True, capture_output=True, env=dict(os.environ, HF_HUB_OFFLINE="1"))
    client = Client(server.socket)
    prompt = client.prompt("demo/relu", "tools")["messages"]
    dataset = Dataset.from_list([{"prompt": prompt, "task_id": "demo/relu"}] * 4)
    made = []
    base = kforge_client.kforge_environment(client=client)

    def factory():
        made.append(base())
        return made[-1]

    tokenizer = AutoTokenizer.from_pretrained(str(tiny))
    # Tool calls are parsed by the template's response schema: one TRL knows (Qwen3's, shipped with TRL).
    with open(os.path.join(os.path.dirname(trl.__file__), "chat_templates", "qwen3.jinja"), encoding="utf-8") as f:
        tokenizer.chat_template = f.read()
    trainer = trl.GRPOTrainer(
        model=str(tiny), processing_class=tokenizer, train_dataset=dataset,
        environment_factory=factory,
        args=trl.GRPOConfig(output_dir=str(tmp_path / "out"), per_device_train_batch_size=4, num_generations=4,
                            max_completion_length=16, max_steps=1, report_to="none", use_cpu=True))
    assert "KforgeToolEnv" in trainer.reward_func_names
    assert {t.__name__ for t in trainer.tools} >= {"run", "submit"}
    trainer.train()  # one step: every rollout's environment is reset on its row's task
    assert made and {e._task for e in made} == {"demo/relu"}, [e._task for e in made]


def test_a_restarted_server_is_reconnected_to(tmp_path):
    first = Server(tmp_path, "first")
    client = Client(first.socket)
    assert client.tasks()
    first.stop()
    second = Server(tmp_path, "second")
    try:
        os.replace(second.socket, first.socket)  # the same address, a new server
        assert client.tasks()  # the old connection is found broken, and a new one made
        assert client.judge([{"task": "demo/relu", "completion": relu("again")}])[0]["status"] == "ok"
    finally:
        second.stop()
    with pytest.raises(JudgeError, match="cannot connect"):  # no server left to connect to
        client.tasks()
