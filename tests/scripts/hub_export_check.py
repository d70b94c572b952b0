"""`kforge export` rows as the Hugging Face libraries read them (run by ctest as export_datasets):

- `--push-to-hub` of export and finetune-launch against a stand-in Hub on 127.0.0.1 (tests/fakes/fake_hub.py);
- finetune-launch's template check refuses arguments a template (Qwen2.5's) encodes twice;
- a text + tools export loads with a plain `datasets.load_dataset("json", ...)` and with the dataset
  card's own snippet, whose features keep every message exactly as written;
- tool-call arguments are objects, so the chat templates TRL ships (Qwen2.5, Llama-3.1, Qwen3, the
  models' own templates, read from the installed trl package) write them once, not as escaped text;
- `--split val=...` writes the Hub's `validation` split; records without an assistant turn are never
  rows; the card's YAML front matter; `--format parquet` keeps the same features.

  KFORGE_BIN=build/kforge python -m pytest -q tests/scripts/hub_export_check.py
"""

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import datasets
import pytest
import trl
import yaml
from transformers.utils.chat_template_utils import render_jinja_template

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(Path(__file__).resolve().parent))
from check_trl_export import LAUNCHES, RELU, record  # noqa: E402

KFORGE = os.environ.get("KFORGE_BIN", str(REPO / "build" / "kforge"))
TEMPLATES = Path(trl.__file__).parent / "chat_templates"


def teacher_error(task):
    """A record whose teacher failed before its first reply: system and user turns only."""
    r = record(task, 1, 0, "text")
    r["messages"] = r["messages"][:2]
    r["attempts"], r["best"] = [], None
    r["outcome"] = {"stop": "llm_error", "error": "HTTP 500"}
    return r


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    if not os.access(KFORGE, os.X_OK):
        pytest.fail(f"no kforge binary at {KFORGE}: build it, or set KFORGE_BIN")
    folder = tmp_path_factory.mktemp("run")
    with open(folder / "trajectories.jsonl", "w") as f:
        for i in range(10):
            task = f"kernelbench/level{1 + i % 2}/{i}_Task"
            f.write(json.dumps(record(task, 1 + i % 2, 0, "tools" if i % 2 else "text")) + "\n")
        f.write(json.dumps(teacher_error("kernelbench/level1/99_Broken")) + "\n")
    return folder


