#!/usr/bin/env python3
"""Turn a benchmark run's results into the table, the chart and the
generated part of docs/benchmarks.md (between the bench:begin and
bench:end markers; the rest of that file is written by hand).

usage: render.py RESULTS_DIR DOC_MD CHART_PNG
"""
import os
import subprocess
import sys

JOBS = [("randread-4k-qd32", "4k randread QD32", "IOPS"),
        ("randwrite-4k-qd32", "4k randwrite QD32", "IOPS"),
        ("read-1m-qd8", "1M seq read QD8", "MiB/s"),
        ("randread-4k-qd1", "4k randread QD1", "IOPS"),
        ("randwrite-4k-qd1", "4k randwrite QD1", "IOPS"),
        ("randread-4k-qd32-uring", "4k randread QD32 io_uring", "IOPS"),
        ("randread-4k-qd1-uring", "4k randread QD1 io_uring", "IOPS"),
        ("randread-4k-qd1-hipri", "4k randread QD1 io_uring polled", "IOPS")]
# The rows whose completion latency is tabled: the QD1 rows, where one
# I/O's latency is the whole story, and one QD32 row.
LAT_JOBS = ["randread-4k-qd1", "randwrite-4k-qd1", "randread-4k-qd1-uring",
            "randread-4k-qd1-hipri", "randread-4k-qd32"]
TARGETS = [("raw", "raw brd"), ("dst-1", "DST 1 conn"),
           ("dst-2", "DST 2 conns"), ("dst-4", "DST 4 conns"),
           ("dst-hmac", "DST 2 conns hmac"), ("dst-gcm", "DST 2 conns hmac+gcm"),
           ("nbd", "NBD"), ("nvme-tcp", "NVMe/TCP")]
DSTS = [t for t in TARGETS if t[0].startswith("dst")]


def load(results):
    """The mean of the rounds per (target, job), and the rounds.  A
    value is (IOPS, MiB/s, p50, p99, p99.9, CPU us per I/O); the last
    four are None in results from before they were measured."""
    runs = {}
    with open(os.path.join(results, "bench.txt")) as f:
        for line in f:
            w = line.split()
            target, job, rnd = w[0], w[1], int(w[4])
            v = [float(w[2]), float(w[3])]
            v += [float(x) for x in w[5:9]] if len(w) >= 9 else [None] * 4
            runs.setdefault((target, job), {})[rnd] = tuple(v)
    vals = {}
    for k, r in runs.items():
        vals[k] = tuple(None if any(v[i] is None for v in r.values())
                        else sum(v[i] for v in r.values()) / len(r)
                        for i in range(6))
    versions = {}
    with open(os.path.join(results, "bench.versions")) as f:
        for line in f:
            k, _, v = line.strip().partition(" ")
            versions[k] = v
    return vals, runs, versions


def pick(v, unit):
    """The figure of an (IOPS, MiB/s) pair that a workload is read in."""
    return v[1] if unit == "MiB/s" else v[0]


def value(vals, target, job, unit):
    v = vals.get((target, job))
    return None if v is None else pick(v, unit)


def fmt(v, unit):
    if v is None:
        return "n/a"
    return "{:,.0f}".format(v) if unit == "IOPS" or v >= 100 else "%.1f" % v


def ratio(a, b):
    return "n/a" if a is None or not b else "%.2fx" % (a / b)


def tables(vals):
    out = ["| workload | " + " | ".join(n for _, n in TARGETS) + " |",
           "|---|" + "---|" * len(TARGETS)]
    for job, name, unit in JOBS:
        row = [fmt(value(vals, t, job, unit), unit) for t, _ in TARGETS]
        out.append("| %s, %s | %s |" % (name, unit, " | ".join(row)))
    out += ["", "Ratios (higher is better for DST):", "",
            "| workload | " + " | ".join(
                "%s / NVMe/TCP | %s / NBD | %s / raw" % (n, n, n)
                for _, n in DSTS) + " |",
            "|---|" + "---|---|---|" * len(DSTS)]
    for job, name, unit in JOBS:
        cells = []
        for t, _ in DSTS:
            d = value(vals, t, job, unit)
            cells += [ratio(d, value(vals, "nvme-tcp", job, unit)),
                      ratio(d, value(vals, "nbd", job, unit)),
                      ratio(d, value(vals, "raw", job, unit))]
        out.append("| %s | %s |" % (name, " | ".join(cells)))
    return out


def us(v):
    if v is None:
        return "n/a"
    return "{:,.0f}".format(v) if v >= 100 else "%.1f" % v


