#!/bin/sh
# SPDX-License-Identifier: MIT
# allreduce_hier_ring.sh - `fplab allreduce --algo hier-ring` (issue 23,
# item 11): the APS paper's three stages with one chunk per link per step.
# Expected values are worked out by hand in the comments (the step formula
# 4(G-1) + 2(P/G-1), the bytes from the man page's P = 4, G = 2 diagram),
# never taken from fplab.
. "$(dirname "$0")/lib.inc"

cd "$T" || exit 1

# col NAMES FILE: the column of the "total" rows of a TSV report named by
# one of NAMES (|-separated: the mean error is avg_rel_error or, renamed,
# mean_rel_error)
col() {
	awk -F '\t' -v c="$1" 'NR == 1 { n = split(c, v, "|")
			for (i = 1; i <= NF; i++) { if ($i == "layer") l = i
				for (j = 1; j <= n; j++) if ($i == v[j]) k = i }
			next }
		$l == "total" { print $k }' "$2"
}

# --- P = 4, G = 2, 4 ones per node in fp32: 4(2-1) + 2(4/2-1) = 6 steps.
# Bytes (the man page's diagram, chunks of 2 values): node 0 sends c0 to 1
# (step 0), c0 and c1 to node 2 (steps 2, 3), c0 and c1 to node 1 (steps
# 4, 5): 5 chunks, 10 values, 40 bytes; a member sends 3 chunks.  Every
# sum is 4, exact.
fplab allreduce --nodes 4 --algo hier-ring --group 2 --layers 4:ones --tsv >a.tsv
expect_out "P=4 G=2: steps" "6" col steps a.tsv
expect_out "P=4 G=2: bytes of the busiest node" "40" col bytes_per_node a.tsv
expect_out "P=4 G=2: exact" "0" col "avg_rel_error|mean_rel_error" a.tsv

# --- the paper's case: P = 256, G = 16: 4*15 + 2*15 = 90 (the paper
# prints 74); G = 4: 4*3 + 2*63 = 138; G = 64: 4*63 + 2*3 = 258
fplab allreduce --nodes 256 --algo hier-ring --group 16,4,64 --layers 16:ones --tsv >b.tsv
expect_out "P=256: steps for G = 16, 4, 64" "$(printf '90\n138\n258')" col steps b.tsv

# --- hier-ring:1 is ring, transfer for transfer: the same report row but
# for the algo and group columns, in a lossy format with random data
fplab allreduce --nodes 8 --comm e5m2 --seed 3 --algo ring --layers '100:lognormal:-8,1' --tsv |
	cut -f 3- >r.tsv
fplab allreduce --nodes 8 --comm e5m2 --seed 3 --algo hier-ring --group 1 \
	--layers '100:lognormal:-8,1' --tsv | cut -f 3- >h.tsv
checks=$((checks + 1))
cmp -s r.tsv h.tsv || fail "hier-ring:1 differs from ring"

# --- exact in fp64 on integers (every partial sum of integers of at most
# 12 x 100 is exact), for groups that leave chunks of unequal size
fplab allreduce --nodes 12 --comm fp64 --algo hier-ring --group 3,4,6 --layers '7:ints:-100,100' \
	--tsv >e.tsv
expect_out "fp64 on integers: exact" "$(printf '0\n0\n0')" col "avg_rel_error|mean_rel_error" e.tsv

# --- the group is required with hier-ring and must divide P; a misspelt
# name is answered with hier-ring
expect_fail "hier-ring without --group" 2 "needs --group" \
	fplab allreduce --nodes 4 --algo hier-ring --layers 4:ones
expect_fail "hier-ring with a group that does not divide P" 2 "does not divide" \
	fplab allreduce --nodes 4 --algo hier-ring --group 3 --layers 4:ones
expect_fail "a misspelt hier-ring" 2 "did you mean 'hier-ring'" \
	fplab allreduce --nodes 4 --algo hier-rnig --group 2 --layers 4:ones
finish
