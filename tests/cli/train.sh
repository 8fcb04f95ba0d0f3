#!/bin/sh
# SPDX-License-Identifier: MIT
# train.sh - `fplab train`: a generated set learnt by every preset, every
# option, the policy file (a dump reads back as the same policy), the
# report as TSV, JSON and NDJSON, the same output on 1 and 2 threads, the
# model file (names, shapes, dtype; readable by fplab hist; atomic, even
# when the run is interrupted), the SVG (well-formed, rendered), the
# user's .npy/.npz/.safetensors data, bad input (a clear message, the
# exit status, no output file left), and on Fashion-MNIST when installed:
# the issue's done-when command (2 epochs of fp32 on 784-256-10 reach a
# test accuracy above 0.80; 25-30 s on this 2-core machine, so it runs
# here; a sanitizer build runs it on the first 12000 examples instead,
# threshold 0.75).
. "$(dirname "$0")/lib.inc"
cd "$T" || exit 1

# col FILE POLICY COLUMN: COLUMN of POLICY's last row in a TSV report
col() { tsv_last "$1" policy "$2" "$3"; }
# nosec FILE: the report without its seconds column (the only one that
# varies between runs)
nosec() {
	awk -F '\t' 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == "seconds") s = i }
		{ out = ""; for (i = 1; i <= NF; i++) if (i != s) out = out (i > 1 ? "\t" : "") $i; print out }' "$1"
}
GEN="--data generated --layers 16-32-4"

# --- the columns, one row per epoch, and learning: the generated set is
# learnt to > 0.95 test accuracy in 3 epochs by fp32
fplab train $GEN --epochs 3 --tsv >g.tsv || fail "generated run exits $?"
expect_out "columns" "policy epoch step train_loss test_loss test_accuracy vanished_frac act_overflow act_underflow grad_overflow grad_underflow comm_overflow comm_underflow opt_overflow opt_underflow skipped loss_scale seconds" \
	eval "head -n 1 g.tsv | tr '\t' ' '"
expect_out "rows" "fp32 1 16
fp32 2 32
fp32 3 48" eval "awk -F '\t' 'NR > 1 { print \$1, \$2, \$3 }' g.tsv"
checks=$((checks + 1))
awk -F '\t' 'NR == 4 { exit !($6 > 0.95 && $4 < 0.5) }' g.tsv || fail "fp32 does not learn the generated set: $(cat g.tsv)"

# --- every preset learns it (2 epochs, > 0.9), from the same start
fplab train $GEN --epochs 2 --policy fp32 --policy bf16-mixed --policy fp16-mixed \
	--policy fp16-pure --policy fp8-e4m3 --policy aps-e4m3-comm --nodes 2 --tsv >all.tsv 2>all.err ||
	fail "presets exit $?: $(cat all.err)"
for p in fp32 bf16-mixed fp16-mixed fp16-pure fp8-e4m3 aps-e4m3-comm; do
	checks=$((checks + 1))
	a=$(col all.tsv $p test_accuracy)
	awk -v a="$a" 'BEGIN { exit !(a > 0.9) }' || fail "$p: test accuracy $a"
done
expect_out "fp16-mixed starts at 65536" "65536" col all.tsv fp16-mixed loss_scale
checks=$((checks + 1))
[ "$(col all.tsv fp16-pure vanished_frac)" != 0 ] || fail "fp16-pure loses no update"
checks=$((checks + 1))
[ "$(col all.tsv aps-e4m3-comm comm_underflow)" -gt 0 ] || fail "no comm underflow in e4m3fn"

# --- every option, once each, accepted without a message
ok fplab train --data generated:600:8:3 --layers 8-16-16-3 --epochs 2 --batch 32 --every 7 \
	--optim sgd --lr 0.05 --momentum 0.5 --dampening 0 --nesterov --weight-decay 1e-4 --seed 3 --threads 2
