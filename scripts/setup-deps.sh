#!/usr/bin/env bash
# Installs the Debian packages jitscope builds and tests with, when missing.
# As root it runs apt-get itself; otherwise it prints the exact command and
# fails. usage: scripts/setup-deps.sh [build|test]
set -euo pipefail

what="${1:-test}"
# python3-dev: the headers the Python package (python/) builds against.
packages=(cmake ninja-build g++ libboost-dev libsimdjson-dev libcli11-dev zlib1g-dev libzstd-dev
          python3-dev)
if [ "$what" = "test" ]; then
  # LLVM 16 and MLIR 16 for the jitscope::llvm and jitscope::mlir adapters and their tests.
  # protoc and python3-protobuf for the Perfetto protobuf conformance checks
  # (label perfetto, tests/perfetto/); python3-zstandard for their
  # zstd-compressed packets. python3-pytest runs the Python package's tests
  # (label python) with Debian's /usr/bin/python3; python3-pip and
  # python3-setuptools its pip install test (python.pip).
  packages+=(python3-pytest python3-pip python3-setuptools libgtest-dev libbenchmark-dev nlohmann-json3-dev clang libclang-rt-14-dev python3
             llvm-16-dev libmlir-16-dev mlir-16-tools protobuf-compiler python3-protobuf
             python3-zstandard)
fi

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done
# Node.js + npm (the viewer test installs Chrome DevTools' trace engine with
# npm, the browser tests puppeteer-core). Any install that provides the
# commands will do.
if [ "$what" = "test" ]; then
  command -v node >/dev/null 2>&1 || missing+=(nodejs)
  command -v npm >/dev/null 2>&1 || missing+=(npm)
  # Chromium for the browser tests (label browser, tests/browser/): they open
  # jitscope-report's HTML report in a real browser, headless, through
  # puppeteer-core, which downloads no browser of its own. Debian's package
  # is /usr/bin/chromium; JITSCOPE_CHROMIUM names another browser instead.
  if [ -z "${JITSCOPE_CHROMIUM:-}" ] && [ ! -x /usr/bin/chromium ]; then
    missing+=(chromium)
  fi
fi

if [ "${#missing[@]}" -eq 0 ]; then
  exit 0
fi
if [ "$(id -u)" -ne 0 ]; then
  echo "jitscope: missing Debian packages. Install them with:" >&2
  echo "  sudo apt-get update && sudo apt-get install -y ${missing[*]}" >&2
  exit 1
fi
echo "jitscope: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
