/* SPDX-License-Identifier: MIT */
/*
 * fplab/allreduce.h - all-reduce of per-node gradients in a low-precision
 * communication format: schedules as data (sequential, ring, tree,
 * hierarchical), loss scaling and APS (Auto-Precision Scaling), and an
 * exact report.  The simulator here and the MPI runner (fplab-mpi) run
 * the same schedule, so their results are equal bit for bit.
 *
 * ------------------------------------------------------------ schedule
 * P nodes each hold a buffer of n values.  A schedule is a list of
 * transfers grouped in steps; the transfers of one step are concurrent:
 * every one of them reads its source as it was at the start of the step.
 * A transfer {step, src, dst, lo, hi, op} sends elements [lo, hi) of
 * src's buffer, each rounded into the communication format (on the
 * sender), and the receiver either adds them to its own elements
 * (FPL_AR_ADD: dst[e] = dst[e] + recv[e], one rounding into the
 * accumulator format) or stores them (FPL_AR_COPY: dst[e] = recv[e]).
 * After the last step every node holds the reduced buffer (the same
 * bits when acc is not wider than comm; see COPY below).
 *   sequential  node 0 gathers: step s-1 adds node s's buffer into node
 *               0's (s = 1..P-1, in order), then node 0 sends the result
 *               to every other node in one step (COPY).  P steps (0 for
 *               P = 1).
 *   ring        reduce-scatter then all-gather over P chunks (chunk c =
 *               elements [floor(c*n/P), floor((c+1)*n/P))), as a ring
 *               implementation sends: in step s (0..P-2) node i sends
 *               chunk (i - s) mod P to node i+1 mod P, which adds it; then
 *               in step P-1+s (s = 0..P-2) node i sends chunk
 *               (i + 1 - s) mod P, which the next node stores.  2(P-1)
 *               steps.
 *   tree        binary recursive halving to node 0 (step s, for s = 0..L-1
 *               with L = ceil(log2 P): node i with i mod 2^(s+1) = 2^s
 *               sends its whole buffer to i - 2^s, which adds), then the
 *               reverse (step 2L-1-s: node j with j mod 2^(s+1) = 0 sends
 *               to j + 2^s when j + 2^s < P, COPY).  2L steps.
 *   hier:G      groups of G consecutive nodes, leader = first of a group:
 *               within each group the members add into the leader, one
 *               member per step in order (step t: member t+1 sends its
 *               whole buffer; G-1 steps), a ring among the Q = P/G leaders
 *               exactly as `ring` above with leader q = node q*G in the
 *               place of node q and Q chunks (2(Q-1) steps), then each
 *               leader sends the result to all its members (one step,
 *               COPY; none when G = 1).  (G-1) + 2(Q-1) + [G > 1] steps:
 *               46 for P = 256, G = 16 (the paper's §4.2 counts 74 by a
 *               formula our copy of it lost).  hier:1 is `ring`
 *               transfer for transfer, hier:P is `sequential`.  The APS
 *               paper, §4.2.
 *   hier-ring:G the same three stages with every step moving one chunk
 *               per link, as a ring step does (the paper: "each step
 *               transfers the same amount of data"); groups, members
 *               m = 0..G-1 (node q*G + m) and leaders as in hier, chunk c
 *               of a group = [floor(c*n/G), floor((c+1)*n/G)).  In each
 *               group: a ring reduce-scatter, step s (0..G-2) member m
 *               sends chunk (m - s) mod G to member m+1 mod G, which adds
 *               it (member m then holds the group's sum of chunk
 *               (m+1) mod G); then step G-1+t (t = 0..G-2) member t+1
 *               sends chunk (t+2) mod G to the leader (COPY).  Then the
 *               leaders' ring as in hier, from step 2(G-1).  Then, from
 *               step S = 2(G-1) + 2(Q-1), in each group: step S+t the
 *               leader sends chunk (t+2) mod G to member t+1 (COPY), and
 *               a ring all-gather, step S+G-1+s member m sends chunk
 *               (m + 1 - s) mod G to member m+1 mod G (COPY; the leader
 *               receives too).  4(G-1) + 2(Q-1) steps: 90 for P = 256,
 *               G = 16 (see fplab-allreduce(1) on the paper's 74).
 *               hier-ring:1 is `ring` transfer for transfer.
 * P must be >= 1; hier and hier-ring need G >= 1 dividing P.  Transfers of empty
 * ranges (ring chunks when n < P) are left out; the step numbers and
 * counts stay as stated.  Within a step transfers are sorted by src,
 * then dst, and in every schedule here no node receives twice in one
 * step and no transfer reads elements that another transfer of the same
 * step writes: the start-of-step snapshot costs no copy.
 *
 * ------------------------------------------------------------ rounding
 * Before the first step every node's buffer is rounded into the
 * communication format (the cast to low precision before sending; with
 * scaling, the scaled value rounded once: fpl_ar_round_cast).  Each node
 * has its own random stream, fpl_state_fork(st, &node, i) at st's
 * position on entry: the rounding of element e at step s on node i uses
 * that node's draw index (2*s + 1) * n + e for the send and
 * (2*s + 2) * n + e for the add, and draw e for the initial cast; a node
 * rounds only what it sends and what it adds, so a rank of an MPI run
 * makes the same draws.  A node that sends the same elements to several
 * receivers in one step (a broadcast) rounds them once (the same draws
 * would give the same bits anyway) and its flags are counted once.  A
 * COPY stores the received value as it is: so when acc is wider than
 * comm, the node that reduced a chunk keeps its acc value while the
 * others hold it rounded into comm, and nodes_agree is 0.
 * Afterwards st->counter advances by 1, and the flags of every rounding
 * of every node are OR-ed into st->flags and counted in st->count (as
 * in the report).
 *
 * ------------------------------------------------------------ block formats
 * With comm_is_block, every rounding into comm above becomes a block
 * quantize-dequantize (fpl_block_round, mode comm_rnd) of the elements
 * it covers as one 1-D tensor, blocks counted from its first element:
 * the initial cast of a node's whole buffer (blocks from element 0), and
 * each send of [lo, hi) (blocks from lo: the chunk a node sends carries
 * its own scales).  Element j of such a call takes the draw it would take
 * in a plain format (the index above for element lo + j).  Scaling must
 * be none (a block format scales itself; loss and APS are FPL_EINVAL);
 * keep_fp32 layers ignore the block format.  bytes_sent counts, per
 * transfer, ceil((hi - lo) * elem bits + blocks * scale bits [+ 32 for a
 * tensor scale]) / 8) bytes: the codes and scales bit-packed, as
 * fpl_block_bits counts them (plain formats count whole bytes per value).
 * When a chunk boundary is not a multiple of the block size the send's
 * blocks differ from the cast's, and a value may be rounded twice.
 *
 * ------------------------------------------------------------ memory
 * The simulation holds P private buffers: P * n * 8 bytes (8 GiB for
 * P = 1024 and n = 2^20), plus O(P) for states and O(threads) scratch;
 * the schedule itself holds up to 2(P-1)P transfers of 40 bytes (80 MB
 * for a ring on 1024 nodes).
 */
