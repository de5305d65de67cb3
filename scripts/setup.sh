#!/bin/sh
# Idempotent set-up shared by `npm run main`, `npm test` and CI: the pinned pnpm, native-addon
# headers for node-gyp, dependencies, and a build. A warm checkout pays only for turbo's cache check.
set -eu
cd "$(dirname "$0")/.."

node -e '
const [maj, min] = process.versions.node.split(".").map(Number);
if (maj < 20 || (maj === 20 && min < 19)) {
  console.error(`ux needs Node.js >= 20.19 (found ${process.versions.node}); install a newer Node.js and retry.`);
  process.exit(1);
}'

want_pnpm=$(node -p 'require("./package.json").packageManager.split("@")[1]')
if [ "$(pnpm --version 2>/dev/null || true)" != "$want_pnpm" ]; then
  echo "setup: installing pnpm@$want_pnpm with npm" >&2
  npm install --global --no-audit --no-fund "pnpm@$want_pnpm" >&2
fi

# node-pty builds with node-gyp; pnpm's node-gyp ignores npm's config and would try to download
# headers, which fails offline. Point it at the headers that ship with this Node.
if [ -z "${npm_config_nodedir:-}" ]; then
  node_prefix=$(dirname "$(dirname "$(command -v node)")")
  if [ -f "$node_prefix/include/node/node.h" ]; then
    npm_config_nodedir=$node_prefix
    export npm_config_nodedir
  fi
fi

# The Linux sandbox is bubblewrap. Install it when missing and we can (root with apt-get); otherwise
# ux fails closed and `ux doctor` says how to fix it.
if [ "$(uname -s)" = Linux ] && ! command -v bwrap >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "setup: installing bubblewrap with apt-get" >&2
    (apt-get update -qq && apt-get install -y -qq bubblewrap) >&2 || echo "setup: could not install bubblewrap" >&2
  else
    echo "setup: bubblewrap (bwrap) is missing; install it (apt-get install bubblewrap) for sandboxed commands" >&2
  fi
fi

# `setup.sh test`: what the tests need beyond that. tmux is the terminal whose screen the tests of
# what a person sees read back (apps/cli/test/visible-text.integration.test.ts).
if [ "${1:-}" = test ] && [ "$(uname -s)" = Linux ] && ! command -v tmux >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "setup: installing tmux with apt-get (for the terminal tests)" >&2
    (apt-get update -qq && apt-get install -y -qq tmux) >&2 || echo "setup: could not install tmux" >&2
  else
    echo "setup: tmux is missing; the terminal-screen tests will fail saying so (apt-get install tmux)" >&2
  fi
fi

export TURBO_TELEMETRY_DISABLED=1 TURBO_NO_UPDATE_NOTIFIER=1

# pnpm's and turbo's progress is shown only when a step fails (or with UX_SETUP_VERBOSE=1): a person
# running `npm run main` wants the job's output, not the set-up's.
log=$(mktemp)
trap 'rm -f "$log"' EXIT
quietly() {
  if [ -n "${UX_SETUP_VERBOSE:-}" ]; then
    "$@" >&2
  elif ! "$@" >"$log" 2>&1; then
    cat "$log" >&2
    echo "setup: failed: $*" >&2
    exit 1
  fi
}
if [ ! -d node_modules ]; then
  echo "setup: installing dependencies and building (the first run takes a minute or two)" >&2
fi
quietly pnpm install --frozen-lockfile --reporter=append-only
quietly pnpm exec turbo run build --output-logs=errors-only
