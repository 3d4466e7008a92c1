#!/usr/bin/env python3
"""CPU profile of a TCG guest, sampled from the host (make bench-profile -c).

perf's cpu-clock samples are not to be trusted in a TCG guest (they land
almost all in the idle loop), so the host asks QEMU's monitor for one
vCPU's RIP at a time, taking the vCPUs in turn, PERIOD seconds apart,
while the guest says a target is being measured ($DIR/go-TARGET exists and
$DIR/stop-TARGET does not).  Stopping one vCPU for a register dump
every 20 ms slows the guest by a few per cent.  Samples from a vCPU
waiting for QEMU's big lock (an MMIO access: the APIC, the HPET) are
over-counted, since the monitor holds that lock while it answers.

  cpuprof.py sample SOCKET DIR [PERIOD]   until DIR/done exists
  cpuprof.py report DIR TOP               per target, from DIR/samples
                                          and DIR/TARGET.kallsyms
"""
import bisect
import collections
import os
import re
import socket
import sys
import time

RIP = re.compile(rb'RIP=([0-9a-f]+).*?CPL=(\d)', re.S)


def sample(path, res, period):
    deadline = time.time() + 60
    while not os.path.exists(path):
        if time.time() > deadline:
            sys.exit('cpuprof: no monitor socket at %s' % path)
        time.sleep(0.2)
    mon = socket.socket(socket.AF_UNIX)
    mon.connect(path)
    mon.settimeout(30)
    buf = b''
    # "info cpus" lists one line per vCPU: "* CPU #0: thread_id=..."
    mon.sendall(b'info cpus\n')
    while b'thread_id' not in buf or not buf.rstrip().endswith(b'(qemu)'):
        data = mon.recv(65536)
        if not data:
            return
        buf += data
    ncpus = max(len(re.findall(rb'CPU #\d+', buf)), 1)
    buf = b''
    n = 0
    with open(os.path.join(res, 'samples'), 'w') as out:
        while not os.path.exists(os.path.join(res, 'done')):
            names = os.listdir(res)
            cur = [f[3:] for f in names if f.startswith('go-') and
                   'stop-' + f[3:] not in names]
            if not cur:
                time.sleep(0.05)
                continue
            time.sleep(period)
            cpu = n % ncpus
            n += 1
            try:
                mon.sendall(b'cpu %d\ninfo registers\n' % cpu)
                while True:
                    m = RIP.search(buf)
                    if m:
                        buf = buf[m.end():]
                        break
                    data = mon.recv(65536)
                    if not data:
                        return
                    buf += data
            except OSError:
                return		# the guest is gone
            out.write('%s %d %s %s\n' % (cur[0], cpu, m.group(1).decode(),
                                         m.group(2).decode()))


def report(res, top):
    per = collections.defaultdict(collections.Counter)
    path = os.path.join(res, 'samples')
    if not os.path.exists(path):
        sys.exit('cpuprof: no samples in %s (did the sampler run?)' % res)
    for line in open(path):
        target, _cpu, rip, cpl = line.split()
        per[target][(int(rip, 16), int(cpl))] += 1
    for target in sorted(per):
        syms = []
        for line in open(os.path.join(res, target + '.kallsyms')):
            f = line.split()
            if len(f) >= 3 and f[1] in 'tTwW':
                syms.append((int(f[0], 16),
                             f[2] + (' ' + f[3] if len(f) > 3 else '')))
        syms.sort()
        addrs = [a for a, _ in syms]
        funcs = collections.Counter()
        for (rip, cpl), k in per[target].items():
            if cpl == 3:
                name = '[user space]'
            else:
                i = bisect.bisect_right(addrs, rip) - 1
                name = syms[i][1] if i >= 0 else hex(rip)
            funcs[name] += k
        total = sum(funcs.values())
        idle = sum(k for f, k in funcs.items()
                   if f in ('native_safe_halt', 'default_idle'))
        busy = max(total - idle, 1)
        print('== %s: %d samples, %.1f%% idle; share of busy samples:'
              % (target, total, 100.0 * idle / max(total, 1)))
        shown = 0
        for f, k in funcs.most_common():
            if f in ('native_safe_halt', 'default_idle'):
                continue
            print('%6.2f%%  %s' % (100.0 * k / busy, f))
            shown += 1
            if shown == top:
                break
        print()


if __name__ == '__main__':
    if len(sys.argv) >= 4 and sys.argv[1] == 'sample':
        sample(sys.argv[2], sys.argv[3],
               float(sys.argv[4]) if len(sys.argv) > 4 else 0.02)
    elif len(sys.argv) == 4 and sys.argv[1] == 'report':
        report(sys.argv[2], int(sys.argv[3]))
    else:
        sys.exit(__doc__)