#ifndef FPLAB_ALLREDUCE_H
#define FPLAB_ALLREDUCE_H

#include <stddef.h>
#include <stdint.h>

#include <fplab/block.h>
#include <fplab/export.h>
#include <fplab/format.h>
#include <fplab/state.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum fpl_ar_algo {
	FPL_AR_SEQUENTIAL = 0,
	FPL_AR_RING,
	FPL_AR_TREE,
	FPL_AR_HIER,
	FPL_AR_HIER_RING,
	FPL_AR_COUNT
} fpl_ar_algo;

typedef enum fpl_ar_op { FPL_AR_ADD = 0, FPL_AR_COPY } fpl_ar_op;

typedef struct fpl_ar_xfer {
	uint32_t step;
	uint32_t src, dst;	/* nodes */
	uint64_t lo, hi;	/* elements [lo, hi) */
	fpl_ar_op op;
} fpl_ar_xfer;

typedef struct fpl_ar_schedule {
	fpl_ar_algo algo;
	uint32_t nodes, group;	/* group: hier and hier-ring only */
	uint64_t n;		/* elements per node */
	uint32_t steps;
	fpl_ar_xfer *x;		/* sorted by step, then src */
	size_t nx;
} fpl_ar_schedule;

/* "sequential", "ring", "tree", "hier", "hier-ring"; parse accepts them
 * (0 or FPL_ENOTFOUND).  grouped: 1 for the schedules that take a group
 * G (hier, hier-ring), 0 otherwise. */
