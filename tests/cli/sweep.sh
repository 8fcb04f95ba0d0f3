#!/bin/sh
# SPDX-License-Identifier: MIT
# sweep.sh - reports for scripts (issue 10, point 2, and round --flags of
# point 6): -f/-r comma lists run every combination, one header and one
# row each; the report owns stdout; --json is one document, --ndjson one
# object per line; a row of a sweep equals the same run alone, on any
# thread count; the shared columns mean the same (underflow is IEEE's,
# became_zero apart); errors by hand; --flags per result.
. "$(dirname "$0")/lib.inc"

cd "$T" || exit 1
# 2^-26 * 1.5, 2^-26, 2^-24, 0.1, 1e9, 0.5, -3
printf '0x1.8p-25 0x1p-26\n0x1p-24 0.1\n1e9 0.5 -3\n' >data.txt

# --- the issue's command: one header and 9 rows, every row 17 fields
fplab round -f fp16,bf16,e4m3fn -r ne,tz,sp --stats --tsv -o /dev/null data.txt >g.tsv 2>g.err
rc=$?
checks=$((checks + 1))
[ $rc = 0 ] && [ ! -s g.err ] && [ "$(wc -l <g.tsv)" = 10 ] &&
	awk -F '\t' 'NF != 19 { bad = 1 } END { exit bad }' g.tsv ||
	fail "sweep: rc $rc, $(wc -l <g.tsv) lines: $(cat g.tsv g.err)"
checks=$((checks + 1))
head -n 1 g.tsv | grep -q "$(printf '^format\tmode\tn\tinexact\tunderflow\toverflow\tsaturated\tflushed\tinvalid\tbecame_zero\tnan\tinf\tmean_rel_error\trms_rel_error\tmax_rel_error\tmean_abs_error\trms_abs_error\tmax_abs_error\tworst_input$')" ||
	fail "sweep header: $(head -n 1 g.tsv)"
# format-major order
expect_out "sweep order" "fp16 ne
fp16 tz
fp16 sp
bf16 ne
bf16 tz
bf16 sp
e4m3fn ne
e4m3fn tz
e4m3fn sp" awk -F '\t' 'NR > 1 { print $1, $2 }' g.tsv

# --- each row equals the run alone (stochastic included) and does not
# depend on the thread count
for f in fp16 bf16 e4m3fn; do
	for r in ne tz sp; do
		checks=$((checks + 1))
		alone=$(fplab round -f $f -r $r --tsv data.txt | sed -n 2p)
		row=$(awk -F '\t' -v f=$f -v r=$r '$1 == f && $2 == r' g.tsv)
		[ "$alone" = "$row" ] || fail "sweep row $f $r differs from the run alone: '$row' vs '$alone'"
	done
done
fplab round -f fp16,bf16,e4m3fn -r ne,tz,sp --tsv --threads 1 data.txt >t1.tsv
checks=$((checks + 1))
cmp -s g.tsv t1.tsv || fail "sweep on 1 thread differs from all cores"
# a different seed changes the sp rows of a long input, not the others
awk 'BEGIN { for (i = 1; i <= 2000; i++) printf "%.17g\n", i / 7 }' >long.txt
fplab round -f bf16 -r ne,sp --seed 1 --tsv long.txt >s1.tsv
fplab round -f bf16 -r ne,sp --seed 2 --tsv long.txt >s2.tsv
checks=$((checks + 1))
[ "$(sed -n 2p s1.tsv)" = "$(sed -n 2p s2.tsv)" ] && [ "$(sed -n 3p s1.tsv)" != "$(sed -n 3p s2.tsv)" ] ||
	fail "seeds: ne must not change and sp must: $(cat s1.tsv s2.tsv)"

# --- JSON: one document, an array of 9 objects; NDJSON: 9 lines, each an object
if "$PYTHON" -c 'import json' 2>/dev/null; then
	fplab round -f fp16,bf16,e4m3fn -r ne,tz,sp --json data.txt >g.json
	expect_out "json document" "9 19" "$PYTHON" -c '
import json, sys
d = json.load(open("g.json"))
print(len(d), len(d[0]))'
	fplab round -f fp16,bf16,e4m3fn -r ne,tz,sp --ndjson data.txt >g.ndjson
	expect_out "ndjson lines" "9 fp16 e4m3fn" "$PYTHON" -c '
import json
rows = [json.loads(l) for l in open("g.ndjson")]
print(len(rows), rows[0]["format"], rows[-1]["format"])'
	fplab calc add -f bf16 --ndjson data.txt data.txt >c.ndjson 2>/dev/null
	expect_out "calc ndjson" "7" "$PYTHON" -c '
import json
print(len([json.loads(l) for l in open("c.ndjson")]))'
else
	echo "skip: json checks need python3" >&2
fi

