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
# smallest subnormal 2^-9 = 0.002 and far below (3,0)'s 0.25.
set -eu
FPLAB=${1:-./fplab}
SEED=${SEED:-1}

run() {
	"$FPLAB" allreduce --nodes "$1" $2 --comm e5m2,e4m3ieee,e3m0 --scale none,aps --seed "$SEED" \
		--layers '4096:normal:0,1e-3;4096:lognormal:-9,1' --tsv
}
{ run 8 "--algo ring"; run 256 "--algo hier --group 16" | tail -n +2; } |
awk -F '\t' '
	BEGIN {
		fmt["e5m2:ne"] = "(5,2)"; fmt["e4m3ieee:ne"] = "(4,3)"; fmt["e3m0:ne"] = "(3,0)"
		# the paper, without / with APS (Table 4: ResNet-18 and DavidNet on
		# 8 nodes, CIFAR-10; Table 6: ResNet-50 on 256 nodes, ImageNet)
		paper["8 (5,2) none"] = "trains (90.1, 88.3)";   paper["8 (5,2) aps"] = "trains (91.6, 88.6)"
		paper["8 (4,3) none"] = "fails (10.0 DavidNet)"; paper["8 (4,3) aps"] = "trains (86.7, 81.3)"
		paper["8 (3,0) none"] = "fails (10.0)";          paper["8 (3,0) aps"] = "-"
		paper["256 (5,2) none"] = "71.00 (-5 points)";   paper["256 (5,2) aps"] = "75.98"
		paper["256 (4,3) none"] = "fails (0.1)";         paper["256 (4,3) aps"] = "75.93"
		paper["256 (3,0) none"] = "-";                   paper["256 (3,0) aps"] = "-"
		printf "%-5s %-6s %-5s %5s %9s %9s %8s %8s %9s  %s\n", "nodes", "format", "scale",
			"k", "underflow", "overflow", "zero%", "nan+inf", "avg_rel", "paper (top-1 accuracy)"
	}
	NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
	$c["layer"] == "total" {
		key = $c["nodes"] " " fmt[$c["comm"]] " " $c["scale"]
		z = 100 * $c["became_zero"] / $c["n"]
		printf "%-5s %-6s %-5s %5s %9d %9d %7.1f%% %8d %9.3g  %s\n", $c["nodes"], fmt[$c["comm"]],
			$c["scale"], $c["scale_log2"], $c["underflow"], $c["overflow"], z,
			$c["nan"] + $c["inf"], $c["mean_rel_error"], paper[key]
		zero[key] = z
		rel[key] = $c["mean_rel_error"]
	}
	END {
		print ""
		print "k: the smallest APS shift of the two layers; zero%: sums that became 0 although the exact"
		print "sum is not; avg_rel: the paper'"'"'s Eq. 5 over both layers (above 1 where the zero-mean layer"
		print "cancels: a small exact sum meets a rounded one)."
		printf "fplab: without APS, (4,3) loses %.0f%% (8 nodes) and %.0f%% (256) of the sums to zero and (3,0)\n",
			zero["8 (4,3) none"], zero["256 (4,3) none"]
		printf "%.0f%% and %.0f%%; with APS (4,3) keeps all but %.1f%% and %.1f%%, (5,2) barely changes.\n",
			zero["8 (3,0) none"], zero["256 (3,0) none"], zero["8 (4,3) aps"], zero["256 (4,3) aps"]
		printf "(4,3) round-off, none -> aps: %.3g -> %.3g (8 nodes), %.3g -> %.3g (256 nodes).\n",
			rel["8 (4,3) none"], rel["8 (4,3) aps"], rel["256 (4,3) none"], rel["256 (4,3) aps"]
		print "What matches: the paper'"'"'s observation that (4,3) and (3,0) fail without APS is what the"
		print "counts show (underflow: the gradients sit below their smallest subnormal), and APS rescues"
		print "(4,3); (5,2) works without APS on 8 nodes as in Table 4.  What does not compare: the paper"
		print "reports accuracy after training, fplab one all-reduce of synthetic gradients; (3,0) spans"
		print "only 6 binades, so with APS on 256 nodes the shift that keeps 256 x max below 8 pushes most"
		print "values under 0.25: fplab predicts (3,0) fails there even with APS (the paper has no run)."
	}'