ok fplab train --data generated:600:8:3 --layers 8-3 --optim adagrad --lr-decay 0.01 --initial-accumulator 0.1 --eps 1e-10
for a in adam adamw lamb; do
	ok fplab train --data generated:600:8:3 --layers 8-12-3 --optim $a --lr 1e-3 --betas 0.8,0.99 --eps 1e-6 --json
done
ok fplab train --data generated:600:8:3 --layers 8-12-3 --policy fp32 --policy fp16-pure \
	--set 'loss-scale=dynamic:1024:2:0.5:10' --set 'fwd=-f bf16 --acc fp32 --order blocked:16' --ndjson
ok fplab train --data generated:640:8:3 --train-limit 512 --test-limit 50 --layers 8-12-3 --nodes 4 \
	--algo hier --group 2 --comm e5m2:sp --comm-acc fp16 --scale loss:1024 --fp32-layers first,2 --tsv
ok fplab train --data generated:640:8:3 --layers 8-12-3 --nodes 4 --algo tree --comm e4m3fn --scale aps \
	--fp32-layers last --test-data none -o ok.safetensors --svg ok.svg
ok fplab train --policy-dump --policy fp8-e4m3
ok fplab train -h

# --- --every: rows every 5 steps and at each epoch's end (16 steps)
fplab train $GEN --epochs 2 --every 5 --tsv >ev.tsv
expect_out "--every rows" "1:5 1:10 1:15 1:16 2:20 2:25 2:30 2:32" \
	eval "awk -F '\t' 'NR > 1 { printf \"%s%s:%s\", s, \$2, \$3; s = \" \" } END { print \"\" }' ev.tsv"

# --- JSON and NDJSON parse, one object per row; no test set: null cells
# (cli_table_none: "-" in text, empty in TSV, null in JSON)
fplab train $GEN --epochs 2 --policy fp32 --policy bf16-mixed --json >o.json
fplab train $GEN --epochs 2 --policy fp32 --policy bf16-mixed --ndjson >o.nd
fplab train $GEN --test-data none --json >nt.json
if command -v jq >/dev/null 2>&1; then
	expect_out "json rows" "4" jq length o.json
	expect_out "ndjson rows" "4" eval "jq -s length o.nd"
	expect_out "json types" "string number number" eval "jq -r '.[0] | [(.policy | type), (.test_accuracy | type), (.step | type)] | join(\" \")' o.json"
	expect_out "no test set" 'null null' eval "jq -r '.[0] | [(.test_loss | tojson), (.test_accuracy | tojson)] | join(\" \")' nt.json"
else
	checks=$((checks + 1))
	python3 -m json.tool o.json >/dev/null || fail "invalid JSON"
fi
# TSV and text carry the same numbers
fplab train $GEN --epochs 2 --policy fp32 --policy bf16-mixed --tsv >o.tsv
fplab train $GEN --epochs 2 --policy fp32 --policy bf16-mixed >o.txt
expect_out "text = tsv" "$(nosec o.tsv | tr '\t' ' ')" eval "awk '{ \$NF = \"\"; sub(/ \$/, \"\"); print }' o.txt"

# --- the same output on 1 and 2 threads (several nodes, fp8, APS,
# stochastic rounding in the all-reduce)
for t in 1 2; do
	fplab train $GEN --epochs 2 --every 6 --threads $t --nodes 4 --policy fp32 --policy fp8-e4m3 \
		--policy aps-e4m3-comm --policy fp16-mixed --comm e5m2:sp --tsv >th$t.tsv || fail "--threads $t exits $?"
	nosec th$t.tsv >th$t.cut
done
checks=$((checks + 1))
cmp -s th1.cut th2.cut || fail "--threads 1 and 2 differ: $(diff th1.cut th2.cut | head -5)"
# a policy's rows do not depend on the policies beside it
fplab train $GEN --epochs 2 --every 6 --threads 2 --nodes 4 --policy fp8-e4m3 --comm e5m2:sp --tsv >alone.tsv
expect_out "a policy alone" "$(grep '^fp8-e4m3' th1.cut)" eval "nosec alone.tsv | grep '^fp8-e4m3'"

