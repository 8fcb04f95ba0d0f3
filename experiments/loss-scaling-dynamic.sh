#!/bin/sh
# SPDX-License-Identifier: MIT
# loss-scaling-dynamic.sh - automatic (dynamic) loss scaling as the
# mixed-precision slides (seed 001) describe it, on a gradient stream with
# occasional spikes: fp32-master:fp16, gradients 2^-30..2^-10 (most below
# fp16's normal range), one step in 25 multiplied by 2^16 (a loss spike).
# The scale starts at 2^16; a step whose scaled gradients hold an inf or
# NaN is skipped and the scale halves; after INTERVAL clean steps it
# doubles.  Printed: only the steps where the scale changed or a step was
# skipped (for the first of SEEDS), then the totals beside constant
# scaling and no scaling: the mean over SEEDS (default 3 1 2) and the
# spread (largest minus smallest).
#
#   sh experiments/loss-scaling-dynamic.sh [FPLAB]
set -eu
. "$(dirname "$0")/lib.sh"
FPLAB=${1:-./fplab}
STEPS=${STEPS:-400}
INTERVAL=${INTERVAL:-50}
SEEDS=${SEEDS:-3 1 2}
COMMON="--steps $STEPS --sizes 2000 --grads loguniform:-30,-10 --spikes 0.04:65536"

echo "dynamic:65536:2:0.5:$INTERVAL on fp32-master:fp16 ($STEPS steps, spikes x 2^16 with p 0.04, seed ${SEEDS%% *})"
printf '%6s %10s %8s  %s\n' step scale skipped event
# shellcheck disable=SC2086
"$FPLAB" optim $COMMON --seed "${SEEDS%% *}" --loss-scale "dynamic:65536:2:0.5:$INTERVAL" \
	--policy fp32-master:fp16 --every 1 --tsv | awk -F '\t' "$TSV_AWK"'
	NR == 1 { tsvhead(); cs = tsvcol("loss_scale|scale"); next }
	{
		s = $cs; k = $tsvcol("skipped"); ev = ""
		if (k > pk) ev = "skipped (inf/NaN in the scaled gradients): scale halves next"
		else if (NR > 2 && s != ps) ev = (s > ps ? "grown after " '"$INTERVAL"' " clean steps" : "changed")
		if (ev != "" || NR == 2) printf "%6s %10s %8s  %s\n", $tsvcol("step"), s, k, ev == "" ? "start" : ev
		ps = s; pk = k
	}'
echo
TMP=$(mktemp -d "${TMPDIR:-/tmp}/fplab-lsd.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
for sc in "dynamic:65536:2:0.5:$INTERVAL" 65536 1024 none; do
	for s in $SEEDS; do
		# shellcheck disable=SC2086
		"$FPLAB" optim $COMMON --seed "$s" --loss-scale "$sc" --policy fp32-master:fp16 --tsv |
			tag_into "$TMP/all.tsv" 'scaling\tseed' "$sc\t$s"
	done
done
awk -F '\t' -v seeds="$SEEDS" -v t="$((STEPS * 2000))" "$TSV_AWK"'
	BEGIN { ns = split(seeds, S, " ") }
	NR == 1 { tsvhead(); next }
	{
		if (!($1 in seen)) { seen[$1] = 1; order[++nk] = $1 }
		sk[$1, $2] = $tsvcol("skipped"); nz[$1, $2] = $tsvcol("nonzero") / t
		ap[$1, $2] = ($tsvcol("nonzero") - $tsvcol("vanished")) / t; gu[$1, $2] = $tsvcol("grad_underflow")
		dr[$1, $2] = $tsvcol("drift")
		if ($tsvcol("drift") !~ /^[0-9.e+-]+$/) bad[$1] = 1
	}
	END {
		if (tsv_bad) exit 1
		printf "mean over %d seeds (%s) [spread: largest - smallest]\n", ns, seeds
		printf "%-24s %8s %17s %9s %14s %10s\n", "scaling", "skipped", "nonzero", "applied",
			"grad_underflow", "drift"
		for (i = 1; i <= nk; i++) {
			k = order[i]
			seeds_spread(sk, k); printf "%-24s %8.1f", k, m
			seeds_spread(nz, k); n[k] = m; printf " %7.1f%% [%5.2f]", 100 * m, 100 * sp
			seeds_spread(ap, k); printf " %8.1f%%", 100 * m
			seeds_spread(gu, k); printf " %14.0f", m
			if (bad[k]) printf " %10s\n", "not finite"
			else { seeds_spread(dr, k); printf " %10.3g\n", m }
		}
		d = order[1]
		print ""
		printf "The slides'\'' automatic scaling skips the steps whose scaled gradients overflow and keeps\n"
		printf "the weights finite where a constant scale does not: %s.  It keeps more of the small\n",
			(!bad[d] && bad["65536"] ? "reproduced" : "NOT reproduced")
		printf "gradients than no scaling (nonzero %.1f%% against %.1f%%): %s.\n", 100 * n[d], 100 * n["none"],
			(n[d] > n["none"] ? "reproduced" : "NOT reproduced")
	}' "$TMP/all.tsv"
cat <<EOF

seed 001 (slides, "Automatic loss scaling"): "Start with a large scaling factor S;
for each training iteration: scale the loss by S, backprop to compute the dW,
unscale dW by 1/S; if dW contains Inf/NaN, then decrease S by a step factor
(S/step); otherwise, update dW to W; if there is no Inf/NaN for N updates, then
increase S by a step factor (S*step)."  And: "gradients smaller than 2^-24 will
become zero" in FP16.
fplab does exactly this (PyTorch GradScaler's semantics: step 2, N = INTERVAL):
each spike overflows fp16 at the current scale, the step is skipped (weights,
master and optimizer state untouched) and S halves; N clean steps double it.
Columns: nonzero, the weight-steps whose update reached the optimizer nonzero
(a gradient that underflowed in fp16 gives none); applied, those that moved the
FP32 master (the rest are swamped even in fp32: lr*g of 2^-30 against w of
2^-4).  A constant 65536 or 1024 never skips, so a spike's inf reaches the
optimizer and the weights stop being finite (drift nan or inf); no scaling
keeps every step, but gradients below fp16's range underflow (grad_underflow)
and their updates are lost (fewer nonzero).  Dynamic scaling keeps more of the
small gradients and skips exactly the spiked steps; the FP64 reference takes
the spikes (it has no overflow to notice), which is the drift of the dynamic
row: skipping a bad step is a departure from the reference by design.
EOF
