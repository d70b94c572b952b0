#!/usr/bin/env python3
"""Writes the rows of a `kforge export` JSON lines file as Parquet with a pinned schema.

  usage: export_parquet.py --features JSON --in ROWS.jsonl --out FILE.parquet

JSON is the schema as `datasets.Features.to_dict()` writes it (kforge's RowFeatures). The file's
Arrow schema is that schema's (`Features.arrow_schema`, with the `huggingface` metadata), so
`datasets.load_dataset("parquet", ...)` reads the features back as written: JSON columns
(`List(Json())`) keep every message and tool-call argument object exactly, without keys filled in
with nulls. Rows are streamed in batches; memory holds one batch. Fails with one line on stderr
(ROWS.jsonl:LINE when a row does not fit the schema) and exit 1.
"""

import argparse
import json
import sys

BATCH_ROWS = 512


def fail(message):
    print(f"export_parquet: {message}", file=sys.stderr)
    sys.exit(1)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--features", required=True)
    parser.add_argument("--in", dest="rows", required=True)
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
        from datasets import Dataset, Features
    except ImportError as e:
        fail(f"{e.name} is not installed in {sys.executable}: pip install datasets pyarrow (or set KFORGE_PYTHON)")

    features = Features.from_dict(json.loads(args.features))
    schema = features.arrow_schema
    batch, first_line = [], 1
    with open(args.rows, encoding="utf-8") as rows, pq.ParquetWriter(args.out, schema) as writer:

        def flush():
            try:
                table = Dataset.from_list(batch, features=features).data.table
                writer.write_table(table.replace_schema_metadata(schema.metadata))
            except (pa.ArrowInvalid, pa.ArrowTypeError, TypeError, ValueError) as e:
                fail(f"{args.rows}:{first_line}-{first_line + len(batch) - 1}: rows do not fit the schema: {e}")

        for number, line in enumerate(rows, 1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
                batch.append({name: row.get(name) for name in features})
            except (ValueError, TypeError) as e:
                fail(f"{args.rows}:{number}: {e}")
            if len(batch) == BATCH_ROWS:
                flush()
                batch, first_line = [], number + 1
        if batch:
            flush()


if __name__ == "__main__":
    main()
