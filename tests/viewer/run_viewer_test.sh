#!/usr/bin/env bash
# Viewer test: checks a jitscope Chrome trace with Chrome DevTools' trace engine.
#
# usage: run_viewer_test.sh <work_dir> <trace.json> <expect.json>
#
# Installs the pinned @paulirish/trace_engine into <work_dir> with `npm ci`
# from the committed package-lock.json (skipped when <work_dir> already holds
# an install made from the same lock file), then runs check_trace.mjs.
#
# exit 0: pass; 77: skipped because the npm registry is unreachable
# (ctest SKIP_RETURN_CODE); anything else: failure.
set -u

SKIP=77
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"

err() { echo "run_viewer_test: ERROR: $*" >&2; }

if [ "$#" -ne 3 ]; then
  echo "usage: $0 <work_dir> <trace.json> <expect.json>" >&2
  exit 2
fi
work_dir="$1"
trace="$2"
expect="$3"

for f in "$trace" "$expect"; do
  if [ ! -f "$f" ]; then err "no such file: $f"; exit 2; fi
done
trace="$(cd "$(dirname "$trace")" && pwd)/$(basename "$trace")"
expect="$(cd "$(dirname "$expect")" && pwd)/$(basename "$expect")"

for tool in node npm; do
  if ! command -v "$tool" >/dev/null 2>&1; then
    err "'$tool' not found in PATH (Node.js >= 18 with npm is required)"
    exit 2
  fi
done

mkdir -p "$work_dir" || { err "cannot create $work_dir"; exit 2; }
work_dir="$(cd "$work_dir" && pwd)"

# Serialize installs into the same work_dir (ctest -j may run several
# viewer tests at once).
if command -v flock >/dev/null 2>&1; then
  exec 9>"$work_dir/.install.lock"
  flock 9
fi

pkg=@paulirish/trace_engine
stamp="$work_dir/.viewer-install-stamp"
want_version="$(node -e 'process.stdout.write(require(process.argv[1]).dependencies[process.argv[2]])' \
  "$here/package.json" "$pkg")" || { err "cannot read $here/package.json"; exit 2; }
lock_hash="$(node -e '
  const c = require("node:crypto"), fs = require("node:fs");
  process.stdout.write(c.createHash("sha256").update(fs.readFileSync(process.argv[1])).digest("hex"));
' "$here/package-lock.json")" || { err "cannot read $here/package-lock.json"; exit 2; }
have_version="$(node -e '
  try { process.stdout.write(require(process.argv[1]).version); } catch { }
' "$work_dir/node_modules/$pkg/package.json" 2>/dev/null)"

if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$lock_hash" ] && [ "$have_version" = "$want_version" ]; then
  echo "run_viewer_test: $pkg@$have_version already installed in $work_dir"
else
  echo "run_viewer_test: installing $pkg@$want_version into $work_dir (npm ci)"
  rm -f "$stamp"
  cp "$here/package.json" "$here/package-lock.json" "$work_dir/" || { err "cannot copy package files"; exit 2; }
  log="$work_dir/npm-ci.log"
  # Bounded network timeouts so that an unreachable registry fails fast;
  # npm_config_* from the environment still win.
  (
    cd "$work_dir" &&
    npm ci --no-audit --no-fund --prefer-offline \
      --fetch-timeout="${npm_config_fetch_timeout:-60000}" \
      --fetch-retries="${npm_config_fetch_retries:-2}" \
      --fetch-retry-mintimeout="${npm_config_fetch_retry_mintimeout:-2000}" \
      --fetch-retry-maxtimeout="${npm_config_fetch_retry_maxtimeout:-10000}"
  ) >"$log" 2>&1
  rc=$?
  if [ "$rc" -ne 0 ]; then
    net_re='(code|errno) (ENOTFOUND|EAI_AGAIN|EAI_FAIL|ECONNREFUSED|ECONNRESET|ETIMEDOUT|ESOCKETTIMEDOUT|ENETUNREACH|ENETDOWN|EHOSTUNREACH|EHOSTDOWN|ENOTCACHED|ERR_SOCKET_TIMEOUT|E502|E503|E504)\b|npm (error|ERR!) network '
    if grep -Eq "$net_re" "$log"; then
      # Prefer npm's "request to <url> failed, reason: <why>" line, else the code.
      reason="$(grep -Eo 'request to [^ ]+ failed, reason: .*' "$log" | head -n 1)"
      [ -n "$reason" ] || reason="$(grep -Eo '(code|errno) E[A-Z0-9_]+' "$log" | head -n 1)"
      echo "viewer test SKIPPED: npm registry unreachable (${reason:-npm ci failed with a network error})"
      exit "$SKIP"
    fi
    err "npm ci failed (exit $rc); log: $log"
    tail -n 40 "$log" >&2
    [ "$rc" -eq "$SKIP" ] && rc=1
    exit "$rc"
  fi
  have_version="$(node -e 'process.stdout.write(require(process.argv[1]).version)' \
    "$work_dir/node_modules/$pkg/package.json")" || { err "$pkg missing after npm ci"; exit 1; }
  if [ "$have_version" != "$want_version" ]; then
    err "npm ci installed $pkg@$have_version, expected $want_version"
    exit 1
  fi
  echo "$lock_hash" >"$stamp"
fi

TRACE_ENGINE_DIR="$work_dir" node "$here/check_trace.mjs" "$trace" "$expect"
rc=$?
[ "$rc" -eq "$SKIP" ] && rc=1
exit "$rc"
