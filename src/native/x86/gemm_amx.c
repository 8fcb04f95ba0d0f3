/* SPDX-License-Identifier: MIT */
/*
 * x86/gemm_amx.c - the bf16 GEMM on AMX's TDPBF16PS: fplab's native twin
 * of the profile "amx-bf16" (order evenodd:32).
 *
 * The driver (packing A and B into 1 KiB tiles, 32 x 32 blocks of C held
 * in tmm0..3 across all of K, row split over threads, tails) is
 * native/gemm_amx_body.h, shared with the portable twin that
 * tests/tnative_kernels.c runs on every CPU; this file gives it the tile
 * instructions.  Every tile is 16 rows of 64 bytes (palette 1): a C tile
 * 16 x 16 binary32, an A tile 16 rows x 32 bf16 (k ascending), a B tile
 * 16 rows of 16 bf16 pairs (row p: (B[2p][j], B[2p+1][j]) per column j).
 *
 * What one TDPBF16PS computes (DESIGN.md §5, measured on Granite
 * Rapids): for each element of the C tile, an even chain over the 16 even
 * k of the A row and B column and an odd chain over the 16 odd ones,
 * each from +0 in ascending k, each step an exact bf16 product added with
 * one rounding to nearest even, denormal operands read as zero, tiny
 * results flushed to zero; then t = even + odd and C = C + t, each rounded
 * the same way, a NaN in C winning.  MXCSR is not read (AMX has fixed
 * rounding, DAZ and FTZ, and no exception flags); each worker still runs
 * under MXCSR 0x1f80 and puts its own back.
 *
 * Why the bits equal fpl_accum_gemm with the profile "amx-bf16":
 *  - The profile: bf16 inputs as given, exact products, binary32
 *    accumulator with DAZ and FTZ (tininess after rounding) in ne, order
 *    evenodd:32: per block of 32 k [32j, 32j+32) the two chains from +0,
 *    u = even + odd, S = S + u (S first in NaN priority), blocks in
 *    ascending order, S from C or +0.  One TDPBF16PS on one K tile is one
 *    such block for 16 x 16 outputs, and the C tiles are loaded once
 *    (from C, or zeroed: S = +0), carried through the K tiles 0, 1, ...
 *    in order and stored once: exactly S's sequence of blocks.  Blocks
 *    start at k = 0, 32, 64, ..., as the profile's do.
 *  - Tails.  The profile's last block, when kk is not a multiple of 32,
 *    runs its chains over the k it has.  Here the last K tile is full
 *    length, positions k >= kk holding -0 in A and +0 in B.  Their
 *    product is -0, so each padded step is -0 + x rounded, which is x for
 *    every x: a nonzero or infinite x is exact, a NaN stays itself, and
 *    in round-to-nearest +0 + -0 = +0 and -0 + -0 = -0.  (A +0 pad would
 *    NOT do: fma(+0, +0, -0) = +0, and a chain can hold -0, since FTZ
 *    flushes a tiny negative result to -0; with both chains -0 and S =
 *    -0 the output's sign would change.)  The padded tile's chains are
 *    the shorter block's, bit for bit.  Rows of A past m and columns of B
 *    past n are +0 and only feed outputs that are discarded: an edge
 *    block of C goes through a zero-padded 32 x 32 copy, of which only
 *    the m x n part is written back.
 *  - kk = 0: no tile product; C is stored back unchanged, or +0.
 * The row split over threads changes no chain.
 *
 * AMX state: the tile configuration is a static constant (a stack-local
 * one can lose its stores: gcc 12's _tile_loadconfig tells the compiler
 * it reads 8 bytes only), loaded by each worker and released at its end;
 * gcc 12's tile loads do not tell the compiler they read memory, so a
 * compiler barrier precedes each.  The tile data permission was
 * requested by the registry's usable() before this is ever called.
 */
#include <immintrin.h>

#include "native/native_internal.h"

typedef struct amx_tilecfg {
	uint8_t palette, start_row, reserved[14];
	uint16_t colsb[16];
	uint8_t rows[16];
} amx_tilecfg;

static const amx_tilecfg amx_cfg __attribute__((aligned(64))) = {
	1, 0, { 0 },
	{ 64, 64, 64, 64, 64, 64, 64, 64, 0, 0, 0, 0, 0, 0, 0, 0 },
	{ 16, 16, 16, 16, 16, 16, 16, 16, 0, 0, 0, 0, 0, 0, 0, 0 }
};

#define AMX_GEMM fpl__native_amx_gemm
#define AMX_LINKAGE
#define AMX_BARRIER() __asm__ __volatile__("" ::: "memory")
#define AMX_ENTER()                          \
	const unsigned amx_csr = _mm_getcsr(); \
	_mm_setcsr(0x1f80);                    \
	AMX_BARRIER();                         \
	_tile_loadconfig(&amx_cfg)
#define AMX_LEAVE()         \
	do {                \
		_tile_release(); \
		_mm_setcsr(amx_csr); \
	} while (0)
#define AMX_ZERO(t) _tile_zero(t)
#define AMX_LOADC(t, p, s)                    \
	do {                                  \
		AMX_BARRIER();                \
		_tile_loadd(t, (p), (long)(s)); \
	} while (0)
#define AMX_STOREC(t, p, s)                     \
	do {                                    \
		_tile_stored(t, (p), (long)(s)); \
		AMX_BARRIER();                  \
	} while (0)
#define AMX_LOADT(t, p) AMX_LOADC(t, p, 64)
#define AMX_DP(c, a, b) _tile_dpbf16ps(c, a, b)
#define AMX_MIN_WORK 1e6

#include "native/gemm_amx_body.h"
