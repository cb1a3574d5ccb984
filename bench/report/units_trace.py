"""Writes a trace with the SDK (through the Python package) that holds many
compile units: N units, each with a cache miss, two column phases and 20
spans in each, 43 events a unit. For jitscope-report's memory per unit
(units_bench.sh; docs/performance.md, "jitscope-report at fleet scale").

    PYTHONPATH=build/dev/python /usr/bin/python3 bench/report/units_trace.py 42000 t.json
"""

import sys

import jitscope


def main():
    units, path = int(sys.argv[1]), sys.argv[2]
    # block: every event written (at a million units the JSON writer fell
    # behind and 15 % were dropped), so that each form holds 43 a unit.
    jitscope.start(path, cupti="off", ring_capacity=1 << 20, flush_interval_ms=20,
                   overflow="block")
    for i in range(units):
        with jitscope.compile_unit(f"k{i % 500}", key=f"kernel{i % 500}") as unit:
            unit.cache_miss("disk", f"key{i}")
            for phase, span in (("lower", "pass"), ("codegen", "isel")):
                with jitscope.phase(phase, column=phase + "_us"):
                    for _ in range(20):
                        with jitscope.span(span):
                            pass
    stats = jitscope.stop()
    print(f"{units} units, {stats.events_written} events in {path}")


if __name__ == "__main__":
    main()