# --- a policy file; a dump reads back as the same policy
printf '# my policy\npreset = bf16-mixed\n\nact = fp16   # stored in fp16\nfwd.acc = fp16\nmaster = split\nloss-scale = 1024\n' >my.policy
fplab train --policy my.policy --policy-dump >d1.txt || fail "--policy-dump exits $?"
expect_out "file keys" "# fplab-train policy my
fwd = -f bf16:ne --prod exact --acc fp16:ne --order sequential
act = fp16:ne
master = split
loss-scale = 1024" grep '^# \|^fwd\|^act\|^master =\|^loss' d1.txt
sed 1d d1.txt >dumped.policy
fplab train --policy dumped.policy --policy-dump | sed 1d >d2.txt
checks=$((checks + 1))
sed 1d d1.txt | cmp -s - d2.txt || fail "a dump does not read back: $(sed 1d d1.txt | diff - d2.txt)"
for p in fp32 bf16-mixed fp16-mixed fp16-pure fp8-e4m3 aps-e4m3-comm; do
	fplab train --policy $p --policy-dump >p1.txt
	fplab train --policy p1.txt --policy-dump | sed 1d >p2.txt
	checks=$((checks + 1))
	sed 1d p1.txt | cmp -s - p2.txt || fail "$p: its dump does not read back"
done
# a file and its preset train the same; --set overrides; a name twice
fplab train --policy fp32 --policy-dump >p1.txt
fplab train $GEN --policy fp32 --policy p1.txt --policy fp32 --tsv >pf.tsv
expect_out "names" "fp32 p1 fp32-3" eval "awk -F '\t' 'NR > 1 { printf \"%s%s\", s, \$1; s = \" \" } END { print \"\" }' pf.tsv"
expect_out "a dump trains as its preset" "$(col pf.tsv fp32 train_loss)" col pf.tsv p1 train_loss
fplab train --policy fp32 --set act=bf16 --set 'act = fp16:tz' --policy-dump | grep '^act' >set.txt
expect_out "--set in order" "act = fp16:tz" cat set.txt
fplab train --policy fp16-pure --nodes 8 --algo hier --group 4 --comm e5m2 --scale loss:256 \
	--fp32-layers first --set comm-acc=fp32 --policy-dump | grep '^comm\|^algo' >dp.txt
expect_out "data-parallel options" "comm = e5m2:ne
comm-acc = fp32:ne
comm-scale = loss:256
algo = hier:4
comm-fp32 = 1" cat dp.txt

# --- the model file: names, shapes, dtypes, readable by fplab hist
fplab train $GEN --epochs 2 -o m.safetensors --tsv >/dev/null || fail "-o exits $?"
header() {
	python3 -c '
import json, struct, sys
b = open(sys.argv[1], "rb").read()
n = struct.unpack("<Q", b[:8])[0]
h = json.loads(b[8:8 + n])
end = 0
for k in sorted(h, key=lambda k: h[k]["data_offsets"][0]):
    print(k, h[k]["dtype"], "x".join(map(str, h[k]["shape"])))
    end = h[k]["data_offsets"][1]
assert 8 + n + end == len(b), "size"' "$1"
}
expect_out "model tensors" "W1 F32 32x16
b1 F32 32
W2 F32 4x32
b2 F32 4" header m.safetensors
fplab hist -f bf16 m.safetensors >h.txt 2>h.err || fail "fplab hist cannot read the model: $(cat h.err)"
expect_out "hist sees the tensors" "W1 b1 W2 b2" eval "grep -o '^[Wb][12] ' h.txt | tr -d ' ' | paste -sd ' ' -"
# several policies: POLICY/NAME (the names say --set changed them); a
# weight format wider than binary32: F64
fplab train $GEN --policy fp32 --policy fp8-e4m3 --set weight=fp64 -o m2.safetensors >/dev/null 2>m2.err ||
	fail "two policies -o exits $?: $(cat m2.err)"
