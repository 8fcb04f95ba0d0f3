#!/bin/sh
# SPDX-License-Identifier: MIT
# mx-train.sh - training with block-scaled GEMM operands: the OCP MX
# paper's finding (Rouhani et al., "Microscaling Data Formats for Deep
# Learning", 2023, §5: MXFP8 training, e4m3 forward and backward, matches
# fp32 without changing the recipe) and the NVFP4 paper's (NVIDIA,
# "Pretraining Large Language Models with NVFP4", 2025: 1x16 blocks for
# activations and gradients, 16x16 weight tiles, stochastic rounding of
# gradients, a random Hadamard transform and a few layers in bf16; its
# loss stays close to the fp8 baseline's) on an MLP: the presets fp32,
# fp8-e4m3 (per-value fp8, no scaling), mxfp8 and nvfp4 of `fplab train`
# over SEEDS (default 1 2 3), the mean and the spread (largest minus
# smallest) over the seeds.  fplab's nvfp4 has no Hadamard transform and
# keeps no layer in bf16 (fplab-train(1)).
#
#   sh experiments/mx-train.sh [FPLAB]
#
# Setting: the first LIMIT=4096 Fashion-MNIST training images, EPOCHS=2,
# the first 2000 test images, 784-HIDDEN-10 with HIDDEN=64, batch 128,
# sgd lr 0.1 momentum 0.9 (fplab train's defaults).  The four policies
# are one run per seed (the same initial weights and batches).  About a
# minute of CPU time, nearly all nvfp4's: its operands (e2m1 times an
# e4m3 scale times an fp32 tensor scale, up to 30 bits) leave the GEMMs'
# binary32 fast path for the exact emulation.
set -eu
. "$(dirname "$0")/lib.sh"
FPLAB=${1:-./fplab}
LIMIT=${LIMIT:-4096}
EPOCHS=${EPOCHS:-2}
HIDDEN=${HIDDEN:-64}
SEEDS=${SEEDS:-1 2 3}
DIR=${DATA_DIR:-/usr/share/datasets/fashion-mnist}
if [ ! -e "$DIR/train-images-idx3-ubyte.gz" ] && [ ! -e "$DIR/train-images-idx3-ubyte" ]; then
	echo "mx-train.sh: skipped: Fashion-MNIST is not in $DIR (apt-get install dataset-fashion-mnist)"
	exit 0
fi
TMP=$(mktemp -d "${TMPDIR:-/tmp}/fplab-mxtrain.XXXXXX")
trap 'rm -rf "$TMP"' EXIT

for s in $SEEDS; do
	"$FPLAB" train --data-dir "$DIR" --train-limit "$LIMIT" --test-limit 2000 --epochs "$EPOCHS" \
		--layers 784-"$HIDDEN"-10 --seed "$s" --policy fp32 --policy fp8-e4m3 --policy mxfp8 \
		--policy nvfp4 --tsv >"$TMP/run.tsv"
	tag_into "$TMP/all.tsv" seed "$s" <"$TMP/run.tsv"
done
awk -F '\t' -v seeds="$SEEDS" "$TSV_AWK"'
	BEGIN {
		nk = split("fp32 fp8-e4m3 mxfp8 nvfp4", K, " ")
		ns = split(seeds, S, " ")
		paper["fp32"] = "baseline"
		paper["fp8-e4m3"] = "-"
		paper["mxfp8"] = "matches fp32 (MX paper)"
		paper["nvfp4"] = "close to fp8 (NVFP4 paper; with RHT, bf16 layers)"
	}
	NR == 1 { tsvhead(); next }
	{
		k = $tsvcol("policy") SUBSEP $1	# the last row (the last epoch) stays
		a[k] = $tsvcol("test_accuracy"); l[k] = $tsvcol("train_loss")
		au[k] = $tsvcol("act_underflow"); gu[k] = $tsvcol("grad_underflow")
	}
	END {
		if (tsv_bad) exit 1
		printf "Training with block-scaled GEMM operands: mean over %d seeds (%s) [spread: largest - smallest]\n", ns, seeds
		printf "%-9s %17s %17s %14s %14s  %s\n", "policy", "test_acc", "train_loss", "act_underflow",
			"grad_underflow", "the papers"
		for (i = 1; i <= nk; i++) {
			p = K[i]
			seeds_spread(a, p); acc[p] = m; sacc[p] = sp
			printf "%-9s %8.4f [%6.4f]", p, m, sp
			seeds_spread(l, p); loss[p] = m; printf " %8.4f [%6.4f]", m, sp
			seeds_spread(au, p); printf " %14.0f", m
			seeds_spread(gu, p); printf " %14.0f  %s\n", m, paper[p]
		}
		tol = sacc["fp32"]; if (tol < 0.01) tol = 0.01
		print ""
		printf "test_acc and train_loss of the last epoch; the counts over it.  \"Close\": within fp32'\''s\n"
		printf "spread over the seeds (or 0.01), %.4f.\n", tol
		printf "mxfp8 close to fp32 (the MX paper: matches): %.4f vs %.4f, %s.\n", acc["mxfp8"], acc["fp32"],
			(acc["mxfp8"] > acc["fp32"] - tol ? "reproduced" : "NOT reproduced")
		printf "nvfp4 close to the fp8 recipe (the NVFP4 paper: close): %.4f vs %.4f, %s.\n", acc["nvfp4"],
			acc["fp8-e4m3"], (acc["nvfp4"] > acc["fp8-e4m3"] - tol ? "reproduced" : "NOT reproduced")
		print "The comparison is of patterns: the papers train large language and vision models for"
		print "long runs; this is a small MLP on a subset of Fashion-MNIST for a few steps, every"
		print "rounding emulated, and fplab'\''s nvfp4 lacks the Hadamard transform and bf16 layers."
	}' "$TMP/all.tsv"
