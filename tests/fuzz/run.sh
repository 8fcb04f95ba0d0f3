#!/bin/sh
# SPDX-License-Identifier: MIT
# tests/fuzz/run.sh OUTDIR - build the fuzz targets with clang's libFuzzer
# (readers, histogram and CLI instrumented, AddressSanitizer and UBSan on)
# and run each for FUZZ_TIME seconds (default 20) from a seed corpus:
# fuzz_npy, _npz, _safetensors, _raw, _text (one tensor reader each) and
# fuzz_cli (hist, round, dot, gemm, reduce, allreduce, optim and train
# in-process on a file).  Called by `make fuzz` (and so by `make
# check-long`) with the Makefile's source lists in ENGINE_SRCS, X86_SRCS,
# IO_SRCS, CLI_SRCS, X86_FLAGS and NATIVE_DEFS.  Optional: FUZZ_TARGETS (default all six, by suffix),
# FUZZ_OBJ (object cache, default OUTDIR/obj), FUZZ_SAN (the sanitizer
# flags, to look past a known report).  Without clang or its fuzzer
# runtime: a "fuzz: SKIPPED" message, exit 0.
# Exit 1 when a target finds a crash, leak or timeout (the reproducer is
# kept in OUTDIR and its path printed).
#
# Objects are cached: one is rebuilt when its compile command changed or
# when its source or any header it included (clang -MMD, OBJ.dep) is newer.
out=${1:-build/fuzz}
CLANG=${CLANG:-clang}
FUZZ_TIME=${FUZZ_TIME:-20}
FUZZ_TARGETS=${FUZZ_TARGETS:-npy npz safetensors raw text cli}
obj=${FUZZ_OBJ:-$out/obj}
mkdir -p "$out" "$obj" || exit 1

if ! command -v "$CLANG" >/dev/null 2>&1; then
	echo "fuzz: SKIPPED: $CLANG not found (apt-get install clang)"
	exit 0
fi
printf 'int LLVMFuzzerTestOneInput(const unsigned char *d, unsigned long n)\n{ (void)d; (void)n; return 0; }\n' >"$out/probe.c"
if ! "$CLANG" -fsanitize=fuzzer,address "$out/probe.c" -o "$out/probe" >"$out/probe.log" 2>&1; then
	echo "fuzz: SKIPPED: $CLANG cannot link -fsanitize=fuzzer (libFuzzer runtime missing, see $out/probe.log)"
	exit 0
fi

SAN=${FUZZ_SAN:-"-fsanitize=address,undefined -fno-sanitize-recover=undefined"}
BASE="-std=c11 -D_GNU_SOURCE $NATIVE_DEFS -Iinclude -Isrc -O1 -g -pthread -w"

# fresh OBJ CMD: OBJ exists, was built by CMD, and nothing it depends on
# is newer (a dependency that has gone counts as newer).
fresh() {
	[ -f "$1" ] && [ -f "$1.dep" ] && [ -f "$1.cmd" ] || return 1
	[ "$(cat "$1.cmd")" = "$2" ] || return 1
	deps=$(sed -e 's/^[^:]*://' -e 's/\\$//' "$1.dep")
	[ -n "$deps" ] && [ -z "$(find $deps -newer "$1" 2>&1 | head -n 1)" ]
}