expect_out "two models" "fp32+weight=fp64/W1 F64 32x16
fp32+weight=fp64/b1 F64 32
fp32+weight=fp64/W2 F64 4x32
fp32+weight=fp64/b2 F64 4
fp8-e4m3+weight=fp64/W1 F64 32x16
fp8-e4m3+weight=fp64/b1 F64 32
fp8-e4m3+weight=fp64/W2 F64 4x32
fp8-e4m3+weight=fp64/b2 F64 4" header m2.safetensors
# the saved weights are the trained ones: evaluated from the file with
# numpy, the accuracy is the report's (fp32: each output one fma chain
# in binary32 from the bias, in index order; float64 here is close)
if "$PYTHON" -c 'import numpy' 2>/dev/null; then
	fplab train --data generated:2560:16:4 --train-limit 2048 --layers 16-32-4 --epochs 2 \
		-o w.safetensors --tsv >w.tsv
	"$PYTHON" -c '
import json, struct, numpy as np
b = open("w.safetensors", "rb").read()
n = struct.unpack("<Q", b[:8])[0]
h = json.loads(b[8:8 + n])
t = {k: np.frombuffer(b[8 + n + v["data_offsets"][0]: 8 + n + v["data_offsets"][1]],
                      dtype="<f4").reshape(v["shape"]) for k, v in h.items()}
print(sorted(t))' >wn.txt
	expect_out "numpy reads the model" "['W1', 'W2', 'b1', 'b2']" cat wn.txt
fi

# --- atomic output: a failed or interrupted run leaves no file and no
# temporary, an existing file as it was
echo old >keep.safetensors
expect_fail "bad run keeps the old model" 2 "the first size is 17" \
	fplab train --data generated --layers 17-4 -o keep.safetensors
expect_out "old model kept" "old" cat keep.safetensors
fplab train --data generated:200000:64:10 --layers 64-256-10 --epochs 50 -o int.safetensors \
	--svg int.svg --tsv >/dev/null 2>&1 &
pid=$!
sleep 2
kill -TERM $pid 2>/dev/null
{ wait $pid; } 2>/dev/null
checks=$((checks + 1))
ls int.* 2>/dev/null | grep -q . && fail "an interrupted run left: $(ls int.*)"
checks=$((checks + 1))
ls keep.safetensors.tmp* m.safetensors.tmp* >/dev/null 2>&1 && fail "a temporary was left"

# --- the SVG: well-formed, three panels (training loss, test loss, test
# accuracy), a line per policy in each, rendered
fplab train $GEN --epochs 3 --every 4 --policy fp32 --policy fp8-e4m3 --policy fp16-mixed \
	--svg p.svg >/dev/null || fail "--svg exits $?"
if command -v xmllint >/dev/null 2>&1; then
	checks=$((checks + 1))
	xmllint --noout p.svg 2>err || fail "SVG not well-formed: $(head -3 err)"
	expect_out "svg panels" "3" xmllint --xpath 'count(//*[local-name()="g"][@class="panel"])' p.svg
	expect_out "svg series" "9" xmllint --xpath 'count(//*[local-name()="g"][@class="series"])' p.svg
fi
if command -v rsvg-convert >/dev/null 2>&1; then
	checks=$((checks + 1))
	rsvg-convert -o p.png p.svg 2>err && [ -s p.png ] || fail "rsvg-convert cannot render: $(cat err)"
fi
checks=$((checks + 1))
grep -q 'href\|<script\|<image' p.svg && fail "SVG refers to external resources"

# --- the user's data: .npy, .npz members, .safetensors tensors
if "$PYTHON" -c 'import numpy' 2>/dev/null; then
	"$PYTHON" -c '
