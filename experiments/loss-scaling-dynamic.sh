#!/bin/sh
# SPDX-License-Identifier: MIT
# loss-scaling-dynamic.sh - automatic (dynamic) loss scaling as the
# mixed-precision slides (seed 001) describe it, on a gradient stream with
# occasional spikes: fp32-master:fp16, gradients 2^-30..2^-10 (most below
# fp16's normal range), one step in 25 multiplied by 2^16 (a loss spike).
# The scale starts at 2^16; a step whose scaled gradients hold an inf or
# NaN is skipped and the scale halves; after INTERVAL clean steps it
# doubles.  Printed: only the steps where the scale changed or a step was
# skipped, then the totals beside constant scaling and no scaling.
#
#   sh experiments/loss-scaling-dynamic.sh [FPLAB]
set -eu
FPLAB=${1:-./fplab}
STEPS=${STEPS:-400}
INTERVAL=${INTERVAL:-50}
COMMON="--steps $STEPS --sizes 2000 --grads loguniform:-30,-10 --spikes 0.04:65536 --seed 3"

echo "dynamic:65536:2:0.5:$INTERVAL on fp32-master:fp16 ($STEPS steps, spikes x 2^16 with p 0.04)"
printf '%6s %10s %8s  %s\n' step scale skipped event
# shellcheck disable=SC2086
"$FPLAB" optim $COMMON --loss-scale "dynamic:65536:2:0.5:$INTERVAL" --policy fp32-master:fp16 \
	--every 1 --tsv | awk -F '\t' '
	NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
	{
		s = $c["loss_scale"]; k = $c["skipped"]; ev = ""
		if (k > pk) ev = "skipped (inf/NaN in the scaled gradients): scale halves next"
		else if (NR > 2 && s != ps) ev = (s > ps ? "grown after " '"$INTERVAL"' " clean steps" : "changed")
		if (ev != "" || NR == 2) printf "%6s %10s %8s  %s\n", $c["step"], s, k, ev == "" ? "start" : ev
		ps = s; pk = k
	}'
echo
printf '%-24s %8s %9s %9s %14s %10s\n' "scaling" skipped nonzero applied grad_underflow drift
for sc in "dynamic:65536:2:0.5:$INTERVAL" 65536 1024 none; do
	# shellcheck disable=SC2086
	"$FPLAB" optim $COMMON --loss-scale "$sc" --policy fp32-master:fp16 --tsv |
	awk -F '\t' -v sc="$sc" -v n="$STEPS" 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
		{ t = n * 2000
		  printf "%-24s %8s %8.1f%% %8.1f%% %14s %10.3g\n", sc, $c["skipped"], 100 * $c["nonzero"] / t,
		  100 * ($c["nonzero"] - $c["vanished"]) / t, $c["grad_underflow"], $c["drift"] }'
done
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
