#!/usr/bin/env python3
"""kforge's verdicts on the published KernelBench kernels beside KernelBench's own (scripts/gpu-published.sh).

Usage: published_agreement.py MANIFEST OUT MIN_PERCENT

Reads OUT/verdicts.jsonl (kforge verify, one line per kernel in the manifest's order), OUT/records-map.jsonl
(scripts/published_records.py: the record of each kernel) and OUT/kb-judge.jsonl (scripts/kb-judge.sh).
Writes OUT/agreement.jsonl and OUT/agreement.md (the table in Markdown, then the summary), and prints both.

kforge correct means status ok (KernelBench's meaning: the problem's own sizes). A kernel counts toward the
agreement only when both judged it: kforge's own failures (no_gpu, harness_error) are no verdict, and neither
is KernelBench's run that gave an error or ran out of GPU memory (the problem's tensors did not fit beside
what else was on the device: that says nothing of the kernel).

Exit 0 when every kernel of the manifest has a row, some were judged by both and the agreement is at least
MIN_PERCENT; 1 otherwise.
"""
import json
import os
import sys

from kb_eval import out_of_memory


def read_lines(out, name):
    path = os.path.join(out, name)
    if not os.path.exists(path):
        return []
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


def kernelbench_verdict(judged):
    """(text, correct) of KernelBench's line for a kernel; correct is None when it gave no verdict."""
    if judged is None:
        return "not judged (kforge export left it out)", None
    kb = judged["kernelbench"]
    if "error" in kb:
        return "no verdict: " + kb["error"][:80], None
    if out_of_memory(kb):
        return "no verdict: ran out of GPU memory", None
    correct = bool(kb.get("correctness"))
    return ("correct" if correct else "incorrect") + ("" if kb.get("compiled") else " (did not compile)"), correct


def agreement_rows(manifest, records, verdicts, judged):
    rows = []
    for rec, verdict in zip(records, verdicts):
        name = os.path.basename(rec["file"])
        entry = manifest.get(name, {})
        status = verdict["status"]
        kf_correct = status == "ok"
        kf_judged = status not in ("no_gpu", "harness_error")  # kforge's own failure: no verdict on the kernel
        kb_text, kb_correct = kernelbench_verdict(judged.get(rec["record"]))
        if kb_correct is None or not kf_judged:
            agreement = "-"
        else:
            agreement = "agree" if kb_correct == kf_correct else "DISAGREE"
        expected = entry.get("kernelbench_expected", "?")
        as_expected = "" if kb_correct is None or kb_correct == (expected == "accepts") else " (expected " + expected + ")"
        rows.append({"file": name, "task": rec["task"], "kforge": status,
                     "shape_general": verdict.get("checks", {}).get("shape_general", "-"),
                     "kforge_message": verdict.get("message", "")[:200], "kernelbench": kb_text + as_expected,
                     "agreement": agreement, "kernelbench_expected": expected,
                     "kforge_expected": entry.get("kforge_expected", "?")})
    return rows


def main():
    if len(sys.argv) != 4:
        sys.exit("usage: published_agreement.py MANIFEST OUT MIN_PERCENT")
    manifest_path, out, minimum = sys.argv[1], sys.argv[2], float(sys.argv[3])
    with open(manifest_path) as f:
        manifest = {e["file"]: e for e in json.load(f)}
    judged = {row["record"]: row for row in read_lines(out, "kb-judge.jsonl")}
    rows = agreement_rows(manifest, read_lines(out, "records-map.jsonl"), read_lines(out, "verdicts.jsonl"), judged)
    with open(os.path.join(out, "agreement.jsonl"), "w") as f:
        for row in rows:
            f.write(json.dumps(row) + "\n")
    table = ["| kernel | task | kforge | shape_general | KernelBench | agreement |",
             "| --- | --- | --- | --- | --- | --- |"]
    for r in rows:
        table.append(f"| {r['file']} | {r['task'].split('/', 1)[1]} | {r['kforge']} | {r['shape_general']} | "
                     f"{r['kernelbench']} | {r['agreement']} |")
    agree = sum(r["agreement"] == "agree" for r in rows)
    disagree = sum(r["agreement"] == "DISAGREE" for r in rows)
    both = agree + disagree
    pct = 100.0 * agree / both if both else 0.0
    summary = (f"{len(rows)} published kernels: {both} judged by both, {agree} agree, {disagree} disagree: "
               f"agreement {pct:.1f}% (goal {minimum:g}%); {len(rows) - both} without a verdict from both")
    with open(os.path.join(out, "agreement.md"), "w") as f:
        f.write("\n".join(table) + "\n\n" + summary + "\n")
    print("\n".join(table))
    print(summary)
    for r in rows:
        if r["kforge"] != r["kforge_expected"]:
            print(f"kforge not as the manifest expects: {r['file']}: {r['kforge']} ({r['kforge_message'][:150]}), "
                  f"expected {r['kforge_expected']}")
    for r in rows:
        if r["agreement"] == "DISAGREE":
            print(f"disagreement: {r['file']} ({r['task']}): kforge {r['kforge']} ({r['kforge_message'][:150]}), "
                  f"KernelBench {r['kernelbench']}")
    sys.exit(0 if len(rows) == len(manifest) and both and pct >= minimum else 1)


if __name__ == "__main__":
    main()
