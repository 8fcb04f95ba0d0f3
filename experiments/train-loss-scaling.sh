#!/bin/sh
# SPDX-License-Identifier: MIT
# train-loss-scaling.sh - the mixed-precision slides' loss-scaling tables
# (seed 001: Faster R-CNN and SSD on PASCAL VOC) in training: fp32 and
# mixed precision (fp16-mixed: fp16 GEMM inputs, activations and
# gradients, fp32 accumulators and master) without loss scaling, with a
# constant scale of 64 and with dynamic scaling, from the same initial
# weights and batches, over SEEDS (default 1 2 3), in two settings:
#   shallow  Fashion-MNIST: the first LIMIT=6400 training images, EPOCHS=2
#            (100 steps), the first 5000 test images, 784-128-10, batch 128,
#            sgd lr 0.1 momentum 0.9;
#   deep     the hardest setting for fp16's range we found that still
#            trains here: 13 layers of 16 (16-16x12-4) on the generated set
#            (4096 examples of 16 features in 4 classes), batch 512, adam,
#            DEEP_EPOCHS=25 (200 steps).  Each layer back divides the
#            activation gradients by about 2.4 (PyTorch's initial weights
#            with ReLU: an estimate), so the first layers' fall below fp16's
#            2^-24 as in the slides' histogram; adam, which scales each
#            update by the gradient's own size, learns from them in fp32.
# The slides' claim: without loss scaling the gradients below 2^-24 become
# zero and training loses accuracy (Faster R-CNN -1.65 mAP) or diverges
# (SSD).  Printed: the mean over the seeds and the spread (largest minus
# smallest) of the last test accuracy and training loss and of the
# gradient underflows of the whole run, the difference from fp32 seed by
# seed, and whether the claim is reproduced.  About 20 seconds of CPU time.
#
#   sh experiments/train-loss-scaling.sh [FPLAB]
set -eu
. "$(dirname "$0")/lib.sh"
FPLAB=${1:-./fplab}
LIMIT=${LIMIT:-6400}
EPOCHS=${EPOCHS:-2}
DEEP_EPOCHS=${DEEP_EPOCHS:-25}
SEEDS=${SEEDS:-1 2 3}
DIR=${DATA_DIR:-/usr/share/datasets/fashion-mnist}
TMP=$(mktemp -d "${TMPDIR:-/tmp}/fplab-ls.XXXXXX")
trap 'rm -rf "$TMP"' EXIT

printf 'preset = fp16-mixed\nloss-scale = none\n' >"$TMP/mixed-none.policy"
printf 'preset = fp16-mixed\nloss-scale = 64\n' >"$TMP/mixed-64.policy"
printf 'preset = fp16-mixed\nloss-scale = dynamic\n' >"$TMP/mixed-dynamic.policy"

# run SETTING [OPTIONS]: every seed, the four policies; rows labelled
# SETTING and seed into all.tsv
run() {
	_set=$1
	shift
	for _s in $SEEDS; do
		"$FPLAB" train --seed "$_s" --policy fp32 --policy "$TMP/mixed-none.policy" \
			--policy "$TMP/mixed-64.policy" --policy "$TMP/mixed-dynamic.policy" "$@" \
			--tsv >"$TMP/run.tsv"
		tag_into "$TMP/all.tsv" 'setting\tseed' "$_set\t$_s" <"$TMP/run.tsv"
	done
}

if [ -e "$DIR/train-images-idx3-ubyte.gz" ] || [ -e "$DIR/train-images-idx3-ubyte" ]; then
	run shallow --data-dir "$DIR" --train-limit "$LIMIT" --test-limit 5000 --epochs "$EPOCHS" \
		--layers 784-128-10
else
	echo "train-loss-scaling.sh: the shallow setting skipped: Fashion-MNIST is not in $DIR (apt-get install dataset-fashion-mnist)"
fi
run deep --data generated:4096 --layers 16-16-16-16-16-16-16-16-16-16-16-16-16-4 --batch 512 \
	--optim adam --epochs "$DEEP_EPOCHS"

