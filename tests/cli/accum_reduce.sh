#!/bin/sh
# SPDX-License-Identifier: MIT
# accum_reduce.sh - `fplab reduce` beyond sum, with values by hand in an
# fp64 accumulator: var, --sample, norm2, softmax written by -o,
# logsumexp, mean; and an empty or 2-D input refused.
. "$(dirname "$0")/lib.inc"

cd "$T" || exit 1

# result OP FILE [OPTIONS...]: the result column
result() {
	_op=$1 _x=$2
	shift 2
	fplab reduce "$_op" -x "$_x" --acc fp64 --tsv "$@" |
		awk -F '\t' 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == "result") k = i }
			NR == 2 { print $k }'
}

printf '1 2 3 4\n' >x.txt
printf '3 4\n' >34.txt
printf '0 0\n' >00.txt
# mean 2.5; deviations -1.5 -0.5 0.5 1.5, squares sum to 5: 5/4, and 5/3
# rounded to nearest binary64 (0x1.aaaaaaaaaaaabp+0 = 1.6666666666666667)
expect_out "var" "1.25" result var x.txt
expect_out "var-welford" "1.25" result var-welford x.txt
expect_out "var --sample" "1.6666666666666667" result var x.txt --sample
expect_out "mean" "2.5" result mean x.txt
# sqrt(9 + 16) = 5
expect_out "norm2" "5" result norm2 34.txt
# log(e^0 + e^0) = log 2, nearest binary64 0.6931471805599453
expect_out "logsumexp" "0.6931471805599453" result logsumexp 00.txt
# softmax of two equal values: 1/2 each, no scalar result (an empty cell)
fplab reduce softmax -x 00.txt --acc fp64 -o sm.txt --tsv >sm.tsv
expect_out "softmax -o" "0.5
0.5" cat sm.txt
expect_out "softmax result column" "[]" awk -F '\t' 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == "result") k = i }
	NR == 2 { print "[" $k "]" }' sm.tsv
expect_fail "--sample on sum" 2 "--sample applies to var" \
	fplab reduce sum --sample -x x.txt
: >empty.txt
expect_fail "empty vector" 1 "empty" fplab reduce sum -x empty.txt
finish
