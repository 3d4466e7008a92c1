#!/usr/bin/env python3
"""What one I/O cost the scheduler, from an ftrace of sched_wakeup,
sched_switch and sched_migrate_task taken during a fio job.

usage: wakeups.py TARGET FIO_JSON TRACE

Prints one line per target: IOPS under tracing, then per I/O: wakeups,
wakeups of a task on another CPU (an IPI each, a halted vCPU to bring
back under TCG), wakeups of ksoftirqd, and context switches; and how
often fio moved between CPUs.  Tracing slows everything: compare
targets traced in the same run, not with make bench.
"""
import json
import re
import sys

LINE = re.compile(r"\s*(.+)-(\d+)\s+\[(\d+)\]\s+\S+\s+([\d.]+): (\w+): (.*)")


def main():
    target, fio_json, trace = sys.argv[1:4]
    job = json.load(open(fio_json))["jobs"][0]["read"]
    wake = cross = softirqd = switches = migrations = 0
    first = last = None
    for line in open(trace):
        m = LINE.match(line)
        if not m:
            continue
        _, _, cpu, ts, event, rest = m.groups()
        first = first if first is not None else float(ts)
        last = float(ts)
        if event == "sched_wakeup":
            wake += 1
            if int(re.search(r"target_cpu=(\d+)", rest).group(1)) != int(cpu):
                cross += 1
            if "comm=ksoftirqd" in rest:
                softirqd += 1
        elif event == "sched_switch":
            switches += 1
        elif event == "sched_migrate_task" and "comm=fio" in rest:
            migrations += 1
    if first is None or last <= first:
        sys.exit("wakeups.py: no events in " + trace)
    ios = job["iops"] * (last - first)
    if ios < 1:
        sys.exit("wakeups.py: no I/O during the trace")
    print("%-10s %7.0f IOPS traced; per I/O: %.2f wakeups, %.2f cross-CPU, "
          "%.2f ksoftirqd, %.2f switches; fio moved %.0f/s"
          % (target, job["iops"], wake / ios, cross / ios, softirqd / ios,
             switches / ios, migrations / (last - first)))


if __name__ == "__main__":
    main()
