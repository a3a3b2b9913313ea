#!/usr/bin/env bash
# The whole test suite, on a fresh Debian bookworm with Node 20, installing what it needs:
#   Debian packages (MediaWiki 1.39, PHP, Redis) when missing, the npm dependencies from the
#   lock file, then `npm test` (lint, typecheck, build, unit and integration tests against a
#   real MediaWiki that the suite starts and stops itself).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-system-deps.sh
npm ci --no-audit --no-fund --loglevel=error
status=0
steps_failed=()
npm test || { status=$?; steps_failed+=("npm test (exit $status)"); }
# The container image, built and run with podman here (no Docker engine; README: "Deploy with
# Docker"), then the compose stack started with podman-compose on local stand-in images.
# Both cache their images under /var/tmp/wikiedge-verify. Measured on a 2-core machine:
# verify-image.sh 5 s and verify-compose.sh ~40 s with everything cached, 68 s and 102 s the
# first time (docs/DOCKER.md, "Timing"). WIKIEDGE_SKIP_IMAGE_CHECK=1 skips both, WIKIEDGE_SKIP_COMPOSE_CHECK=1 the second.
if [ "${WIKIEDGE_SKIP_IMAGE_CHECK:-0}" != 1 ]; then
  bash scripts/verify-image.sh || { status=$?; steps_failed+=("scripts/verify-image.sh (exit $status)"); }
  if [ "${WIKIEDGE_SKIP_COMPOSE_CHECK:-0}" != 1 ]; then
    bash scripts/verify-compose.sh || { status=$?; steps_failed+=("scripts/verify-compose.sh (exit $status)"); }
  fi
fi
# One plain closing line that any CI reader understands.
node scripts/test-summary.mjs test-results.json || true
# And which step failed, for a reader who sees only the end of the output.
for step in "${steps_failed[@]}"; do echo "failed: $step"; done
exit "$status"