# compile SRC EXTRA_FLAGS...: the object, appended to $objs
objs=
compile() {
	src=$1
	shift
	o=$obj/$(echo "$src" | tr / _).o
	cmd="$CLANG $BASE $SAN $* $src"
	if ! fresh "$o" "$cmd"; then
		rm -f "$o.cmd"
		"$CLANG" $BASE $SAN "$@" -MMD -MF "$o.dep" -c "$src" -o "$o" || exit 1
		printf '%s\n' "$cmd" >"$o.cmd"
	fi
	objs="$objs $o"
}
# coverage feedback for the code a file can steer: the readers and
# histograms (IO_SRCS), the commands, and the accumulation models,
# optimizer and training (policy files, shapes, special values)
for s in $ENGINE_SRCS; do
	case $s in
	src/accum/*|src/optim/*|src/train/*) compile "$s" -fsanitize=fuzzer-no-link ;;
	*) compile "$s" ;;
	esac
done
for s in $X86_SRCS; do
	# the Makefile's X86_ISA per file, by name: keep the two in step
	case $s in
	*fma32_avx512*) compile "$s" $X86_FLAGS ;;
	*avx2*|*fma32*) compile "$s" $X86_AVX2_FLAGS ;;
	*f16c*) compile "$s" -mavx -mf16c ;;
	*fp16*) compile "$s" $X86_FLAGS -mavx512fp16 ;;
	*amx*) compile "$s" $X86_FLAGS -mavx512bf16 -mamx-tile -mamx-bf16 ;;
	*bf16*) compile "$s" $X86_FLAGS -mavx512bf16 ;;
	*) compile "$s" $X86_FLAGS ;;
	esac
done
for s in $IO_SRCS; do compile "$s" -fsanitize=fuzzer-no-link; done
lib_objs=$objs
case " $FUZZ_TARGETS " in
*" cli "*)
	objs=
	# main.c's main() would clash with libFuzzer's
	for s in $CLI_SRCS; do
		case $s in
		*/main.c) compile "$s" -fsanitize=fuzzer-no-link -Dmain=fplab_main ;;
		*) compile "$s" -fsanitize=fuzzer-no-link ;;
		esac
	done
	cli_objs=$objs
	;;
esac

# seeds
SRC=$(pwd)
for t in npy npz safetensors raw text cli; do mkdir -p "$out/corpus/$t" || exit 1; done
cp "$SRC/experiments/data/sample-conv1.npy" "$out/corpus/npy/" 2>/dev/null
cp "$SRC/experiments/data/sample-grads.npz" "$out/corpus/npz/" 2>/dev/null
cp "$SRC/experiments/data/sample-grads.safetensors" "$out/corpus/safetensors/" 2>/dev/null
printf '\001\000\004\003\000\000\200\077\000\000\300\277\000\074' >"$out/corpus/raw/seed"
printf '# c\n1 -2.5 0x1p-20\ninf nan\n' >"$out/corpus/text/seed"

