#!/bin/sh
# SPDX-License-Identifier: MIT
# block_train.sh - block-scaled formats in `fplab train` policies (issue
# 25): the mxfp8 and nvfp4 presets train; a block format whose
# quantization is exact (binary32 elements, power-of-two e8m0 scales, the
# rceil rule: x / 2^k is exact and never saturates) in every slot that
# takes one (act, grad, comm, weight, the four GEMM operands) gives the fp32
# preset's numbers bit for bit (weight: with an fp32 master), so the block path changes nothing but the
# rounding; a block format that is not exact changes them; stochastic
# rounding does not depend on --threads; the policy dump reads back; the
# optimizer's master copy and state as blocks (master-format, state):
# exact blocks give fp32-master's numbers, mxfp8 trains the same on 1 and 2
# threads; the arithmetic slots (arith, unscale, comm-acc: one scalar
# operation's result has no block scale), kahan and split with a block
# weight are refused with a message; nvfp4 with the random Hadamard
# transform (rht = 16:SEED) trains the same bits on 1 and 2 threads.
. "$(dirname "$0")/lib.inc"
cd "$T" || exit 1

GEN="--data generated:800:12:4 --layers 12-32-4 --epochs 2 --batch 32"
# the report without its seconds and policy columns
cols() { cut -f2-17 "$1"; }

# --- the presets train on the generated set
fplab train $GEN --policy fp32 --policy mxfp8 --policy nvfp4 --tsv >p.tsv 2>p.err ||
	fail "presets exit $?: $(head -c 300 p.err)"
for p in mxfp8 nvfp4; do
	checks=$((checks + 1))
	a=$(tsv_last p.tsv policy $p test_accuracy)
	awk -v a="$a" 'BEGIN { exit !(a > 0.6) }' || fail "$p: test accuracy $a after 2 epochs"
done

# --- exact block formats = fp32, bit for bit (also over 2 nodes: comm)
X=block:fp32:e8m0:32:rceil
for nodes in 1 2; do
	fplab train $GEN --nodes $nodes --policy fp32 --tsv | cols /dev/stdin >f.cut
	fplab train $GEN --nodes $nodes --policy fp32 --set act=$X --set grad=$X --set comm=$X \
		--set fwd.a-block=$X --set fwd.b-block=$X --set bwd.a-block=$X \
		--set bwd.b-block=block:fp32:e8m0:16x16:rceil --tsv 2>x.err | cols /dev/stdin >x.cut
	checks=$((checks + 1))
	cmp -s f.cut x.cut || fail "exact blocks on $nodes node(s) differ from fp32: $(diff f.cut x.cut | head -4) $(head -c 200 x.err)"
done
# the stored weights (fp32-master: derived from the master as blocks,
# rows of the layer's inputs)
fplab train $GEN --policy fp32 --set master=fp32-master --tsv | cols /dev/stdin >fm.cut
fplab train $GEN --policy fp32 --set master=fp32-master --set weight=$X --tsv | cols /dev/stdin >xw.cut
checks=$((checks + 1))
cmp -s fm.cut xw.cut || fail "an exact block weight differs from fp32: $(diff fm.cut xw.cut | head -4)"
fplab train $GEN --policy fp32 --set master=fp32-master --set weight=mxfp4 --tsv | cols /dev/stdin >mw.cut
checks=$((checks + 1))
cmp -s fm.cut mw.cut && fail "weight=mxfp4 changes nothing"
expect_fail "a block weight with kahan" 2 "weight: the block format mxfp8 takes master = none, stochastic or fp32-master; kahan keeps" \
	fplab train $GEN --policy fp32 --set master=kahan --set weight=mxfp8
# ... with none (the fp32 preset's), the update w - u quantized as blocks
fplab train $GEN --policy fp32 --tsv | cols /dev/stdin >f1.cut
fplab train $GEN --policy fp32 --set weight=$X --tsv | cols /dev/stdin >xn.cut
checks=$((checks + 1))
cmp -s f1.cut xn.cut || fail "an exact block weight with master none differs from fp32: $(diff f1.cut xn.cut | head -4)"

# --- the master copy and the optimizer state as blocks: exact ones are
# fp32-master's bit for bit; mxfp8 (state in sp) trains an epoch, the same
# on 1 and 2 threads, and changes the numbers
fplab train $GEN --policy fp32 --set master=fp32-master --set master-format=$X --set state=$X \
	--tsv | cols /dev/stdin >xms.cut
