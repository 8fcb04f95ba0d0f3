#!/bin/sh
# SPDX-License-Identifier: MIT
# allreduce_mpi.sh - the all-reduce on real MPI processes equals the
# simulation bit for bit (issue 12, item 4).  `mpirun -np 4 fplab-mpi`
# (rank = node, messages of packed codes) and fplab-mpi-sim (fpl_allreduce
# on the same generated gradients, no MPI) write node 0's result and the
# report; both files must be equal byte for byte, for ring, tree, hier:2
# and sequential, in e5m2 and e4m3fn, nearest and stochastic (sp),
# without scaling, with loss scaling and with APS, on 4 and 3 ranks.
# Skips (77) with a message when fplab-mpi was not built (no Open MPI) or
# mpirun is missing or cannot start 4 processes here.
. "$(dirname "$0")/lib.inc"

BIN=$(dirname "$FPLAB")
MPI=$BIN/fplab-mpi
SIM=$BIN/fplab-mpi-sim
if [ ! -x "$MPI" ]; then
	echo "skip: $MPI not built (Open MPI missing: sudo apt-get install -y libopenmpi-dev openmpi-bin, then make)"
	exit 77
fi
if ! command -v mpirun >/dev/null 2>&1; then
	echo "skip: mpirun not found (sudo apt-get install -y openmpi-bin)"
	exit 77
fi
if [ ! -x "$SIM" ]; then
	echo "FAIL: $SIM not built (make check builds it)" >&2
	exit 1
fi

# Root needs --allow-run-as-root (CI containers); 4 ranks on fewer cores
# need --oversubscribe.  Open MPI leaks by design: no LeakSanitizer.
MPIRUN="mpirun --oversubscribe"
[ "$(id -u)" = 0 ] && MPIRUN="$MPIRUN --allow-run-as-root"
ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"
export ASAN_OPTIONS
TO=
command -v timeout >/dev/null 2>&1 && TO="timeout 120"
if ! $TO $MPIRUN -np 4 true >"$T/start.log" 2>&1; then
	echo "skip: mpirun cannot start 4 processes here:"
	sed -n '1,5p' "$T/start.log"
	exit 77
fi

LAYERS="--layer 1000:normal:0,1e-3 --layer 37:ints:-3,3 --layer 3:lognormal:-8,2"
ALGOS="ring,tree,hier:2,sequential"

# same NP WHAT ARGS...: mpirun -np NP fplab-mpi ARGS and fplab-mpi-sim
# --nodes NP ARGS write the same result file and report.
same() {
	_np=$1 _what=$2
	shift 2
	checks=$((checks + 1))
	if ! $TO $MPIRUN -np "$_np" "$MPI" "$@" --tsv -o "$T/mpi.f64" >"$T/mpi.tsv" 2>"$T/mpi.err"; then
		fail "$_what: fplab-mpi failed"
		sed 's/^/  stderr: /' "$T/mpi.err" >&2
		return
	fi
	if ! "$SIM" --nodes "$_np" "$@" --tsv -o "$T/sim.f64" >"$T/sim.tsv" 2>"$T/sim.err"; then
		fail "$_what: fplab-mpi-sim failed"
		sed 's/^/  stderr: /' "$T/sim.err" >&2
		return
	fi
	if ! cmp -s "$T/mpi.f64" "$T/sim.f64"; then
		fail "$_what: results differ ($(cmp "$T/mpi.f64" "$T/sim.f64" 2>&1))"
	elif ! cmp -s "$T/mpi.tsv" "$T/sim.tsv"; then
		fail "$_what: reports differ"
		diff "$T/sim.tsv" "$T/mpi.tsv" | sed 's/^/  /' >&2
	elif [ "$(wc -c <"$T/mpi.f64")" -eq 0 ]; then
		fail "$_what: empty result"
	fi
	cp "$T/mpi.tsv" "$T/last.tsv"
	cp "$T/mpi.f64" "$T/last.f64"
}

