#!/bin/sh
# SPDX-License-Identifier: MIT
# commands.sh - the command table and framework: usage and exit statuses,
# --version, help, info, --tsv/--json shapes, --stats.
. "$(dirname "$0")/lib.inc"
cd "$T" || exit 1

expect_fail "no command: usage on stderr, exit 2" 2 "usage: fplab COMMAND" fplab
expect_fail "unknown top-level option" 2 "unknown option '--bogus'" fplab --bogus
checks=$((checks + 1))
fplab -h >h.txt 2>h.err || fail "fplab -h exits $?"
grep -q '^usage: fplab COMMAND' h.txt || fail "fplab -h prints no usage on stdout"
[ -s h.err ] && fail "fplab -h writes to stderr"
for c in round calc formats info help; do
	checks=$((checks + 1))
	grep -q "^  $c " h.txt || fail "fplab -h does not list $c"
	fplab "$c" --help >/dev/null 2>&1 || fail "fplab $c --help exits $?"
done
checks=$((checks + 1))
v=$(fplab --version) || fail "--version exits $?"
case $v in "fplab 0.1.0 (libfplab 0.1.0, MPFR "*")") ;; *) fail "--version prints '$v'" ;; esac

# help: the in-tree page through man -l (skipped without man)
if command -v man >/dev/null 2>&1; then
	checks=$((checks + 1))
	MANPAGER=cat fplab help round >help.txt 2>help.err || fail "fplab help round exits $?"
	grep -q 'fplab-round' help.txt || fail "fplab help round does not show fplab-round(1): $(head -c 300 help.err)"
	checks=$((checks + 1))
	MANPAGER=cat fplab help >help.txt 2>&1 || fail "fplab help exits $?"
	grep -q 'DIFFERENCES FROM CPFLOAT' help.txt || fail "fplab help does not show fplab(1)"
fi
expect_fail "help with two topics" 2 "too many arguments" fplab help round calc

# info
fplab info >info.txt || fail "info exits $?"
for k in fplab libfplab mpfr compiler avx512f avx512_bf16 avx512_fp16 amx_bf16 \
	kernels_compiled kernels_selected; do
	checks=$((checks + 1))
	grep -q "^$k " info.txt || fail "info lacks $k"
done
checks=$((checks + 1))
[ "$(fplab info --tsv | head -n 1)" = "$(printf 'key\tvalue')" ] || fail "info --tsv header"
expect_fail "info with an argument" 2 "unexpected argument 'x'" fplab info x

# JSON output parses (when a JSON parser is at hand)
if command -v python3 >/dev/null 2>&1; then
	for cmd in "fplab formats --json" "fplab formats --json e4m3" "fplab info --json" \
		"fplab formats --table --json -f e3m2" "sh -c 'echo 1 2 | fplab calc add --flags --json'" \
		"sh -c 'echo 1e9 0.1 | fplab round --json'"; do
		checks=$((checks + 1))
		eval "$cmd" | python3 -c 'import json, sys; json.load(sys.stdin)' 2>/dev/null ||
			fail "invalid JSON from: $cmd"
	done
fi

# --tsv: header and stable columns; every row has as many fields
checks=$((checks + 1))
fplab formats --tsv | awk -F '\t' 'NR == 1 { n = NF } NF != n { bad = 1 } END { exit bad || n != 10 }' ||
	fail "formats --tsv is not a 10-column table"
checks=$((checks + 1))
[ "$(fplab formats --tsv | wc -l)" -gt 16 ] || fail "formats lists too few formats"

# --stats: counts to stderr, data to stdout.  fp16: 1e9 overflows (inexact,
# overflow, inf 1; an infinite result of a finite value is relative error
# +inf, the largest), 0.1 -> 1638*2^-14 (relative error 2.44e-4), 1e-6 =
# 16.78*2^-24 is subnormal -> 17*2^-24 = 1.0132789611816406e-06
# (underflow; relative error 0.0132789611816...), 0.5 is exact.
printf '1e9 0.1 1e-6 0.5\n' | fplab round --stats >st.out 2>st.err
checks=$((checks + 1))
[ "$(cat st.out)" = "inf 0.0999755859375 1.0132789611816406e-06 0.5" ] || fail "--stats stdout: $(cat st.out)"
for l in "inexact 3" "underflow 1" "overflow 1" "saturated 0" "flushed 0" "became_zero 0" \
	"nan 0" "inf 1" "mean_rel_error inf"; do
	checks=$((checks + 1))
	grep -q "^  ${l% *}  *${l#* }\$" st.err || fail "--stats lacks '$l': $(cat st.err)"
done
checks=$((checks + 1))
grep -q '^  max_rel_error  *inf (at 1000000000)$' st.err ||
	fail "--stats max_rel_error: $(cat st.err)"
# --tsv: the report owns stdout, no values without -o
checks=$((checks + 1))
printf '1e9\n' | fplab round --tsv >st.out 2>st.err
[ "$(wc -l <st.out)" -eq 2 ] && [ ! -s st.err ] &&
	sed -n 2p st.out | grep -q "$(printf '^fp16\tne\t1\t1\t0\t1\t0\t0\t0\t0\t')" ||
	fail "round --tsv report: $(cat st.out st.err)"
finish
