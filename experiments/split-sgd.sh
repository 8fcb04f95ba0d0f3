#!/bin/sh
# SPDX-License-Identifier: MIT
# split-sgd.sh - seed 000 (Intel's Split SGD): keep the bf16 weight as the
# top 16 bits of the FP32 master and the bottom 16 bits as a "trail", so
# the FP32 master is exact without the memory of a second copy.  fplab
# runs split:bf16 beside fp32-master:bf16 (SGD with momentum; also
# Adagrad and LAMB, the seed's other two optimizers) and the other
# strategies, against the FP64 reference: the masters must be the same
# (the same master_drift, bit for bit in the library's test), the stored
# bf16 weights differ (truncation instead of nearest even), and the memory
# per parameter of each strategy.
#
#   sh experiments/split-sgd.sh [FPLAB]
set -eu
FPLAB=${1:-./fplab}
STEPS=${STEPS:-300}
SIZE=${SIZE:-10000}

run() {
	# shellcheck disable=SC2086
	"$FPLAB" optim --steps "$STEPS" --sizes "$SIZE" $1 --policy split:bf16 \
		--policy fp32-master:bf16 --policy none:bf16 --policy kahan:bf16 \
		--policy stochastic:bf16 --tsv
}
printf '%-8s %-17s %9s %11s %11s %10s %8s %8s %7s %7s\n' optim policy vanished drift \
	master_drift split!=rne bytes weight master state
for o in "--optim sgd --lr 1e-2 --momentum 0.9" "--optim adagrad" "--optim lamb"; do
	run "$o" | awk -F '\t' '
		NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
		{ printf "%-8s %-17s %8.2f%% %11.4g %11.4g %10s %8s %8s %7s %7s\n", $c["optim"],
			$c["policy"], 100 * $c["vanished_frac"], $c["drift"], $c["master_drift"],
			$c["split_rne_differs"] == "" ? "-" : sprintf("%.1f%%", 100 * $c["split_rne_differs"]),
			$c["bytes_per_param"], $c["weight_bytes"], $c["master_bytes"], $c["state_bytes"]
		  if ($c["policy"] == "split:bf16") sm[$c["optim"]] = $c["master_drift"]
		  if ($c["policy"] == "fp32-master:bf16") fm[$c["optim"]] = $c["master_drift"] }
		END { for (o in sm) if (sm[o] != fm[o]) { print "MISMATCH: split and fp32-master masters differ (" o ")"; exit 1 } }'
done
cat <<EOF

seed 000 (Split SGD): "BFloat16 is only half as long [as Float32], and thus saves
half the memory"; keeping both FP32 and BF16 parameters "introduces more memory
footprint"; Split SGD stores the bf16 top half and the bottom 16 bits, so the
FP32 master is recovered exactly ("concat_fp32_from_bf16(bf16_w, trail)") at no
extra memory; supported for sgd, adagrad and lamb.
fplab ($STEPS steps, $SIZE weights, bytes per parameter without gradients):
split's master_drift equals fp32-master's for every optimizer (the same FP32
master), at 4 bytes of weight + trail instead of 6 (bf16 weight + fp32 master);
optimizer state comes on top (momentum 1 tensor, Adagrad 1, LAMB 2, kept in
fp32 by both presets).  Its stored bf16 weight is the master truncated, so
split!=rne of them differ from what fp32-master with nearest rounding stores
(about half: the dropped 16 bits are at or above half an ulp about half of the
time) and its drift is larger.  Without a master, none:bf16 loses the share of
updates in the vanished column; kahan keeps nearly all in a bf16 compensation
(4 bytes too, but its w still drifts); stochastic rounding loses as many
individually and keeps them only in expectation (its drift is as large here).
EOF
