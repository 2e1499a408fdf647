#!/bin/sh
# Docker for the Docker sandbox provider's tests (host/sandbox/docker/): Debian's
# docker.io, and a dockerd with no bridge network and no iptables rules (every
# container runs with --network none; the host reaches it through docker exec).
# Starts dockerd detached, logging to $HB_DOCKERD_LOG, only when none answers.
# Idempotent; exits non-zero (tests then skip, saying why) when docker cannot run.
set -eu
cd "$(dirname "$0")/.."
sh scripts/ensure-apt.sh docker.io
docker version --format '{{.Server.Version}}' >/dev/null 2>&1 && exit 0
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
log="${HB_DOCKERD_LOG:-/tmp/harness-bridge-dockerd.log}"
$SUDO sh -c "setsid dockerd --bridge=none --iptables=false --ip6tables=false >>'$log' 2>&1 </dev/null &"
i=0
while ! docker version --format '{{.Server.Version}}' >/dev/null 2>&1; do
  i=$((i + 1))
  if [ "$i" -gt 60 ]; then
    echo "ensure-docker: dockerd did not answer within 30 s; see $log" >&2
    exit 1
  fi
  sleep 0.5
done
