# syntax=docker/dockerfile:1
#
# wikiedge container image.
#
#   docker build -t wikiedge .
#   docker run --rm -p 8080:8080 -p 127.0.0.1:8081:8081 \
#       -v ./secrets/wikiedge-admin-token:/run/secrets/wikiedge_admin_token:ro \
#       -e WIKIEDGE_UPSTREAM=http://mediawiki:80 wikiedge
#
# The admin port (8081: /healthz /readyz /metrics POST /purge) binds all interfaces in the
# container (WIKIEDGE_ADMIN_HOST=0.0.0.0 below) so that Prometheus can reach it: publish it on
# loopback at most, put it only on the network Prometheus scrapes from, and set
# WIKIEDGE_ADMIN_TOKEN(_FILE) wherever anything else shares a network with it (docs/DOCKER.md).
# The image reads the token from /run/secrets/wikiedge_admin_token by default (below).
#
# Two stages:
#   build   - installs all dependencies (incl. TypeScript) and compiles src/ to dist/
#   runtime - production dependencies only (`npm ci --omit=dev`) plus dist/;
#             no compiler, no test tools, no sources, no curl; runs as the
#             unprivileged `node` user (uid/gid 1000) of the official Node image.
#
# The Node version is ONE build argument, used by both stages:
#   docker build --build-arg NODE_VERSION=22 -t wikiedge .
# Default: 26, the Active LTS line on 2026-11-24 (Node's schedule: an even major is released in
# April and enters Active LTS in October; 26 did in October 2026, when 24 moved to Maintenance
# LTS; 20 reached end of life on 2026-04-30). docs/DOCKER.md says which versions were built
# and run: scripts/verify-image.sh builds this file with NODE_VERSION=20 on a local stand-in
# for node:20-bookworm-slim (its machines have Node 20 and no registry); the default base has
# not been built here.
# NODE_DIGEST pins the base by digest (recommended for production; empty by default), e.g.
#   docker build --build-arg NODE_DIGEST=@sha256:<digest of node:26-bookworm-slim> .

ARG NODE_VERSION=26
ARG NODE_DIGEST=

# ---------------------------------------------------------------- build stage
FROM node:${NODE_VERSION}-bookworm-slim${NODE_DIGEST} AS build
WORKDIR /app

# Dependencies first, so this layer is reused while only src/ changes.
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund

COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
# The commit wikiedge_build_info reports (the image has no .git): e.g.
#   docker build --build-arg SOURCE_COMMIT=$(git rev-parse HEAD) .
ARG SOURCE_COMMIT=
RUN SOURCE_COMMIT=${SOURCE_COMMIT} npm run build

# -------------------------------------------------------------- runtime stage
FROM node:${NODE_VERSION}-bookworm-slim${NODE_DIGEST} AS runtime

# The admin listener (/healthz, /readyz, /metrics) defaults to 127.0.0.1,
# which inside a container is unreachable for Prometheus and for published
# ports; 0.0.0.0 here. Never publish 8081 beyond loopback (see the top).
# MALLOC_MMAP_THRESHOLD_: a fixed glibc mmap threshold, so the cache's body slabs
# (128 KiB-1 MiB) are each their own mapping and go back to the OS when dropped
# (src/cache/arena.ts; docs/BENCHMARKS.md "memory").
# WIKIEDGE_ADMIN_TOKEN_FILE: the admin listener is off loopback, so it needs a token (the
# gateway refuses to start without one): by default from the secret compose and Kubernetes mount
# there. `-e WIKIEDGE_ADMIN_TOKEN_FILE=/path` moves it; `-e WIKIEDGE_ADMIN_TOKEN_FILE=` together
# with `-e WIKIEDGE_ADMIN_HOST=127.0.0.1` goes without.
ENV NODE_ENV=production \
    WIKIEDGE_ADMIN_HOST=0.0.0.0 \
    WIKIEDGE_ADMIN_TOKEN_FILE=/run/secrets/wikiedge_admin_token \
    MALLOC_MMAP_THRESHOLD_=131072

WORKDIR /app

# Production dependencies only. None of them has an install script, so
# --ignore-scripts costs nothing and keeps third-party code from running at
# build time. The npm cache is dropped in the same layer to keep the image small.
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund \
 && npm cache clean --force \
 && rm -rf /root/.npm /tmp/*

COPY --from=build /app/dist ./dist

# Files stay root-owned (the app only reads them); the process runs as the
# `node` user of the base image. Numeric so that Kubernetes' runAsNonRoot can
# verify it without looking into /etc/passwd.
USER 1000:1000

EXPOSE 8080 8081

# No curl/wget in the image: node itself asks the admin listener's /healthz
# (dist/healthcheck.js, src/apps/healthcheck.ts). It finds the listener as the
# gateway does, in the environment over the WIKIEDGE_CONFIG file over the
# defaults (127.0.0.1 while WIKIEDGE_ADMIN_HOST is a wildcard), and loads only
# the configuration code, not the gateway. An absolute path: a container run
# with another --workdir still finds it.
HEALTHCHECK --interval=30s --timeout=5s --start-period=10s --retries=3 \
  CMD ["node", "/app/dist/healthcheck.js"]

STOPSIGNAL SIGTERM
CMD ["node", "dist/main.js"]
