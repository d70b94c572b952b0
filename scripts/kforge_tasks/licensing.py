"""The licence of an imported program: the LICENSE file of its checkout (in the program's folder or up
to two folders above, e.g. KernelBench/KernelBench/level1/ -> KernelBench/LICENSE), named by its text
as an SPDX id for task.json's `license` field."""

from pathlib import Path

FILE_NAMES = ("LICENSE", "LICENSE.txt", "LICENSE.md", "LICENCE", "LICENCE.txt", "COPYING")
FOLDERS_UP = 2  # level1/ -> KernelBench/ -> the checkout


def license_file(program):
    """The first licence file in the folder of `program` or a folder above it, or None."""
    folder = Path(program).resolve().parent
    for _ in range(FOLDERS_UP + 1):
        for name in FILE_NAMES:
            if (folder / name).is_file():
                return folder / name
        if folder.parent == folder:
            break
        folder = folder.parent
    return None


def identify(text):
    """The SPDX id of a licence's text, or None when it is not one this knows."""
    words = " ".join(text.split())
    if "MIT License" in words or "Permission is hereby granted, free of charge" in words:
        return "MIT"
    if "Apache License" in words and "Version 2.0" in words:
        return "Apache-2.0"
    if "Redistribution and use in source and binary forms" in words:
        return "BSD-3-Clause" if "Neither the name" in words else "BSD-2-Clause"
    return None


def license_of(program):
    """(SPDX id or None, note or None) for the program file `program`: None without a licence file,
    and then no note; None with a note naming the file when its text is not a licence this knows."""
    path = license_file(program)
    if path is None:
        return None, None
    try:
        spdx = identify(path.read_text(errors="replace")[:100_000])
    except OSError as e:
        return None, f"{path}: {e.strerror or e}; task.json has no license field"
    if spdx is None:
        return None, f"{path}: not a licence text this importer knows; task.json has no license field"
    return spdx, None
