# Trading back-office API + BullMQ workers (Node.js 24 LTS, the line CI tests on:
# scripts/use-node.sh pins the exact version).
#
#   docker build -t trading-api .
#   docker run -e ROLE=api ... trading-api
#
# Same image for every role: ROLE=all (default) | api | worker.

ARG NODE_IMAGE=node:24.21.0-bookworm-slim

# ---------------------------------------------------------------------------
# build: full dependency tree (devDependencies included) + tsc -> dist/
# ---------------------------------------------------------------------------
FROM ${NODE_IMAGE} AS build
WORKDIR /app

# Lockfile first so the dependency layer is cached across source changes.
COPY package.json package-lock.json ./
# --ignore-scripts: install scripts are denied here and the one native module
# the service needs is built on purpose below, whatever the npm in the image
# makes of package.json's "allowScripts". It also keeps project lifecycle
# scripts (e.g. a future "prepare") from running before the sources are copied in.
RUN npm ci --ignore-scripts --no-audit --no-fund

COPY tsconfig*.json ./
# The version check every npm script and dist/main.js run first, and the locked incremental build.
COPY scripts/check-node.js scripts/build.sh ./scripts/
COPY src ./src
RUN npm run build

# ---------------------------------------------------------------------------
# deps: production dependencies only (no devDependencies, no npm cache)
# ---------------------------------------------------------------------------
FROM ${NODE_IMAGE} AS deps
WORKDIR /app
# No toolchain: @node-rs/argon2 (password hashing) installs a prebuilt N-API
# binary for the platform as an optional dependency, and msgpackr-extract keeps
# its prebuilt binary; no install script runs. The probe proves the binary
# loads and hashes on this image before it is shipped.
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund \
 && node -e "require('@node-rs/argon2').hash('probe').then(()=>process.exit(0),()=>process.exit(1))" \
 && npm cache clean --force

# ---------------------------------------------------------------------------
# runtime
# ---------------------------------------------------------------------------
FROM ${NODE_IMAGE} AS runtime
ENV NODE_ENV=production \
    PORT=8000
WORKDIR /app

# Files stay owned by root: the app only needs to read them.
COPY --from=deps  /app/node_modules ./node_modules
COPY --from=build /app/dist         ./dist
# dist/main.js requires ../scripts/check-node.js first; it reads package.json's "engines".
COPY scripts/check-node.js ./scripts/
COPY package.json ./

# Unprivileged user shipped with the official node image (uid 1000).
USER node

# The API (PORT); a worker's /health and /metrics (WORKER_HTTP_PORT).
EXPOSE 8000 9100

# The app drains (stops accepting HTTP, lets in-flight jobs finish) on SIGTERM.
STOPSIGNAL SIGTERM

# Liveness only. slim images have no curl/wget, so use node's built-in fetch.
# ROLE=worker answers /health on WORKER_HTTP_PORT, the other roles on PORT
# (docker-compose.yml asks the api role for /ready instead).
HEALTHCHECK --interval=15s --timeout=5s --start-period=30s --retries=3 \
  CMD ["node", "-e", "const e=process.env,p=e.ROLE==='worker'?(e.WORKER_HTTP_PORT||9100):(e.PORT||8000);fetch('http://127.0.0.1:'+p+'/health').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]

# Exec form: node is PID 1 and receives SIGTERM directly (no npm / sh in
# between to swallow it).
CMD ["node", "dist/main.js"]
