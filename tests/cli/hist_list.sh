#!/bin/sh
# SPDX-License-Identifier: MIT
# hist_list.sh - finding tensors in a dump (issue 10, point 3): --list
# prints file, tensor, dtype and shape from the headers; an unknown
# --tensor suggests the closest name or lists the names the file has.
. "$(dirname "$0")/lib.inc"
. "$(dirname "$0")/hist.inc"
cd "$T" || exit 1

st_f32 one.safetensors w.grad 0x3f800000 0x40000000
npy_f32 v.npy 0x3f800000
expect_out "--list" "$(printf 'file\ttensor\tdtype\tshape\none.safetensors\tw.grad\tf32\t[2]\nv.npy\tv\tf32\t[1]')" \
	fplab hist --list --tsv one.safetensors v.npy
expect_out "--list, the table" "$(printf 'file             tensor  dtype  shape\none.safetensors  w.grad  f32    [2]')" \
	fplab hist --list one.safetensors
expect_fail "--tensor, a near name" 1 "no tensor 'w.grd'; did you mean 'w.grad'\\?" \
	fplab hist --tensor w.grd one.safetensors
expect_fail "--tensor, the names listed" 1 "no tensor 'bias'; the file has 1 tensor:" \
	fplab hist --tensor bias one.safetensors
grep -q '^  w.grad$' "$T/stderr" || fail "--tensor: the names present are not listed: $(cat "$T/stderr")"
finish
