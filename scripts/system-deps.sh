#!/usr/bin/env bash
# The system packages the tests use, from Debian's archive, installed only when missing:
#   chromium    goldfive web is tested in a real headless browser (tests/cli/test_web.py)
#   postgresql  the PostgreSQL store is tested against a real server (tests/pg_server.py)
# Called by the README's test command (and so by .ci/run). Needs root or sudo to install.
set -euo pipefail
need=()
command -v chromium >/dev/null 2>&1 || need+=(chromium)
compgen -G "/usr/lib/postgresql/*/bin/initdb" >/dev/null || need+=(postgresql)
if [ "${#need[@]}" -eq 0 ]; then
  exit 0
fi
echo "system-deps: installing ${need[*]} (apt-get)" >&2
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq "${need[@]}" >/dev/null
