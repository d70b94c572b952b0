#!/usr/bin/env python3
"""Builds kforge tasks (docs/formats.md, kforge.task/1) from PyTorch reference programs.

  export_reference.py kernelbench FILE.py --out ROOT --id kernelbench/level1/19_ReLU --level 1
  export_reference.py module FILE.py --out ROOT --id SUITE/NAME
  export_reference.py task TASK_DIR... [--out ROOT] [--specs-only]
  export_reference.py bulk-kernelbench DIR --out ROOT --levels 1,2,3 [--jobs N]

See docs/tasks.md. A failure prints one line `FAIL <id>: <reason>` and leaves no folder behind.
Exit status: 0 ok, 1 a task failed, 2 bad usage (a malformed id, a missing file or folder).
Nothing is written or removed outside the folder named by --out (or the task folder itself).
"""

import argparse
import json
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from kforge_tasks import schema  # noqa: E402
from kforge_tasks.problem import devices, import_one, logger  # noqa: E402
from kforge_tasks.schema import TaskError, UsageError  # noqa: E402

def cmd_import(args):
    level = args.level if args.command == "kernelbench" else None
    out_dir, _, notes = import_one(args, level)
    for n in notes:
        print(f"note {args.id}: {n}", file=sys.stderr)
    print(f"ok {args.id} -> {out_dir}")


def cmd_task(args):
    from kforge_tasks import exporter
    if args.out:
        schema.make_root(args.out)
    failed = 0
    for task_dir in args.task_dir:
        task_dir = Path(task_dir)
        task_id = str(task_dir)
        try:
            try:
                base = json.loads((task_dir / "task.json").read_text())
            except (OSError, ValueError) as e:
                raise TaskError(f"{task_dir / 'task.json'}: {e}") from None
            if not isinstance(base, dict):
                raise TaskError(f"{task_dir / 'task.json'}: expected a JSON object")
            task_id = str(base.get("id", task_id))[:200]
            schema.check_id(base.get("id"), f"{task_dir / 'task.json'}: id")
            base.pop("artifacts", None)
            derived = ("inputs", "params", "outputs", "constants")
            if args.rederive:
                for key in derived:
                    base.pop(key, None)
            out_dir = schema.task_dir(args.out, task_id, f"{task_dir / 'task.json'}: id") if args.out else task_dir
            if out_dir.resolve() == task_dir.resolve():
                # Build inside the task folder, then move only the generated files in.
                tmp = task_dir / f".build{os.getpid()}"
                doc, notes = exporter.build(task_dir / base.get("reference", "reference.py"), task_id, tmp,
                                            base=base, devices=devices(args.device), seed=args.seed, log=logger(args))
                _merge_in_place(tmp, task_dir, doc, args.specs_only)
            else:
                doc, notes = exporter.build(task_dir / base.get("reference", "reference.py"), task_id, out_dir,
                                            base=base, devices=devices(args.device), seed=args.seed, log=logger(args))
            for n in notes:
                print(f"note {task_id}: {n}", file=sys.stderr)
            print(f"ok {task_id} -> {out_dir}")
        except TaskError as e:
            failed += 1
            print(f"FAIL {task_id}: {e}", file=sys.stderr)
    return 1 if failed else 0


