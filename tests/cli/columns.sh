#!/bin/sh
# SPDX-License-Identifier: MIT
# columns.sh - one vocabulary (issue 23, item 6): every column that any
# command prints in --tsv is defined in the one table of fplab(1),
# REPORT COLUMNS, and every name the table defines is printed by some
# command.  The table is read from man/fplab.1 (a ".TP" then ".B NAME"
# per column); each command runs small, with --tsv, and its header line is
# checked name by name.  The test cannot take its expectations from the
# code: the names come from the manual, the headers from the binary.
. "$(dirname "$0")/lib.inc"

cd "$T" || exit 1

# The defined names, one per line.
awk '/^\.SH REPORT COLUMNS/ { on = 1; next }
	/^\.SH / { on = 0 }
	on && /^\.TP/ { tp = 1; next }
	on && tp && /^\.B / { print $2 }
	{ tp = 0 }' "$SRCDIR/man/fplab.1" >defined
checks=$((checks + 1))
[ "$(wc -l <defined)" -ge 50 ] ||
	fail "fplab(1) has no REPORT COLUMNS table (found $(wc -l <defined) names)"
checks=$((checks + 1))
dups=$(sort defined | uniq -d)
[ -z "$dups" ] || fail "fplab(1) defines a column twice: $dups"
# sorted, as the table is
checks=$((checks + 1))
LC_ALL=C sort defined | cmp -s - defined || fail "fplab(1)'s REPORT COLUMNS are not in order"

: >printed
# header WHAT COMMAND...: run COMMAND (stdin as given), check every name of
# its first output line against the table, and keep them.
header() {
	_what=$1
	shift
	checks=$((checks + 1))
	if ! "$@" >out 2>err; then
		fail "$_what: the command failed: $(head -c 300 err)"
		return
	fi
	head -n 1 out | tr '\t' '\n' >names
	if [ ! -s names ]; then
		fail "$_what: no header line"
		return
	fi
	while read -r _c; do
		grep -qx -- "$_c" defined ||
			fail "$_what: column '$_c' is not in fplab(1)'s REPORT COLUMNS"
	done <names
	cat names >>printed
}

native() { fplab info --tsv | grep -q "^native_$1	yes"; }

printf '1 2\n' >v2.txt
printf '1 2 3\n' >v3.txt
printf '0 1 -1.5 0x1p-30 1e6 nan\n' >h.txt

header "round" sh -c 'fplab round -f fp16,bf16 -r ne,tz --tsv v2.txt'
header "round (block format)" sh -c 'fplab round -f mxfp4 --tsv v2.txt'
header "formats --blocks" sh -c 'fplab formats --blocks --tsv'
header "calc add" sh -c 'fplab calc add --tsv --flags <v2.txt'
header "calc fma" sh -c 'fplab calc fma --tsv --flags <v3.txt'
header "formats" fplab formats --tsv
header "formats bf16" fplab formats --tsv bf16
header "formats --table" fplab formats --table --tsv e2m1
header "info" fplab info --tsv
header "models" fplab models --tsv
header "hist" fplab hist -f fp16 --tsv h.txt
header "hist (block format)" fplab hist -f nvfp4 --tsv h.txt
header "hist --list" fplab hist --list --tsv h.txt
header "dot" fplab dot --gen ones -n 4 --tsv
header "gemm" fplab gemm --gen ones -m 2 -n 2 -k 3 --tsv
header "gemm (block format)" fplab gemm --gen normal:0,1 -m 2 -n 2 -k 40 -f mxfp4 --order block --tsv
header "dot (block format)" fplab dot --gen normal:0,1 -n 40 -f mxfp8 --tsv
header "reduce sum" fplab reduce sum --gen ones -n 4 --tsv
header "reduce softmax" fplab reduce softmax --gen normal:0,1 -n 4 --tsv
header "allreduce" fplab allreduce --nodes 4 --algo ring,hier --group 2 --comm fp16 \
	--layers '16:uniform:0,1' --tsv
header "optim" fplab optim --steps 2 --sizes 4 --tsv
header "train" fplab train --data generated:64:8:3 --test-data none --layers 8-4-3 \
	--epochs 1 --batch 16 --tsv

# the native backends, where this CPU runs them
skipped=""
if native f16c; then
	header "round --backend both" sh -c 'fplab round -f fp16 --backend both --tsv v2.txt'
else
	skipped="$skipped melem_per_s format mode"
fi
if native fma32; then
	header "dot --backend both" fplab dot --gen ones -n 4 --profile fp32-fma --backend both --tsv
	header "gemm --backend both" fplab gemm --gen ones -m 2 -n 2 -k 3 --profile fp32-fma \
		--backend both --tsv
else
	skipped="$skipped backend kernel profile blocking mismatches"
fi

# every defined name is printed somewhere (a name no command prints is a
# stale table); names only the native backends print are excused on a
# CPU without them
sort -u printed >printed.u
while read -r c; do
	checks=$((checks + 1))
	grep -qx -- "$c" printed.u && continue
	case " $skipped " in *" $c "*) continue ;; esac
	fail "fplab(1) defines '$c', which no command printed"
done <defined
finish