def export(run, out, *args):
    done = subprocess.run([KFORGE, "export", str(run), "--out", str(out), "--split", "val=0.3",
                           "--include-incorrect", *args], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return done


def lines(path):
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


def card_snippet(out):
    card = (out / "README.md").read_text()
    return re.search(r"```python\n(.*?)```", card, re.S).group(1)


def load_with_card(out):
    """Runs the card's loading snippet in the export folder, as a reader of the card would."""
    here = os.getcwd()
    os.chdir(out)
    try:
        scope = {}
        exec(card_snippet(out), scope)
        return scope["ds"]
    finally:
        os.chdir(here)


@pytest.fixture(scope="module")
def exported(run, tmp_path_factory):
    out = tmp_path_factory.mktemp("export") / "messages"
    done = export(run, out)
    assert "1 no_assistant_turn" in done.stderr, done.stderr
    return out


def test_split_names_are_the_hubs(exported):
    assert sorted(p.name for p in exported.glob("*.jsonl")) == ["train.jsonl", "validation.jsonl"]
    stats = json.loads((exported / "stats.json").read_text())
    assert set(stats["splits"]) == {"train", "validation"} and stats["exported"] == 10, stats


def test_every_row_has_every_column_and_an_assistant_turn(exported):
    rows = lines(exported / "train.jsonl") + lines(exported / "validation.jsonl")
    assert len(rows) == 10
    assert len({tuple(row) for row in rows}) == 1, "one set of columns, in one order"
    assert sum(row["tools"] is None for row in rows) == 5 and sum(row["tools"] is not None for row in rows) == 5
    for row in rows:
        assert any(m["role"] == "assistant" for m in row["messages"]), row["id"]
        assert row["messages"][-1]["role"] == "assistant"


def test_mixed_export_loads_plainly_and_with_the_cards_snippet(exported):
    files = {split: str(exported / f"{split}.jsonl") for split in ("train", "validation")}
    plain = datasets.load_dataset("json", data_files=files)
    assert plain["train"].num_rows + plain["validation"].num_rows == 10

    ds = load_with_card(exported)
    for split in ("train", "validation"):
        written = lines(exported / f"{split}.jsonl")
        assert ds[split].num_rows == len(written)
        assert ds[split].features["messages"] == datasets.List(datasets.Json())
        for row, line in zip(ds[split], written):
            assert row["messages"] == line["messages"], "messages read back exactly, no keys filled with None"
            assert row["tools"] == line["tools"]
            assert row["task"] == line["task"] and row["speedup"] == line["speedup"]
    call = next(m for row in ds["train"] for m in row["messages"] if m.get("tool_calls"))["tool_calls"][0]
    assert call["function"]["arguments"] == {"source": RELU, "launches": LAUNCHES}, call


def test_card_front_matter(exported):
    card = (exported / "README.md").read_text()
    front = yaml.safe_load(card.split("---\n")[1])
    assert front["license"] == "mit"
    assert front["task_categories"] == ["text-generation"]
    assert front["language"] == ["en", "code"]
    assert front["size_categories"] == ["n<1K"]
    assert {"cuda", "code", "tool-calling", "gpu-verified"} <= set(front["tags"])
    assert front["configs"] == [{"config_name": "default", "data_files": [
        {"split": "train", "path": "train.jsonl"}, {"split": "validation", "path": "validation.jsonl"}]}]
    features = datasets.Features._from_yaml_list(front["dataset_info"]["features"])
    assert list(features) == list(lines(exported / "train.jsonl")[0]), "the rows' columns, in their order"
    assert features == load_with_card(exported)["train"].features
    assert "GPU-verified" in card


@pytest.fixture(scope="module")
def mixed_big(tmp_path_factory):
    """2,000 text records (over 10 MB of rows) before 3 tools records, exported into one split: datasets
    infers a JSON file's features from its first 10 MB, which hold no tool call."""
    folder = tmp_path_factory.mktemp("mixed")
    pad = "# " + "x" * 78 + "\n"
    with open(folder / "trajectories.jsonl", "w") as f:
        for i in range(2003):
            r = record(f"kforge/t{i:04d}", 1, 0, "text" if i < 2000 else "tools")
            if i < 2000:
                r["messages"][1]["content"] += "\n" + pad * 70
            f.write(json.dumps(r) + "\n")
    out = folder / "export"
    done = subprocess.run([KFORGE, "export", str(folder), "--out", str(out)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert (out / "train.jsonl").stat().st_size > 11 << 20
    return out


def test_a_mixed_export_loads_from_its_folder_by_the_cards_features(mixed_big, tmp_path):
    """load_dataset(FOLDER), as load_dataset("ORG/NAME") reads a pushed one: the card's YAML
    (dataset_info.features) gives the features, so the tools rows after 10 MB of text rows load."""
    front = yaml.safe_load((mixed_big / "README.md").read_text().split("---\n")[1])
    features = datasets.Features._from_yaml_list(front["dataset_info"]["features"])
    assert features["messages"] == datasets.List(datasets.Json()) and features["tags"] == datasets.List(
        datasets.Value("string"))
    ds = datasets.load_dataset(str(mixed_big), cache_dir=str(tmp_path / "cache"))
    assert ds["train"].num_rows == 2003
    assert ds["train"].features == features
    written = lines(mixed_big / "train.jsonl")
    by_id = {row["id"]: row for row in ds["train"]}
    for line in written[-3:] + written[:2]:
        assert by_id[line["id"]]["messages"] == line["messages"]
        assert by_id[line["id"]]["tools"] == line["tools"]
    call = next(m for m in by_id[written[-1]["id"]]["messages"] if m.get("tool_calls"))["tool_calls"][0]
    assert call["function"]["arguments"] == {"source": RELU, "launches": LAUNCHES}, call


def render(template, row):
    return render_jinja_template([row["messages"]], tools=row["tools"],
                                 chat_template=(TEMPLATES / template).read_text())[0][0]


@pytest.mark.parametrize("template,key", [
    ("qwen2_5.jinja", "arguments"),
    ("qwen3.jinja", "arguments"),
    ("llama3_1.jinja", "parameters"),
])
def test_rows_render_through_real_chat_templates_with_arguments_once(exported, template, key):
    ds = load_with_card(exported)
    rendered = 0
    for split in ds.values():
        for row in split:
            text = render(template, row)
            assert "__global__ void relu" in text and "Write a kernel for" in text
            for message in row["messages"]:
                for call in message.get("tool_calls") or []:
                    once = f'"{key}": ' + json.dumps(call["function"]["arguments"], ensure_ascii=False)
                    assert once in text, f"{template}: the arguments are not one JSON object: {text[-600:]}"
            if row["tools"]:
                assert '\\"launches\\"' not in text, f"{template}: arguments encoded twice"
            rendered += 1
    assert rendered == 10


def test_text_arguments_are_what_double_encodes(run, tmp_path):
    out = tmp_path / "text"
    export(run, out, "--tool-arguments", "text")
    row = next(r for r in lines(out / "train.jsonl") + lines(out / "validation.jsonl") if r["tools"])
    call = next(m for m in row["messages"] if m.get("tool_calls"))["tool_calls"][0]
    assert isinstance(call["function"]["arguments"], str)
    assert '\\"launches\\"' in render("qwen2_5.jinja", row), "text arguments are escaped by the template"


def test_parquet_keeps_the_pinned_features(run, exported, tmp_path):
    out = tmp_path / "parquet"
    export(run, out, "--format", "parquet")
    assert sorted(p.name for p in out.iterdir()) == ["README.md", "stats.json", "train.parquet", "validation.parquet"]
    ds = load_with_card(out)
    jsonl = load_with_card(exported)
    for split in ("train", "validation"):
        assert ds[split].features == jsonl[split].features
        assert ds[split].to_list() == jsonl[split].to_list()
    assert 'load_dataset("parquet"' in card_snippet(out)
    front = yaml.safe_load((out / "README.md").read_text().split("---\n")[1])
    assert front["configs"][0]["data_files"][0] == {"split": "train", "path": "train.parquet"}


def test_pairs_parquet_and_trajectory_refused(run, tmp_path):
    export(run, tmp_path / "pairs", "--format", "pairs", "--file-format", "parquet")
    assert datasets.load_dataset("parquet", data_files=str(tmp_path / "pairs/train.parquet"))["train"].features[
        "completion"] == datasets.List(datasets.Json())
    done = subprocess.run([KFORGE, "export", str(run), "--out", str(tmp_path / "t"), "--format", "trajectory",
                           "--file-format", "parquet"], capture_output=True, text=True)
    assert done.returncode == 2 and "--file-format parquet takes messages, pairs, turns or preference rows" in done.stderr


def test_the_launch_check_refuses_arguments_a_template_encodes_twice(run, exported, tmp_path):
    """finetune-launch's template check (sft_trl.py --check-template) with Qwen2.5's template: object
    arguments pass, text arguments (written as escaped JSON text by the template) are refused."""
    python, script = sys.executable, REPO / "scripts/finetune/sft_trl.py"
    model = tmp_path / "qwen"
    made = subprocess.run([python, str(REPO / "scripts/finetune/make_tiny_model.py"), str(model)],
                          capture_output=True, text=True, env={**os.environ, "HF_HUB_OFFLINE": "1"})
    assert made.returncode == 0, made.stderr
    (model / "chat_template.jinja").write_text((TEMPLATES / "qwen2_5.jinja").read_text())
    text = tmp_path / "text"
    export(run, text, "--tool-arguments", "text")

    def check(folder):
        data = folder / "train.jsonl"
        return subprocess.run([python, str(script), "--check-template", "--model", str(model), "--data", str(data)],
                              capture_output=True, text=True, env={**os.environ, "HF_HUB_OFFLINE": "1"})

    passed = check(exported)
    assert passed.returncode == 0, passed.stderr
    assert json.loads(passed.stdout)["tool_calls"] > 0
    refused = check(text)
    assert refused.returncode == 1
    assert "writes the tool-call arguments as escaped JSON text" in refused.stderr, refused.stderr


@pytest.fixture
def hub(tmp_path):
    """The stand-in Hub (tests/fakes/fake_hub.py) on 127.0.0.1: (environment for the client, store)."""
    store = tmp_path / "hub"
    server = subprocess.Popen([sys.executable, str(REPO / "tests/fakes/fake_hub.py"), str(store)],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    port = int(server.stdout.readline())
    env = {**os.environ, "HF_ENDPOINT": f"http://127.0.0.1:{port}", "HF_TOKEN": "hf_test_token_not_secret",
           "HF_HUB_DISABLE_TELEMETRY": "1", "HF_HUB_OFFLINE": "0"}
    yield env, store
    server.kill()
    server.wait()


def test_export_pushes_the_dataset_to_the_hub(run, tmp_path, hub):
    env, store = hub
    out = tmp_path / "pushed"
    done = subprocess.run([KFORGE, "export", str(run), "--out", str(out), "--split", "val=0.3", "--push-to-hub",
                           "kforge-test/kernels", "--python", sys.executable], capture_output=True, text=True, env=env)
    assert done.returncode == 0, done.stderr
    assert f"pushed 4 files to {env['HF_ENDPOINT']}/datasets/kforge-test/kernels (commit " in done.stderr, done.stderr
    uploaded = store / "datasets/kforge-test/kernels"
    # Parquet unless --file-format says otherwise: the files carry their features.
    assert sorted(p.name for p in uploaded.iterdir()) == ["README.md", "stats.json", "train.parquet",
                                                          "validation.parquet"]
    for name in ("README.md", "train.parquet"):
        assert (uploaded / name).read_bytes() == (out / name).read_bytes()
    assert "hf_test_token_not_secret" not in done.stderr + done.stdout

    refused = subprocess.run([KFORGE, "export", str(run), "--out", str(tmp_path / "x"), "--push-to-hub", "no slash"],
                             capture_output=True, text=True, env=env)
    assert refused.returncode == 2 and "--push-to-hub no slash: expected a Hub repository id" in refused.stderr
    assert not (tmp_path / "x").exists()


LOAD_BY_NAME = """
import json, sys, datasets
ds = datasets.load_dataset(sys.argv[1], cache_dir=sys.argv[2])
print(json.dumps({split: [dict(row) for row in rows] for split, rows in ds.items()}))
"""


def load_from_hub(env, repo, tmp_path):
    """load_dataset(REPO) in a Python whose huggingface_hub reads the stand-in Hub ($HF_ENDPOINT is read
    at import)."""
    done = subprocess.run([sys.executable, "-c", LOAD_BY_NAME, repo, str(tmp_path / "cache")], capture_output=True,
                          text=True, env={**env, "HF_HOME": str(tmp_path / "hf-home")})
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout)


@pytest.mark.parametrize("file_format", ["jsonl", "parquet"])
def test_a_pushed_mixed_export_loads_by_its_name(mixed_big, tmp_path, hub, file_format):
    """The 2,003-row mixed export pushed to the stand-in Hub loads with load_dataset("ORG/NAME"): JSON lines
    by the card's dataset_info.features, Parquet by its schema."""
    env, store = hub
    out = tmp_path / "pushed"
    done = subprocess.run([KFORGE, "export", str(mixed_big.parent), "--out", str(out), "--file-format", file_format,
                           "--push-to-hub", f"kforge-test/mixed-{file_format}", "--python", sys.executable],
                          capture_output=True, text=True, env=env)
    assert done.returncode == 0, done.stderr
    assert (store / f"datasets/kforge-test/mixed-{file_format}/train.{file_format}").exists()
    rows = load_from_hub(env, f"kforge-test/mixed-{file_format}", tmp_path)["train"]
    assert len(rows) == 2003
    written = {row["id"]: row for row in lines(mixed_big / "train.jsonl")}
    for row in rows[:2] + [r for r in rows if r["tools"]]:
        assert row["messages"] == written[row["id"]]["messages"] and row["tools"] == written[row["id"]]["tools"]
    assert sum(row["tools"] is not None for row in rows) == 3


def test_finetune_launch_reads_parquet_and_hub_datasets(run, tmp_path, hub):
    """--data X.parquet and --data ORG/NAME (and --eval-data ORG/NAME:validation): the rows are written as
    JSON lines into the run folder with datasets, then checked as any --data is. A dry run, with a model
    folder that has no tokenizer: the template check only warns."""
    env, store = hub
    model = tmp_path / "base"
    model.mkdir()
    (model / "config.json").write_text("{}")
    parquet = tmp_path / "parquet"
    export(run, parquet, "--format", "parquet")
    jsonl = tmp_path / "jsonl"
    export(run, jsonl)

    def launch(out, *data):
        return subprocess.run([KFORGE, "finetune-launch", *data, "--model", str(model), "--out", str(out),
                               "--python", sys.executable, "--dry-run"], capture_output=True, text=True, env=env)

    done = launch(tmp_path / "ft-parquet", "--data", str(parquet / "train.parquet"))
    assert done.returncode == 0, done.stderr
    converted = lines(tmp_path / "ft-parquet/data/train.jsonl")
    assert [r["messages"] for r in converted] == [r["messages"] for r in lines(jsonl / "train.jsonl")]
    assert f"--data {parquet / 'train.parquet'}: {len(converted)} rows written to" in done.stderr, done.stderr

    pushed = subprocess.run([KFORGE, "export", str(run), "--out", str(tmp_path / "pushed"), "--split", "val=0.3",
                             "--include-incorrect", "--push-to-hub", "kforge-test/train-me", "--python",
                             sys.executable], capture_output=True, text=True, env=env)
    assert pushed.returncode == 0, pushed.stderr
    out = tmp_path / "ft-hub"
    done = launch(out, "--data", "kforge-test/train-me", "--eval-data", "kforge-test/train-me:validation")
    assert done.returncode == 0, done.stderr
    for split, name in (("train", "train.jsonl"), ("validation", "validation.jsonl")):
        rows = lines(out / "data" / name)
        assert [r["id"] for r in rows] == [r["id"] for r in lines(jsonl / f"{split}.jsonl")], split
    assert f"--data {out / 'data/train.jsonl'}" in done.stdout, done.stdout
    assert f"--eval-data {out / 'data/validation.jsonl'}" in done.stdout, done.stdout

    missing = launch(tmp_path / "ft-missing", "--data", "kforge-test/no-such-set")
    assert missing.returncode == 2 and "--data kforge-test/no-such-set: " in missing.stderr, missing.stderr


def test_finetune_pushes_the_model_after_a_run_that_ends_well(tmp_path, hub, exported):
    """finetune-launch with a trainer played by a shell script; the upload is the real one."""
    env, store = hub
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    fake = bin_dir / "python3"
    fake.write_text(
        "#!/bin/sh\n"
        "case \"$*\" in\n"
        "  *--versions*) echo '{\"python\": \"3.12\", \"transformers\": \"5\", \"trl\": \"1\", \"torch\": \"2\"}' ;;\n"
        "  *--check-template*) echo '{\"rendered\": 1, \"tool_calls\": 0, \"longest_tokens\": 90, \"longest_line\": 1,"
        " \"tokens\": {\"rows\": 7, \"p50\": 80, \"p95\": 90, \"p99\": 90, \"max\": 90, \"longest_line\": 1}}' ;;\n"
        f"  *hub_push.py*) exec {sys.executable} \"$@\" ;;\n"
        "  *) save=''; prev=''; for a in \"$@\"; do [ \"$prev\" = --save ] && save=\"$a\"; prev=\"$a\"; done\n"
        "     mkdir -p \"$save\"; echo weights > \"$save/model.safetensors\"\n"
        "     echo 'kforge-train {\"done\": true, \"train_loss\": 1.0, \"steps\": 1}' ;;\n"
        "esac\n")
    fake.chmod(0o755)
    model = tmp_path / "base"
    model.mkdir()
    (model / "config.json").write_text("{}")
    out = tmp_path / "ft"
    done = subprocess.run([KFORGE, "finetune-launch", "--data", str(exported / "train.jsonl"), "--model", str(model),
                           "--out", str(out), "--python", str(fake), "--push-to-hub", "kforge-test/student"],
                          capture_output=True, text=True, env=env)
    assert done.returncode == 0, done.stderr
    assert (store / "models/kforge-test/student/model.safetensors").read_text() == "weights\n"
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["pushed"]["repo"] == "kforge-test/student" and manifest["pushed"]["commit"], manifest["pushed"]
    assert manifest["pushed"]["url"] == f"{env['HF_ENDPOINT']}/kforge-test/student"
