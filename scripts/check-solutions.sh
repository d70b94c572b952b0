#!/usr/bin/env bash
# Syntax-checks the CUDA source of solution files with nvcc (no GPU needed).
# Usage: scripts/check-solutions.sh [--arch sm_90a] SOLUTION.json...
# Each file's "source" (plus its -D options) is compiled device-only; prints one line per file
# and exits 1 when any fails. NVRTC differs from nvcc in details (no host code, fewer headers),
# so a pass here is a quick check, not a guarantee that `kforge verify --compile-only` passes.
set -u
arch=sm_90a
if [[ "${1:-}" == "--arch" ]]; then arch=$2; shift 2; fi
nvcc=${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failed=0
for file in "$@"; do
  if ! jq -er '.source' "$file" >"$tmp/k.cu" 2>/dev/null; then
    echo "SKIP $file (no source)"
    continue
  fi
  mapfile -t defines < <(jq -r '(.options // [])[] | select(startswith("-D"))' "$file")
  if "$nvcc" -arch="$arch" --device-c -x cu "${defines[@]}" "$tmp/k.cu" -o "$tmp/k.o" >"$tmp/log" 2>&1; then
    echo "ok   $file"
  else
    echo "FAIL $file"
    sed 's/^/     /' "$tmp/log"
    failed=1
  fi
done
exit $failed
