#!/bin/sh
# SPDX-License-Identifier: MIT
# onednn.sh - `--backend onednn`: oneDNN's own bf16 matmul (libdnnl.so.2,
# loaded at run time) beside the profile onednn-bf16 with 0 mismatches at
# a K in every regime of oneDNN 2.6's blocking on AVX512_CORE_BF16
# (blocks of 512 for K <= 1024, of 1024 above), 1 and 2 threads, square
# and skinny shapes; the fixed blockings pairs:512 and pairs:1024 must
# each miss somewhere (so the comparison can fail); the refusals.
# Skips (77) with a message without libdnnl or without AVX512_BF16, and on
# a CPU with AMX (oneDNN runs its AMX kernel there, not the one
# onednn-bf16 models: see fplab-native(7)).
. "$(dirname "$0")/lib.inc"
cd "$T" || exit 1
ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"	# OpenMP's threads
export ASAN_OPTIONS

if ! grep -qw avx512_bf16 /proc/cpuinfo 2>/dev/null; then
	echo "skip: this CPU has no AVX512_BF16 (oneDNN's brg:avx512_core_bf16 cannot run)"
	exit 77
fi
if grep -qw amx_bf16 /proc/cpuinfo; then
	echo "skip: this CPU has AMX: oneDNN runs its AMX kernel (profile amx-bf16), not onednn-bf16's"
	exit 77
fi
if ! fplab gemm --backend onednn --profile onednn-bf16 --gen ones -m 1 -n 1 -k 2 --tsv \
	>probe.tsv 2>probe.err; then
	if grep -q "cannot load libdnnl" probe.err; then
		echo "skip: $(cat probe.err)"
		exit 77
	fi
	fail "probe run failed"
	cat probe.err >&2
	finish
fi

# col FILE BACKEND COLUMN: COLUMN of BACKEND's row in a TSV report
col() {
	awk -F '\t' -v b="$2" -v c="$3" 'NR == 1 { for (i = 1; i <= NF; i++) k[$i] = i; next }
		$k["backend"] == b { print $k[c] }' "$1"
}

checks=1
[ "$(col probe.tsv onednn kernel)" = onednn-bf16 ] || fail "kernel is not onednn-bf16"
impl=$(col probe.tsv onednn blocking)
case $impl in
*avx512_core_bf16*) ;;
*) echo "skip: oneDNN runs '$impl' here, not brg:avx512_core_bf16"; exit 77 ;;
esac

# run M N K THREADS SEED [MODEL...]: the onednn row's mismatches
run() {
	_m=$1 _n=$2 _k=$3 _t=$4 _s=$5
	shift 5
	fplab gemm --backend onednn "$@" --gen normal:0,1 --seed "$_s" -m "$_m" -n "$_n" \
		-k "$_k" --threads "$_t" --tsv >r.tsv 2>r.err || { cat r.err >&2; echo x; return; }
	col r.tsv onednn mismatches
}

# every regime: one chain (K <= 512), blocks of 512 (512 < K <= 1024, the
# last one odd or short), blocks of 1024 (K > 1024, the last one odd,
# short or whole)
for k in 1 2 31 500 512 513 777 1023 1024 1025 1026 1537 2048 3001 4096; do
	checks=$((checks + 1))
	got=$(run 16 16 $k 1 $k --profile onednn-bf16)
	[ "$got" = 0 ] || fail "K = $k: onednn-bf16 vs oneDNN: $got mismatches"
done
for shape in "64 48 1024 2" "64 48 1026 2" "5 300 2500 2" "128 1 8192 1" "1 1 8193 1"; do
	set -- $shape
	checks=$((checks + 1))
	got=$(run "$1" "$2" "$3" "$4" 9 --profile onednn-bf16)
	[ "$got" = 0 ] || fail "M N K threads = $shape: $got mismatches"
done

# the fixed blockings miss (the comparison can fail)
checks=$((checks + 1))
got=$(run 16 16 1536 1 4 --profile avx512bf16 --order pairs:512)
[ "$got" != 0 ] && [ "$got" != x ] || fail "pairs:512 at K = 1536: $got mismatches, expected some"
checks=$((checks + 1))
got=$(run 16 16 1000 1 4 --profile avx512bf16 --order pairs:1024)
[ "$got" != 0 ] && [ "$got" != x ] || fail "pairs:1024 at K = 1000: $got mismatches, expected some"

# pairs:512/1024 on avx512bf16 is the profile, and says so
checks=$((checks + 1))
run 4 4 1100 1 2 --profile avx512bf16 --order pairs:512/1024 >/dev/null
[ "$(col r.tsv emu profile)" = onednn-bf16 ] || fail "pairs:512/1024 is not named onednn-bf16"
[ "$(col r.tsv emu blocking)" = "order pairs:512/1024:fp32" ] ||
	fail "emu blocking: '$(col r.tsv emu blocking)'"

# refusals
expect_fail "onednn with a sweep" 2 "--backend onednn runs one model" \
	fplab gemm --backend onednn --profile onednn-bf16 --acc fp32,bf16 --gen ones -m 2 -n 2 -k 2
expect_fail "onednn with -o" 2 "-o x.txt: --backend onednn has two results" \
	fplab gemm --backend onednn --profile onednn-bf16 --gen ones -m 2 -n 2 -k 2 -o x.txt
expect_fail "onednn on round" 2 "round has no oneDNN kernel" \
	fplab round --backend onednn -f bf16 1.5
finish
