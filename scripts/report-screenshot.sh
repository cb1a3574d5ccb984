#!/usr/bin/env bash
# Renders the pass_pipeline sample's HTML report and saves a 1600x900
# screenshot of its top, as loaded, for the README: docs/images/report.png.
#
# usage: bash scripts/report-screenshot.sh [BUILD_DIR] [OUT.png]
#   BUILD_DIR  a build with jitscope_pass_pipeline and jitscope-report
#              (default build/dev); OUT defaults to docs/images/report.png
# Needs Chromium and puppeteer-core, as the browser tests do
# (tests/browser/README.md): installed into BUILD_DIR/browser-work by npm ci.
set -euo pipefail
cd "$(dirname "$0")/.."
root="$(pwd)"
build="$(cd "${1:-build/dev}" && pwd)"
out="${2:-docs/images/report.png}"
out="$(cd "$(dirname "$out")" && pwd)/$(basename "$out")"
for b in samples/pass_pipeline/jitscope_pass_pipeline tools/report/jitscope-report; do
  [[ -x "$build/$b" ]] || { echo "report-screenshot: $build/$b is not built" >&2; exit 2; }
done
bash tests/browser/ensure_chromium.sh "$build/browser-work"
bash tests/npm_ci.sh tests/browser "$build/browser-work" puppeteer-core "report-screenshot" >/dev/null

# Relative file names, so the page shows "pp.trace.json", not a build path.
work="$build/report-screenshot"
rm -rf "$work" && mkdir -p "$work"
cd "$work"
"$build/samples/pass_pipeline/jitscope_pass_pipeline" --trace pp.trace.json --metrics pp.metrics.jsonl >/dev/null 2>&1
"$build/tools/report/jitscope-report" pp.trace.json --metrics pp.metrics.jsonl --format html -o report.html
PUPPETEER_DIR="$build/browser-work" node "$root/tests/browser/screenshot.mjs" --html report.html --out "$out" --width 1600 --height 900
echo "report-screenshot: $(stat -c %s "$out") bytes"
