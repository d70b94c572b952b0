"""scripts/setup.sh and the README's two commands: the demo set-up builds only the kforge target (which brings
what kforge runs) and installs no fine-tuning package; --tests builds everything and installs them; the last
line gives each phase's wall time; .ci/run runs exactly the README's test command. setup.sh runs here with a
stand-in cmake and Python on PATH that record their arguments, so nothing is built or installed."""

import os
import re
import stat
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]

# Builds a kforge that says it has LibTorch and records its other calls.
FAKE_CMAKE = r"""#!/bin/sh
echo "cmake $*" >>"$FAKE_LOG"
if [ "$1" = "--build" ]; then
  printf '#!/bin/sh\n[ "$1" = --version ] && { echo "libtorch 2.11.0"; exit 0; }\necho "kforge $*" >>"$FAKE_LOG"\n' \
    >"$2/kforge"
  chmod +x "$2/kforge"
fi
"""

# Has torch; lacks the fine-tuning packages until `pip install -r scripts/requirements-finetune.txt` ran.
FAKE_PYTHON = r"""#!/bin/sh
echo "python $*" >>"$FAKE_LOG"
case "$*" in
  "-m pip install -q -r scripts/requirements-finetune.txt") touch "$FAKE_LOG.finetune" ;;
  *"import transformers"*) [ -e "$FAKE_LOG.finetune" ] || exit 1 ;;
  *"print(torch.__version__)"*) echo 2.11.0 ;;
esac
exit 0
"""


def write_program(path, text):
    path.write_text(text)
    path.chmod(path.stat().st_mode | stat.S_IXUSR)


def run_setup(tmp_path, *args, gpu=False):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    write_program(bin_dir / "cmake", FAKE_CMAKE)
    write_program(bin_dir / "python3", FAKE_PYTHON)
    write_program(bin_dir / "nvidia-smi", f"#!/bin/sh\nexit {0 if gpu else 1}\n")
    log = tmp_path / "calls.log"
    env = dict(os.environ, PATH=f"{bin_dir}:{os.environ['PATH']}", FAKE_LOG=str(log),
               KFORGE_PYTHON=str(bin_dir / "python3"), KFORGE_BUILD_DIR=str(tmp_path / "build"))
    for name in ("KFORGE_SETUP_TESTS", "KFORGE_SETUP_FINETUNE"):
        env.pop(name, None)
    (tmp_path / "build").mkdir(exist_ok=True)
    run = subprocess.run([str(REPO / "scripts/setup.sh"), *args], capture_output=True, text=True, env=env)
    calls = log.read_text().splitlines() if log.exists() else []
    return run, calls


def task_builds(calls):
    return [c for c in calls if c.startswith("kforge tasks build")]


def build_calls(calls):
    return [c for c in calls if c.startswith("cmake --build")]


def pip_calls(calls):
    return [c for c in calls if " -m pip install" in c]


def test_demo_setup_builds_the_kforge_target_and_installs_no_finetune_package(tmp_path):
    run, calls = run_setup(tmp_path)
    assert run.returncode == 0, run.stderr
    assert build_calls(calls) == [f"cmake --build {tmp_path}/build --target kforge -j {os.cpu_count()}"]
    assert pip_calls(calls) == []
    assert f"setup: built {tmp_path}/build/kforge\n" in run.stderr
    assert task_builds(calls) == []  # the demo without a GPU compiles only


def test_a_gpu_machine_gets_the_cuda_reference_packages_without_tests(tmp_path):
    run, calls = run_setup(tmp_path, gpu=True)
    assert run.returncode == 0, run.stderr
    assert task_builds(calls) == [f"kforge tasks build tasks --out {tmp_path}/build/tasks --device cuda"]


def test_tests_setup_builds_everything_and_installs_the_test_packages(tmp_path):
    run, calls = run_setup(tmp_path, "--tests")
    assert run.returncode == 0, run.stderr
    assert build_calls(calls) == [f"cmake --build {tmp_path}/build -j {os.cpu_count()}"]
    assert "python -m pip install -q -r scripts/requirements-finetune.txt" in pip_calls(calls)
    assert "installing the fine-tuning packages" in run.stderr
    assert task_builds(calls) == [f"kforge tasks build tasks --out {tmp_path}/build/tasks --device cpu"]


def test_finetune_installs_the_finetune_packages_and_builds_only_kforge(tmp_path):
    run, calls = run_setup(tmp_path, "--finetune")
    assert run.returncode == 0, run.stderr
    assert pip_calls(calls) == ["python -m pip install -q -r scripts/requirements-finetune.txt"]
    assert build_calls(calls) == [f"cmake --build {tmp_path}/build --target kforge -j {os.cpu_count()}"]
    # Idempotent: once installed, a second run installs nothing.
    run, calls = run_setup(tmp_path, "--finetune")
    assert run.returncode == 0, run.stderr
    assert pip_calls(calls[len(calls) // 2:]) == []


def test_the_last_line_gives_the_wall_time_of_each_phase(tmp_path):
    run, _ = run_setup(tmp_path)
    last = run.stderr.strip().splitlines()[-1]
    assert re.fullmatch(r"setup: took \d+ s: packages \d+ s, python \d+ s, configure \d+ s, build \d+ s, "
                        r"reference packages \d+ s", last), last


def test_an_unknown_option_is_one_line_and_nothing_runs(tmp_path):
    run, calls = run_setup(tmp_path, "--test")
    assert run.returncode == 2
    assert run.stderr == "setup: unknown option --test (expected --tests or --finetune)\n"
    assert calls == []


def readme_commands():
    text = (REPO / "README.md").read_text()
    block = re.search(r"```sh\n(.*?)```", text, re.S).group(1)
    return [line.split("#")[0].strip() for line in block.splitlines() if line.strip()]


def test_ci_runs_exactly_the_readme_test_command():
    demo, tests = readme_commands()
    assert demo == "scripts/setup.sh && scripts/demo.sh"
    assert tests.startswith("scripts/setup.sh --tests && ctest --test-dir build")
    ci = (REPO / ".ci/run").read_text().strip().splitlines()[-1]
    assert ci == tests


def test_the_readme_options_are_setup_options():
    usage = subprocess.run([str(REPO / "scripts/setup.sh"), "--help"], capture_output=True, text=True)
    assert usage.returncode == 0
    for command in readme_commands():
        for option in re.findall(r"setup\.sh((?: --[a-z-]+)*)", command)[0].split():
            assert f"{option} " in usage.stderr, option
