#!/usr/bin/env bash
# Formats the C and C++ sources with the repository's .clang-format.
# usage: scripts/format.sh [--check]   (--check: list what would change, exit 1 if any)
# Needs clang-format (Debian: apt-get install clang-format).
set -euo pipefail
cd "$(dirname "$0")/.."
mapfile -t files < <(git ls-files -- 'sdk/*' 'tools/*' 'samples/*' 'tests/*' 'bench/*' 'fuzz/*' 'python/*' |
                     grep -E '\.(c|cc|cpp|h|hpp)$')
if [ "${1:-}" = "--check" ]; then
  bad=0
  for f in "${files[@]}"; do
    if ! clang-format "$f" | cmp -s - "$f"; then echo "$f"; bad=1; fi
  done
  exit "$bad"
fi
clang-format -i "${files[@]}"
