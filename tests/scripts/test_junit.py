"""kforge verify --junit as a JUnit library reads it (junitparser from PyPI): a mixed batch compiled on
the CPU, one testcase per solution with its failure, properties and time. Skips when junitparser is
not installed (pip install junitparser)."""

import json
import os
import subprocess
from pathlib import Path

import pytest

junitparser = pytest.importorskip("junitparser", reason="junitparser is not installed: pip install junitparser")

REPO = Path(__file__).resolve().parents[2]
KFORGE = Path(os.environ.get("KFORGE_BINARY", REPO / "build" / "kforge"))


def verify(tmp_path, *args, env=None):
    return subprocess.run([str(KFORGE), "verify", "--compile-only", "--no-cache", "--tasks", str(REPO / "tasks"),
                           *map(str, args)], capture_output=True, text=True, env=env)


@pytest.fixture
def batch(tmp_path):
    relu = json.loads((REPO / "examples/demo/relu.json").read_text())
    no_kernel = dict(relu, launches=[dict(relu["launches"][0], kernel="gelu")])
    (tmp_path / "no_kernel.json").write_text(json.dumps(no_kernel, indent=2))
    return [REPO / "examples/demo/relu.json", REPO / "examples/broken/relu_missing_semicolon.json",
            tmp_path / "no_kernel.json", REPO / "examples/demo/vector_add.json"]


@pytest.mark.skipif(not KFORGE.exists(), reason=f"{KFORGE} is not built")
def test_mixed_batch_parses_with_junitparser(tmp_path, batch):
    report = tmp_path / "verify.xml"
    proc = verify(tmp_path, "--junit", report, *batch)
    assert proc.returncode == 1, proc.stderr
    xml = junitparser.JUnitXml.fromfile(str(report))
    suites = list(xml)
    assert len(suites) == 1
    suite = suites[0]
    assert suite.name == "kforge verify"
    assert (suite.tests, suite.failures, suite.errors, suite.skipped) == (4, 2, 0, 0)
    suite_properties = {p.name: p.value for p in suite.properties()}
    assert "seed" in suite_properties and suite_properties["judge"].isdigit()

    cases = list(suite)
    assert [c.name for c in cases] == [str(p) for p in batch]
    assert [c.classname for c in cases] == ["demo/relu", "demo/relu", "demo/relu", "demo/vector_add"]
    assert cases[0].time > 0 and cases[3].time > 0, [c.time for c in cases]  # compile ms

    ok, compile_error, plan_error, ok2 = cases
    assert ok.is_passed and ok2.is_passed
    (failure,) = compile_error.result
    assert isinstance(failure, junitparser.Failure)
    assert failure.type == "compile_error"
    assert failure.message.startswith("compile_error: ")
    assert "error" in failure.text  # the compile log
    (failure,) = plan_error.result
    assert failure.type == "invalid_solution"
    assert 'no kernel "gelu"' in failure.message

    properties = {p.get("name"): p.get("value") for p in ok._elem.find("properties")}
    assert properties["status"] == "ok"
    assert properties["solution_hash"].startswith("sha256:")

    # The verdicts on stdout are unchanged by --junit.
    verdicts = [json.loads(line) for line in proc.stdout.splitlines()]
    assert [v["status"] for v in verdicts] == ["ok", "compile_error", "invalid_solution", "ok"]