def latency(vals):
    """p50 / p99 / p99.9 of fio's latency, per target."""
    names = dict((j, n) for j, n, _ in JOBS)
    out = ["Latency from submission to completion, microseconds, p50 / p99 / "
           "p99.9 (lower is better; the mean of the rounds' percentiles):", "",
           "| workload | " + " | ".join(n for _, n in TARGETS) + " |",
           "|---|" + "---|" * len(TARGETS)]
    for job in LAT_JOBS:
        row = []
        for t, _ in TARGETS:
            v = vals.get((t, job))
            row.append("n/a" if v is None or v[2] is None else
                       " / ".join(us(x) for x in v[2:5]))
        out.append("| %s | %s |" % (names[job], " | ".join(row)))
    return out + [""]


def cpu(vals):
    """The guest's busy CPU time per I/O, both ends together."""
    out = ["CPU time per I/O, microseconds (the guest's busy time over the "
           "I/Os done: client and server together, lower is better):", "",
           "| workload | " + " | ".join(n for _, n in TARGETS) + " |",
           "|---|" + "---|" * len(TARGETS)]
    for job, name, _ in JOBS:
        row = []
        for t, _ in TARGETS:
            v = vals.get((t, job))
            row.append("n/a" if v is None or v[5] is None else us(v[5]))
        out.append("| %s | %s |" % (name, " | ".join(row)))
    return out + [""]


# The bytes one I/O of a workload moves, and the AF_ALG buffer size
# whose speed stands for it (cryptospeed.py: 4 KiB, or 64 KiB segments).
JOB_BYTES = {"read-1m-qd8": (1 << 20, 65536)}
# What seals each byte of a keyed row's frames: the hash, or with a
# cipher the AEAD alone (the hash then only proves the key in the
# handshake: module/crypto.c).
KEYED = [("dst-hmac", "DST 2 conns hmac", ["hmac(sha256)"]),
         ("dst-gcm", "DST 2 conns hmac+gcm", ["gcm(aes)"])]


def load_crypto(results):
    """{(alg, bytes): bytes per second} from bench.crypto, if measured."""
    speeds = {}
    path = os.path.join(results, "bench.crypto")
    if not os.path.exists(path):
        return speeds
    with open(path) as f:
        for line in f:
            w = line.split()
            if len(w) == 4 and w[0] == "crypto":
                speeds[(w[1], int(w[2]))] = float(w[3])
    return speeds


