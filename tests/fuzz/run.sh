#!/bin/sh
# SPDX-License-Identifier: MIT
# tests/fuzz/run.sh OUTDIR - build the tensor-reader fuzz targets with
# clang's libFuzzer (readers and histogram instrumented, AddressSanitizer
# and UBSan on) and run each for FUZZ_TIME seconds (default 20) from a
# seed corpus.  Called by `make fuzz` (and so by `make check-long`) with
# the Makefile's source lists in ENGINE_SRCS, X86_SRCS, IO_SRCS,
# X86_FLAGS and NATIVE_DEFS.  Without clang or its fuzzer runtime: a message, exit 0.
# Exit 1 when a target finds a crash (the input is kept in OUTDIR).
out=${1:-build/fuzz}
CLANG=${CLANG:-clang}
FUZZ_TIME=${FUZZ_TIME:-20}
mkdir -p "$out/obj" || exit 1

if ! command -v "$CLANG" >/dev/null 2>&1; then
	echo "fuzz: SKIPPED: $CLANG not found (apt-get install clang)"
	exit 0
fi
printf 'int LLVMFuzzerTestOneInput(const unsigned char *d, unsigned long n)\n{ (void)d; (void)n; return 0; }\n' >"$out/probe.c"
if ! "$CLANG" -fsanitize=fuzzer,address "$out/probe.c" -o "$out/probe" >"$out/probe.log" 2>&1; then
	echo "fuzz: SKIPPED: $CLANG cannot link -fsanitize=fuzzer (libFuzzer runtime missing, see $out/probe.log)"
	exit 0
fi

SAN="-fsanitize=address,undefined -fno-sanitize-recover=undefined"
BASE="-std=c11 -D_GNU_SOURCE $NATIVE_DEFS -Iinclude -Isrc -O1 -g -pthread -w"
objs=
compile() {	# compile SRC EXTRA_FLAGS...
	src=$1
	shift
	o=$out/obj/$(echo "$src" | tr / _).o
	# no cache: an object older than a header it includes would be stale
	"$CLANG" $BASE $SAN "$@" -c "$src" -o "$o" || exit 1
	objs="$objs $o"
}
for s in $ENGINE_SRCS; do compile "$s"; done
for s in $X86_SRCS; do compile "$s" $X86_FLAGS; done
for s in $IO_SRCS; do compile "$s" -fsanitize=fuzzer-no-link; done

# seeds
SRC=$(pwd)
for t in npy npz safetensors raw text; do mkdir -p "$out/corpus/$t"; done
cp "$SRC/experiments/data/sample-conv1.npy" "$out/corpus/npy/" 2>/dev/null
cp "$SRC/experiments/data/sample-grads.npz" "$out/corpus/npz/" 2>/dev/null
cp "$SRC/experiments/data/sample-grads.safetensors" "$out/corpus/safetensors/" 2>/dev/null
printf '\001\000\004\003\000\000\200\077\000\000\300\277\000\074' >"$out/corpus/raw/seed"
printf '# c\n1 -2.5 0x1p-20\ninf nan\n' >"$out/corpus/text/seed"

status=0
for t in npy npz safetensors raw text; do
	bin=$out/fuzz_$t
	"$CLANG" $BASE $SAN -fsanitize=fuzzer "tests/fuzz/fuzz_$t.c" $objs \
		-ljansson -lzip -lz -lm -o "$bin" || exit 1
	printf 'fuzz: %-12s %ss ... ' "$t" "$FUZZ_TIME"
	if "$bin" -max_total_time="$FUZZ_TIME" -timeout=10 -rss_limit_mb=2048 -max_len=200000 \
		-artifact_prefix="$out/crash-$t-" "$out/corpus/$t" >"$out/$t.log" 2>&1; then
		echo "ok ($(grep -c . "$out/$t.log") log lines, $(ls "$out/corpus/$t" | wc -l) corpus files)"
	else
		echo "FAILED, see $out/$t.log"
		tail -n 30 "$out/$t.log"
		status=1
	fi
done
exit $status
