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
# per parameter of each strategy.  Over SEEDS (default 1 2 3): the mean
# and the spread (largest minus smallest).
#
#   sh experiments/split-sgd.sh [FPLAB]
set -eu
. "$(dirname "$0")/lib.sh"
FPLAB=${1:-./fplab}
STEPS=${STEPS:-300}
SIZE=${SIZE:-10000}

SEEDS=${SEEDS:-1 2 3}
TMP=$(mktemp -d "${TMPDIR:-/tmp}/fplab-ssgd.XXXXXX")
trap 'rm -rf "$TMP"' EXIT

run() {
	# shellcheck disable=SC2086
	"$FPLAB" optim --steps "$STEPS" --sizes "$SIZE" --seed "$2" $1 --policy split:bf16 \
		--policy fp32-master:bf16 --policy none:bf16 --policy kahan:bf16 \
		--policy stochastic:bf16 --tsv
}
for o in "--optim sgd --lr 1e-2 --momentum 0.9" "--optim adagrad" "--optim lamb"; do
	for s in $SEEDS; do
		run "$o" "$s" | tag_into "$TMP/all.tsv" seed "$s"
	done
done
awk -F '\t' -v seeds="$SEEDS" "$TSV_AWK"'
	BEGIN { ns = split(seeds, S, " ") }
	NR == 1 { tsvhead(); next }
	{
		key = $tsvcol("optim") SUBSEP $tsvcol("policy")
		if (!(key in seen)) { seen[key] = 1; order[++nk] = key }
		va[key, $1] = $tsvcol("vanished_frac"); dr[key, $1] = $tsvcol("drift"); md[key, $1] = $tsvcol("master_drift")
		sr[key, $1] = $tsvcol("split_rne_differs")
		by[key] = $tsvcol("bytes_per_param"); wb[key] = $tsvcol("weight_bytes"); mb[key] = $tsvcol("master_bytes")
		sb[key] = $tsvcol("state_bytes")
		if ($tsvcol("policy") == "split:bf16") sm[$tsvcol("optim"), $1] = $tsvcol("master_drift")
		if ($tsvcol("policy") == "fp32-master:bf16") fm[$tsvcol("optim"), $1] = $tsvcol("master_drift")
	}
	END {
		if (tsv_bad) exit 1
		printf "mean over %d seeds (%s) [spread: largest - smallest]\n", ns, seeds
		printf "%-8s %-17s %17s %11s %11s %10s %6s %7s %7s %6s\n", "optim", "policy", "vanished",
			"drift", "master_drift", "split!=rne", "bytes", "weight", "master", "state"
		for (i = 1; i <= nk; i++) {
			key = order[i]; split(key, w, SUBSEP)
			seeds_spread(va, key); printf "%-8s %-17s %8.2f%% [%5.2f]", w[1], w[2], 100 * m, 100 * sp
			seeds_spread(dr, key); printf " %11.4g", m
			seeds_spread(md, key); printf " %11.4g", m
			if (sr[key, S[1]] == "") printf " %10s", "-"
			else { seeds_spread(sr, key); printf " %9.1f%%", 100 * m }
			printf " %6s %7s %7s %6s\n", by[key], wb[key], mb[key], sb[key]
		}
		same = 1
		for (k in sm) if (sm[k] != fm[k]) same = 0
		print ""
		printf "Split SGD recovers the FP32 master exactly (master_drift equal to fp32-master'\''s, every\n"
		printf "optimizer and seed): %s; at 4 bytes of weight + trail instead of 6: %s.\n",
			same ? "reproduced" : "NOT reproduced",
			(by["sgd" SUBSEP "split:bf16"] + 2 == by["sgd" SUBSEP "fp32-master:bf16"] ? "reproduced" : "NOT reproduced")
		if (!same) exit 1
	}' "$TMP/all.tsv"
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