def _merge_in_place(tmp, task_dir, doc, specs_only):
    from kforge_tasks import exporter
    import shutil
    try:
        if specs_only:
            doc = {k: v for k, v in doc.items() if k not in ("artifacts", "conditioning")}
        else:
            for f in tmp.iterdir():
                if f.suffix in (".pt2", ".safetensors"):
                    os.replace(f, task_dir / f.name)
        new = task_dir / ".task.json.new"
        new.write_text(exporter.dumps(doc))
        os.replace(new, task_dir / "task.json")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def cmd_bulk(args):
    from kforge_tasks import bulk
    return bulk.run(args)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="command", required=True)

    def common(q):
        q.add_argument("--device", help="comma list of cpu,cuda (default: cpu, plus cuda when present)")
        q.add_argument("--seed", type=int, default=0, help="seed for parameters and the golden inputs")
        q.add_argument("-v", "--verbose", action="store_true")

    for name in ("kernelbench", "module"):
        q = sub.add_parser(name, help=f"import one {'KernelBench problem' if name == 'kernelbench' else 'PyTorch module file'}")
        q.add_argument("file")
        q.add_argument("--out", required=True, help="task root; the task goes to ROOT/<id>/")
        q.add_argument("--id", required=True, help="task id, e.g. kernelbench/level1/19_ReLU")
        if name == "kernelbench":
            q.add_argument("--level", type=int)
        common(q)
    q = sub.add_parser("task", help="(re)build hand-written task folders (task.json + reference.py)")
    q.add_argument("task_dir", nargs="+")
    q.add_argument("--out", help="write complete tasks to ROOT/<id>/ instead of updating the folder")
    q.add_argument("--specs-only", action="store_true",
                   help="in place: write the derived inputs/params/outputs into task.json, keep no artifacts")
    q.add_argument("--rederive", action="store_true", help="recompute inputs/params/outputs instead of checking them")
    common(q)
    q = sub.add_parser("bulk-kernelbench", help="import every problem of KernelBench level folders")
    q.add_argument("dir")
    q.add_argument("--out", required=True)
    q.add_argument("--levels", default="1,2,3")
    q.add_argument("--jobs", type=int, default=1)
    q.add_argument("--timeout", type=int, default=900, help="seconds per problem")
    q.add_argument("--mem-limit-gb", type=float, default=12,
                   help="memory limit (heap and private mappings) per problem process; a problem over it is "
                        "retried once, alone, with 4x the limit (at most the memory available less 2 GB)")
    q.add_argument("--only", help="regex on file names")
    common(q)
    q = sub.add_parser("_worker", help=argparse.SUPPRESS)
    q.add_argument("--out", required=True)
    q.add_argument("--threads", type=int, default=0, help="torch intra-op threads (0: torch's default)")
    common(q)
    args = p.parse_args(argv)
    try:
        if args.command in ("kernelbench", "module"):
            schema.check_id(args.id, "--id")
            if not Path(args.file).is_file():
                raise UsageError(f"{args.file}: not a file")
            schema.make_root(args.out)
            cmd_import(args)
            return 0
        if args.command == "task":
            return cmd_task(args)
        if args.command == "_worker":
            from kforge_tasks import bulk
            bulk.worker_main(args)
            return 0
        return cmd_bulk(args)
    except TaskError as e:
        print(f"FAIL {getattr(args, 'id', None) or args.command}: {e}", file=sys.stderr)
        return 2 if isinstance(e, UsageError) else 1
    except SystemExit as e:  # the reference program called exit() while it was imported
        print(f"FAIL {getattr(args, 'id', None) or args.command}: the program exited (status {e.code}) "
              "while it was imported; no task was written", file=sys.stderr)
        return 1
    except OSError as e:  # a file or folder the command was given: one line, never a traceback
        where = f"{e.filename}: " if e.filename else ""
        print(f"FAIL {getattr(args, 'id', None) or args.command}: {where}{e.strerror or e}", file=sys.stderr)
        return 1
    except Exception as e:  # a bug: still one line
        text = str(e).strip().splitlines()
        print(f"FAIL {getattr(args, 'id', None) or args.command}: {type(e).__name__}: {text[0][:300] if text else ''}",
              file=sys.stderr)
        return 1
    except Exception as e:  # a fault of the exporter or of torch: still one line (the trace with -v)
        if args.verbose:
            import traceback
            traceback.print_exc()
        text = str(e).strip().splitlines()
        reason = f"{type(e).__name__}: {text[0][:300] if text else ''}"
        print(f"FAIL {getattr(args, 'id', None) or args.command}: {reason}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