# --- the report owns stdout: values only to -o FILE
fplab round -f fp16 --tsv -o vals.txt data.txt >rep.tsv
checks=$((checks + 1))
[ "$(wc -l <rep.tsv)" = 2 ] && [ "$(wc -l <vals.txt)" = 3 ] ||
	fail "--tsv -o: report $(wc -l <rep.tsv) lines, values $(wc -l <vals.txt) lines"
expect_out "--no-values" "2" sh -c 'fplab round -f fp16 --no-values --tsv data.txt | wc -l'
# a sweep refuses to write values to a file, and creates none
checks=$((checks + 1))
fplab round -f fp16,bf16 -o out.txt data.txt 2>err.txt
rc=$?
[ $rc = 2 ] && [ ! -e out.txt ] && grep -q "a sweep of 2 combinations writes no values" err.txt ||
	fail "sweep with -o FILE: rc $rc, $(cat err.txt)"
# a text report of a sweep: an aligned table on stdout
expect_out "text sweep" "3" sh -c 'fplab round -f fp16 -r ne,tz data.txt | wc -l'
# lists are refused where no sweep runs
checks=$((checks + 1))
fplab calc add -f fp16,bf16 data.txt data.txt >/dev/null 2>err.txt
[ $? = 2 ] && grep -q "comma list is a sweep" err.txt || fail "calc -f list: $(cat err.txt)"
checks=$((checks + 1))
fplab round -r ne,xx data.txt >/dev/null 2>err.txt
[ $? = 2 ] && grep -q "unknown rounding mode 'xx'" err.txt || fail "-r ne,xx: $(cat err.txt)"

# --- one vocabulary, by hand, fp16 ne (min subnormal 2^-24):
#   1.5*2^-25 = 0.75*2^-24 rounds up to 2^-24: tiny and inexact, so
#     underflow; not zero; rel error (2^-24 - 1.5*2^-25)/(1.5*2^-25) = 1/3,
#     abs error 2^-26;
#   2^-26 = 0.25*2^-24 rounds to 0: underflow and became_zero; rel 1,
#     abs 2^-26;
#   2^-24 exact: no flag, errors 0.
# mean rel (1/3 + 1 + 0)/3 = 0.4444444444444444; max rel 1 (at 2^-26 =
# 1.4901161193847656e-08); mean abs 2*2^-26/3 = 9.934107462565104e-09;
# RMS abs sqrt(2*2^-52/3) = 2^-26*sqrt(2/3) = 1.2166747166629524e-08.
printf '0x1.8p-25 0x1p-26 0x1p-24\n' >tiny.txt
expect_out "vocabulary" "3 2 2 0 0 1 0.4444444444444444 1 9.934107462565104e-09 1.2166747166629524e-08 1.4901161193847656e-08 1.4901161193847656e-08" \
	sh -c 'fplab round -f fp16 --tsv tiny.txt | awk -F "\t" "NR == 2 { print \$3, \$4, \$5, \$6, \$8, \$10, \$13, \$15, \$16, \$17, \$18, \$19 }"'
# --flags: each result on its line with the flags of its own rounding
expect_out "--flags" "0x1p-24 inexact,underflow
0x0p+0 inexact,underflow
0x1p-24 -" fplab round -f fp16 --flags --out hex tiny.txt
# flushed: -f with FTZ subnormals is not a CLI format; --subnormal 0 rounds
# below 2^-14 to 0 or 2^-14 (CPFloat): 2^-16 -> 0, became_zero 1, no flush
expect_out "no subnormals" "1 0" sh -c 'printf "0x1p-16\n" | fplab round -f fp16 --subnormal 0 --tsv | awk -F "\t" "NR == 2 { print \$10, \$8 }"'
checks=$((checks + 1))
fplab round -f fp16 --flags --out f64 tiny.txt >/dev/null 2>err.txt
[ $? = 2 ] && grep -q -- "--flags prints a result" err.txt || fail "--flags --out f64: $(cat err.txt)"

# --- a full device: one message with the real errno, for output larger
# than stdio's buffer too
awk 'BEGIN { for (i = 1; i <= 50000; i++) print i }' >big.txt
for args in "" "--out f64" "--out npy"; do
	checks=$((checks + 1))
	# shellcheck disable=SC2086
	fplab round -f bf16 $args big.txt >/dev/full 2>err.txt
	rc=$?
	[ $rc = 1 ] && [ "$(wc -l <err.txt)" = 1 ] && grep -q "No space left on device" err.txt ||
		fail "/dev/full ($args): rc $rc: $(cat err.txt)"
done
checks=$((checks + 1))
fplab round -f bf16 -o /dev/full big.txt 2>err.txt
[ $? = 1 ] && grep -q "write error on '/dev/full': No space left on device" err.txt ||
	fail "-o /dev/full: $(cat err.txt)"

finish