# fuzz_cli: byte 0 picks the argument set, byte 1 the file name (0 none,
# 1 .npy, 2 .npz, 3 .safetensors, 4 .txt), the rest is the file.
cli_seeds() {
	s=$out/seeds
	rm -rf "$s" && mkdir -p "$s" || return 1
	printf '1e-400 65519.99999999999999999 0x1p-24 nan -inf\n# c\n0.1 -0 1e5000 448 449 0x1.ffep15\n' >"$s/t.txt"
	data='\000\074\000\300\377\173\001\000'	# fp16 1, -2, 65504, 2^-24
	h="{'descr': '<f2', 'fortran_order': False, 'shape': (2, 2), }"
	hl=$(( (10 + ${#h} + 1 + 63) / 64 * 64 - 10 ))
	{ printf '\223NUMPY\001\000\'"$(printf %03o $((hl % 256)))"'\000%-'$((hl - 1))'s\n' "$h"
	  printf "$data"; } >"$s/a.npy"
	j='{"a":{"dtype":"F16","shape":[2,2],"data_offsets":[0,8]},"__metadata__":{"k":"v"}}'
	{ printf '\'"$(printf %03o ${#j})"'\000\000\000\000\000\000\000%s' "$j"; printf "$data"; } >"$s/t.safetensors"
	printf "$data" >"$s/raw"
	: >"$s/empty"
	command -v zip >/dev/null 2>&1 && (cd "$s" && zip -q -X t.npz a.npy)
	cp "$SRC/experiments/data/sample-conv1.npy" "$s/conv.npy"
	# for the lab's commands: a training policy file; features a (4 x 2)
	# and labels b in one .npz; a vector; a stack of four 2 x 2 (nodes,
	# steps or examples); every value exact in bf16 and fp16 (the native
	# profiles take their inputs as given)
	printf '# policy\npreset = bf16-mixed\nmaster = split\nact = fp16\nloss-scale = dynamic\n' >"$s/p.txt"
	for py in python3 /usr/bin/python3; do
		"$py" -c 'import numpy' 2>/dev/null || continue
		"$py" -c 'import numpy as np, sys
np.savez(sys.argv[1] + "/d.npz", a=np.array([[1, -2], [0.5, 3], [0, 2**-10], [-1, 4]], np.float32),
	 b=np.array([0, 1, 1, 0], np.int32))
np.save(sys.argv[1] + "/v.npy", np.array([1, 0.09375, -3, 2**-14, 448, 2**-24, 0.5, -0.25], np.float32))
np.save(sys.argv[1] + "/stack.npy", np.arange(16, dtype=np.float32).reshape(4, 2, 2) / 7 - 0.5)' "$s"
		break
	done
	# argument set k runs command cmd (in fuzz_cli.c's order): hist and
	# round get every seed file, by name and by content, the others the
	# tensors and the policy file by name only
	k=0
	for cmd in $(sed -n 's/^	{ "\([a-z]*\)".*/\1/p' "$SRC/tests/fuzz/fuzz_cli.c"); do
		for f in "$s"/*; do
			case $f in
			*.npy) n=1 ;; *.npz) n=2 ;; *.safetensors) n=3 ;; *.txt) n=4 ;; *) n=0 ;;
			esac
			case $cmd:${f##*/} in
			hist:*|round:*) ms="$n 0" ;;
			*:a.npy|*:v.npy|*:t.safetensors|*:t.txt|*:d.npz|*:stack.npy|*:p.txt) ms=$n ;;
			*) continue ;;
			esac
			for m in $ms; do
				printf '\'"$(printf %03o $k)"'\'"$(printf %03o $m)" | cat - "$f" \
					>"$out/corpus/cli/seed-$k-$m-${f##*/}"
			done
		done
		k=$((k + 1))
	done
	# the large samples with a few argument sets only
	for k in 0 2 12; do
		printf '\'"$(printf %03o $k)"'\002' | cat - "$SRC/experiments/data/sample-grads.npz" \
			>"$out/corpus/cli/seed-$k-grads.npz"
		printf '\'"$(printf %03o $k)"'\000' | cat - "$SRC/experiments/data/sample-grads.safetensors" \
			>"$out/corpus/cli/seed-$k-grads.safetensors"
	done
}
case " $FUZZ_TARGETS " in *" cli "*) cli_seeds || exit 1 ;; esac

# the targets' scratch files (a crashed run leaves its own)
tmp=$(cd "$out" && pwd)/tmp
rm -rf "$tmp" && mkdir -p "$tmp" || exit 1

status=0
for t in $FUZZ_TARGETS; do
	bin=$out/fuzz_$t
	extra=
	[ "$t" = cli ] && extra=$cli_objs
	"$CLANG" $BASE $SAN -fsanitize=fuzzer "tests/fuzz/fuzz_$t.c" $lib_objs $extra \
		-ljansson -lzip -lz -lmpfr -lgmp -lm -o "$bin" || exit 1
	printf 'fuzz: %-12s %ss ... ' "$t" "$FUZZ_TIME"
	rm -f "$out/crash-$t-"*
	if TMPDIR=$tmp "$bin" -max_total_time="$FUZZ_TIME" -timeout=10 -rss_limit_mb=2048 -max_len=200000 \
		-print_final_stats=1 -artifact_prefix="$out/crash-$t-" "$out/corpus/$t" \
		>"$out/$t.log" 2>&1; then
		echo "ok ($(sed -n 's/^stat::number_of_executed_units: *//p' "$out/$t.log") runs," \
			"$(ls "$out/corpus/$t" | wc -l) corpus files)"
	else
		echo "FAILED, see $out/$t.log"
		tail -n 30 "$out/$t.log"
		for r in "$out/crash-$t-"*; do
			[ -e "$r" ] && echo "fuzz: reproducer: $r (replay: $bin $r)"
		done
		status=1
	fi
done
exit $status
