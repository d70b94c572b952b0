"""The licence of imported KernelBench problems: found in the checkout's LICENSE file, written to
task.json's `license` field, left out when there is no licence file."""

import json
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "scripts"))

from kforge_tasks import licensing, schema  # noqa: E402
from preloaded import EXPORT_REFERENCE  # noqa: E402

MIT_TEXT = """MIT License

Copyright (c) 2024 Stanford Scaling Intelligence Lab

Permission is hereby granted, free of charge, to any person obtaining a copy
of this software and associated documentation files (the "Software"), to deal
in the Software without restriction, including without limitation the rights
"""
PROBLEM = """import torch
class Model(torch.nn.Module):
    def forward(self, x):
        return x * 2
def get_inputs():
    return [torch.rand(8)]
def get_init_inputs():
    return []
"""


def run(*args):
    proc = EXPORT_REFERENCE.run(*args)
    return proc.returncode, proc.stdout, proc.stderr


def checkout(tmp_path, license_text):
    """A KernelBench-like checkout: ROOT/LICENSE (when given) and ROOT/KernelBench/level1/1_Double.py."""
    root = tmp_path / "KernelBench"
    level = root / "KernelBench" / "level1"
    level.mkdir(parents=True)
    (level / "1_Double.py").write_text(PROBLEM)
    if license_text is not None:
        (root / "LICENSE").write_text(license_text)
    return root


@pytest.mark.parametrize("text, spdx", [
    (MIT_TEXT, "MIT"),
    ("Permission is hereby granted,\n  free of charge, to any person", "MIT"),
    (Path("/usr/share/common-licenses/Apache-2.0").read_text()
     if Path("/usr/share/common-licenses/Apache-2.0").is_file() else "Apache License\nVersion 2.0, January 2004",
     "Apache-2.0"),
    ("Redistribution and use in source and binary forms ... Neither the name of", "BSD-3-Clause"),
    ("All rights reserved. Do not copy.", None),
])
def test_identify(text, spdx):
    assert licensing.identify(text) == spdx


def test_the_projects_own_license_file_is_apache():
    assert licensing.identify((REPO / "LICENSE").read_text()) == "Apache-2.0"


def test_bulk_import_writes_the_checkouts_licence(tmp_path):
    root = checkout(tmp_path, MIT_TEXT)
    out = tmp_path / "out"
    code, stdout, stderr = run("bulk-kernelbench", root / "KernelBench", "--out", out, "--levels", "1",
                               "--device", "cpu")
    assert code == 0, stdout + stderr
    doc = json.loads((out / "kernelbench/level1/1_Double/task.json").read_text())
    assert doc["license"] == "MIT"
    assert list(doc)[:5] == ["schema", "id", "level", "tags", "license"]
    schema.validate(doc)


def test_import_without_a_licence_file_leaves_the_field_out(tmp_path):
    root = checkout(tmp_path, None)
    out = tmp_path / "out"
    code, stdout, stderr = run("kernelbench", root / "KernelBench/level1/1_Double.py", "--out", out,
                               "--id", "kernelbench/level1/1_Double", "--level", "1", "--device", "cpu")
    assert code == 0, stdout + stderr
    doc = json.loads((out / "kernelbench/level1/1_Double/task.json").read_text())
    assert "license" not in doc


def test_an_unknown_licence_text_is_a_note_and_no_field(tmp_path):
    root = checkout(tmp_path, "Proprietary. All rights reserved.\n")
    out = tmp_path / "out"
    code, stdout, stderr = run("kernelbench", root / "KernelBench/level1/1_Double.py", "--out", out,
                               "--id", "kernelbench/level1/1_Double", "--level", "1", "--device", "cpu")
    assert code == 0, stdout + stderr
    assert f"{root / 'LICENSE'}: not a licence text this importer knows" in stderr
    doc = json.loads((out / "kernelbench/level1/1_Double/task.json").read_text())
    assert "license" not in doc


@pytest.mark.parametrize("value, ok", [("MIT", True), ("Apache-2.0", True), ("MIT OR Apache-2.0", True),
                                       ("", False), (" MIT", False), ("MIT\nx", False), (3, False),
                                       ("x" * 65, False)])
def test_schema_checks_the_licence(value, ok):
    doc = json.loads((REPO / "tasks/demo/vector_add/task.json").read_text())
    doc["license"] = value
    if ok:
        schema.validate(doc)
    else:
        with pytest.raises(schema.TaskError, match="task.license"):
            schema.validate(doc)
