#!/usr/bin/env bash
# Neither libjitscope.so nor a program linking the static library needs
# anything from CUDA to load: CUPTI is dlopen()ed when a session asks for it.
# usage: no_cuda_needed.sh FILE...
set -euo pipefail
status=0
for f in "$@"; do
  needed=$(readelf -d "$f" | awk '/NEEDED/ {print $5}')
  if grep -Eiq 'cupti|cuda|nvrtc|nvjitlink|nvToolsExt' <<<"$needed"; then
    echo "FAIL: $f needs CUDA libraries:" $needed
    status=1
  else
    echo "ok: $f needs" $needed
  fi
done
exit $status
