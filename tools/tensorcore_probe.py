#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""tensorcore_probe.py - record how a GPU's matrix units accumulate GEMMs.

    python3 tools/tensorcore_probe.py OUTDIR            # on a CUDA machine
    python3 tools/tensorcore_probe.py OUTDIR --fake     # plumbing check, no GPU
    python3 tools/tensorcore_probe.py --tails OUTDIR    # K mod 16 != 0 (bf16, fp16)

For bf16 x bf16, fp16 x fp16, e4m3 x e4m3 and e4m3 x e5m2 GEMMs with fp32
output, this runs probe inputs built to reveal the accumulation, plus
random and wide-range inputs, and writes OUTDIR/KIND.npz (inputs and
outputs, every value as float32, which holds each exactly) and
OUTDIR/env.json (GPU, driver, library versions, what each method was).

Each probe set is a GEMM C = A B, A m x K, B K x n.  Most targeted probes
are the diagonal C[i,i] of a set (row i of A against column i of B); the
other outputs are valid dot products too and are recorded.

Probe families (per input kind; X a large term, t a tiny one):
  align    [X, s, -X] at k = 0,1,2: the exact sum is s; what comes back
           is s as the unit aligned it to X (kept, truncated, rounded),
           for s = m 2^-j, m in {1, 1.25, 1.5, 1.75}, both signs.
  group    X at p, -X at p+1, t at q: t survives only if it is added
           when the running sum is 0, i.e. outside X's group (and X's
           group does not see t in the running sum): the group size and
           whether the accumulator is aligned with the products.
  round    [1, r], r around 2^-24 (half an fp32 ulp of 1): the rounding
           of a group's sum into fp32 (nearest, toward zero, down).
  promote  X at p and t everywhere else, K = 4096: when the tiny terms
           come back (a block summed apart and promoted), and at which k.
  special  subnormal inputs and products, signed zeros, inf, NaN,
           overflow of fp32.
  random   N(0, 1) inputs, several K; wide: exponents spread over the
           input formats' range, random signs.

Methods (how the GEMM was called), each an output array named SET_METHOD:
  bf16/fp16: mm     torch.mm(a, b, out_dtype=torch.float32) (if the
                    PyTorch there has it)
             gemmex cublasGemmEx(..., CUDA_R_32F C, CUBLAS_COMPUTE_32F,
                    CUBLAS_GEMM_DEFAULT) through ctypes on PyTorch's handle
             lowout torch.matmul(a, b) (bf16/fp16 output, PyTorch's
                    default settings), stored as float32
  fp8:       scaled      torch._scaled_mm(a, b, unit scales,
                         out_dtype=float32, use_fast_accum=False)
             scaledfast  the same with use_fast_accum=True
Each method runs on the m x n problem (SET_METHOD) and embedded in a
4096 x 4096 output of zeros (SET_METHOD_pad, rows/cols 0..m-1, 0..n-1
kept), to see whether the problem's size changes the order of the sums
(split-K, stream-K), and twice, to see whether it is deterministic.

