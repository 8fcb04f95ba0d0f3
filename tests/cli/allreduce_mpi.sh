#!/bin/sh
# SPDX-License-Identifier: MIT
# allreduce_mpi.sh - the all-reduce on real MPI processes equals the
# simulation bit for bit (issue 12, item 4), and `fplab allreduce --mpi`
# reports exactly as the simulation, fails fast on ranks started with
# other arguments and prints a usage error once (issue 23).  `mpirun -np 4 fplab-mpi`
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

# --- `fplab allreduce --mpi` (issue 23): every rank runs fplab's own
# allreduce, so `mpirun -np P fplab allreduce --mpi ARGS` prints what
# `fplab allreduce --nodes P ARGS` prints, byte for byte: the same
# columns, the same values (errors against the exact sums included), the
# same total rows, in text, TSV and JSON, and -o writes the same result.
# cli NP WHAT ARGS...: the two reports (and -o, when ARGS give it) equal.
cli() {
	_np=$1 _what=$2
	shift 2
	checks=$((checks + 1))
	rm -f "$T/o.npy"
	if ! $TO $MPIRUN -np "$_np" "$FPLAB" allreduce --mpi "$@" >"$T/cm.out" 2>"$T/cm.err"; then
		fail "$_what: fplab allreduce --mpi failed"
		sed 's/^/  stderr: /' "$T/cm.err" >&2
		return
	fi
	[ -e "$T/o.npy" ] && mv "$T/o.npy" "$T/om.npy"
	if ! "$FPLAB" allreduce --nodes "$_np" "$@" >"$T/cs.out" 2>"$T/cs.err"; then
		fail "$_what: fplab allreduce (simulated) failed"
		sed 's/^/  stderr: /' "$T/cs.err" >&2
		return
	fi
	if ! cmp -s "$T/cm.out" "$T/cs.out"; then
		fail "$_what: --mpi and the simulation print different reports"
		diff "$T/cs.out" "$T/cm.out" | sed 's/^/  /' >&2
	elif [ "$(wc -l <"$T/cm.out")" -lt 2 ]; then
		fail "$_what: no report"
	elif [ -e "$T/o.npy" ] && ! cmp -s "$T/o.npy" "$T/om.npy"; then
		fail "$_what: -o results differ"
	elif ! cmp -s "$T/cm.err" "$T/cs.err"; then
		fail "$_what: --mpi and the simulation print different messages"
		diff "$T/cs.err" "$T/cm.err" | sed 's/^/  /' >&2
	fi
}
L2="2x1000:normal:0,1e-3"
# the done-when: 4 ranks, --tsv, a sweep of schedules, a --comm list
# without --acc (each row accumulates in its own format, as simulated)
cli 4 "tsv sweep" --layers "$L2" --comm e5m2,e4m3fn:sp --algo ring,hier,tree,sequential \
	--group 2,4 --seed 7 --tsv
cli 4 "aps, loss scaling, fp32 layer" --layers "$L2;37:ints:-3,3" --comm e4m3fn:sp --acc bf16:sp \
	--scale none,aps,loss:1024 --fp32-layers last --seed 2 --tsv
cli 3 "3 ranks, sr-bits" --layers "$L2" --algo ring,tree,hier --group 3 --comm e5m2 -r sp \
	--sr-bits 6 --seed 5 --tsv
cli 4 "text report" --layers "$L2" --comm e5m2 --algo ring,tree --seed 1
cli 4 "json report" --layers "$L2" --comm e5m2 --algo ring,tree --seed 1 --json
cli 4 "-o, one configuration" --layers "$L2" --comm e5m2:sp --seed 3 -o "$T/o.npy" --tsv
# inputs read from files: one per node (each rank reads them all; rank 0
# for the exact sums)
i=0
files=
while [ $i -lt 4 ]; do
	printf '%d.5\n-%d\n1e-3\n' $i $i >"$T/in$i.txt"
	files=$files${files:+,}$T/in$i.txt
	i=$((i + 1))
done
cli 4 "--inputs" --inputs "$files" --comm e5m2 --algo ring,tree --tsv
# a stacked file of 4 nodes holding one value each
printf '1.5\n2\n-3\n4e-3\n' | "$FPLAB" round -f fp64 -o "$T/st.npy"
cli 4 "--stacked" --stacked "$T/st.npy" --comm e5m2,fp16 --tsv

# --- fail fast: ranks started with other arguments (Open MPI's MPMD
# syntax) exit 1, every one, with one message naming the difference;
# mpirun -q keeps Open MPI's own exit notice out of stderr.
# differ WHAT PATTERN ARGS0 -- ARGS1: ranks 0-1 get ARGS0, ranks 2-3 ARGS1
differ() {
	_what=$1 _pat=$2
	shift 2
	_a=
	while [ "$1" != "--" ]; do _a="$_a $1"; shift; done
	shift
	checks=$((checks + 1))
	# shellcheck disable=SC2086
	$TO $MPIRUN -q -np 2 "$FPLAB" allreduce --mpi $_a : -np 2 "$FPLAB" allreduce --mpi "$@" \
		>"$T/d.out" 2>"$T/d.err"
	_rc=$?
	if [ $_rc != 1 ]; then
		fail "$_what: exit status $_rc, expected 1"
		sed 's/^/  stderr: /' "$T/d.err" >&2
	elif [ "$(grep -c . "$T/d.err")" != 1 ] || ! grep -q -- "$_pat" "$T/d.err"; then
		fail "$_what: expected one line matching '$_pat':"
		sed 's/^/  stderr: /' "$T/d.err" >&2
	elif [ -s "$T/d.out" ]; then
		fail "$_what: a report was printed"
	fi
}
differ "another --algo" "fplab: allreduce: rank 2 was started with '--algo tree' where rank 0 has '--algo ring'" \
	--layers 100:ones --algo ring -- --layers 100:ones --algo tree