import numpy as np
r = np.random.default_rng(5)
y = np.arange(600) % 3
x = (r.normal(size=(600, 2, 3)) * 0.2 + y[:, None, None]).astype(np.float32)
np.save("x.npy", x); np.save("y.npy", y.astype(np.int64))
np.save("xt.npy", x[:90]); np.save("yt.npy", y[:90].astype(np.uint8))
np.savez("d.npz", feat=x, lab=y.astype(np.int32))
np.save("x5.npy", x.reshape(600, 6)[:, :5])
np.save("ybad.npy", y[:599])'
	fplab train --data x.npy,y.npy --layers 6-8-3 --epochs 3 --batch 50 --tsv >u.tsv || fail "npy data exits $?"
	expect_out "no test set by default" "[]" eval 'printf "[%s]\n" "$(col u.tsv fp32 test_accuracy)"'
	fplab train --data d.npz:feat,d.npz:lab --test-data xt.npy,yt.npy --layers 6-8-3 --epochs 3 \
		--batch 50 --tsv >u2.tsv || fail "npz data exits $?"
	checks=$((checks + 1))
	awk -F '\t' 'END { exit !($6 > 0.9) }' u2.tsv || fail "user data not learnt: $(cat u2.tsv)"
	expect_out "npz = npy" "$(col u.tsv fp32 train_loss)" col u2.tsv fp32 train_loss
	expect_out "default layers from the data" "6 3" eval "fplab train --data x.npy,y.npy --batch 50 -o l.safetensors >/dev/null && python3 -c '
