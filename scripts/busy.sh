#!/usr/bin/env bash
# Runs a command while every core is kept busy by a spinning Node process, then stops them (also on failure or Ctrl-C):
# a check that the command, e.g. the test suite, passes on a machine that other work shares.
#
#   scripts/busy.sh npm test               # one spinning process per core
#   BUSY_LOOPS=4 scripts/busy.sh npm test  # or as many as given
#
# The command's exit status is the script's. The load average is printed before and after, on stderr.
set -euo pipefail

if [ "$#" -eq 0 ]; then
  echo "usage: scripts/busy.sh COMMAND [ARGS...]" >&2
  exit 2
fi

loops="${BUSY_LOOPS:-$(nproc)}"
pids=()

stop() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  wait "${pids[@]}" 2>/dev/null || true
  echo "busy.sh: stopped ${#pids[@]} spinning processes; $(uptime)" >&2
}
trap stop EXIT
# Background processes of a script ignore Ctrl-C, so the EXIT trap must stop them; exit with the usual statuses.
trap 'exit 130' INT
trap 'exit 143' TERM

for ((i = 0; i < loops; i++)); do
  node -e 'for (;;) {}' &
  pids+=("$!")
done
echo "busy.sh: ${loops} spinning processes (${pids[*]}); $(uptime)" >&2

"$@"
