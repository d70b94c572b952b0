#!/usr/bin/env python3
"""Uploads a folder to a Hugging Face Hub repository: `kforge export --push-to-hub` (a dataset) and
`kforge finetune-launch --push-to-hub` (the trained model).

  usage: hub_push.py --repo ORG/NAME --type dataset|model --folder DIR [--private] [--message TEXT]

Creates the repository when it does not exist, then uploads every file of DIR in one commit, with
huggingface_hub: the Hub is $HF_ENDPOINT (default https://huggingface.co), the token $HF_TOKEN or the
one `hf auth login` stored. Prints one JSON line {"repo", "type", "url", "commit", "files"}; a failure
is one line on stderr and exit 1. The token is never printed.
"""

import argparse
import json
import os
import sys


def fail(message):
    print(f"hub_push: {message}", file=sys.stderr)
    sys.exit(1)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repo", required=True)
    parser.add_argument("--type", choices=("dataset", "model"), required=True)
    parser.add_argument("--folder", required=True)
    parser.add_argument("--private", action="store_true")
    parser.add_argument("--message", default="Upload from kforge")
    args = parser.parse_args()
    try:
        from huggingface_hub import HfApi
        from huggingface_hub.errors import HfHubHTTPError
    except ImportError:
        fail(f"huggingface_hub is not installed in {sys.executable}: pip install huggingface_hub")
    if not os.path.isdir(args.folder):
        fail(f"{args.folder}: no such folder")
    files = sorted(os.path.relpath(os.path.join(root, name), args.folder)
                   for root, _, names in os.walk(args.folder) for name in names)
    if not files:
        fail(f"{args.folder}: nothing to upload")
    api = HfApi()
    try:
        url = api.create_repo(args.repo, repo_type=args.type, private=args.private, exist_ok=True)
        commit = api.upload_folder(repo_id=args.repo, repo_type=args.type, folder_path=args.folder,
                                   commit_message=args.message)
    except HfHubHTTPError as e:
        fail(f"{args.repo} on {api.endpoint}: {' '.join(str(e).split())[:300]}")
    except (OSError, ValueError) as e:
        fail(f"{args.repo} on {api.endpoint}: {type(e).__name__}: {' '.join(str(e).split())[:300]}")
    print(json.dumps({"repo": args.repo, "type": args.type, "url": str(url),
                      "commit": getattr(commit, "oid", None) or "", "files": len(files)}))


if __name__ == "__main__":
    main()