import json, struct
b = open(\"l.safetensors\", \"rb\").read(); h = json.loads(b[8:8 + struct.unpack(\"<Q\", b[:8])[0]])
print(h[\"W1\"][\"shape\"][1], h[\"W2\"][\"shape\"][0])'"
	expect_fail "wrong feature count" 2 "the first size is 6, but the data have 5 features" \
		fplab train --data x5.npy,y.npy --layers 6-8-3
	expect_fail "test set features" 1 "the test set has 5 features per example, the training set 6" \
		fplab train --data x.npy,y.npy --test-data x5.npy,y.npy --layers 6-8-3
	expect_fail "label count" 1 "ybad.npy" fplab train --data x.npy,ybad.npy --layers 6-8-3
fi

# --- bad input: message, exit status, no -o or --svg file
bad() {
	_w=$1 _s=$2 _p=$3
	shift 3
	rm -f bad.svg bad.safetensors
	expect_fail "$_w" "$_s" "$_p" "$@" --svg bad.svg -o bad.safetensors
	checks=$((checks + 1))
	[ -e bad.svg ] || [ -e bad.safetensors ] && fail "$_w: left an output file"
	ls bad.*.tmp* >/dev/null 2>&1 && fail "$_w: left a temporary"
}
bad "layers syntax" 2 "^fplab: train: --layers '16--4': expected sizes joined by '-'" fplab train $GEN --layers 16--4
bad "layers one size" 2 "give at least the inputs and the classes" fplab train --data generated --layers 16
bad "layers zero" 2 "'0' is not a layer size" fplab train --data generated --layers 16-0-4
bad "layers letters" 2 "'x' is not a layer size" fplab train --data generated --layers 16-x-4
bad "too many layers" 2 "at most 16 layers" fplab train --data generated --layers 16-2-2-2-2-2-2-2-2-2-2-2-2-2-2-2-2-4
bad "layers vs features" 2 "the first size is 784, but the data have 16 features" fplab train --data generated --layers 784-256-10
bad "layers vs classes" 2 "the last size is 10, but the data have 4 classes \\(labels 0..3\\)" fplab train --data generated --layers 16-10
bad "unknown preset" 2 "unknown preset 'fp16-mixd' \\(and no policy file of that name\\); did you mean 'fp16-mixed'\\?" fplab train $GEN --policy fp16-mixd
bad "missing policy file" 1 "nope.policy" fplab train $GEN --policy ./nope.policy
printf 'preset = fp16-mixed\nact = fp16\nfwd.acc = fp99\n' >badval.policy
bad "policy file bad value" 1 "badval.policy:3: .*fp99" fplab train $GEN --policy badval.policy
printf '\n# c\ngrads = fp16\n' >badkey.policy
bad "policy file unknown key" 1 "badkey.policy:3: .*grads" fplab train $GEN --policy badkey.policy
bad "unknown --set key" 2 "--set 'grads=fp16': unknown policy key 'grads'; did you mean 'grad'\\?" fplab train $GEN --set grads=fp16
bad "bad --set value" 2 "--set 'loss-scale=-3'" fplab train $GEN --set loss-scale=-3
bad "--set without =" 2 "--set 'act': expected KEY=VALUE" fplab train $GEN --set act
bad "bad --comm" 2 "--comm: .*fp17" fplab train $GEN --nodes 2 --comm fp17
bad "bad --scale" 2 "--scale: .*'apx'" fplab train $GEN --nodes 2 --scale apx
bad "bad --fp32-layers" 2 "--fp32-layers" fplab train $GEN --nodes 2 --fp32-layers 1,x
bad "fp32 layer too deep" 2 "comm-fp32 names a layer above 2" fplab train $GEN --nodes 2 --fp32-layers 3
bad "group without hier" 2 "--group applies to --algo hier" fplab train $GEN --group 2
bad "hier without group" 2 "--algo hier needs --group G" fplab train $GEN --algo hier
bad "group not dividing" 2 "hier:3 needs a group that divides --nodes 4" fplab train $GEN --nodes 4 --algo hier --group 3
bad "batch too large" 2 "--batch 4096 is larger than the training set \\(2048 examples\\)" fplab train $GEN --batch 4096
bad "batch below nodes" 2 "--batch 4 is smaller than --nodes 8" fplab train $GEN --batch 4 --nodes 8
bad "epochs 0" 2 "--epochs '0' is not a count" fplab train $GEN --epochs 0
bad "bad optimizer" 2 "unknown optimizer 'adma'; did you mean 'adam'\\?" fplab train $GEN --optim adma
bad "momentum for adam" 2 "--momentum applies to --optim sgd, not adam" fplab train $GEN --optim adam --momentum 0.9
bad "bad lr" 2 "--lr 'x' is not a number" fplab train $GEN --lr x
bad "bad data source" 2 "--data 'foo': expected fashion-mnist, generated" fplab train --data foo
bad "bad generated" 2 "--data 'generated:10:0': D '0' is not a count" fplab train --data generated:10:0
bad "missing data file" 1 "--data: .*nope.npy" fplab train --data nope.npy,y.npy
bad "missing --data-dir" 1 "^fplab: train: --data-dir: fashion-mnist: no directory '$T/none'\$" fplab train --data-dir "$T/none"
mkdir empty
bad "empty --data-dir" 1 "^fplab: train: --data-dir: fashion-mnist: no train-images-idx3-ubyte \\(nor train-images-idx3-ubyte.gz\\) in '$T/empty'\$" \
	fplab train --data-dir "$T/empty"
bad "extra argument" 2 "unexpected argument 'x'" fplab train $GEN x
bad "unknown option" 2 "unrecognized option '--epoks'" fplab train $GEN --epoks 2
expect_fail "unwritable -o" 1 "cannot create .*none/m.safetensors" fplab train $GEN -o "$T/none/m.safetensors"
expect_fail "-o not safetensors" 2 "name the file FILE.safetensors" fplab train $GEN -o model.npz
checks=$((checks + 1))
[ -e model.npz ] && fail "-o model.npz written"
expect_fail "comm options on one node" 0 "warning: .*--nodes 1 skips" fplab train $GEN --comm e5m2

# --- every policy is checked before the first step (issue 23, point 5):
# a profile takes its inputs as given bf16 values, and p.policy (over
# fp32) stores the activations in fp32, which has values bf16 lacks (23
# fraction bits, bf16 7): refused with the key and why, before
# bf16-mixed trains a step (no row), and no output file
printf 'fwd.profile = avx512bf16\n' >p.policy
rm -f m.safetensors m.svg
expect_fail "a policy that cannot run" 2 \
	"^fplab: train: policy p: fwd takes the activations as given bf16 values \\(fwd.profile avx512bf16: no rounding\\), but act = fp32 has values bf16 lacks" \
	fplab train --data generated --layers 16-8-4 --epochs 3 --policy bf16-mixed --policy p.policy -o m.safetensors --svg m.svg
checks=$((checks + 1))
[ -s "$T/stdout" ] && fail "a step was trained before the check: $(cat "$T/stdout")"
checks=$((checks + 1))
ls m.* >/dev/null 2>&1 && fail "the refused run left: $(ls m.*)"
# over bf16-mixed (act and weight bf16) the profile runs; e5m2 values
# given to fp16 fit (same exponent, 2 <= 10 fraction bits); e4m3fn
# values given to e5m2 do not (3 > 2 fraction bits)
ok fplab train --data generated --layers 16-8-4 --policy bf16-mixed --set fwd.profile=avx512bf16 --set bwd.profile=amx-bf16
ok fplab train --data generated --layers 16-8-4 --set act=e5m2 --set fwd.a=fp16:given
expect_fail "e4m3fn given to e5m2" 2 "policy fp32\\+act=e4m3fn\\+fwd.a=e5m2:given: fwd takes the activations as given e5m2 values \\(fwd.a = e5m2:given: no rounding\\), but act = e4m3fn" \
	fplab train --data generated --layers 16-8-4 --set act=e4m3fn --set fwd.a=e5m2:given

# --- a policy changed by the options is named for what it is: fp32 with
# its all-reduce in e4m3ieee under APS is not "fp32"; an override that
# changes nothing keeps the name
fplab train $GEN --nodes 2 --comm e4m3ieee --scale aps --tsv >nm.tsv || fail "renamed run exits $?"
expect_out "name after the options" "fp32+comm=e4m3ieee+comm-scale=aps" eval "awk -F '\t' 'NR == 2 { print \$1 }' nm.tsv"
fplab train $GEN --policy bf16-mixed --set act=bf16 --set master=split --tsv >nm2.tsv
expect_out "name after --set" "bf16-mixed+master=split" eval "awk -F '\t' 'NR == 2 { print \$1 }' nm2.tsv"

# --- a full disk stops the run, named as such (ENOSPC), and nothing is
# written: the rows go out as they come (TSV), the first one fails
if [ -w /dev/full ]; then
	rm -f full.safetensors
	expect_fail "stdout on a full disk" 1 "^fplab: train: write error on stdout: No space left on device\$" \
		sh -c "fplab train $GEN --epochs 3 --tsv -o full.safetensors >/dev/full"
	checks=$((checks + 1))
	[ -e full.safetensors ] && fail "a run that could not report wrote its model"
	# text comes at the end: the error then, and no model either
	expect_fail "text on a full disk" 1 "^fplab: train: write error on stdout: No space left on device\$" \
		sh -c "fplab train $GEN -o full.safetensors >/dev/full"
	checks=$((checks + 1))
	[ -e full.safetensors ] && fail "a text run that could not report wrote its model"
fi

# --- control characters of arguments, file names and files are escaped
# in messages (\t, \x1b: fpl_escape), never echoed raw; a policy file
# with binary bytes is reported as such, with its line and column
esc=$(printf '\033')
expect_fail "escaped --data" 2 "^fplab: train: --data 'gen\\\\x1b\\[31mx': expected" fplab train --data "$(printf 'gen\033[31mx')"
checks=$((checks + 1))
grep -q "$esc" "$T/stderr" && fail "--data: a raw escape in the message"
expect_fail "escaped --epochs" 2 "^fplab: train: --epochs '\\\\x1b' is not a count" fplab train --epochs "$esc"
expect_fail "escaped --lr" 2 "^fplab: train: --lr '\\\\x1b' is not a number" fplab train --lr "$esc"
printf 'act = fp99\n' >"$(printf 'x\ty.policy')"
expect_fail "escaped policy file name" 1 "^fplab: train: --policy: x\\\\ty.policy:1: act: unknown format" \
	fplab train $GEN --policy "$(printf 'x\ty.policy')"
printf 'act = bf16\nac\000t = fp16\n' >bin.policy
expect_fail "binary policy file" 1 "^fplab: train: --policy: bin.policy:2:3: byte 0x00: not a text file\$" \
	fplab train $GEN --policy bin.policy
# ... escaped once in messages about the policy
printf 'fwd.profile = avx512bf16\n' >"$(printf 'c\td.policy')"
expect_fail "policy name escaped once" 2 "^fplab: train: policy c\\\\td: fwd takes" \
	fplab train $GEN --policy "$(printf 'c\td.policy')"
# a policy named after a file with a tab: escaped in the report too
printf 'act = bf16\n' >"$(printf 'a\tb.policy')"
fplab train $GEN --policy "$(printf 'a\tb.policy')" --tsv >tab.tsv
expect_out "escaped policy name" 'a\tb 18' eval "awk -F '\t' 'NR == 2 { print \$1, NF }' tab.tsv"

# --- -o and --svg are made when written: a kill -9 during the training
# leaves no temporary (nor file)
fplab train --data generated:200000:64:10 --layers 64-256-10 --epochs 50 -o k9.safetensors \
	--svg k9.svg --tsv >/dev/null 2>&1 &
pid=$!
sleep 2
kill -9 $pid 2>/dev/null
{ wait $pid; } 2>/dev/null
checks=$((checks + 1))
ls k9.* >/dev/null 2>&1 && fail "a killed run left: $(ls k9.*)"
# ... and an unwritable place still fails before the training
expect_fail "unwritable --svg" 1 "cannot create .*none/p.svg" fplab train $GEN --epochs 50 --svg "$T/none/p.svg"
checks=$((checks + 1))
[ -s "$T/stdout" ] && fail "trained before finding --svg unwritable"

# --- Fashion-MNIST, when installed
FM=/usr/share/datasets/fashion-mnist
if [ -e $FM/train-images-idx3-ubyte.gz ] || [ -e $FM/train-images-idx3-ubyte ]; then
	fplab train --train-limit 2048 --test-limit 1000 --epochs 3 --policy fp32 --policy bf16-mixed --tsv >fm.tsv ||
		fail "Fashion-MNIST subset exits $?"
	for p in fp32 bf16-mixed; do
		checks=$((checks + 1))
		a=$(col fm.tsv $p test_accuracy)
		awk -v a="$a" 'BEGIN { exit !(a > 0.7) }' || fail "Fashion-MNIST subset, $p: test accuracy $a"
	done
	# the issue's done-when command; a sanitizer build (many times slower)
	# trains on the first 12000 examples, with a threshold of 0.75
	if nm "$FPLAB" 2>/dev/null | grep -q '__asan_init\|__ubsan_handle'; then
		lim="--train-limit 12000" want=0.75 note=" (first 12000 examples)"
	else
		lim="" want=0.80 note=""
	fi
	# shellcheck disable=SC2086
	fplab train --layers 784-256-10 --epochs 2 --policy fp32 $lim --tsv >dw.tsv ||
		fail "done-when command exits $?"
	checks=$((checks + 1))
	a=$(col dw.tsv fp32 test_accuracy)
	awk -v a="$a" -v w="$want" 'BEGIN { exit !(a > w) }' ||
		fail "done-when: test accuracy $a after 2 epochs, want > $want"
	echo "train.sh: Fashion-MNIST 784-256-10, 2 epochs fp32$note: test accuracy $a" >&2
else
	echo "train.sh: skip the Fashion-MNIST checks: $FM is absent (apt-get install dataset-fashion-mnist)" >&2
fi
finish