differ "other --layers" "rank 2 was started with '--layers 200:ones' where rank 0 has '--layers 100:ones'" \
	--layers 100:ones -- --layers 200:ones
differ "another --comm" "rank 2 was started with '--comm e4m3fn' where rank 0 has '--comm e5m2'" \
	--layers 100:ones --comm e5m2 -- --layers 100:ones --comm e4m3fn
differ "an option fewer" "rank 2 was started without '--seed 3', which rank 0 has" \
	--layers 100:ones --seed 3 -- --layers 100:ones

# The same arguments, other files: ranks started in other directories
# (--wdir per app context) read other gradients.  One message, exit 1.
# wdir WHAT PATTERN: rank 0 in $T/A, rank 1 in $T/B, --inputs g0.txt,g1.txt
mkdir "$T/A" "$T/B"
printf '1\n2\n' >"$T/A/g0.txt"
cp "$T/A/g0.txt" "$T/A/g1.txt"
cp "$T/A/g0.txt" "$T/B/g0.txt"
wdir() {
	checks=$((checks + 1))
	$TO $MPIRUN -q -np 1 --wdir "$T/A" "$FPLAB" allreduce --mpi --inputs g0.txt,g1.txt --tsv : \
		-np 1 --wdir "$T/B" "$FPLAB" allreduce --mpi --inputs g0.txt,g1.txt --tsv \
		>"$T/w.out" 2>"$T/w.err"
	_rc=$?
	if [ $_rc != 1 ] || [ "$(grep -c . "$T/w.err")" != 1 ] || ! grep -q -- "$2" "$T/w.err"; then
		fail "$1: exit status $_rc, expected 1 and one line matching '$2':"
		sed 's/^/  stderr: /' "$T/w.err" >&2
	fi
}
printf '1\n3\n' >"$T/B/g1.txt"
wdir "other values on rank 1" "fplab: allreduce: the ranks read different gradients"
printf '1\n2\n3\n' >"$T/B/g1.txt"
wdir "other sizes on rank 1" "layer 'layer0' has 3 values in 'g1.txt' but 2 in 'g0.txt'"
rm "$T/B/g1.txt"
wdir "a file only rank 1 cannot read" "cannot open 'g1.txt'"

# --- a usage error is printed once, by rank 0, in the simulator's words
# count_once WHAT STATUS PATTERN NP ARGS...
once() {
	_what=$1 _st=$2 _pat=$3 _np=$4
	shift 4
	checks=$((checks + 1))
	$TO $MPIRUN -q -np "$_np" "$FPLAB" allreduce --mpi "$@" >"$T/u.out" 2>"$T/u.err"
	_rc=$?
	if [ $_rc != "$_st" ]; then
		fail "$_what: exit status $_rc, expected $_st"
		sed 's/^/  stderr: /' "$T/u.err" >&2
	elif [ "$(grep -c -- "$_pat" "$T/u.err")" != 1 ]; then
		fail "$_what: expected '$_pat' once:"
		sed 's/^/  stderr: /' "$T/u.err" >&2
	elif grep -q "fplab-mpi\|invalid argument" "$T/u.err"; then
		fail "$_what: a message of fplab-mpi's own:"
		sed 's/^/  stderr: /' "$T/u.err" >&2
	fi
}
once "--group not dividing the ranks" 2 "fplab: allreduce: --group 2 does not divide --nodes 3 into equal groups" \
	3 --layers 100:ones --algo hier --group 2
once "the usage text once" 2 "^usage: fplab allreduce" 3 --layers 100:ones --algo hier --group 2
once "unknown algorithm" 2 "unknown algorithm 'rnig'; did you mean 'ring'" 4 --layers 100:ones --algo rnig
once "--nodes against the ranks" 2 "--nodes 4 but mpirun started 2 ranks" 2 --nodes 4 --layers 100:ones
once "a missing input file" 1 "cannot open '$T/none0.txt'" 2 --inputs "$T/none0.txt,$T/none1.txt"
once "--stacked against the ranks" 2 "tensor 'st' stacks 4 nodes, not 2" 2 --stacked "$T/st.npy"
once "--inputs against the ranks" 2 "--inputs names 3 files but mpirun started 2 ranks" \
	2 --inputs "$T/in0.txt,$T/in1.txt,$T/in2.txt"

# fplab-mpi's own argument list: a world size other than --nodes, a usage error.
expect_fail "--nodes against the world size" 1 "--nodes 4 but 2 MPI ranks" \
	$TO $MPIRUN -np 2 "$MPI" --nodes 4 --layer 8:ones
checks=$((checks + 1))
$TO $MPIRUN -np 2 "$MPI" --layer 8:bogus >"$T/out" 2>"$T/err"
[ $? -ne 0 ] && grep -q "fplab-mpi: --layer: '8:bogus' is not N:DIST" "$T/err" \
	|| fail "a usage error under mpirun: $(cat "$T/err")"

finish
