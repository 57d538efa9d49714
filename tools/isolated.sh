#!/usr/bin/env bash
# Runs a command with a HOME and a TMPDIR of its own, so that the certificates the TLS tests add to the current user's
# stores (.NET keeps them under $HOME/.dotnet/corefx/cryptography/x509stores on Linux) and the key files they write
# never reach the user's real ones. The folder is made readable by this user alone and removed when the command ends,
# killed or not; then the real stores are checked unchanged. ./build.sh test runs every test project this way; run a
# test by hand the same way:
#
#   tools/isolated.sh dotnet test tests/FlushBatching.Tests -c Release --filter TlsTests
#   tools/isolated.sh --list-real-stores      the real stores' files and digests (build.sh compares them at its end)
#
# A test that adds a certificate to a store refuses to run without it (tests/FlushBatching.Testing/IsolatedStore.cs).
set -euo pipefail
real_stores=$HOME/.dotnet/corefx/cryptography/x509stores

list_real_stores() {
  [[ -d $real_stores ]] || return 0
  (cd "$real_stores" && find . -type f -exec sha256sum {} + | sort)
}

if [[ ${1:-} == --list-real-stores ]]; then
  list_real_stores
  exit 0
fi
(($# > 0)) || { echo "usage: tools/isolated.sh COMMAND [ARGS...] | --list-real-stores" >&2; exit 2; }

before=$(list_real_stores)
# mktemp -d makes the folder mode 0700: the key files inside are this user's alone.
home=$(mktemp -d "${TMPDIR:-/tmp}/flushbatching-test-home.XXXXXX")
trap 'rm -rf "$home"' EXIT
mkdir "$home/tmp"
touch "$home/.flushbatching-test-home"
rc=0
# The package cache stays the user's: a test run reads what the build restored, and a restore inside the command
# (Stryker's) would otherwise download everything again. The command runs in the background so that a TERM (timeout's,
# CI's) reaches it and the folder is still removed.
HOME=$home TMPDIR=$home/tmp FLUSHBATCHING_TEST_HOME=$home NUGET_PACKAGES=${NUGET_PACKAGES:-$HOME/.nuget/packages} "$@" &
child=$!
trap 'kill -TERM "$child" 2>/dev/null || true; wait "$child" || true; exit 143' TERM INT
wait "$child" || rc=$?
if [[ "$(list_real_stores)" != "$before" ]]; then
  echo "error: the real certificate stores under $real_stores changed while '$*' ran" >&2
  diff <(echo "$before") <(list_real_stores) >&2 || true
  exit 1
fi
exit "$rc"
