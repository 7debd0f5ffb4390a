#!/usr/bin/env bash
# Renders CONFIG into OUT as N SLURM array tasks, then merges them in one more job (docs/batches.md).
#   examples/slurm/submit.sh CONFIG OUT N [RENDER OPTION...]     prints: ARRAY_JOB_ID MERGE_JOB_ID
set -euo pipefail
[ $# -ge 3 ] || { echo "usage: submit.sh CONFIG OUT N [RENDER OPTION...]" >&2; exit 2; }
here="$(cd "$(dirname "$0")" && pwd)"
config="$1" out="$2" n="$3"
shift 3
array=$(sbatch --parsable --array=1-"$n" "$here/shard.sbatch" "$config" "$out" "$n" "$@")
array="${array%%;*}"  # --parsable prints ID or ID;CLUSTER
merge=$(sbatch --parsable --dependency=afterany:"$array" "$here/merge.sbatch" "$out")
echo "${array} ${merge%%;*}"
