#!/usr/bin/env bash
# Step 1 of action.yml, run in the action's checkout: install netform's dependencies from the
# lockfile and build it, unless that was done already (a cached or prepared checkout).
set -euo pipefail
if [ ! -d node_modules ]; then
  npm ci --no-audit --no-fund # `prepare` builds dist/
fi
if [ ! -f dist/src/cli/main.js ]; then
  npm run build
fi
node dist/src/cli/main.js --version
