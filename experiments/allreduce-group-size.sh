#!/bin/sh
# SPDX-License-Identifier: MIT
# allreduce-group-size.sh - the APS paper's Table 9 and its step counts
# (§4.2): the average round-off error (its Eq. 5) of the hierarchical
# all-reduce for group sizes 4, 8, 16, 32, 64 and of the ring all-reduce,
# on 256 nodes in (5,2) = e5m2 (communication and accumulation), beside
# the paper's figures, for two schedules of the paper's three stages:
#   hier       fplab's: whole buffers, members added into the leader one a
#              step, the leaders' ring, one broadcast step:
#              (G-1) + 2(P/G-1) + 1 steps
#   hier-ring  the same stages with one chunk per link per step (the
#              paper's unit: "each step transfers the same amount of
#              data"): ring reduce-scatter and gather to the leader, the
#              leaders' ring, scatter and ring all-gather: 4(G-1) + 2(P/G-1)
# (fplab-allreduce(1) has both.)  The paper counts 74 steps for G = 16 by
# a formula our copy of it lost.
#
#   sh experiments/allreduce-group-size.sh [FPLAB]
#
# Gradients: one layer of 9408 values per node (the size of ResNet-50's
# first convolution, 64x3x7x7, the layer of Table 9), all positive,
# lognormal around e^-8 = 3.4e-4 (inside e5m2's normal range, 2^-14 up, as
# real gradients are after the paper's APS), with two spreads: sigma 1
# (about three binades) and sigma 0.5.  Positive because the paper's
# figures (all below 100%) show round-off, not cancellation: with
# zero-mean gradients the exact sum of 256 nodes is often near 0 and Eq. 5
# is dominated by those few elements.  SEEDS (default 1 2 3) draw
# different gradients; the table gives the mean over them and the spread
# (largest minus smallest).  About 15 seconds.
set -eu
. "$(dirname "$0")/lib.sh"
FPLAB=${1:-./fplab}
SEEDS=${SEEDS:-1 2 3}
TMP=$(mktemp -d "${TMPDIR:-/tmp}/fplab-grp.XXXXXX")
trap 'rm -rf "$TMP"' EXIT

for s in $SEEDS; do
	"$FPLAB" allreduce --nodes 256 --comm e5m2 --acc e5m2 --seed "$s" --algo hier,hier-ring,ring \
		--group 4,8,16,32,64 --layers '9408:lognormal:-8,1;9408:lognormal:-8,0.5' --tsv |
		tag_into "$TMP/all.tsv" seed "$s"
done

