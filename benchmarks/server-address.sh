#!/usr/bin/env bash
# Prints the address a RemotePingPong server (--role server) wrote to LOG, waiting up to 60 s for it; on none, shows
# the log on stderr and fails. Used by build.sh, compare-builds.sh, soak.sh and remote-ping-pong.sh.
#
#   address=$(benchmarks/server-address.sh server.log)
set -euo pipefail
log=$1
# The log may not exist yet: the server's shell opens it after this script starts.
for _ in $(seq 1 60); do
  address=$(grep -Eo 'server at akka\.tcp://[^ ]+' "$log" 2>/dev/null | sed 's/server at //' || true)
  if [[ -n "$address" ]]; then
    echo "$address"
    exit 0
  fi
  sleep 1
done
cat "$log" >&2
echo "error: the RemotePingPong server printed no address in 60 s" >&2
exit 1
