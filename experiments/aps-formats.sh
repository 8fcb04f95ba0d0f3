#!/bin/sh
# SPDX-License-Identifier: MIT
# aps-formats.sh - the APS paper's Tables 4 and 6: gradients in (5,2) =
# e5m2, (4,3) = e4m3ieee (the paper's IEEE-style 4/3: max 240, subnormals,
# inf and NaN; DESIGN.md section 2) and (3,0) = e3m0 (4 bits: 0.25 .. 8),
# on 8 nodes (ring, the paper's section 4.1) and 256 nodes (hier:16, its
# section 4.2), with and without APS: underflow, overflow and round-off.
#
#   sh experiments/aps-formats.sh [FPLAB]
#
# Gradients: two layers of 4096 values per node, normal:0,1e-3 (a weight
# gradient, zero mean) and lognormal:-9,1 (positive magnitudes around
# 1.2e-4, three binades): the size of typical SGD gradients, below (4,3)'s
# smallest subnormal 2^-9 = 0.002 and far below (3,0)'s 0.25.  SEEDS
# (default 1 2 3) draw different gradients: the mean and the spread over
# them.  A few seconds.
set -eu
. "$(dirname "$0")/lib.sh"
FPLAB=${1:-./fplab}
SEEDS=${SEEDS:-1 2 3}

run() {
	# shellcheck disable=SC2086 # $2, the algorithm options, are words
	"$FPLAB" allreduce --nodes "$1" $2 --comm e5m2,e4m3ieee,e3m0 --scale none,aps --seed "$3" \
		--layers '4096:normal:0,1e-3;4096:lognormal:-9,1' --tsv
}
for s in $SEEDS; do
	{ run 8 "--algo ring" "$s"; run 256 "--algo hier --group 16" "$s" | tail -n +2; } | tag seed "$s"
done |
awk -F '\t' -v seeds="$SEEDS" "$TSV_AWK"'
	BEGIN {
		ns = split(seeds, S, " ")
		fmt["e5m2"] = "(5,2)"; fmt["e4m3ieee"] = "(4,3)"; fmt["e3m0"] = "(3,0)"
		# the paper, without / with APS (Table 4: ResNet-18 and DavidNet on
		# 8 nodes, CIFAR-10; Table 6: ResNet-50 on 256 nodes, ImageNet)
		paper["8 (5,2) none"] = "trains (90.1, 88.3)";   paper["8 (5,2) aps"] = "trains (91.6, 88.6)"
		paper["8 (4,3) none"] = "fails (10.0 DavidNet)"; paper["8 (4,3) aps"] = "trains (86.7, 81.3)"
		paper["8 (3,0) none"] = "fails (10.0)";          paper["8 (3,0) aps"] = "-"
		paper["256 (5,2) none"] = "71.00 (-5 points)";   paper["256 (5,2) aps"] = "75.98"
		paper["256 (4,3) none"] = "fails (0.1)";         paper["256 (4,3) aps"] = "75.93"
		paper["256 (3,0) none"] = "-";                   paper["256 (3,0) aps"] = "-"
	}
	$1 == "seed" { tsvhead(); next }	# a header per seed
	$tsvcol("layer") == "total" {
		f = $tsvcol("comm"); sub(/:.*/, "", f)
		key = $tsvcol("nodes") " " fmt[f] " " $tsvcol("scale")
		if (!(key in seen)) { seen[key] = 1; order[++nk] = key }
		z[key, $1] = 100 * $tsvcol("became_zero") / $tsvcol("n")
		r[key, $1] = $tsvcol("mean_rel_error|avg_rel_error")
		u[key, $1] = $tsvcol("underflow"); o[key, $1] = $tsvcol("overflow")
		ni[key, $1] = $tsvcol("nan") + $tsvcol("inf"); k[key] = $tsvcol("scale_log2")
	}
	END {
		if (tsv_bad) exit 1
		printf "mean over %d seeds (%s) [spread: largest - smallest]\n", ns, seeds
		printf "%-5s %-6s %-5s %5s %9s %9s %17s %8s %17s  %s\n", "nodes", "format", "scale",
			"k", "underflow", "overflow", "zero%", "nan+inf", "mean_rel", "paper (top-1 accuracy)"
		for (i = 1; i <= nk; i++) {
			key = order[i]; split(key, w, " ")
			printf "%-5s %-6s %-5s %5s", w[1], w[2], w[3], k[key]
			seeds_spread(u, key); printf " %9.0f", m
			seeds_spread(o, key); printf " %9.0f", m
			seeds_spread(z, key); zero[key] = m; printf " %7.1f%% [%5.1f]", m, sp
			seeds_spread(ni, key); printf " %8.0f", m
			seeds_spread(r, key); rel[key] = m; printf " %8.3g [%6.3g]  %s\n", m, sp, paper[key]
		}
		print ""
		print "k: the smallest APS shift of the two layers (of the last seed); zero%: sums that became 0"
		print "although the exact sum is not; mean_rel: the paper'\''s Eq. 5 over both layers (above 1 where"
		print "the zero-mean layer cancels: a small exact sum meets a rounded one)."
		printf "fplab: without APS, (4,3) loses %.0f%% (8 nodes) and %.0f%% (256) of the sums to zero and (3,0)\n",
			zero["8 (4,3) none"], zero["256 (4,3) none"]
		printf "%.0f%% and %.0f%%; with APS (4,3) keeps all but %.1f%% and %.1f%%, (5,2) barely changes.\n",
			zero["8 (3,0) none"], zero["256 (3,0) none"], zero["8 (4,3) aps"], zero["256 (4,3) aps"]
		printf "(4,3) round-off, none -> aps: %.3g -> %.3g (8 nodes), %.3g -> %.3g (256 nodes).\n",
			rel["8 (4,3) none"], rel["8 (4,3) aps"], rel["256 (4,3) none"], rel["256 (4,3) aps"]
		printf "(4,3) and (3,0) fail without APS (the paper): %s;\nAPS rescues (4,3) (the paper): %s; ",
			(zero["8 (4,3) none"] > 20 && zero["8 (3,0) none"] > 90 ? "reproduced, as the loss of sums to zero" : "NOT reproduced"),
			(zero["8 (4,3) aps"] < 5 && zero["256 (4,3) aps"] < 5 ? "reproduced" : "NOT reproduced")
		printf "(5,2) works without APS on 8 nodes (Table 4): %s.\n",
			(zero["8 (5,2) none"] < 5 ? "reproduced" : "NOT reproduced")
		print "Why only so far: the counts show the cause (the gradients sit below the formats'\'' smallest"
		print "subnormals), but the paper reports accuracy after training and fplab one all-reduce of"
		print "synthetic gradients (train-aps.sh trains).  (3,0) spans only 6 binades, so with APS on 256"
		print "nodes the shift that keeps 256 x max below 8 pushes most values under 0.25: fplab predicts"
		print "(3,0) fails there even with APS (the paper has no run)."
	}'