def crypto_limit(vals, speeds, cpus):
    """Keyed DST against what the guest's CPUs can hash and encrypt:
    every byte is sealed by one end and checked by the other, so one I/O
    of B bytes costs 2 * B / speed seconds of CPU; with all CPUs on
    nothing else, that is the ceiling.  An estimate: AF_ALG copies each
    buffer in and out, which the kernel's own use does not, and the rest
    of the I/O path is not counted."""
    if not speeds:
        return []
    out = ["Crypto limit: the kernel's hmac(sha256) and gcm(aes) on one CPU "
           "of this guest (AF_ALG, tests/bench/cryptospeed.py): " +
           ", ".join("%s %s MiB/s at %d KiB" % (a, fmt(v / 2**20, "MiB/s"),
                                                n // 1024)
                     for (a, n), v in sorted(speeds.items())) +
           ". The limit of a keyed row is %d CPUs doing nothing but sealing "
           "each byte at one end and checking it at the other (hmac: "
           "hmac(sha256); hmac+gcm: gcm(aes), which then seals frames "
           "alone): an estimate, since AF_ALG adds a copy into and out of "
           "the kernel (the in-kernel speed is higher) and the rest of the "
           "I/O path is not counted. Higher is better for DST:" % cpus, "",
           "| workload | " + " | ".join(
               "%s | limit | %s / limit | %s / plain DST 2 conns" % (n, n, n)
               for _, n, _ in KEYED) + " |",
           "|---|" + "---|---|---|---|" * len(KEYED)]
    for job, name, unit in JOBS:
        if job.endswith("-uring") or job.endswith("-hipri"):
            continue
        size, seg = JOB_BYTES.get(job, (4096, 4096))
        cells = []
        for t, _, algs in KEYED:
            secs = 0.0
            for a in algs:
                v = speeds.get((a, seg))
                secs = None if not v or secs is None else secs + 2 * size / v
            limit = None if not secs else cpus / secs
            if limit is not None and unit == "MiB/s":
                limit = limit * size / 2**20
            d = value(vals, t, job, unit)
            cells += [fmt(d, unit), fmt(limit, unit), ratio(d, limit),
                      ratio(d, value(vals, "dst-2", job, unit))]
        out.append("| %s, %s | %s |" % (name, unit, " | ".join(cells)))
    return out + [""]


def by_round(runs, target, job, unit):
    r = runs.get((target, job), {})
    return {n: pick(v, unit) for n, v in r.items()}


def rounds(runs):
    """How far the rounds of each figure were apart, and DST 1 conn
    against NVMe/TCP in each round: what noise the means hide."""
    spread = []
    for (target, job), r in runs.items():
        if len(r) > 1:
            v = [x[0] for x in r.values()]
            spread.append(100.0 * (max(v) - min(v)) / (sum(v) / len(v)))
    if not spread:
        return []
    spread.sort()
    out = ["Rounds: each figure is the mean of %d rounds, the second in "
           "reverse order; the rounds of one figure differed by %.0f%% "
           "(median) and at most %.0f%%. DST 1 conn / NVMe/TCP per round:"
           % (max(len(r) for r in runs.values()),
              spread[len(spread) // 2], spread[-1]), ""]
    for job, name, unit in JOBS:
        d = by_round(runs, "dst-1", job, unit)
        n = by_round(runs, "nvme-tcp", job, unit)
        out.append("- %s: %s" % (name, ", ".join(
            ratio(d.get(k), n.get(k)) for k in sorted(d) if k in n)))
    return out + [""]


def chart(vals, png, workdir):
    dat = os.path.join(workdir, "chart.dat")
    with open(dat, "w") as f:
        f.write("workload " + " ".join(t for t, _ in TARGETS[1:]) + "\n")
        for job, name, unit in JOBS:
            base = value(vals, "nvme-tcp", job, unit) or 1
            f.write('"%s" ' % name + " ".join(
                "%.3f" % ((value(vals, t, job, unit) or 0) / base)
                for t, _ in TARGETS[1:]) + "\n")
    cols = len(TARGETS) - 1
    script = """
set terminal pngcairo size 1200,500 noenhanced
set output '%s'
set title 'DST, NBD and NVMe/TCP relative to NVMe/TCP (1.0), same guest, same brd'
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.8 border -1
set yrange [0:*]
set ylabel 'throughput / NVMe/TCP'
set key outside right top
set grid ytics
plot for [i=2:%d] '%s' using i:xtic(1) title columnheader(i)
""" % (png, cols + 1, dat)
    try:
        subprocess.run(["gnuplot"], input=script.encode(), check=True)
    except (OSError, subprocess.CalledProcessError) as e:
        print("render: gnuplot failed: %s" % e, file=sys.stderr)
        return False
    return True


def main():
    if len(sys.argv) != 4:
        print(__doc__.strip().splitlines()[-1], file=sys.stderr)
        sys.exit(2)
    results, doc, png = sys.argv[1:]
    vals, runs, versions = load(results)
    cpus = int(versions.get("cpus", "1") or 1)
    table = (tables(vals) + [""] + latency(vals) + cpu(vals) +
             crypto_limit(vals, load_crypto(results), cpus))
    print("\n".join(table + rounds(runs)))
    ok = chart(vals, png, results)
    gen = ["<!-- bench:begin (generated by make bench; do not edit) -->",
           "",
           "Run of %s: kernel %s, %s, nbd-server %s, nvme-cli %s, %s vCPUs "
           "under QEMU TCG; %s s per job after %s s of warm-up, %s rounds." % (
               versions.get("date", "?"), versions.get("kernel", "?"),
               versions.get("fio", "?"), versions.get("nbd-server", "?"),
               versions.get("nvme-cli", "?"), versions.get("cpus", "?"),
               versions.get("runtime", "6"), versions.get("ramp", "2"),
               versions.get("rounds", "1")),
           ""] + table + rounds(runs)
    if ok:
        gen += ["![ratios to NVMe/TCP](%s)" % os.path.basename(png), ""]
    gen.append("<!-- bench:end -->")
    text = open(doc).read() if os.path.exists(doc) else ""
    b, e = text.find("<!-- bench:begin"), text.find("<!-- bench:end -->")
    if b >= 0 and e > b:
        text = text[:b] + "\n".join(gen) + text[e + len("<!-- bench:end -->"):]
    else:
        text = text + "\n" + "\n".join(gen) + "\n"
    with open(doc, "w") as f:
        f.write(text)


main()