checks=$((checks + 1))
cmp -s fm.cut xms.cut || fail "an exact block master and state differ from fp32-master: $(diff fm.cut xms.cut | head -4)"
G1="--data generated:800:12:4 --layers 12-32-4 --epochs 1 --batch 32"
for t in 1 2; do
	fplab train $G1 --policy fp32 --set master=fp32-master --set master-format=mxfp8 \
		--set state=mxfp8:sp --threads $t --tsv >ms$t.tsv 2>ms.err || fail "master and state mxfp8 exit $?: $(head -c 300 ms.err)"
	cols ms$t.tsv >ms$t.cut
done
checks=$((checks + 1))
cmp -s ms1.cut ms2.cut || fail "mxfp8 master and state: --threads 1 and 2 differ"
a=$(tsv_last ms1.tsv epoch 1 test_accuracy)
checks=$((checks + 1))
awk -v a="$a" 'BEGIN { exit !(a > 0.5) }' || fail "mxfp8 master and state: test accuracy $a after 1 epoch"
fplab train $G1 --policy fp32 --set master=fp32-master --tsv | cols /dev/stdin >fm1.cut
checks=$((checks + 1))
cmp -s fm1.cut ms1.cut && fail "master-format=mxfp8, state=mxfp8 change nothing"
fplab train --policy fp32 --set master=fp32-master --set master-format=mxfp8 --set state=mxfp8:sp \
	--policy-dump >ms.txt
expect_out "block master and state dump" "master-format = block:e4m3fn:e8m0:32:floor:ne
state = block:e4m3fn:e8m0:32:floor:sp" grep '^master-format\|^state' ms.txt
# ... and an inexact one does not
fplab train $GEN --policy fp32 --set fwd.a-block=mxfp4 --tsv | cols /dev/stdin >m.cut
checks=$((checks + 1))
cmp -s f.cut m.cut && fail "fwd.a-block=mxfp4 changes nothing"
fplab train $GEN --policy fp32 --set act=mxfp4 --tsv | cols /dev/stdin >m.cut
checks=$((checks + 1))
cmp -s f.cut m.cut && fail "act=mxfp4 changes nothing"

# --comm with a block format: its accumulator is fp32 (as allreduce's)
fplab train $GEN --nodes 2 --comm mxfp8 --policy-dump >c.txt
expect_out "--comm mxfp8" "comm = block:e4m3fn:e8m0:32:floor:ne
comm-acc = fp32:ne" grep '^comm =\|^comm-acc' c.txt

# --- stochastic rounding (nvfp4's gradients, comm in sp) and threads
for t in 1 2; do
	fplab train $GEN --nodes 2 --policy nvfp4 --set comm=mxfp8:sp --threads $t --tsv 2>/dev/null |
		cols /dev/stdin >t$t.cut
done
checks=$((checks + 1))
cmp -s t1.cut t2.cut || fail "nvfp4: --threads 1 and 2 differ"

# --- the dump names the blocks and reads back
fplab train --policy nvfp4 --policy-dump >d1.txt
expect_out "nvfp4 dump" "fwd.a-block = block:e2m1:e4m3fn:16:amax:ts:ne
fwd.b-block = block:e2m1:e4m3fn:16x16:amax:ts:ne
bwd.a-block = block:e2m1:e4m3fn:16:amax:ts:sp
bwd.b-block = block:e2m1:e4m3fn:16:amax:ts:ne" grep 'block' d1.txt
fplab train --policy mxfp8 --set act=mxfp8-e5m2:sp --set weight=nvfp4:16x16 --policy-dump | sed 1d >d2.txt
expect_out "mxfp8 dump" "fwd.a-block = block:e4m3fn:e8m0:32:rceil:ne
act = block:e5m2:e8m0:32:floor:sp
weight = block:e2m1:e4m3fn:16x16:amax:ts:ne" grep '^fwd.a-block\|^act\|^weight =' d2.txt
fplab train --policy d2.txt --policy-dump | sed 1d >d3.txt
checks=$((checks + 1))
cmp -s d2.txt d3.txt || fail "a block policy's dump does not read back: $(diff d2.txt d3.txt | head -4)"

# --- bad input
for k in arith unscale comm-acc; do
	expect_fail "$k takes no block format" 2 "$k: 'mxfp8' is a block-scaled format: an arithmetic slot rounds the result of each scalar operation" \
		fplab train $GEN --set $k=mxfp8
done
expect_fail "a block master without fp32-master" 2 "master-format: the block format mxfp8 needs master = fp32-master" \
	fplab train $GEN --set master-format=mxfp8
expect_fail "a block master in sp" 2 "master-format: the master is rounded in ne" \
	fplab train $GEN --set master=fp32-master --set master-format=mxfp8:sp
