#!/usr/bin/env bash
# Coverage-guided fuzzing of one target of tests/FlushBatching.Fuzz under AFL++ for a set time; what it finds is added
# to the target's corpus (tests/FlushBatching.Fuzz/corpus/TARGET/), which CI replays as an ordinary test
# (FuzzCorpusTests). Commit the new inputs; a crash lands there too, and then fails CI until it is fixed.
#
#   tools/fuzz.sh TARGET [MINUTES]      MINUTES: 10 by default
#
# TARGET: frame-decoder (the core's FrameDecoder), receive-path (the sockets stack's receive side, bytes through its
# pipe to a handler), dotnetty-decoder (the DotNetty stack's decoder in a channel pipeline), hocon-section (a
# transport's section with an arbitrary value for one key), dotnetty-tls (the DotNetty stack listening with TLS, a peer
# on loopback sending the bytes). tests/FlushBatching.Fuzz/FuzzTargets.cs says what each checks.
#
# Needs AFL++ (Debian: apt-get install afl++; run as root it is installed when missing) and the SharpFuzz command-line
# tool (installed under artifacts/tools when missing), which instruments FlushBatching.dll, FlushBatching.Akka.dll and,
# for the TLS path, DotNetty.Handlers.dll (in the build's temporary copy) for AFL's coverage. The last line gives the
# share of AFL's coverage map the run reached (bitmap_cvg) and the edges found.
set -euo pipefail
target=${1:?usage: tools/fuzz.sh TARGET [MINUTES]}
minutes=${2:-10}
root=$(cd "$(dirname "$0")/.." && pwd)
corpus=$root/tests/FlushBatching.Fuzz/corpus/$target
[[ -d $corpus ]] || { echo "error: no corpus for target '$target' at $corpus" >&2; exit 2; }
if ! command -v afl-fuzz >/dev/null; then
  [[ $(id -u) == 0 ]] || { echo "error: afl-fuzz not found: apt-get install afl++" >&2; exit 2; }
  apt-get update -qq >/dev/null && apt-get install -y -qq afl++ >/dev/null
fi
tools=$root/artifacts/tools
[[ -x $tools/sharpfuzz ]] || dotnet tool install SharpFuzz.CommandLine --version 2.3.0 --tool-path "$tools" >/dev/null
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
dotnet build -c Release "$root/tests/FlushBatching.Fuzz" -o "$work/bin" >/dev/null
for assembly in FlushBatching FlushBatching.Akka DotNetty.Handlers; do "$tools/sharpfuzz" "$work/bin/$assembly.dll" >/dev/null; done
export AFL_SKIP_BIN_CHECK=1 AFL_SKIP_CPUFREQ=1 AFL_I_DONT_CARE_ABOUT_MISSING_CRASHES=1 AFL_NO_UI=1
afl-fuzz -i "$corpus" -o "$work/out" -x "$root/tests/FlushBatching.Fuzz/boundaries.dict" -t 5000 -m none -V $((minutes * 60)) -- dotnet "$work/bin/FlushBatching.Fuzz.dll" "$target" >"$work/afl.log" 2>&1 ||
  { tail -30 "$work/afl.log" >&2; echo "error: afl-fuzz failed" >&2; exit 1; }
stats=$work/out/default/fuzzer_stats
# Each input found is kept once, named for its kind and content; one already in the corpus under any name is skipped.
declare -A have
for kept in "$corpus"/*; do have[$(sha1sum <"$kept" | cut -c1-12)]=1; done
added=0
for found in "$work"/out/default/queue/id:* "$work"/out/default/crashes/id:* "$work"/out/default/hangs/id:*; do
  [[ -f $found ]] || continue
  hash=$(sha1sum <"$found" | cut -c1-12)
  [[ -n ${have[$hash]:-} ]] && continue
  have[$hash]=1
  cp "$found" "$corpus/$(basename "$(dirname "$found")")-$hash"
  added=$((added + 1))
done
echo "$target: $(awk -F': *' '/^execs_done/{e=$2} /^execs_per_sec/{s=$2} /^corpus_count/{c=$2} /^saved_crashes/{x=$2} /^saved_hangs/{h=$2} /^bitmap_cvg/{b=$2} /^edges_found/{g=$2} END{printf "%s executions, %s per second, %s paths, %s crashes, %s hangs, coverage %s (%s edges)", e, s, c, x, h, b, g}' "$stats")"
echo "$added new inputs in $corpus"
# The run's numbers go into the target's row of tests/FlushBatching.Fuzz/fuzz-runs.md: commit it with the new inputs.
(cd "$root" && python3 tools/result_tables.py fuzz "$target" "$stats" "$minutes")
