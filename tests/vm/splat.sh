# Sourced by the guest runners (tests/vm/run, tests/vm/rootboot/run):
# the kernel log lines that fail a guest, whatever its job said.
# shellcheck shell=sh disable=SC2034
splat='Oops|BUG:|WARNING:|blocked for more than|INFO: task .* blocked|possible circular locking|possible recursive locking|lockdep|KASAN|UBSAN|general protection|Kernel panic|Call Trace:|soft lockup|hard LOCKUP|rcu_sched self-detected|rcu: INFO'
