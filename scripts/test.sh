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
npm test || status=$?
# The container image, built and started here without a Docker engine (README: "Deploy with
# Docker"). ~80 s the first time on a machine, ~10 s once its base image is cached.
if [ "${WIKIEDGE_SKIP_IMAGE_CHECK:-0}" != 1 ]; then
  bash scripts/verify-image.sh || status=$?
fi
# One plain closing line that any CI reader understands.
node scripts/test-summary.mjs test-results.json || true
exit "$status"
