#!/bin/sh
# SPDX-License-Identifier: MIT
# train-split-sgd.sh - seed 000 (Intel's Split SGD) in training: bf16
# compute (the bf16-mixed preset: bf16 GEMM inputs, activations and
# gradients, fp32 accumulators) with three ways of keeping the weights:
# bf16 weights updated in bf16 with no master (master = none: the update
# arithmetic and momentum in bf16 too), an FP32 master copy (fp32-master,
# the preset), and Split SGD (master = split: the bf16 weight is the top
# half of the FP32 master, the bottom 16 bits kept as a trail), beside
# fp32, all from the same initial weights and batches.
#
#   sh experiments/train-split-sgd.sh [FPLAB]
#
# Setting: LIMIT=60000 Fashion-MNIST training images (all; 468 steps per
# epoch), EPOCHS=2, the 10000 test images, 784-256-10, batch 128, sgd
# with momentum 0.9 at LR=0.1 and at LR=0.01 (where more updates fall
# below half an ulp of a bf16 weight).  About 2 minutes, 8 runs.
set -eu
FPLAB=${1:-./fplab}
LIMIT=${LIMIT:-60000}
EPOCHS=${EPOCHS:-2}
DIR=${DATA_DIR:-/usr/share/datasets/fashion-mnist}
if [ ! -e "$DIR/train-images-idx3-ubyte.gz" ] && [ ! -e "$DIR/train-images-idx3-ubyte" ]; then
	echo "train-split-sgd.sh: skipped: Fashion-MNIST is not in $DIR (apt-get install dataset-fashion-mnist)"
	exit 0
fi
TMP=$(mktemp -d "${TMPDIR:-/tmp}/fplab-split.XXXXXX")
trap 'rm -rf "$TMP"' EXIT

# run LR LABEL [OPTIONS]: the last row, labelled
run() {
	_lr=$1 _l=$2
	shift 2
	"$FPLAB" train --data-dir "$DIR" --train-limit "$LIMIT" --epochs "$EPOCHS" --layers 784-256-10 \
		--lr "$_lr" "$@" --tsv >"$TMP/run.tsv"
	[ -s "$TMP/all.tsv" ] || { printf 'lr\tlabel\t'; head -n 1 "$TMP/run.tsv"; } >"$TMP/all.tsv"
	printf '%s\t%s\t' "$_lr" "$_l" >>"$TMP/all.tsv"
	tail -n 1 "$TMP/run.tsv" >>"$TMP/all.tsv"
}
for lr in 0.1 0.01; do
	run $lr fp32 --policy fp32
	run $lr bf16-none --policy bf16-mixed --set master=none
	run $lr bf16-fp32-master --policy bf16-mixed
	run $lr bf16-split --policy bf16-mixed --set master=split
done
awk -F '\t' -v steps="$((LIMIT / 128 * EPOCHS))" '
	BEGIN {
		bytes["fp32"] = 4; bytes["bf16-none"] = 2; bytes["bf16-fp32-master"] = 6; bytes["bf16-split"] = 4
		paper["bf16-none"] = "\"lose valid bits ... inaccurate\""
		paper["bf16-fp32-master"] = "accurate, more memory"
		paper["bf16-split"] = "the same FP32 master, no extra memory"
		printf "%-5s %-17s %8s %10s %9s %12s  %s\n", "lr", "weights", "test_acc", "train_loss",
			"vanished", "bytes/param", "seed 000"
	}
	NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
	{
		k = $1 " " $2; acc[k] = $c["test_accuracy"]; van[k] = $c["vanished_frac"]
		printf "%-5s %-17s %8.4f %10.4f %8.2f%% %12d  %s\n", $1, $2, $c["test_accuracy"],
			$c["train_loss"], 100 * $c["vanished_frac"], bytes[$2], paper[$2]
	}
	END {
		print ""
		printf "test_acc after %d steps; train_loss and vanished (updates that left the weight, or the\n", steps
		print "master, unchanged) over the last epoch; bytes/param: weight plus master or trail (momentum"
		print "not counted)."
		for (lr = 0; lr < 2; lr++) {
			l = lr ? "0.01" : "0.1"
			printf "fplab, lr %s: fp32 %.4f; bf16 without a master %.4f (%.1f%% of updates lost), fp32 master %.4f,\n",
				l, acc[l " fp32"], acc[l " bf16-none"], 100 * van[l " bf16-none"], acc[l " bf16-fp32-master"]
			printf "  split %.4f (%.1f%% lost).\n", acc[l " bf16-split"], 100 * van[l " bf16-split"]
		}
		d1 = acc["0.01 bf16-none"] - acc["0.01 fp32"]; w = 0
		split("0.1 0.01", lrs, " ")
		for (i = 1; i <= 2; i++)
			for (m = 0; m < 2; m++) {
				d = acc[lrs[i] (m ? " bf16-split" : " bf16-fp32-master")] - acc[lrs[i] " fp32"]
				if (d < 0) d = -d
				if (d > w) w = d
			}
		printf "What matches: without a master bf16 loses most updates (the seed: repeated adds \"lose valid\n"
		printf "bits\")%s; with an FP32 master or Split SGD\n", \
			(d1 < -0.005 ? sprintf(" and %.2f points of accuracy at lr 0.01", -100 * d1) : "")
		printf "the updates lost are fp32'"'"'s own (its master swamps the smallest) and the accuracy is fp32'"'"'s\n"
		printf "within %.2f points, Split SGD at 4 bytes per weight instead of 6.  (Its update is\n", 100 * w
		print "fp32-master'"'"'s bit for bit on the same gradients, fplab optim'"'"'s test; in training the two drift"
		print "apart because the forward pass reads the master truncated to bf16 instead of rounded.)"
	}' "$TMP/all.tsv"
