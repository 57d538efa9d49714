# Sourced by the benchmark scripts that run RemotePingPong across two processes: works from the repository root, builds
# RemotePingPong (Release) and sets $rpp to its dll.
#   start_server LOG [PREFIX...]   a server in the background (PREFIX such as taskset -c 0), with the array
#                                  $server_args, if set, after its own; sets $server and $address
#   stop_server                    stops it; a script that ends early stops it too
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
dotnet build -c Release benchmarks/RemotePingPong >/dev/null
rpp=benchmarks/RemotePingPong/bin/Release/net10.0/RemotePingPong.dll
server=
trap 'if [[ -n "$server" ]]; then kill -TERM "$server" 2>/dev/null || true; fi' EXIT

start_server() {
  local log=$1
  shift
  "$@" dotnet "$rpp" --role server --port 0 ${server_args[@]+"${server_args[@]}"} >"$log" 2>&1 &
  server=$!
  address=$(benchmarks/server-address.sh "$log")
}

stop_server() {
  kill -TERM "$server"
  wait "$server" || true
  server=
}
