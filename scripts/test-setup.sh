#!/bin/sh
# Everything the test suite needs that npm ci does not install: system packages
# (bubblewrap, socat and ripgrep for sandbox-runtime, which jails every CLI the
# bridge runs — docs/security.md; iproute2 for the loopback-only network
# namespace the real-CLI tests run in; chromium for the viewer's browser test,
# test/host/view) and the pinned real CLIs (cached outside
# the repo, so a second run is instant).
# docker.io and a dockerd for the Docker sandbox provider (scripts/ensure-docker.sh).
# Runs as `npm test`'s pretest step; idempotent and quick when all is present.
set -eu
cd "$(dirname "$0")/.."
if ! sh scripts/ensure-apt.sh bubblewrap socat ripgrep iproute2 chromium; then
  echo "test-setup: could not install system packages; tests that need them will say so and skip" >&2
fi
if ! sh scripts/ensure-docker.sh; then
  echo "test-setup: docker cannot run here; the Docker sandbox provider's tests will say so and skip" >&2
fi
node scripts/install-clis.mjs all >/dev/null
