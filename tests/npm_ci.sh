#!/usr/bin/env bash
# Installs a test's pinned npm package into a folder of the build tree, for
# the tests that run Node.js (tests/viewer, tests/browser).
#
# usage: npm_ci.sh <package_dir> <work_dir> <package> <test name>
#
# Runs `npm ci` in <work_dir> from <package_dir>'s package.json and committed
# package-lock.json, unless <work_dir> already holds an install made from the
# same lock file with <package> at the pinned version. Installs into one
# <work_dir> are serialized (ctest -j runs several tests that share it).
#
# exit 0: installed; 77: the npm registry is unreachable (prints one line,
# "<test name> SKIPPED: npm registry unreachable (...)"; ctest
# SKIP_RETURN_CODE); anything else: failure, with npm's log.
set -u

SKIP=77
err() { echo "npm_ci: ERROR: $*" >&2; }

if [ "$#" -ne 4 ]; then
  echo "usage: $0 <package_dir> <work_dir> <package> <test name>" >&2
  exit 2
fi
pkg_dir="$1"
work_dir="$2"
pkg="$3"
test_name="$4"

for tool in node npm; do
  if ! command -v "$tool" >/dev/null 2>&1; then
    err "'$tool' not found in PATH (Node.js >= 18 with npm is required)"
    exit 2
  fi
done
mkdir -p "$work_dir" || { err "cannot create $work_dir"; exit 2; }
work_dir="$(cd "$work_dir" && pwd)"
pkg_dir="$(cd "$pkg_dir" && pwd)" || { err "no such folder: $1"; exit 2; }

if command -v flock >/dev/null 2>&1; then
  exec 9>"$work_dir/.install.lock"
  flock 9
fi

stamp="$work_dir/.npm-install-stamp"
want_version="$(node -e 'process.stdout.write(require(process.argv[1]).dependencies[process.argv[2]])' \
  "$pkg_dir/package.json" "$pkg")" || { err "cannot read $pkg_dir/package.json"; exit 2; }
lock_hash="$(node -e '
  const c = require("node:crypto"), fs = require("node:fs");
  process.stdout.write(c.createHash("sha256").update(fs.readFileSync(process.argv[1])).digest("hex"));
' "$pkg_dir/package-lock.json")" || { err "cannot read $pkg_dir/package-lock.json"; exit 2; }
have_version="$(node -e '
  try { process.stdout.write(require(process.argv[1]).version); } catch { }
' "$work_dir/node_modules/$pkg/package.json" 2>/dev/null)"

if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$lock_hash" ] && [ "$have_version" = "$want_version" ]; then
  echo "npm_ci: $pkg@$have_version already installed in $work_dir"
  exit 0
fi

echo "npm_ci: installing $pkg@$want_version into $work_dir (npm ci)"
rm -f "$stamp"
cp "$pkg_dir/package.json" "$pkg_dir/package-lock.json" "$work_dir/" || { err "cannot copy package files"; exit 2; }
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
    echo "$test_name SKIPPED: npm registry unreachable (${reason:-npm ci failed with a network error})"
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
exit 0
