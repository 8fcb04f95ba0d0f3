#!/bin/sh
# SPDX-License-Identifier: MIT
# fuzz_smoke.sh - a short libFuzzer run of the commands that read files
# (hist, round, dot, gemm, reduce, allreduce, optim, train:
# tests/fuzz/fuzz_cli.c) on its seed corpus plus FUZZ_SMOKE_TIME seconds
# (default 20) of mutations, through `make fuzz FUZZ_TARGETS=cli`.
# Objects are cached in $BUILD/fuzz/obj (rebuilt when a source or header
# changes); the corpus starts afresh each time in $BUILD/fuzz/smoke.
# Exit 77 (skip) without clang or its libFuzzer runtime; exit 1 on a crash,
# leak or timeout, with the reproducer's path.

SRCDIR=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=${BUILD:-build/rel}
case $BUILD in /*) ;; *) BUILD=$SRCDIR/$BUILD ;; esac

rm -rf "$BUILD/fuzz/smoke/corpus" || exit 1
# not part of the calling make (no jobserver): a plain recursive make
log=$(MAKEFLAGS= MFLAGS= MAKELEVEL= make -s --no-print-directory -C "$SRCDIR" fuzz \
	BUILD="$BUILD" FUZZ_OUT="$BUILD/fuzz/smoke" FUZZ_OBJ="$BUILD/fuzz/obj" \
	FUZZ_TARGETS=cli FUZZ_TIME="${FUZZ_SMOKE_TIME:-20}" 2>&1)
rc=$?
printf '%s\n' "$log"
if printf '%s\n' "$log" | grep -q '^fuzz: SKIPPED'; then
	echo "skip: clang cannot build a libFuzzer target (see the message above)"
	exit 77
fi
if [ "$rc" -ne 0 ]; then
	if printf '%s\n' "$log" | grep -q '^fuzz: reproducer:'; then
		echo "FAIL: fuzz_cli found a bug; reproducer above" >&2
	else
		echo "FAIL: the fuzz target did not build" >&2
	fi
	exit 1
fi
exit 0
