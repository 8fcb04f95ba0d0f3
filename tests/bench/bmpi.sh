#!/bin/sh
# SPDX-License-Identifier: MIT
# tests/bench/bmpi.sh BMPI - run the MPI bench (bmpi.c) under mpirun with
# 4 ranks on this machine; prints a skip line, never fails, when mpirun
# is missing or cannot start.  FPLAB_BENCH_MPI_NP changes the rank count.
BMPI=$1
NP=${FPLAB_BENCH_MPI_NP:-4}
if ! command -v mpirun >/dev/null 2>&1; then
	echo "bmpi: skipped: mpirun not found (sudo apt-get install -y openmpi-bin)"
	exit 0
fi
MPIRUN="mpirun --oversubscribe"
[ "$(id -u)" = 0 ] && MPIRUN="$MPIRUN --allow-run-as-root"
ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"
export ASAN_OPTIONS
$MPIRUN -np "$NP" "$BMPI" || echo "bmpi: skipped: mpirun -np $NP failed here"
exit 0