awk -F '\t' -v seeds="$SEEDS" "$TSV_AWK"'
	BEGIN {
		np = split("fp32 mixed-none mixed-64 mixed-dynamic", P, " ")
		ns = split(seeds, S, " ")
		desc["fp32"] = "fp32"; desc["mixed-none"] = "fp16-mixed, no scaling"
		desc["mixed-64"] = "fp16-mixed, constant 64"; desc["mixed-dynamic"] = "fp16-mixed, dynamic"
		# the slides: Faster R-CNN mAP (diff from fp32) | SSD mAP
		paper["fp32"] = "69.48 | 77.46"
		paper["mixed-none"] = "67.83 (-1.65) | diverges"
		paper["mixed-64"] = "69.96 (+0.48) | 77.63"
		paper["mixed-dynamic"] = "69.68 (+0.20) | 77.42"
	}
	NR == 1 { tsvhead(); next }
	{
		k = $1 SUBSEP $tsvcol("policy") SUBSEP $2	# setting, policy, seed
		acc[k] = $tsvcol("test_accuracy"); loss[k] = $tsvcol("train_loss")
		gu[k] += $tsvcol("grad_underflow"); skip[k] += $tsvcol("skipped"); ls[k] = $tsvcol("loss_scale")
		have[$1] = 1
	}
	function table(t,   i, p, ma, sa, ml, sl, mg) {
		printf "\n%s: mean over %d seeds (%s) [spread: largest - smallest]\n", t, ns, seeds
		printf "%-24s %16s %18s %14s %7s %10s  %s\n", "policy", "test_acc", "train_loss", "grad_underflow",
			"skipped", "loss_scale", "slides: Faster R-CNN | SSD mAP"
		for (i = 1; i <= np; i++) {
			p = P[i]
			seeds_spread(acc, t SUBSEP p); ma = m; sa = sp; macc[t, p] = m; sacc[t, p] = sa
			seeds_spread(loss, t SUBSEP p); ml = m; sl = sp
			seeds_spread(gu, t SUBSEP p); mg = m; mgu[t, p] = m
			seeds_spread(skip, t SUBSEP p)
			printf "%-24s %7.4f [%6.4f] %9.5f [%6.4f] %14.0f %7.1f %10g  %s\n", desc[p], ma, sa, ml, sl, mg,
				m, ls[t, p, S[ns]], paper[p]
		}
	}
	# the paired differences from fp32, seed by seed, and a verdict
	function verdict(t,   i, p, d, dm, neg, line) {
		for (i = 2; i <= np; i++) {
			p = P[i]; dm = 0; neg = 0; line = ""
			for (j = 1; j <= ns; j++) {
				d = acc[t, p, S[j]] - acc[t, "fp32", S[j]]
				dm += d; neg += d < 0
				line = line sprintf(" %+.4f", d)
			}
			dm /= ns
			lost[t, p] = neg == ns && -dm > sacc[t, "fp32"]
			printf "  %-24s test_acc minus fp32, seed by seed:%s (mean %+.4f)\n", desc[p], line, dm
		}
	}
	END {
		if (tsv_bad) exit 1
		for (ti = 1; ti <= 2; ti++) {
			t = ti == 1 ? "shallow" : "deep"
			if (!(t in have))
				continue
			table(t)
			verdict(t)
		}
		print ""
		for (ti = 1; ti <= 2; ti++) {
			t = ti == 1 ? "shallow" : "deep"
			if (!(t in have))
				continue
			printf "%s: loss scaling cuts the gradient underflows %.0f -> %.0f (64), %.0f (dynamic):\n",
				t, mgu[t, "mixed-none"], mgu[t, "mixed-64"], mgu[t, "mixed-dynamic"]
			printf "it moves the gradients into fp16'\''s range, as the slides say: %s.  Without scaling\nfp16-mixed ",
				mgu[t, "mixed-dynamic"] * 10 < mgu[t, "mixed-none"] ? "reproduced" : "NOT reproduced"
			if (lost[t, "mixed-none"])
				printf "loses test accuracy on every seed, by more than fp32'\''s own spread: the slides'\'' failure\nis REPRODUCED here.\n"
			else
				printf "does NOT lose beyond the spread of the seeds (fp32'\''s spread %.4f): the slides'\'' failure\nis not reproduced here.\n", sacc[t, "fp32"]
		}
		print ""
		print "Why: the failure needs the gradients that carry the training below 2^-24.  The output"
		print "layer'\''s are (softmax - onehot)/B, at most 2^-7 (B = 128) or 2^-9 (B = 512); the largest"
		print "of them, which carry the training, stay in fp16'\''s range, and what underflows is the rest"
		print "(grad_underflow counts the roundings that came out below fp16'\''s smallest normal 2^-14,"
		print "subnormal or zero: the report does not tell which).  In the deep setting each layer back"
		print "divides them by about 2.4 (an estimate from the initial weights: 2.4^12 = 2^15), enough"
		print "to put the first layers'\'' below 2^-24, yet adam on 13 narrow layers varies more from seed"
		print "to seed than losing them costs.  Of what we also tried, 784-32x8-10 with sgd and 784-32x14-10"
		print "with adam did not train in fp32 either, and 16-16x14-4 with adam trained on some seeds"
		print "only (fp16 without scaling stuck at chance on one seed of five where fp32 learned, and"
		print "learned on others where fp32 did worse): no difference beyond the seeds.  So at this"
		print "scale we found no setting where fp16 without loss scaling fails.  The slides'\'' own"
		print "shallow case agrees (Wide & Deep: fp32 84.31%, no scaling 84.27%); their failures are"
		print "deep VGG-16 detectors."
	}' "$TMP/all.tsv"
