#!/usr/bin/env python3
"""The layering check: sdk/src's modules include only the modules below them.

Each folder of sdk/src is a module; its files include other modules' headers
by module path ("ring/producer.hpp"), so an #include line names the edge
(written "..." or <...>: sdk/src is on the include path either way).
The layers, lowest first (docs/architecture.md draws them):

    base <- clock <- ring <- compile <- {nvtx, cupti} <- {crash, sink} <- format
         <- flush <- {config, api}

(crash: the fatal-signal and unload handshakes; sink: where trace bytes
go; format: ring records to the trace's two forms; flush: the drain loop.)

A module may include itself and any module of a lower layer, never one of its
own layer (nvtx and cupti are siblings) or above. Also checked: no source
directly in sdk/src or in a folder that is not a module; the public headers
(sdk/include) include no private header; the tools include only base/ (they
link the JSON writer's object library, not the SDK).

usage: check_layers.py [--root DIR]   (default: the repository holding this script)
Exit 0 when the tree keeps the rules; 1 with one line per broken rule.
"""
import argparse
import pathlib
import re
import sys

LAYERS = [
    ["base"],
    ["clock"],
    ["ring"],
    ["compile"],
    ["nvtx", "cupti"],
    ["crash", "sink"],
    ["format"],
    ["flush"],
    ["config", "api"],
]
RANK = {module: rank for rank, names in enumerate(LAYERS) for module in names}
SOURCE = {".cpp", ".hpp", ".h", ".c", ".cc", ".inc"}
INCLUDE = re.compile(r'^\s*#\s*include\s*(["<])([^">]+)[">]')


def includes(path, angled=True):
    """(line number, include) for each #include "..." (and <...>) in `path`."""
    with open(path, encoding="utf-8", errors="replace") as f:
        for number, line in enumerate(f, 1):
            m = INCLUDE.match(line)
            if m and (angled or m.group(1) == '"'):
                yield number, m.group(2)


def allowed_below(module):
    return sorted(m for m, r in RANK.items() if r < RANK[module])


def module_of_include(name):
    head = name.split("/", 1)[0]
    return head if "/" in name and head in RANK else None


def check(root):
    problems = []
    src = root / "sdk" / "src"
    for path in sorted(p for p in src.rglob("*") if p.is_file() and p.suffix in SOURCE):
        rel = path.relative_to(root)
        parts = path.relative_to(src).parts
        if len(parts) == 1:
            problems.append(f"{rel}: a source directly in sdk/src; put it in its module's folder")
            continue
        module = parts[0]
        if module not in RANK:
            problems.append(f"{rel}: folder '{module}' is not a module of scripts/check_layers.py "
                            f"(modules: {', '.join(sorted(RANK))})")
            continue
        for number, name in includes(path):
            target = module_of_include(name)
            if target is None:
                if "/" not in name and (path.parent / name).exists():
                    problems.append(f'{rel}:{number}: #include "{name}": include a private '
                                    f'header by its module path ("module/file.hpp")')
                continue
            if target == module:
                continue
            if RANK[target] >= RANK[module]:
                below = ", ".join(allowed_below(module)) or "none"
                problems.append(f'{rel}:{number}: #include "{name}": {module} may not depend on '
                                f"{target} (allowed below {module}: {below})")
    public = root / "sdk" / "include"
    for path in sorted(p for p in public.rglob("*") if p.is_file() and p.suffix in SOURCE):
        for number, name in includes(path):
            if module_of_include(name) is not None:
                problems.append(f'{path.relative_to(root)}:{number}: #include "{name}": a public '
                                f"header includes a private one")
    tools = root / "tools"
    for path in sorted(p for p in tools.rglob("*") if p.is_file() and p.suffix in SOURCE):
        for number, name in includes(path):
            target = module_of_include(name)
            if target is not None and target != "base":
                problems.append(f'{path.relative_to(root)}:{number}: #include "{name}": the tools '
                                f"may use sdk/src's base only (they do not link the SDK)")
    return problems


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--root", type=pathlib.Path,
                        default=pathlib.Path(__file__).resolve().parent.parent)
    args = parser.parse_args()
    if not (args.root / "sdk" / "src").is_dir():
        print(f"check_layers: no sdk/src under {args.root}", file=sys.stderr)
        return 2
    problems = check(args.root)
    for p in problems:
        print(f"layering: {p}", file=sys.stderr)
    if problems:
        print(f"layering: {len(problems)} problem(s); the layers are in scripts/check_layers.py "
              f"and docs/architecture.md", file=sys.stderr)
        return 1
    print(f"layering: ok ({sum(1 for _ in (args.root / 'sdk' / 'src').rglob('*.[ch]pp'))} files, "
          f"{len(RANK)} modules)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
