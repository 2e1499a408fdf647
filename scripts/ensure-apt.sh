#!/bin/sh
# Ensure Debian packages are installed: quick no-op when every package is
# present (dpkg query only), else one apt-get update + install.
# Usage: scripts/ensure-apt.sh bubblewrap [more packages...]
set -eu
[ "$#" -gt 0 ] || { echo "usage: $0 package..." >&2; exit 2; }
missing=""
for pkg in "$@"; do
  status=$(dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null || true)
  case "$status" in
    *"install ok installed"*) ;;
    *) missing="$missing $pkg" ;;
  esac
done
[ -z "$missing" ] && exit 0
SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null 2>&1 || { echo "ensure-apt: need root or sudo to install:$missing" >&2; exit 1; }
  SUDO="sudo"
fi
echo "ensure-apt: installing$missing" >&2
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
# shellcheck disable=SC2086 # word splitting of the package list is intended
$SUDO apt-get install -y -qq --no-install-recommends $missing