awk -F '\t' -v seeds="$SEEDS" "$TSV_AWK"'
	function pct(x) { return sprintf("%6.2f%%", 100 * x) }
	BEGIN {
		ng = split("4 8 16 32 64 ring", G, " ")
		paper["4"] = 0.55; paper["8"] = 0.4421; paper["16"] = 0.4183; paper["32"] = 0.4962
		paper["64"] = 0.5821; paper["ring"] = 0.8522
		psteps["16"] = 74; psteps["ring"] = 510
		nl = 2; lay[1] = "layer0"; lay[2] = "layer1"
		lname["layer0"] = "sigma 1"; lname["layer1"] = "sigma 0.5"
	}
	NR == 1 { tsvhead(); ca = tsvcol("algo"); cg = tsvcol("group")
		cl = tsvcol("layer"); cs = tsvcol("steps"); ce = tsvcol("mean_rel_error|avg_rel_error"); next }
	$cl == "layer0" || $cl == "layer1" {
		g = $ca == "ring" ? "ring" : $cg
		a = $ca == "ring" ? "ring" : $ca
		steps[a, g] = $cs
		err[a, g, $cl, $1] = $ce + 0
	}
	END {
		if (tsv_bad) exit 1
		ns = split(seeds, S, " ")
		print "Table 9: 256 nodes, (5,2) = e5m2, one layer of 9408 positive lognormal values per node"
		print ""
		print "steps          G =     4      8     16     32     64   256 (ring)"
		printf "%-20s", "paper"
		for (i = 1; i <= ng; i++) printf " %6s", (G[i] in psteps) ? psteps[G[i]] : "-"
		print ""
		for (j = 1; j <= 2; j++) {
			a = j == 1 ? "hier" : "hier-ring"
			printf "%-20s", "fplab " a
			for (i = 1; i <= ng; i++) printf " %6s", steps[G[i] == "ring" ? "ring" : a, G[i]]
			print ""
		}
		print ""
		printf "round-off error (Eq. 5), mean over %d seeds (%s) [spread over the seeds, largest -\n", ns, seeds
		print "smallest, in percentage points]"
		printf "%-10s %8s", "group", "paper"
		for (l = 1; l <= nl; l++)
			for (j = 1; j <= 2; j++)
				printf "  %-18s", (j == 1 ? "hier" : "hier-ring") " " lname[lay[l]]
		print ""
		for (i = 1; i <= ng; i++) {
			g = G[i]
			printf "%-10s %8s", (g == "ring" ? "256 (ring)" : g), pct(paper[g])
			for (l = 1; l <= nl; l++)
				for (j = 1; j <= 2; j++) {
					a = g == "ring" ? "ring" : (j == 1 ? "hier" : "hier-ring")
					k = a SUBSEP g SUBSEP lay[l]
					if (g == "ring" && j == 2) { printf "  %-18s", "(as left)"; continue }
					seeds_spread(err, k); mean[k] = m; spread[k] = sp
					printf "  %s [%5.2f]     ", pct(m), 100 * sp
				}
			print ""
		}
		# the best group of each column, and whether the ring is the worst
		print ""
		for (l = 1; l <= nl; l++)
			for (j = 1; j <= 2; j++) {
				a = j == 1 ? "hier" : "hier-ring"
				best = ""
				for (i = 1; i < ng; i++) {
					k = a SUBSEP G[i] SUBSEP lay[l]
					if (best == "" || mean[k] < bm) { best = G[i]; bm = mean[k] }
				}
				worst_ring = 1
				for (i = 1; i < ng; i++)
					if (mean[a, G[i], lay[l]] >= mean["ring", "ring", lay[l]]) worst_ring = 0
				if (l == 1 && j == 1) worst_all = 1
				if (!worst_ring || mean[a, "4", lay[l]] <= mean[a, best, lay[l]] \
				    || mean[a, "64", lay[l]] <= mean[a, best, lay[l]]) worst_all = 0
				bestg[a, lay[l]] = best
				printf "fplab %-9s %-9s: smallest error at G = %-2s (paper: 16); ring the worst: %s\n",
					a, lname[lay[l]], best, worst_ring ? "yes (as in the paper)" : "NO"
			}
		# the two schedules against the spread of the seeds
		dmax = 0; smax = 0
		for (l = 1; l <= nl; l++)
			for (i = 1; i < ng; i++) {
				k1 = "hier" SUBSEP G[i] SUBSEP lay[l]; k2 = "hier-ring" SUBSEP G[i] SUBSEP lay[l]
				d = mean[k1] - mean[k2]; if (d < 0) d = -d
				if (d > dmax) dmax = d
				if (spread[k1] > smax) smax = spread[k1]
				if (spread[k2] > smax) smax = spread[k2]
			}
		print ""
		r = steps["hier", "16"] == 74 || steps["hier-ring", "16"] == 74
		printf "Steps: %s.  The ring'\''s 510 = 2(P-1) is the paper'\''s.  For G = 16 the paper\n",
			r ? "reproduced" : "NOT reproduced"
		printf "counts 74; fplab'\''s hier takes %d (whole buffers, one broadcast step) and hier-ring %d\n",
			steps["hier", "16"], steps["hier-ring", "16"]
		print "(every stage one chunk per link per step, the paper'\''s unit).  The formula did not"
		print "survive in our copy; 4(G-1) + 2(P/G-1) gives 74 only with P/G = 8 (P = 128), and no way of"
		print "running the three stages that we found gives 74 with P = 256, G = 16.  Either way the"
		print "hierarchical schedules take far fewer steps than the ring, which is the paper'\''s point."
		print ""
		printf "Error: the shape is %s (the ring the worst; the error falls from G = 4 to a\n",
			worst_all ? "reproduced" : "NOT reproduced"
		print "minimum and rises towards G = 64: a value is added to a partial sum of at most"
		print "max(G, 256/G) - 1 others)."
		printf "The two schedules differ by at most %.2f points, the seeds by up to %.2f: they\n",
			100 * dmax, 100 * smax
		print "differ only in the order of the additions inside a group, so the schedule is not why"
		print "fplab'\''s best group can differ from the paper'\''s."
		b1 = bestg["hier", "layer1"]; b0 = bestg["hier", "layer0"]
		printf "Best group: %s with sigma 0.5 (G = %s) and %s with sigma 1 (G = %s).\n",
			b1 == 16 ? "reproduced" : "NOT reproduced", b1, b0 == 16 ? "reproduced" : "NOT reproduced", b0
		print "The leaders add group sums, about G times the single values, so where the two stages"
		print "balance moves with the spread of the gradients, which the paper does not give (its figures"
		print "are for ResNet-50'\''s real first-layer gradients); the levels differ for the same reason."
	}' "$TMP/all.tsv"