FPL_API const char *fpl_ar_algo_name(fpl_ar_algo a);
FPL_API int fpl_ar_algo_parse(const char *s, fpl_ar_algo *a);
FPL_API int fpl_ar_algo_grouped(fpl_ar_algo a);

/* Build the schedule of `algo` for `nodes` nodes of n elements (group:
 * hier's G, ignored otherwise).  0, FPL_EINVAL (nodes 0, a group that
 * does not divide nodes) or FPL_ENOMEM. */
FPL_API int fpl_ar_schedule_build(fpl_ar_schedule *s, fpl_ar_algo algo, uint32_t nodes,
				  uint32_t group, uint64_t n);
FPL_API void fpl_ar_schedule_release(fpl_ar_schedule *s);

/* Scaling of a layer before the cast (APS paper, Algorithm 1). */
typedef enum fpl_ar_scaling {
	FPL_AR_SCALE_NONE = 0,
	FPL_AR_SCALE_LOSS,	/* the cast is fpl_mul(comm, g, loss_scale): the exact
				 * product rounded once; the result divided by
				 * loss_scale in binary64 after */
	FPL_AR_SCALE_APS	/* per layer 2^k: the largest integer k such that
				 * P * max|g| * 2^k < comm.max, exactly (max over all
				 * nodes, itself all-reduced); k = 0 when max|g| is 0,
				 * inf or NaN.  The cast is g * 2^k rounded once (no
				 * binary64 intermediate); the result is multiplied by
				 * 2^-k in binary64 after (ldexp, one rounding) */
} fpl_ar_scaling;

typedef struct fpl_ar_config {
	fpl_ar_algo algo;
	uint32_t nodes, group;
	fpl_format comm, acc;	/* communication and accumulator formats */
	fpl_rnd comm_rnd, acc_rnd;
	fpl_ar_scaling scaling;
	double loss_scale;	/* FPL_AR_SCALE_LOSS: > 0 */
	int keep_fp32;		/* 1: this layer is reduced in binary32 (comm and acc
				 * fp32, ne, no scaling): the paper's last layer */
	int comm_is_block;	/* 1: the communication format is the block format
				 * comm_block (fplab/block.h); comm is then its
				 * element format.  See "block formats" above */
	fpl_block_format comm_block;
	int threads;		/* simulation threads; the bits do not depend on it */
} fpl_ar_config;

/* Defaults: ring, 1 node, group 1, comm = acc = fp32 in ne, no scaling,
 * loss_scale 1, keep_fp32 0, one thread. */
FPL_API void fpl_ar_config_init(fpl_ar_config *cfg);

/* What one all-reduce of one layer did. */
typedef struct fpl_ar_report {
	uint64_t n;		/* elements */
	uint32_t steps;		/* schedule steps (APS's exponent all-reduce not included) */
	double bits_per_value;	/* of the communication format as sent: nbits of a plain
				 * format (32 with keep_fp32); a block format's
				 * fpl_block_bits of the layer as one 1-D tensor of n */
	uint64_t bytes_sent;	/* by the busiest node: the values of its transfers (one
				 * message per receiver) as packed codes of the comm format,
				 * ceil(bits/8) bytes each (4 with keep_fp32), plus 1 byte
				 * for APS's exponent all-reduce (the paper's cost; see
				 * fpl_ar_aps_shift) */
	int scale_log2;		/* the APS shift k (0 otherwise) */
	/* errors of node 0's result r (after scaling back, as in `out`)
	 * against the exact sum e of the inputs as given (before scaling and
	 * cast), over the rel_n elements with e finite and nonzero; r - e and
	 * its ratio to e computed exactly and rounded once
	 * (fpl_exact_relerr), their sum exactly.  An r that is NaN or
	 * infinite there counts as relative error +inf (so avg_rel and
	 * max_rel are +inf, never NaN); 0 when rel_n = 0. */
	double avg_rel;		/* mean |r - e| / |e|: the paper's Eq. 5, whose formula
				 * our copy lost; this is its "average relative error" */
	double max_rel;
	uint64_t rel_n;
	double l1_rel;		/* sum |r - e| / sum |e| over the same elements (each
				 * |r - e| rounded once, the sums exact): a steadier
				 * figure than avg_rel, whose terms explode where the
				 * exact sum nearly cancels */
	/* events over all n elements of node 0's result: NaN, +-inf, +-0
	 * with e != 0; and the engine's flag counts over every rounding of
	 * every node (each send counted once per step, as above) */
	uint64_t nan, inf, became_zero;
	uint64_t count[FPL_NFLAGS];
	int nodes_agree;	/* 1 when every node ends with node 0's bits */
} fpl_ar_report;

