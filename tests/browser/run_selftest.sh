#!/usr/bin/env bash
# ctest browser_check_selftest: check_report.mjs on hand-made pages
# (fixture/make_fixture.mjs): the page that keeps the DOM contract passes,
# every broken one fails for its reason (selftest.mjs).
#
# usage: run_selftest.sh <npm_dir> <out_dir>
# exit 0: pass; 77: skipped (Chromium missing and not installable, or the
# npm registry unreachable); anything else: failure.
set -u
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
if [ "$#" -ne 2 ]; then
  echo "usage: $0 <npm_dir> <out_dir>" >&2
  exit 2
fi
bash "$here/ensure_chromium.sh" "$1" || exit $?
bash "$here/../npm_ci.sh" "$here" "$1" puppeteer-core "browser test" || exit $?
rm -rf "$2" && mkdir -p "$2" || exit 2
PUPPETEER_DIR="$1" node "$here/selftest.mjs" "$2"
rc=$?
[ "$rc" -eq 77 ] && rc=1
exit "$rc"
