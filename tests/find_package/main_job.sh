#!/usr/bin/env bash
# The new user's flow, as the README gives it: scripts/main.sh's build, then
# `cmake --install build/release`, then a consumer built against the
# installed package. Building the release tree again here would double
# CI's build, so this checks it on the build tree at hand: every file the
# install copies out of the build tree must be an output of the targets
# main.sh builds (ninja's dependency graph says which), and then the
# install and a find_package consumer (run.sh) work.
# usage: main_job.sh <build-dir> <scratch-dir> <source-dir> <consumer-dir>
set -euo pipefail
build="$1"; scratch="$2"; source="$3"; consumer="$4"
targets=$(sed -n 's/^main_targets="\(.*\)"$/\1/p' "$source/scripts/main.sh")
[[ -n "$targets" ]] || { echo "no main_targets= line in scripts/main.sh" >&2; exit 1; }
# Every file in the targets' dependency graph, relative to the build dir
# (ninja's graph tool: the targets, what they are built from, recursively).
# shellcheck disable=SC2086 # the targets are words
graph=$(ninja -C "$build" -t graph $targets | sed -n 's/.*label="\([^"]*\)".*/\1/p' | sort -u)
# The files the install copies out of this build tree, from its scripts
# (the consumers' scratch builds under tests/ are other projects).
installed=$(find "$build" -name cmake_install.cmake -not -path "$build/tests/*" -print0 |
            xargs -0 grep -hoE '"'"$build"'/[^"$]+"' | tr -d '"' | sort -u)
# Each as the file the build makes: a versioned symlink (libjitscope.so.0.5)
# is made with the file it names, which is what the graph lists.
wanted=$(while IFS= read -r file; do
  rel="${file#"$build"/}"
  case "$rel" in
    ""|include/*|*.cmake|CMakeFiles/*|*/CMakeFiles/*) continue ;;  # made by configure
    *:) continue ;;  # a run path the install rewrites (OLD_RPATH "<dir>:"), not a file
  esac
  if [[ -L "$file" ]]; then rel=$(realpath --relative-to="$build" "$file"); fi
  echo "$rel"
done <<<"$installed" | sort -u)
missing=0 checked=0
while IFS= read -r rel; do
  [[ -z "$rel" ]] && continue
  checked=$((checked + 1))
  if ! grep -qxF "$rel" <<<"$graph"; then
    echo "scripts/main.sh's build does not make $rel, which cmake --install copies" >&2
    missing=1
  fi
done <<<"$wanted"
[[ $missing -eq 0 ]] || exit 1
[[ $checked -gt 0 ]] || { echo "found no installed file of the build tree to check" >&2; exit 1; }
echo "main.sh's targets ($targets) build the $checked files the install copies from the tree"
bash "$source/tests/find_package/run.sh" "$build" "$scratch" "$consumer"