for comm in e5m2 e4m3fn; do
	same 4 "$comm ne" $LAYERS --algo $ALGOS --comm $comm --acc $comm --seed 1
	cp "$T/last.f64" "$T/ne.f64"
	same 4 "$comm sp" $LAYERS --algo $ALGOS --comm $comm:sp --acc $comm:sp --seed 1
	checks=$((checks + 1))
	cmp -s "$T/ne.f64" "$T/last.f64" && fail "$comm: sp gives ne's bits: the comparison proves little"
done
same 4 "e4m3fn aps, bf16 sp accumulator" $LAYERS --algo $ALGOS --comm e4m3fn --acc bf16:sp --scale aps --seed 2
same 4 "e5m2 loss:1024, sp, sr-bits 6" $LAYERS --algo $ALGOS --comm e5m2 --acc fp16 -r sp --sr-bits 6 --scale loss:1024 --seed 3
same 4 "e4m3fn aps, last layer fp32" $LAYERS --algo $ALGOS,hier:4,hier:1 --comm e4m3fn:sp --acc e4m3fn:sp --scale aps --keep-fp32 2 --seed 4
same 3 "3 ranks (ring chunks smaller than P)" $LAYERS --algo ring,tree,hier:3,sequential --comm e5m2:sp --acc e5m2:sp --seed 5
same 4 "a sweep: groups x comm x acc x scale" $LAYERS --algo ring,hier --group 2,4 --comm e5m2,e4m3fn:sp \
	--acc e5m2,fp16:sp --scale none,aps,loss:64 --seed 6

# 1 byte per value on the wire in e5m2: the ring's busiest node sends
# 2 (P-1) chunks of n/P values, 1500 bytes for n = 1000, P = 4.
same 4 "e5m2 ring bytes" --layer 1000:normal:0,1 --algo ring --comm e5m2 --acc e5m2 --seed 1
checks=$((checks + 1))
bytes=$(awk -F'\t' 'NR == 2 { print $8 }' "$T/last.tsv")
[ "$bytes" = 1500 ] || fail "e5m2 ring: bytes_sent '$bytes', expected 1500"

# `fplab allreduce --mpi` runs fplab-mpi: the same steps, bytes and flag
# counts per layer as the simulation by `fplab allreduce` itself (whose
# bits fplab-mpi-sim's comparisons above establish).
checks=$((checks + 1))
if $TO $MPIRUN -np 4 "$FPLAB" allreduce --mpi --layers "2x1000:normal:0,1e-3" --comm e5m2 \
	--algo ring,hier --group 2 --seed 7 --tsv >"$T/cli_mpi.tsv" 2>"$T/cli_mpi.err"; then
	fplab allreduce --nodes 4 --layers "2x1000:normal:0,1e-3" --comm e5m2 --algo ring,hier \
		--group 2 --seed 7 --tsv >"$T/cli_sim.tsv"
	# mpi: algo layer n steps bytes inexact underflow overflow
	awk -F '\t' 'NR > 1 { print $5, $6, $7, $8, $10, $11, $12 }' "$T/cli_mpi.tsv" >"$T/a"
	awk -F '\t' 'NR > 1 && $6 != "total" { sub(/^layer/, "", $6); print $6, $7, $9, $10, $14, $15, $16 }' \
		"$T/cli_sim.tsv" >"$T/b"
	cmp -s "$T/a" "$T/b" && [ -s "$T/a" ] || { fail "fplab allreduce --mpi differs from the simulation"; diff "$T/a" "$T/b" >&2; }
else
	fail "fplab allreduce --mpi failed: $(cat "$T/cli_mpi.err")"
fi

# Errors: a world size other than --nodes, a usage error.
expect_fail "--nodes against the world size" 1 "--nodes 4 but 2 MPI ranks" \
	$TO $MPIRUN -np 2 "$MPI" --nodes 4 --layer 8:ones
checks=$((checks + 1))
$TO $MPIRUN -np 2 "$MPI" --layer 8:bogus >"$T/out" 2>"$T/err"
[ $? -ne 0 ] && grep -q "fplab-mpi: --layer: '8:bogus' is not N:DIST" "$T/err" \
	|| fail "a usage error under mpirun: $(cat "$T/err")"

finish
