#!/usr/bin/env bash
# Set-up of a shown session that needs a stack up (tools/docs_outputs.py runs it in the session's
# directory first; its output is not shown): a copy of the root program, the README's own stack
# `local` (a copy of the dev stack's settings) brought up on `arklow dev clouds`, as the README's
# Pulumi section does; the clouds are stopped after the update.
#
# Usage: tools/docs_stack_up.sh [--lower-gpu-workers]
#   --lower-gpu-workers: then lower max_replicas of gpu-workers from 10 to 3 in
#   stacks/Pulumi.dev.yaml (the change the README's `what-if --stack dev` reviews)
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cp "$repo/Pulumi.yaml" "$repo/__main__.py" .
sed -i "s#virtualenv: .venv#virtualenv: $repo/.venv#" Pulumi.yaml
mkdir -p stacks .arklow/state
cp "$repo/stacks/Pulumi.dev.yaml" stacks/
cp stacks/Pulumi.dev.yaml stacks/Pulumi.local.yaml
export PULUMI_CONFIG_PASSPHRASE= PULUMI_SKIP_UPDATE_CHECK=1
export PULUMI_DISABLE_AUTOMATIC_PLUGIN_ACQUISITION=true
export PULUMI_BACKEND_URL="file://$PWD/.arklow/state" PULUMI_HOME="$PWD/.arklow/pulumi-home"
export -p | grep -E ' PULUMI_' > .docs-env   # the session's shell has them, as the README's does
arklow dev clouds > .arklow/clouds.out 2> .arklow/clouds.err & clouds=$!
trap 'kill $clouds 2> /dev/null || true' EXIT
until grep -qs 'local clouds ready' .arklow/clouds.out; do
  kill -0 "$clouds" 2> /dev/null || { cat .arklow/clouds.err >&2; exit 1; }
  sleep 0.5
done
. .arklow/clouds.out
pulumi stack init local --non-interactive > .arklow/stack-init.log
pulumi up --yes --skip-preview --non-interactive > .arklow/up.log 2>&1 || { tail -20 .arklow/up.log >&2; exit 1; }
if [[ "${1:-}" == "--lower-gpu-workers" ]]; then
  sed -i '/name: gpu-workers/,/max_replicas/ s/max_replicas: 10$/max_replicas: 3/' stacks/Pulumi.dev.yaml
  grep -q 'max_replicas: 3$' stacks/Pulumi.dev.yaml
fi
