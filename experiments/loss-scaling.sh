#!/bin/sh
# SPDX-License-Identifier: MIT
# loss-scaling.sh - the mixed-precision seeds' loss-scaling story on the
# sample gradient dump: how much of each layer's gradient underflows in
# fp16 (becomes zero) or lands in the subnormal range, for loss scales
# 1, 8, 64, 1024, and with APS's per-layer power-of-two scale.
#
#   sh experiments/loss-scaling.sh [FPLAB] [DUMP]
#
# FPLAB defaults to ./fplab, DUMP to experiments/data/sample-grads.npz.
# Output: one TSV table, a row per (scale, tensor) and per scale a total.
set -e
FPLAB=${1:-./fplab}
DIR=$(cd "$(dirname "$0")" && pwd)
DUMP=${2:-$DIR/data/sample-grads.npz}
FORMAT=${FORMAT:-fp16}

printf 'scale\ttensor\tcount\tbecame_zero_frac\tsubnormal_frac\toverflow_frac\tscale_used\n'
for s in 1 8 64 1024 aps; do
	if [ "$s" = aps ]; then opt=--aps; else opt="--loss-scale $s"; fi
	# shellcheck disable=SC2086
	"$FPLAB" hist -f "$FORMAT" $opt --tsv "$DUMP" |
		awk -F'\t' -v s="$s" 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
			{ printf "%s\t%s\t%s\t%.4f\t%.4f\t%.4f\t%s\n", s, $c["tensor"], $c["count"],
			  $c["became_zero_frac"], $c["subnormal_frac"], $c["overflow_frac"], $c["scale"] }'
done
