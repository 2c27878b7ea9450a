#!/usr/bin/env bash
# Assemble bench/RESULTS.md from the sections each benchmark writes (bench/RESULTS-*.md).
set -euo pipefail
cd "$(dirname "$0")"
{
  echo "# Benchmark results"
  echo
  echo "Recorded on this project's development machine: $(nproc) cores, $(python3 --version 2>&1)."
  echo "Each section is written by its benchmark (\`make bench\` re-runs them all); figures are compared"
  echo "as ratios within one run where the issue asks for a comparison. No timing is asserted in tests."
  for part in allocation store supply tick ingest pulumi; do
    echo
    sed 's/^# /## /' "RESULTS-$part.md"
  done
} > RESULTS.md
