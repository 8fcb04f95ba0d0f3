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
# Output: one TSV table, a row per (scale, tensor) and per scale a total,
# then the seeds' figures beside the totals.  The dump is synthetic and
# fixed (experiments/data/gen-sample.c, one seed): there is no spread over
# seeds to give.
set -e
. "$(dirname "$0")/lib.sh"
FPLAB=${1:-./fplab}
DIR=$(cd "$(dirname "$0")" && pwd)
DUMP=${2:-$DIR/data/sample-grads.npz}
FORMAT=${FORMAT:-fp16}

TMP=$(mktemp -d "${TMPDIR:-/tmp}/fplab-lsc.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
printf 'scale\ttensor\tn\tbecame_zero_frac\tsubnormal_frac\toverflow_frac\tscale_used\n'
for s in 1 8 64 1024 aps; do
	if [ "$s" = aps ]; then opt=--aps; else opt="--loss-scale $s"; fi
	# shellcheck disable=SC2086
	"$FPLAB" hist -f "$FORMAT" $opt --tsv "$DUMP" |
		awk -F'\t' -v s="$s" "$TSV_AWK"'NR == 1 { tsvhead(); next }
			{ printf "%s\t%s\t%s\t%.4f\t%.4f\t%.4f\t%s\n", s, $tsvcol("tensor"), $tsvcol("n"),
			  $tsvcol("became_zero_frac"), $tsvcol("subnormal_frac"), $tsvcol("overflow_frac"),
			  $tsvcol("applied_scale|scale") }'
done | tee "$TMP/all.tsv"
[ -n "${DUMP##*sample-grads.npz}" ] && exit 0	# another dump: the table only
awk -F '\t' '
	$2 == "(total)" { z[$1] = $4; sub_[$1] = $5; o[$1] = $6 }
	$2 == "conv1.weight.grad" { c1[$1] = $4 }
	$2 == "head.weight.grad" { h[$1] = $6 }
	END {
		print ""
		print "The seeds: gradients below 2^-24 become zero in fp16 (slides), most activation gradients"
		print "lie below fp16'\''s range and a loss scale of 8 (exponents shifted by 3) is enough to match"
		print "fp32 (the review of Micikevicius et al.); the slides'\'' Faster R-CNN table: scales 8 to 4096"
		print "all recover fp32'\''s mAP."
		printf "fplab on the sample dump: zero %.1f%% of all values unscaled (conv1, farthest from the\n",
			100 * z["1"]
		printf "loss: %.1f%%), %.1f%% with 8, %.2f%% with 64, %.2f%% with 1024, %.2f%% with APS; the head\n",
			100 * c1["1"], 100 * z["8"], 100 * z["64"], 100 * z["1024"], 100 * z["aps"]
		printf "layer overflows %.1f%% at 1024 (a constant scale has to fit every layer; APS scales each).\n",
			100 * h["1024"]
		printf "Loss scaling moves the gradients out of the zero: %s.  With 8, %.1f%% stay zero\n",
			(z["8"] < z["1"] / 2 ? "reproduced" : "NOT reproduced"), 100 * z["8"]
		printf "and %.1f%% are subnormal (fewer bits); whether that is enough is a question for training.\n",
			100 * sub_["8"]
		print "The dump is made to tell this story (its conv1 lies mostly below 2^-24), so the levels are"
		print "the sample'\''s, not a network'\''s; train-loss-scaling.sh trains."
	}' "$TMP/all.tsv"