Each (kind, method) runs in its own process, so a crash in one (ctypes)
costs only that one.  No network, no files outside OUTDIR and a
temporary folder.
"""
import json
import os
import subprocess
import sys
import tempfile
import time

import functools

import numpy as np

# Input formats: precision p (with the implicit bit), smallest normal
# exponent, largest finite value, whether subnormals exist.
FMT = {
    'bf16': dict(p=8, emin=-126, max=float.fromhex('0x1.fep127')),
    'fp16': dict(p=11, emin=-14, max=65504.0),
    'e4m3': dict(p=4, emin=-6, max=448.0),
    'e5m2': dict(p=3, emin=-14, max=57344.0),
}
KINDS = {            # kind: (A format, B format, methods)
    'bf16': ('bf16', 'bf16', ['mm', 'gemmex', 'lowout']),
    'fp16': ('fp16', 'fp16', ['mm', 'gemmex', 'lowout']),
    'e4m3': ('e4m3', 'e4m3', ['scaled', 'scaledfast']),
    'e4m3e5m2': ('e4m3', 'e5m2', ['scaled', 'scaledfast']),
}
PAD = 4096


def rnd(x, f):
    """x (float64 array) rounded to nearest even into format f, saturated."""
    x = np.asarray(x, dtype=np.float64)
    F = FMT[f]
    ax = np.abs(x)
    with np.errstate(divide='ignore'):
        e = np.floor(np.log2(np.where(ax > 0, ax, 1.0)))
    e = np.maximum(e, F['emin'])
    q = np.exp2(e - F['p'] + 1)
    y = np.round(x / q) * q
    return np.clip(y, -F['max'], F['max'])


def representable(v, f):
    return v == 0 or (np.isfinite(v) and rnd(v, f) == v)


@functools.lru_cache(maxsize=None)
def split(v, fa, fb):
    """(a, b) with a in fa, b in fb, a*b == v exactly; b a power of two."""
    if v == 0:
        return (0.0, 0.0)
    if not np.isfinite(v):
        return (v, 1.0)
    for eb in sorted(range(-24, 25), key=abs):
        b = 2.0 ** eb
        if not representable(b, fb):
            continue
        a = v / b
        if representable(a, fa) and abs(a) >= 2.0 ** FMT[fa]['emin']:
            return (a, b)
    raise ValueError('%r is no product of %s x %s' % (v, fa, fb))


def pairs_set(pairs, K):
    """A (m x K) and B (K x n) from a list of term lists [(k, a, b)...]."""
    m = max(16, -(-len(pairs) // 16) * 16)
    A = np.zeros((m, K))
    B = np.zeros((K, m))
    for i, terms in enumerate(pairs):
        for k, a, b in terms:
            A[i, k] = a
            B[k, i] = b
    return A, B


def make_sets(fa, fb, seed):
    """The probe sets of one kind: {name: (A, B)} with float64 values."""
    rng = np.random.default_rng(seed)
    fp8 = fa in ('e4m3', 'e5m2')
    sets = {}
    T = lambda k, v: (k,) + split(float(v), fa, fb)

    # align: [X, s, -X]; s = m 2^(x-j); X = 2^x
    x = 4 if fp8 else 0
    jmax = 22 if fp8 else 48
    pr = []
    for j in range(1, jmax + 1):
        for mant in (1.0, 1.25, 1.5, 1.75):
            for sg in (1, -1):
                s = sg * mant * 2.0 ** (x - j)
                try:
                    pr.append([T(0, 2.0 ** x), T(1, s), T(2, -2.0 ** x)])
                except ValueError:
                    pass
    for j in (3, 10, 20):   # the same sums in other orders
        s = 1.5 * 2.0 ** (x - j)
        for order in ((1, 0, 2), (0, 2, 1), (2, 1, 0)):
            try:
                pr.append([T(order[0], 2.0 ** x), T(order[1], -s), T(order[2], -2.0 ** x)])
            except ValueError:
                pass
    sets['align'] = pairs_set(pr, 64)

    # group: X at p, -X at p+1, t at q
    X, t = (2.0 ** 16, 2.0 ** -12) if fp8 else ((2.0 ** 14, 2.0 ** -28) if fa == 'fp16'
                                                  else (1.0, 2.0 ** -60))
    pr = []
    for p in (0, 8, 16, 24, 31, 32, 48):
        for q in range(64):
            if q in (p, p + 1):
                continue
            pr.append([T(p, X), T(p + 1, -X), T(q, t)])
    sets['group'] = pairs_set(pr, 64)

    # round: [1, r] and [-1, -r] and [1, -r], r around half an fp32 ulp
    pr = []
    one = 16.0 if fp8 else 1.0
    for num in (1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 12, 14, 16, 24):
        r = one * num * 2.0 ** -27          # num/8 of 2^-24
        for s1, s2 in ((1, 1), (-1, -1), (1, -1), (-1, 1)):
            try:
                pr.append([T(0, s1 * one), T(1, s2 * r)])
                pr.append([T(0, s2 * r), T(5, s1 * one)])
            except ValueError:
                pass
    sets['round'] = pairs_set(pr, 32)

    # promote: X at p, t at every other k; and t alone; K = 4096
    K = 4096
    pr = []
    tt = 2.0 ** -12 if fp8 else 2.0 ** -26
    for ratio in ((4, 8, 12, 16) if fp8 else (20, 26, 30)):
        big = tt * 2.0 ** ratio * (1 if not fp8 else 1)
        for p in (0, 1, 15, 16, 31, 32, 63, 64, 127, 128, 255, 256, 511, 512, 1023, 1024, 2048, 4095):
            try:
                terms = [T(k, tt) for k in range(K) if k != p]
                terms.append(T(p, big))
            except ValueError:
                continue
            pr.append(terms)
    pr.append([T(k, tt) for k in range(K)])
    pr.append([T(k, tt if k % 2 == 0 else -tt) for k in range(K)])
    pr.append([T(k, tt * (1 + (k % 7) / 8.0)) for k in range(K)])
    sets['promote'] = pairs_set(pr, K)

    # special: subnormals, signed zeros, inf, NaN, overflow
    F = FMT[fa]
    sub_a = 2.0 ** (F['emin'] - 1)             # an input subnormal of A
    pr = [
        [(0, sub_a, 1.0)],                        # subnormal input
        [(0, sub_a, 1.0), (1, sub_a, 1.0)],
        [(0, -sub_a, 1.0)],
        [(0, sub_a, 4.0), (1, 1.0, 1.0), (2, -1.0, 1.0)],
        [(0, -0.0, 1.0)],                         # -0 product alone
        [(0, -0.0, 1.0), (1, -0.0, 1.0)],
        [(0, 1.0, 1.0), (1, -1.0, 1.0)],          # x - x
        [(0, -1.0, 1.0), (1, 1.0, 1.0)],
        [],                                       # all +0
        [(0, 0.0, -1.0)],
        [(15, -2.0, 1.0), (16, 2.0, 1.0)],
    ]
    if fa == 'bf16':
        pr += [
            [(0, 2.0 ** -100, 2.0 ** -30)],       # fp32-subnormal product
            [(0, 2.0 ** -100, 2.0 ** -30), (1, 2.0 ** -100, 2.0 ** -30)],
            [(0, 2.0 ** -100, -2.0 ** -49)],      # below fp32's subnormals
            [(0, 2.0 ** -100, 2.0 ** -49)],
            [(0, 1.5 * 2.0 ** -100, 2.0 ** -49)],
            [(0, 2.0 ** -100, 2.0 ** -27), (1, -2.0 ** -100, 2.0 ** -28)],
            [(0, 1.5 * 2.0 ** 127, 1.0), (1, 1.5 * 2.0 ** 127, 1.0)],   # fp32 overflow
            [(0, 2.0 ** 100, 2.0 ** 100)],
            [(0, 2.0 ** 100, 2.0 ** 100), (1, -2.0 ** 100, 2.0 ** 100)],
            [(0, -1.5 * 2.0 ** 127, 1.0), (1, -1.5 * 2.0 ** 127, 1.0)],
            [(0, np.inf, 1.0)], [(0, np.inf, 0.0)], [(0, np.inf, 1.0), (1, -np.inf, 1.0)],
            [(0, np.nan, 1.0)], [(0, 1.0, 1.0), (1, np.nan, 1.0)],
        ]
    if fa == 'fp16':
        pr += [
            [(0, 2.0 ** -24, 2.0 ** -24)],
            [(0, 65504.0, 65504.0)] * 1,
            [(k, 65504.0, 65504.0) for k in range(16)],
            [(0, np.inf, 1.0)], [(0, np.inf, 0.0)], [(0, np.inf, 1.0), (1, -np.inf, 1.0)],
            [(0, np.nan, 1.0)],
        ]
    if fp8:
        pr += [
            [(0, 2.0 ** -9, 2.0 ** -9 if fb == 'e4m3' else 2.0 ** -16)],
            [(0, 448.0, FMT[fb]['max'])],
            [(k, 448.0, FMT[fb]['max']) for k in range(32)],
            [(0, np.nan, 1.0)],
        ]
        if fb == 'e5m2':
            pr += [[(0, 1.0, np.inf)], [(0, 0.0, np.inf)], [(0, 1.0, 2.0 ** -16)]]
    sets['special'] = pairs_set(pr, 32)

    # random N(0, s^2), several K (multiples of 16 for the fp8 kernels)
    s = 8.0 if fp8 else 1.0
    for K in ((16, 64, 256, 1024, 4096) + (() if fp8 else (100,))):
        A = rnd(rng.normal(0, s, (32, K)), fa)
        B = rnd(rng.normal(0, s, (K, 32)), fb)
        sets['random%d' % K] = (A, B)

    # wide: random exponents over the formats' ranges, random signs
    def wide(shape, f):
        F = FMT[f]
        lo = F['emin'] - F['p'] + 1 if fp8 else (-40 if f == 'bf16' else F['emin'])
        hi = np.log2(F['max']) if fp8 or f == 'fp16' else 40
        e = rng.uniform(lo, hi, shape)
        sg = rng.choice([-1.0, 1.0], shape)
        return rnd(sg * np.exp2(e), f)
    for K in (64, 512):
        sets['wide%d' % K] = (wide((64, K), fa), wide((K, 64), fb))

    # cancel: pairs of equal and opposite large terms in random places,
    # small terms of random magnitude between them
    K = 128
    A = wide((64, K), fa) * (2.0 ** -8 if fp8 else 2.0 ** -20)
    A = rnd(A, fa)
    B = wide((K, 64), fb)
    for i in range(64):
        for _ in range(6):
            k1, k2 = rng.choice(K, 2, replace=False)
            v = rnd(rng.normal() * (2.0 ** 6 if fp8 else 2.0 ** 10), fa)
            A[i, k1], A[i, k2] = v, -v
            B[k1, i] = B[k2, i]
    sets['cancel128'] = (A, B)

    for name, (A, B) in sets.items():
        assert np.all((rnd(A, fa) == A) | ~np.isfinite(A)), name
        assert np.all((rnd(B, fb) == B) | ~np.isfinite(B)), name
    return sets


# ---------------------------------------------------------------- GPU side

def torch_dtype(torch, f):
    return {'bf16': torch.bfloat16, 'fp16': torch.float16,
            'e4m3': torch.float8_e4m3fn, 'e5m2': torch.float8_e5m2}[f]


def cublas_gemmex(torch):
    """A function (A, B, dt) -> C fp32 through cublasGemmEx, or None."""
    import ctypes
    torch.mm(torch.ones(16, 16, device='cuda', dtype=torch.bfloat16),
             torch.ones(16, 16, device='cuda', dtype=torch.bfloat16))
    torch.cuda.synchronize()
    path = None
    with open('/proc/self/maps') as maps:
        for line in maps:
            name = line.split()[-1]
            if os.path.basename(name).startswith('libcublas.so'):
                path = name
    if path is None:
        raise RuntimeError('libcublas not among the loaded libraries')
    lib = ctypes.CDLL(path)
    fn = lib.cublasGemmEx
    ci, vp = ctypes.c_int, ctypes.c_void_p
    fn.argtypes = [vp, ci, ci, ci, ci, ci, vp, vp, ci, ci, vp, ci, ci, vp, vp, ci, ci, ci, ci]
    fn.restype = ci
    cuda_type = {torch.bfloat16: 14, torch.float16: 2}
    ver = ci(0)
    try:
        lib.cublasGetVersion_v2(vp(torch.cuda.current_blas_handle()), ctypes.byref(ver))
    except Exception:
        pass

    def run(A, B):
        m, k = A.shape
        n = B.shape[1]
        C = torch.zeros(m, n, dtype=torch.float32, device='cuda')
        al, be = ctypes.c_float(1.0), ctypes.c_float(0.0)
        dt = cuda_type[A.dtype]
        torch.cuda.synchronize()
        # column major: C^T (n x m) = B^T (n x k) A^T (k x m)
        st = fn(vp(torch.cuda.current_blas_handle()), 0, 0, n, m, k, ctypes.byref(al),
                vp(B.data_ptr()), dt, n, vp(A.data_ptr()), dt, k, ctypes.byref(be),
                vp(C.data_ptr()), 0, n, 68, -1)
        torch.cuda.synchronize()
        if st != 0:
            raise RuntimeError('cublasGemmEx status %d' % st)
        return C
    run.info = 'cublasGemmEx from %s (cublasGetVersion %d)' % (path, ver.value)
    return run


def method_fn(torch, method):
    """(A, B) -> fp32 C on the GPU, for a method name; with .info."""
    if method == 'mm':
        def run(A, B):
            return torch.mm(A, B, out_dtype=torch.float32)
        run.info = 'torch.mm(a, b, out_dtype=torch.float32)'
        return run
    if method == 'gemmex':
        return cublas_gemmex(torch)
    if method == 'lowout':
        def run(A, B):
            return torch.matmul(A, B).float()
        run.info = ('torch.matmul(a, b) in the input dtype (allow_bf16_reduced_precision_reduction=%s, '
                    'allow_fp16_reduced_precision_reduction=%s), converted to float32' %
                    (torch.backends.cuda.matmul.allow_bf16_reduced_precision_reduction,
                     torch.backends.cuda.matmul.allow_fp16_reduced_precision_reduction))
        return run
    if method in ('scaled', 'scaledfast'):
        one = torch.ones((), dtype=torch.float32, device='cuda')
        fast = method == 'scaledfast'

        def run(A, B):
            Bc = B.t().contiguous().t()          # column major, as cuBLASLt wants
            return torch._scaled_mm(A, Bc, scale_a=one, scale_b=one, out_dtype=torch.float32,
                                    use_fast_accum=fast)
        run.info = 'torch._scaled_mm(a, b, scale_a=1, scale_b=1, out_dtype=float32, use_fast_accum=%s)' % fast
        return run
    raise ValueError(method)


def run_methods(kind, methods, inputs, out):
    """Child process: run some methods on every set of one kind."""
    fa, fb, _ = KINDS[kind]
    data = np.load(inputs)
    names = sorted({k[:-2] for k in data.files})
    res = {}
    info = {}
    if os.environ.get('TC_FAKE'):
        for method in methods:
            for name in names:
                C = (data[name + '_a'] @ data[name + '_b']).astype(np.float32)
                for suffix in ('', '_pad', '_again'):
                    res['%s_%s%s' % (name, method, suffix)] = C
            info[method] = 'fake'
        np.savez_compressed(out, **res)
        json.dump(info, open(out + '.json', 'w'))
        return
    import torch
    dev = 'cuda'
    same = lambda x, y: np.array_equal(x.view(np.uint32), y.view(np.uint32))
    for method in methods:
        try:
            fn = method_fn(torch, method)
        except Exception as e:
            print('%s %s: unavailable: %s' % (kind, method, e))
            info[method] = 'unavailable: %s' % e
            continue
        info[method] = fn.info
        for name in names:
            A64, B64 = data[name + '_a'], data[name + '_b']
            A = torch.from_numpy(A64).to(dev).to(torch_dtype(torch, fa))
            B = torch.from_numpy(B64).to(dev).to(torch_dtype(torch, fb))
            # the conversion must be exact: these are values of the formats
            if not (np.array_equal(A.float().cpu().numpy(), A64, equal_nan=True) and
                    np.array_equal(B.float().cpu().numpy(), B64, equal_nan=True)):
                print('%s %s %s: input conversion NOT exact' % (kind, method, name))
            m, K = A.shape
            n = B.shape[1]
            t0 = time.time()
            try:
                C = fn(A, B).float().cpu().numpy()
                C2 = fn(A, B).float().cpu().numpy()
                Ap = torch.zeros(PAD, K, dtype=A.dtype, device=dev)
                Bp = torch.zeros(K, PAD, dtype=B.dtype, device=dev)
                Ap[:m] = A
                Bp[:, :n] = B
                Cp = fn(Ap, Bp)[:m, :n].float().cpu().numpy()
                del Ap, Bp
            except Exception as e:
                print('%s %s %s: failed: %s' % (kind, method, name, e))
                info[method] += '; %s failed: %s' % (name, e)
                continue
            res['%s_%s' % (name, method)] = C
            res['%s_%s_again' % (name, method)] = C2
            res['%s_%s_pad' % (name, method)] = Cp
            print('%s %-10s %-10s m=%d n=%d K=%d: repeat %s, padded %s, %.3f s' % (
                kind, method, name, m, n, K, 'same' if same(C, C2) else 'DIFFERS',
                'same' if same(C, Cp) else 'DIFFERS', time.time() - t0))
        np.savez_compressed(out, **res)     # after each method: a crash keeps the rest
        json.dump(info, open(out + '.json', 'w'))


def env_info(fake):
    info = {'date': time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime()), 'numpy': np.__version__,
            'python': sys.version.split()[0]}
    if fake:
        info['fake'] = True
        return info
    try:
        info['nvidia-smi'] = subprocess.run(
            ['nvidia-smi', '--query-gpu=name,driver_version,memory.total,clocks.max.sm',
             '--format=csv,noheader'], capture_output=True, text=True, timeout=30).stdout.strip()
    except Exception as e:
        info['nvidia-smi'] = 'failed: %s' % e
    try:
        import torch
        info['torch'] = torch.__version__
        info['torch.version.cuda'] = torch.version.cuda
        info['device'] = torch.cuda.get_device_name(0)
        info['capability'] = list(torch.cuda.get_device_capability(0))
        info['cublas'] = None
    except Exception as e:
        info['torch'] = 'failed: %s' % e
    return info


TAIL_KS = (1, 2, 8, 15, 17, 24, 31, 33, 40, 48, 100, 127, 130, 250, 1000, 1030, 4095)


def tails(outdir, fake):
    """--tails: K that is no multiple of 16, three problem sizes.

    For bf16 and fp16 (torch.mm, fp32 output), random N(0, 1) inputs
    A (32 x K), B (K x 32) for each K in TAIL_KS, run as the 32 x 32
    problem (K_small), embedded in 256 x 256 (K_mid) and in 4096 x 4096
    (K_pad): which kernel takes the partial group where.  Writes
    OUTDIR/tails.npz.
    """
    rng = np.random.default_rng(77)
    res = {}
    if not fake:
        import torch
    for kind in ('bf16', 'fp16'):
        for K in TAIL_KS:
            A = rnd(rng.normal(0, 1, (32, K)), kind).astype(np.float32)
            B = rnd(rng.normal(0, 1, (K, 32)), kind).astype(np.float32)
            pre = '%s_%d_' % (kind, K)
            res[pre + 'a'], res[pre + 'b'] = A, B
            for tag, size in (('small', 32), ('mid', 256), ('pad', PAD)):
                if fake:
                    res[pre + tag] = (A.astype(np.float64) @ B).astype(np.float32)
                    continue
                dt = torch_dtype(torch, kind)
                Ap = torch.zeros(size, K, dtype=dt, device='cuda')
                Bp = torch.zeros(K, size, dtype=dt, device='cuda')
                Ap[:32] = torch.from_numpy(A).to('cuda').to(dt)
                Bp[:, :32] = torch.from_numpy(B).to('cuda').to(dt)
                try:
                    C = torch.mm(Ap, Bp, out_dtype=torch.float32)[:32, :32].cpu().numpy()
                except Exception as e:
                    print('tails %s K=%d %s: %s' % (kind, K, tag, e))
                    continue
                res[pre + tag] = C
            print('tails %s K=%d done' % (kind, K))
    np.savez_compressed(os.path.join(outdir, 'tails.npz'), **res)


def main(argv):
    if len(argv) >= 2 and argv[1] == '--tails':
        os.makedirs(argv[2], exist_ok=True)
        tails(argv[2], '--fake' in argv)
        return 0
    if len(argv) >= 2 and argv[1] == '--child':
        run_methods(argv[2], argv[3].split(','), argv[4], argv[5])
        return 0
    if len(argv) < 2:
        print(__doc__)
        return 2
    outdir = argv[1]
    fake = '--fake' in argv
    kinds = [k for k in KINDS if '--kinds' not in argv or k in argv[argv.index('--kinds') + 1].split(',')]
    os.makedirs(outdir, exist_ok=True)
    tmp = tempfile.mkdtemp(prefix='tcprobe')
    t_start = time.time()
    info = env_info(fake)
    info['methods'] = {}
    info['runs'] = {}
    env = dict(os.environ, PYTHONUNBUFFERED='1')
    if fake:
        env['TC_FAKE'] = '1'
    for seed, kind in enumerate(kinds):
        fa, fb, methods = KINDS[kind]
        sets = make_sets(fa, fb, 1000 + seed)
        inputs = os.path.join(tmp, kind + '_in.npz')
        arrays = {}
        for name, (A, B) in sets.items():
            arrays[name + '_a'] = A.astype(np.float32)
            arrays[name + '_b'] = B.astype(np.float32)
        np.savez(inputs, **arrays)
        # gemmex (ctypes) in a process of its own: a crash there costs only it
        groups = [[m for m in methods if m != 'gemmex']] + [[m] for m in methods if m == 'gemmex']
        for group in groups:
            tag = '%s_%s' % (kind, '+'.join(group))
            out = os.path.join(tmp, tag + '.npz')
            t0 = time.time()
            try:
                r = subprocess.run([sys.executable, argv[0], '--child', kind, ','.join(group), inputs, out],
                                   env=env, timeout=240)
                status = r.returncode
            except subprocess.TimeoutExpired:
                status = 'timeout'
            info['runs'][tag] = {'status': status, 'seconds': round(time.time() - t0, 2)}
            if os.path.exists(out):
                with np.load(out) as d:
                    arrays.update({k: d[k] for k in d.files})
                info['methods'].update(json.load(open(out + '.json')))
        np.savez_compressed(os.path.join(outdir, kind + '.npz'), **arrays)
        print('%s: %d arrays written' % (kind, len(arrays)))
    info['seconds'] = round(time.time() - t_start, 1)
    with open(os.path.join(outdir, 'env.json'), 'w') as f:
        json.dump(info, f, indent=1)
    print(json.dumps(info, indent=1))
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