/*
 * All-reduce one layer: g[i] points to node i's n values (binary64; read
 * only); out (n values, overlapping no g[i]) receives node 0's result,
 * after scaling back.
 * The report (may be NULL) as above.  Returns 0, FPL_EINVAL (NULL
 * pointers with n > 0, a bad config: nodes 0, group, mode out of range,
 * loss_scale not finite and > 0, algo) or FPL_ENOMEM; on error neither
 * out nor st is touched.  The bits of out and of the report do not
 * depend on cfg->threads.
 */
FPL_API int fpl_allreduce(double *out, fpl_ar_report *rep, const fpl_ar_config *cfg,
			  const double *const *g, size_t n, fpl_state *st);

/*
 * The error half of a report, for a result computed elsewhere (an MPI
 * run): rel_n, avg_rel, max_rel, l1_rel, nan, inf and became_zero of
 * out (node 0's n values after scaling back) against the exact sum of
 * g[0..P-1], exactly as fpl_allreduce computes them; the other fields
 * are not touched.  threads as cfg->threads (the bits do not depend on
 * it).  0, FPL_EINVAL (NULL pointers with n > 0, P = 0) or FPL_ENOMEM.
 */
FPL_API int fpl_ar_report_errors(fpl_ar_report *rep, const double *out,
				 const double *const *g, uint32_t P, size_t n, int threads);

/*
 * The pieces the MPI runner needs to reproduce fpl_allreduce on one
 * rank (no hidden state); fpl_allreduce itself is written with them.
 * `node` is the rank's state, fpl_state_fork(st, node, rank); the draw
 * indices are the explicit ones above: node->counter is neither read nor
 * changed; the flags of each rounding are OR-ed into node->flags and
 * counted in node->count.  x, y, g, dst and recv point at element lo
 * (entry j is element lo + j).  With cfg->keep_fp32 comm and acc are
 * binary32 in ne and there is no scaling.
 *
 * fpl_ar_aps_shift: the APS k of a layer from max|g| over all nodes (the
 * rank all-reduces its local max|g| with MPI_MAX on binary64, which is
 * exact); 0 for other scalings, keep_fp32, or a global max that is 0,
 * inf or NaN.  The paper all-reduces only the 8-bit exponent; k here
 * uses the whole maximum, so a rank must all-reduce the binary64 value
 * to reproduce it, though the report counts the paper's 1 byte.
 * fpl_ar_round_cast: the initial cast, y[j] = g[j] scaled (none: as is;
 * loss: times loss_scale; APS: times 2^shift) rounded once into comm,
 * draw lo + j; zeros, infinities and NaNs are not scaled (no NaN comes
 * from the scaling itself).
 * fpl_ar_round_send: y[j] = x[j] rounded into comm, draw
 * (2*step + 1) * n + lo + j.
 * fpl_ar_round_add: dst[j] = dst[j] + recv[j] rounded into acc, draw
 * (2*step + 2) * n + lo + j.
 */
FPL_API int fpl_ar_aps_shift(const fpl_ar_config *cfg, double global_max_abs);
FPL_API void fpl_ar_round_cast(double *y, const double *g, size_t len, uint64_t lo, int shift,
			       const fpl_ar_config *cfg, fpl_state *node);
FPL_API void fpl_ar_round_send(double *y, const double *x, size_t len, uint64_t lo,
			       uint32_t step, const fpl_ar_config *cfg, uint64_t n,
			       fpl_state *node);
FPL_API void fpl_ar_round_add(double *dst, const double *recv, size_t len, uint64_t lo,
			      uint32_t step, const fpl_ar_config *cfg, uint64_t n,
			      fpl_state *node);

#ifdef __cplusplus
}
#endif
#endif
