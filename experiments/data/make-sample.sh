#!/bin/sh
# SPDX-License-Identifier: MIT
# make-sample.sh - rebuild the sample gradient dump in experiments/data
# from gen-sample.c (needs a C compiler and libzip-dev; deterministic:
# the output is bit-for-bit the files in the repository).
#   sh experiments/data/make-sample.sh
set -e
dir=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/fplab-sample.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
${CC:-cc} -std=c11 -O2 -Wall -Wextra -o "$tmp/gen-sample" "$dir/gen-sample.c" -lzip -lm
"$tmp/gen-sample" "$dir"
ls -l "$dir"/sample-*