expect_fail "a plain format as an operand block" 2 "fwd.a-block: expected none or a block format" \
	fplab train $GEN --set fwd.a-block=e4m3fn
expect_fail "a bad block field" 2 "block format 'nvfp4:7x'" fplab train $GEN --set act=nvfp4:7x
expect_fail "block comm with APS" 2 "carries its own scales; comm-scale must be none" \
	fplab train $GEN --nodes 2 --set comm=mxfp8 --set comm-scale=aps
expect_fail "block act with a given input" 2 "loads its inputs as given" \
	fplab train $GEN --set act=mxfp8 --set fwd.a=e4m3fn:given
expect_fail "optim: a block arith" 2 "arith 'nvfp4' is a block-scaled format: an arithmetic slot" \
	fplab optim --policy 'fp32-master:bf16,arith=nvfp4'

# --- Fashion-MNIST, when installed: the issue's command on the first
# 4096 examples (mxfp8 0.69, nvfp4 0.75 on 1000 test images; the whole
# set takes minutes: nvfp4's operands, 30-bit values with their two
# scales, leave the GEMMs' binary32 fast path)
FM=/usr/share/datasets/fashion-mnist
if [ -e $FM/train-images-idx3-ubyte.gz ] || [ -e $FM/train-images-idx3-ubyte ]; then
	fplab train --policy mxfp8 --policy nvfp4 --epochs 1 --train-limit 4096 --test-limit 1000 \
		--tsv >fm.tsv || fail "Fashion-MNIST exits $?"
	for p in mxfp8 nvfp4; do
		checks=$((checks + 1))
		a=$(tsv_last fm.tsv policy $p test_accuracy)
		awk -v a="$a" 'BEGIN { exit !(a > 0.6) }' || fail "Fashion-MNIST, $p: test accuracy $a"
	done
else
	echo "block_train.sh: skip Fashion-MNIST: $FM is absent" >&2
fi
# --- nvfp4 with the random Hadamard transform (rht): one epoch, the same
# bits on 1 and 2 threads and on a repeat, not those of rht = none; 16
# alone takes --seed; the dump reads it back; bad spellings are refused.
# Batch 40: two blocks of 16 rows rotated, 8 rows left as they are.
R="--data generated:800:12:4 --layers 12-32-4 --epochs 1 --batch 40 --seed 7 --policy nvfp4"
for t in 1 2 2; do
	fplab train $R --set rht=16:7 --threads $t --tsv 2>r.err | cols /dev/stdin >r$t.cut ||
		fail "nvfp4 rht=16:7 --threads $t: $(head -c 200 r.err)"
done
checks=$((checks + 1))
cmp -s r1.cut r2.cut || fail "nvfp4 rht: --threads 1 and 2 differ: $(diff r1.cut r2.cut | head -4)"
checks=$((checks + 1))
[ -s r1.cut ] && [ "$(wc -l <r1.cut)" -eq 2 ] || fail "nvfp4 rht: no epoch row: $(cat r1.cut)"
fplab train $R --tsv | cols /dev/stdin >r0.cut
checks=$((checks + 1))
cmp -s r0.cut r1.cut && fail "nvfp4: rht=16:7 changes nothing"
fplab train $R --set rht=16 --tsv | cols /dev/stdin >rs.cut
checks=$((checks + 1))
cmp -s rs.cut r1.cut || fail "nvfp4: rht=16 with --seed 7 differs from rht=16:7"
fplab train --policy nvfp4 --set rht=16:7 --policy-dump >rd.txt
expect_out "rht in the dump" "rht = 16:7" grep '^rht' rd.txt
fplab train --policy rd.txt --policy-dump | sed 1d >rd2.txt
checks=$((checks + 1))
sed 1d rd.txt | cmp -s - rd2.txt || fail "rht's dump does not read back: $(sed 1d rd.txt | diff - rd2.txt | head -4)"
expect_out "nvfp4 has no rht by default" "" sh -c "fplab train --policy nvfp4 --policy-dump | grep '^rht' || true"
for v in on 16: 16:x 16:-1 x:1; do
	expect_fail "rht=$v" 2 "rht: expected none, 16 or 16:SEED .*got '$v'" \
		fplab train $GEN --policy nvfp4 --set rht=$v
done
expect_fail "rht=32" 2 "rht: only the 16-point transform .* is implemented, got '32'" \
	fplab train $GEN --policy nvfp4 --set rht=32
expect_fail "rht with a given bwd" 2 "rht: .*bwd takes its inputs as given \(bwd.profile fp32-fma\)" \
	fplab train $GEN --set bwd.profile=fp32-fma --set rht=16
finish
