#!/bin/sh
# CI machine setup before `npm ci && npm test`: system packages the tests use.
# bubblewrap: the local sandbox's isolation mode (its conformance run skips without it).
set -eu
cd "$(dirname "$0")/.."
scripts/ensure-apt.sh bubblewrap
