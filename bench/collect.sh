#!/usr/bin/env bash
# Assemble bench/RESULTS.md from the sections each benchmark writes (bench/RESULTS-*.md).
# Known sections come in a fixed order; any other RESULTS-*.md (a new benchmark) follows them, so
# no section is ever left out. A section whose benchmark has not run yet is simply absent.
set -euo pipefail
cd "$(dirname "$0")"
order=(allocation allocate-cli store supply tick controller ingest pulumi main-job simulate whatif scaling ha)
parts=()
for part in "${order[@]}"; do
  [[ -f "RESULTS-$part.md" ]] && parts+=("$part")
done
for file in RESULTS-*.md; do
  part=${file#RESULTS-}
  part=${part%.md}
  [[ " ${order[*]} " == *" $part "* ]] || parts+=("$part")
done
{
  echo "# Benchmark results"
  echo
  echo "Assembled on a machine with $(nproc) cores, $(python3 --version 2>&1); each section states the"
  echo "core count and load it was recorded under. Each section is written by its benchmark"
  echo "(bench/bench_<area>.py; \`make bench\` re-runs several); figures are compared as ratios within"
  echo "one run where the issue asks for a comparison. No timing is asserted in tests."
  for part in "${parts[@]}"; do
    echo
    # the file's first heading becomes a level-2 one, the others keep their depth below it
    awk 'BEGIN { shift = -1 }
         /^#+ / { n = index($0, " ") - 1; if (shift < 0) shift = 2 - n; d = n + shift; if (d < 2) d = 2;
                  h = ""; for (i = 0; i < d; i++) h = h "#"; print h substr($0, n + 1); next }
         { print }' "RESULTS-$part.md"
  done
} > RESULTS.md
