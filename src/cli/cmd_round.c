/* SPDX-License-Identifier: MIT */
/*
 * cmd_round.c - `fplab round`: round numbers from files or stdin into a
 * format, as CPFloat's cpfloat() does for a MATLAB array.
 *
 * Invariant: values are rounded in chunks of at most CHUNK elements, so
 * memory is bounded whatever the input size, and element j of the whole
 * input uses random draw j (the state's counter carries over from chunk
 * to chunk): results do not depend on the chunking.  Every number is
 * rounded once: binary64 values through fpl_round_array, and a text
 * number binary64 cannot hold (0.1) from its exact value through
 * fpl_round_parts.
 *
 * A sweep (-f and -r comma lists) is a grid of jobs, one per combination,
 * each with its own state (counter from 0, so each job's bits are those
 * of the same command run alone).  The input is read once; every chunk
 * is rounded by every job, the jobs spread over the threads.  A sweep
 * writes no values, only its report, one row per job.
 */
#include <pthread.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/cli.h"

#define CHUNK 65536	/* elements per fpl_round_array call */
#define MAX_THREADS 64	/* threads of a sweep */

static const char round_usage[] =
	"usage: fplab round " CLI_ROUND_SYNOPSIS "\n"
	"    [--in text|f64|f32|f16|bf16|npy|codes] [--dtype DTYPE]\n"
	"    [--out text|hex|bits|f64|f32|npy|npz|safetensors] [--out-dtype DTYPE]\n"
	"    [-o FILE] [--no-values] [--flags] [--stats] [--backend emu|native|both]\n"
	"    [--tsv|--json|--ndjson] [FILE...]\n";

enum { OPT_IN = CLI_OPT_CMD, OPT_DTYPE, OPT_OUT, OPT_STATS, OPT_OUT_DTYPE, OPT_NO_VALUES,
       OPT_FLAGS };

static struct round_opts {
	struct cli_round ro;
	enum cli_in_kind in;
	fpl_dtype dtype;	/* --dtype: what an .npy of raw codes holds */
	enum cli_out_kind out;
	int out_set;		/* --out given (else from -o's extension) */
	fpl_dtype out_dtype;	/* --out-dtype: .npy element type */
	const char *output;
	int stats;
	int no_values;		/* --no-values */
	int flags;		/* --flags: one result per line with its flags */
	enum cli_report report;
	enum cli_backend backend;	/* --backend */
} opt;

/* One combination of a sweep (a single one without lists). */
struct job {
	struct cli_round ro;
	struct cli_errstats es;
	fpl_block_stats bs;	/* a block format's events */
	uint64_t btensors;	/* tensors it rounded (one tensor scale each) */
};

static struct cli_grid grid;
static struct job *jobs;
static struct cli_round_native rnat;	/* --backend native|both */
static double emu_seconds;		/* --backend both: the engine's time */
static unsigned *flagbuf;	/* --flags: per-result flags of a chunk */

/* The errors of a chunk; an inexact text number (listed in inx) is
 * compared as the number itself, not its nearest binary64 x[i]. */
static void note_errors(struct job *jb, const double *x, const double *y, size_t n,
			const struct cli_inexact_list *inx)
{
	size_t i, k = 0;

	for (i = 0; i < n; i++) {
		if (inx && k < inx->n && inx->v[k].pos == i)
			cli_errstats_add_rel(&jb->es, x[i], y[i],
					     fpl_wide_relerr(&inx->v[k++].w, y[i]));
		else
			cli_errstats_add(&jb->es, x[i], y[i]);
	}
}

/*
 * Round x[0..n) into y.  The numbers listed in `inx` (read from text,
 * binary64 cannot hold them; x has their nearest binary64) are rounded
 * from their exact value instead, so that a decimal is rounded once.
 * Element i uses draw counter + i either way: the scalar calls advance
 * the counter as the array call does, and return the same bits.
 */
static int job_chunk(struct job *jb, double *y, const double *x, size_t n,
		     const struct cli_inexact_list *inx, unsigned *fl)
{
	const fpl_format *f = &jb->ro.fmt;
	fpl_state *st = &jb->ro.st;
	size_t i, k = 0;
	double t0 = cli_now();
	int rc;

	if (jb->ro.is_block)	/* it rounds whole tensors on its own (block_sweep) */
		return 0;
	if (rnat.be != CLI_BACKEND_EMU && inx && inx->n)
		return error("input %llu: a decimal that binary64 cannot hold is not a binary32 "
			     "value: the native conversion takes binary32 inputs",
			     (unsigned long long)(jb->es.n + inx->v[0].pos + 1));
	if (rnat.be == CLI_BACKEND_NATIVE) {
		if (cli_round_native_chunk(&rnat, x, y, n))
			return -1;
		jb->es.n += n;
		return 0;
	}
	if ((!inx || !inx->n) && !fl) {
		rc = fpl_round_array(f, y, x, n, jb->ro.rnd, st);
		if (rc)
			return error("rounding failed: %s", fpl_strerror(rc));
	} else {
		/* --flags: the scalar calls raise each result's flags alone */
		unsigned sticky = st->flags;

		for (i = 0; i < n; i++) {
			st->flags = 0;
			if (inx && k < inx->n && inx->v[k].pos == i)
				y[i] = fpl_round_wide(f, &inx->v[k++].w, jb->ro.rnd, st);
			else
				y[i] = fpl_round(f, x[i], jb->ro.rnd, st);
			if (fl)
				fl[i] = st->flags;
			sticky |= st->flags;
		}
		st->flags = sticky;
	}
	if (rnat.be == CLI_BACKEND_BOTH) {
		emu_seconds += cli_now() - t0;
		if (cli_round_native_chunk(&rnat, x, y, n))
			return -1;
	}
	if (opt.stats)
		note_errors(jb, x, y, n, inx);
	else
		jb->es.n += n;
	return 0;
}

/* The single job of a run that writes values. */
static int round_chunk(double *y, const double *x, size_t n, const struct cli_inexact_list *inx)
{
	return job_chunk(&jobs[0], y, x, n, inx, opt.flags ? flagbuf : NULL);
}

/* One result as text, with its flags under --flags. */
static void put_value(FILE *out, double y, unsigned fl, int sep)
{
	char s[CLI_VALUE_MAX], fs[96];

	fputs(cli_value_str(s, y, opt.out, &jobs[0].ro.fmt), out);
	if (opt.flags) {
		fputc(' ', out);
		fputs(cli_flag_names(fs, sizeof fs, fl), out);
		sep = '\n';
	}
	fputc(sep, out);
}

/* Text in, text out: keep the line structure (one output line per input
 * line that holds numbers). */
static int round_lines(const char *path, FILE *out, double *x, double *y)
{
	struct cli_text t;
	size_t n, i;
	int rc;

	if (cli_text_open(&t, path))
		return -1;
	while ((rc = cli_text_line(&t, x, CHUNK, &n)) > 0) {
		if (round_chunk(y, x, n, &t.inexact)) {
			rc = -1;
			break;
		}
		/* a line longer than CHUNK numbers comes in pieces */
		for (i = 0; i < n; i++)
			put_value(out, y[i], flagbuf[i], i + 1 < n || t.partial ? ' ' : '\n');
	}
	cli_text_release(&t);
	return rc;
}

/*
 * A column-major tensor to a flat output (text, raw): rounded in storage
 * order (draws counter + storage index), written in C (logical) order,
 * as numpy's a.ravel() or a.tofile() give it.  Held in memory whole.
 */
static int round_fortran(struct cli_reader *r, struct cli_writer *w)
{
	uint64_t n = r->info->count;
	double *x, *y, *z;
	size_t got, k = 0;
	int rc = 0;

	if (n > SIZE_MAX / 8 / 3)
		return error("'%s': tensor too large to reorder", r->name);
	x = malloc((size_t)n * 8 + 1);
	y = malloc((size_t)n * 8 + 1);
	z = malloc((size_t)n * 8 + 1);
	if (!x || !y || !z)
		rc = error("out of memory");
	while (!rc && k < n) {
		size_t want = n - k < CHUNK ? (size_t)(n - k) : CHUNK;

		rc = cli_reader_read(r, x + k, want, &got);
		if (!rc && !got)
			rc = error("'%s': truncated tensor", r->name);
		if (!rc)
			rc = round_chunk(y + k, x + k, got, &r->inexact);
		k += got;
	}
	if (!rc) {
		cli_fortran_to_c(z, y, r->info->ndim, r->info->shape);
		rc = cli_writer_put(w, z, (size_t)n);
	}
	free(x);
	free(y);
	free(z);
	return rc;
}

/* The dtype a tensor output holds for input tensor ti: --out-dtype, else
 * the input's own, but binary64 for an integer tensor (rounded values are
 * not integers of its dtype), as reduce -o writes. */
static fpl_dtype out_dtype_for(const fpl_tensor_info *ti)
{
	if (opt.out_dtype == FPL_DT_UNKNOWN && ti && fpl_dtype_is_int(ti->dtype))
		return FPL_DT_F64;
	/* a block format's values are products (element x scale x tensor
	 * scale: NVFP4's need up to 30 bits) that the input's dtype may not
	 * hold: binary64 unless --out-dtype says otherwise */
	if (opt.out_dtype == FPL_DT_UNKNOWN && ti && grid.n && grid.ro[0].is_block)
		return FPL_DT_F64;
	return opt.out_dtype;
}

static int writer_tensor(void *w, const fpl_tensor_info *ti)
{
	return cli_writer_tensor(w, ti, out_dtype_for(ti));
}

/* Whether some tensor of tf has a Fortran order that matters. */
static int has_fortran(const fpl_tensor_file *tf)
{
	size_t i;

	for (i = 0; i < fpl_tensor_count(tf); i++)
		if (fpl_tensor_get(tf, i)->fortran_order && fpl_tensor_get(tf, i)->ndim > 1)
			return 1;
	return 0;
}

/* Any input, values streamed through the writer. */
static int round_stream(const char *path, struct cli_writer *w, double *x, double *y)
{
	struct cli_reader r;
	size_t got;
	int rc = 0;

	if (cli_reader_open(&r, path, opt.in, &jobs[0].ro.fmt, opt.dtype))
		return -1;
	/* each tensor's name, shape, storage order and dtype go to a tensor
	 * output (.npy, .npz, .safetensors) */
	if (cli_writer_tensor(w, r.info, out_dtype_for(r.info))) {
		cli_reader_release(&r);
		return -1;
	}
	r.on_tensor = writer_tensor;
	r.on_tensor_ctx = w;
	if (r.info && w->kind < CLI_OUT_NPY && has_fortran(r.tf)) {
		if (fpl_tensor_count(r.tf) == 1)
			rc = round_fortran(&r, w);
		else
			rc = error("'%s' holds Fortran-order tensors: a flat --out would lose their "
				   "order; use --out npz or safetensors", path);
		cli_reader_release(&r);
		return rc;
	}
	for (;;) {
		rc = cli_reader_read(&r, x, CHUNK, &got);
		if (rc || !got)
			break;
		rc = round_chunk(y, x, got, &r.inexact);
		if (!rc)
			rc = cli_writer_put(w, y, got);
		if (rc)
			break;
	}
	cli_reader_release(&r);
	return rc;
}

/* The element count of a single input known before reading, for the npy
 * header; UINT64_MAX when unknown (the writer then spools). */
static uint64_t known_count(int nfiles, char **files)
{
	struct stat sb;
	size_t w;

	if (nfiles != 1 || !strcmp(files[0], "-"))
		return UINT64_MAX;
	switch (opt.in) {
	case CLI_IN_F64: w = 8; break;
	case CLI_IN_F32: w = 4; break;
	case CLI_IN_F16: case CLI_IN_BF16: w = 2; break;
	default: return UINT64_MAX;
	}
	if (stat(files[0], &sb) || !S_ISREG(sb.st_mode) || (uint64_t)sb.st_size % w)
		return UINT64_MAX;
	return (uint64_t)sb.st_size / w;
}

/* ------------------------------------------------- block formats */
/*
 * A block format (fplab/block.h) scales each block by its own amax, so it
 * rounds whole tensors: each tensor of a tensor file with its shape, and
 * the values of a text or raw input as one 1-D tensor.  The tensor is
 * held in memory (not streamed in chunks as a plain format is); element j
 * of the run still takes draw j.  A decimal of text that binary64 cannot
 * hold is read as its nearest binary64.
 */
static struct job *bjob;	/* the block format's job the block path runs */
static uint64_t flat_inputs;	/* text and raw inputs packed so far (arr_N) */
static const char *packing;	/* --out-dtype naming a block format (packed output) */
static int packed_tensor(struct job *jb, const char *name, const double *x, size_t n,
			 const size_t *dims, int nd);	/* tensors rounded (one tensor scale each with ts) */

static int block_tensor(struct job *jb, double *y, const double *x, size_t n,
			const size_t *dims, int nd)
{
	int rc = fpl_block_round(&jb->ro.block, y, x, dims, nd, jb->ro.rnd, &jb->ro.st, &jb->bs);

	if (rc)
		return error("block rounding failed: %s", fpl_strerror(rc));
	jb->btensors++;
	if (opt.stats)
		note_errors(jb, x, y, n, NULL);
	else
		jb->es.n += n;
	return 0;
}

/* Room for n values in *x and *y. */
static int block_room(double **x, double **y, size_t *cap, size_t n)
{
	double *a, *b;

	if (n <= *cap)
		return 0;
	if (n > SIZE_MAX / 16)
		return error("input too large to hold in memory");
	a = realloc(*x, n * sizeof *a);
	if (a)
		*x = a;
	b = a ? realloc(*y, n * sizeof *b) : NULL;
	if (b)
		*y = b;
	if (!a || !b)
		return error("out of memory");
	*cap = n;
	return 0;
}

/* One tensor of a tensor file, whose first value is `first`: held whole,
 * quantized in its logical (C) order, a Fortran-order tensor reordered
 * first (its blocks run along its last axis as numpy shows it, the draws
 * of sp by C-order index). */
static int block_one(struct cli_reader *r, struct cli_writer *w, double first, double **x,
		     double **y, size_t *cap)
{
	const fpl_tensor_info *ti = r->info;
	size_t dims[FPL_BLOCK_MAX_DIMS], n = 1, got;
	int i, nd = ti->ndim ? ti->ndim : 1, fortran = ti->fortran_order && ti->ndim > 1;

	if (ti->ndim > FPL_BLOCK_MAX_DIMS)
		return error("'%s': tensor '%s' has %d axes; block formats take at most %d",
			     r->name, ti->name, ti->ndim, FPL_BLOCK_MAX_DIMS);
	dims[0] = 1;
	for (i = 0; i < ti->ndim; i++)
		dims[i] = (size_t)ti->shape[i];
	if (ti->count > SIZE_MAX / 16 || block_room(x, y, cap, (size_t)ti->count))
		return ti->count > SIZE_MAX / 16 ? error("tensor too large") : -1;
	(*x)[0] = first;
	while (n < ti->count) {
		if (cli_reader_read(r, *x + n, (size_t)ti->count - n, &got))
			return -1;
		if (!got)
			return error("'%s': truncated tensor", r->name);
		n += got;
	}
	if (fortran) {	/* to C order: the blocks run along the last axis */
		double *t = *x;

		cli_fortran_to_c(*y, *x, ti->ndim, ti->shape);
		*x = *y;
		*y = t;
	}
	if (packing)
		return packed_tensor(bjob, ti->name, *x, n, dims, nd);
	if (block_tensor(bjob, *y, *x, n, dims, nd))
		return -1;
	/* a tensor output takes the values in storage order (its header
	 * keeps the Fortran order; safetensors reorders them), text in C
	 * order as numpy's ravel() gives them */
	if (fortran && w && w->kind >= CLI_OUT_NPY) {
		cli_c_to_fortran(*x, *y, ti->ndim, ti->shape);
		return cli_writer_put(w, *x, n);
	}
	return w ? cli_writer_put(w, *y, n) : 0;
}

/* Every tensor of a file (or its values as one 1-D tensor), to w or
 * (w NULL) to the statistics only. */
static int round_block_file(const char *path, struct cli_writer *w)
{
	struct cli_reader r;
	double *x = NULL, *y = NULL, first;
	size_t cap = 0, n = 0, got;
	int rc = 0;

	if (cli_reader_open(&r, path, opt.in, &jobs[0].ro.fmt, opt.dtype))
		return -1;
	if (w && cli_writer_tensor(w, r.info, out_dtype_for(r.info))) {
		cli_reader_release(&r);
		return -1;
	}
	if (w) {
		r.on_tensor = writer_tensor;
		r.on_tensor_ctx = w;
	}
	if (!r.info) {		/* text or raw: one 1-D tensor */
		while (!(rc = block_room(&x, &y, &cap, n + CHUNK))
		       && !(rc = cli_reader_read(&r, x + n, CHUNK, &got)) && got)
			n += got;
		if (!rc && n && packing) {
			char name[32];

			snprintf(name, sizeof name, "arr_%llu", (unsigned long long)flat_inputs++);
			rc = packed_tensor(bjob, name, x, n, &n, 1);
		} else if (!rc && n) {
			rc = block_tensor(bjob, y, x, n, &n, 1);
		}
		if (!rc && n && w)
			rc = cli_writer_put(w, y, n);
	} else {
		while (!(rc = cli_reader_read(&r, &first, 1, &got)) && got)
			if ((rc = block_one(&r, w, first, &x, &y, &cap)))
				break;
	}
	cli_reader_release(&r);
	free(x);
	free(y);
	return rc;
}

/* ------------------------------------------- packed block output */
/*
 * --out-dtype BLOCK (the block format of -f): instead of values, per input
 * tensor NAME the tensors NAME.codes (element codes, packed as
 * fpl_block_pack does: fp4 two per byte, low nibble first), NAME.scales
 * (scale codes, one per block, shaped as fpl_block_layout says) and, with
 * a tensor scale, NAME.tensor_scale (float32, shape (1,)); numpy reads
 * them as uint8 (or the unsigned type of the code's width).  A text or
 * raw input is named arr_0, arr_1, ... by file.  The tensors are held
 * until the end and written at once (.safetensors needs its header
 * first).
 */
struct ptensor {
	fpl_tensor_info info;
	void *data;
	size_t bytes;
};
static struct ptensor *ptens;
static size_t nptens, ptcap;

static void ptensors_release(void)
{
	size_t i;

	for (i = 0; i < nptens; i++)
		free(ptens[i].data);
	free(ptens);
	ptens = NULL;
	nptens = ptcap = 0;
}

static fpl_dtype udtype(int bytes)
{
	return bytes == 1 ? FPL_DT_U8 : bytes == 2 ? FPL_DT_U16 : bytes == 4 ? FPL_DT_U32 : FPL_DT_U64;
}

/* Take `data` (freed on failure too) as tensor NAME.SUFFIX. */
static int ptensor_add(const char *name, const char *suffix, fpl_dtype dt, int nd,
		       const size_t *dims, void *data, size_t bytes)
{
	struct ptensor *p;
	int i;

	if (nptens == ptcap) {
		size_t cap = ptcap ? 2 * ptcap : 8;
		struct ptensor *np = realloc(ptens, cap * sizeof *np);

		if (!np) {
			free(data);
			return error("out of memory");
		}
		ptens = np;
		ptcap = cap;
	}
	p = &ptens[nptens];
	memset(p, 0, sizeof *p);
	if ((size_t)snprintf(p->info.name, sizeof p->info.name, "%s.%s", name, suffix)
	    >= sizeof p->info.name) {
		free(data);
		return error("tensor name '%s' too long for its packed parts", name);
	}
	p->info.dtype = dt;
	p->info.ndim = nd;
	p->info.count = 1;
	for (i = 0; i < nd; i++) {
		p->info.shape[i] = dims[i];
		p->info.count *= dims[i];
	}
	p->data = data;
	p->bytes = bytes;
	nptens++;
	return 0;
}

/* Pack `codes` of nbits bits, shaped dims, as NAME.SUFFIX. */
static int ptensor_codes(const char *name, const char *suffix, const uint64_t *codes, int nbits,
			 const size_t *dims, int nd)
{
	size_t pd[FPL_BLOCK_MAX_DIMS], bytes = 1;
	int per, w = fpl_block_code_bytes(nbits, &per), i;
	void *buf;

	for (i = 0; i < nd; i++)
		pd[i] = dims[i];
	pd[nd - 1] = per == 2 ? (dims[nd - 1] + 1) / 2 : dims[nd - 1];
	for (i = 0; i < nd; i++)
		bytes *= pd[i];
	bytes *= (size_t)w;
	buf = malloc(bytes + 1);
	if (!buf)
		return error("out of memory");
	if (bytes && fpl_block_pack(buf, codes, nbits, dims, nd) != bytes) {
		free(buf);
		return error("packing the codes of '%s' failed", name);
	}
	return ptensor_add(name, suffix, udtype(w), nd, pd, buf, bytes);
}

/* Quantize one tensor into its packed parts (and the statistics of its
 * dequantized values, the same bits as -o FILE.npy writes). */
static int packed_tensor(struct job *jb, const char *name, const double *x, size_t n,
			 const size_t *dims, int nd)
{
	const fpl_block_format *b = &jb->ro.block;
	size_t nb, sd[FPL_BLOCK_MAX_DIMS];
	int snd, rc;
	uint64_t *codes = malloc(n * sizeof *codes + 8), *sc = NULL;
	double *y = malloc(n * sizeof *y + 8), ts = 1;

	rc = fpl_block_layout(b, dims, nd, &nb, sd, &snd);
	if (!rc && codes && y)
		sc = malloc(nb * sizeof *sc + 8);
	if (rc || !codes || !y || !sc) {
		rc = rc ? error("'%s': cannot block this shape", name) : error("out of memory");
	} else if ((rc = fpl_block_quantize(b, codes, sc, &ts, x, dims, nd, jb->ro.rnd, &jb->ro.st,
					    &jb->bs))
		   || (rc = fpl_block_dequantize(b, y, codes, sc, ts, dims, nd))) {
		rc = error("block quantization failed: %s", fpl_strerror(rc));
	} else {
		jb->btensors++;
		if (opt.stats)
			note_errors(jb, x, y, n, NULL);
		else
			jb->es.n += n;
		rc = ptensor_codes(name, "codes", codes, b->elem.nbits, dims, nd);
		if (!rc)
			rc = ptensor_codes(name, "scales", sc, b->scale.nbits, sd, snd);
		if (!rc && b->tensor_scale) {
			float *t = malloc(sizeof *t);
			size_t one = 1;

			if (!t)
				rc = error("out of memory");
			else {
				*t = (float)ts;	/* s is a binary32 value */
				rc = ptensor_add(name, "tensor_scale", FPL_DT_F32, 1, &one, t, sizeof *t);
			}
		}
	}
	free(codes);
	free(sc);
	free(y);
	return rc;
}

/* Write the packed tensors to -o (.safetensors or .npz), atomically. */
static int write_packed(void)
{
	struct cli_output o;
	fpl_tensor_info *infos;
	size_t i;
	int rc = 0;

	if (cli_output_open(&o, opt.output))
		return -1;
	if (opt.out == CLI_OUT_SAFETENSORS) {
		infos = malloc((nptens + 1) * sizeof *infos);
		if (!infos)
			return cli_output_close(&o, 0), error("out of memory");
		for (i = 0; i < nptens; i++)
			infos[i] = ptens[i].info;
		rc = fpl_safetensors_write_header(o.fp, nptens, infos);
		free(infos);
		if (rc)
			rc = error("'%s': %s (a tensor name repeated across inputs?)", opt.output,
				   fpl_strerror(rc));
		for (i = 0; !rc && i < nptens; i++)
			if (fwrite(ptens[i].data, 1, ptens[i].bytes, o.fp) != ptens[i].bytes)
				rc = cli_output_error(&o);
	} else {
		fpl_zip_writer *z = NULL;

		rc = fpl_zip_writer_open(&z, o.fp) ? error("out of memory") : 0;
		for (i = 0; !rc && i < nptens; i++) {
			char member[FPL_TENSOR_NAME_MAX + 8], *hb = NULL;
			size_t hl = 0;
			FILE *m = open_memstream(&hb, &hl);

			snprintf(member, sizeof member, "%s.npy", ptens[i].info.name);
			if (!m || fpl_npy_write_header_shape(m, ptens[i].info.dtype, ptens[i].info.ndim,
							     ptens[i].info.shape)
			    || fclose(m) || fpl_zip_member_begin(z, member)
			    || fpl_zip_member_write(z, hb, hl)
			    || fpl_zip_member_write(z, ptens[i].data, ptens[i].bytes)
			    || fpl_zip_member_end(z))
				rc = error("'%s': cannot write member '%s'", opt.output, member);
			free(hb);
		}
		if (z && fpl_zip_writer_close(z, !rc) && !rc)
			rc = cli_output_error(&o);
	}
	return cli_output_close(&o, !rc) || rc ? -1 : 0;
}

/* --------------------------------------------- packed block input */
/*
 * A tensor file holding NAME.codes beside NAME.scales (what --out-dtype
 * BLOCK writes) is read back under -f BLOCK: each pair is decoded to the
 * dequantized values (fpl_block_dequantize), written as tensor NAME; no
 * rounding happens.  fp4 codes come two per byte, so a row reads back with
 * an even length (2 x its bytes).  In an .npz the codes must be one byte
 * wide ('|u1', read as uint8).
 */
static int is_suffixed(const char *name, const char *suffix, size_t *base)
{
	size_t n = strlen(name), k = strlen(suffix);

	*base = n > k ? n - k : 0;
	return n > k && !strcmp(name + n - k, suffix);
}

/* Tensor `name` of tf, whole, as binary64 (NULL after a message). */
static double *read_named(fpl_tensor_file *tf, const char *path, const char *name, size_t *n)
{
	long i = fpl_tensor_find(tf, name);
	fpl_tensor_stream *ts = NULL;
	char err[1024] = "";
	double *v;
	size_t got, k = 0;

	if (i < 0) {
		error("'%s': packed codes without tensor '%s'", path, name);
		return NULL;
	}
	*n = (size_t)fpl_tensor_get(tf, (size_t)i)->count;
	v = malloc(*n * sizeof *v + 8);
	if (!v || fpl_tensor_stream_open(&ts, tf, (size_t)i, err, sizeof err)) {
		free(v);
		error("%s", err[0] ? err : "out of memory");
		return NULL;
	}
	while (k < *n && !fpl_tensor_stream_read(ts, v + k, *n - k, &got, err, sizeof err) && got)
		k += got;
	fpl_tensor_stream_close(ts);
	if (k < *n) {
		free(v);
		error("%s", err[0] ? err : "truncated tensor");
		return NULL;
	}
	return v;
}

/* Values (non-negative integers below 2^nbits) into codes. */
static int to_codes(uint64_t *c, const double *v, size_t n, int nbits, const char *path,
		    const char *name)
{
	size_t i;

	for (i = 0; i < n; i++) {
		if (!(v[i] >= 0 && v[i] < ldexp(1.0, nbits) && v[i] == floor(v[i])))
			return error("'%s': %s holds %g, not a code of %d bits", path, name, v[i],
				     nbits);
		c[i] = (uint64_t)v[i];
	}
	return 0;
}

/* Decode the pair NAME.codes / NAME.scales (codes tensor ci). */
static int unpack_one(fpl_tensor_file *tf, const char *path, const fpl_tensor_info *ci,
		      size_t base, struct cli_writer *w)
{
	const fpl_block_format *b = &bjob->ro.block;
	fpl_tensor_info info = *ci;
	char nm[FPL_TENSOR_NAME_MAX + 16];
	size_t dims[FPL_BLOCK_MAX_DIMS], n = 1, nv = 0, ns = 0, nb, nt, i;
	int per, nd = ci->ndim ? ci->ndim : 1, rc = -1;
	double *v = NULL, *sv = NULL, *y = NULL, ts = 1;
	uint64_t *codes = NULL, *sc = NULL, *bytes = NULL;
	unsigned char *pk = NULL;

	fpl_block_code_bytes(b->elem.nbits, &per);
	info.name[base] = 0;
	info.dtype = FPL_DT_F64;
	info.fortran_order = 0;
	if (ci->ndim > FPL_BLOCK_MAX_DIMS || ci->fortran_order)
		return error("'%s': %s: not a packed code tensor (too many axes or Fortran "
			     "order)", path, ci->name);
	dims[0] = 1;
	for (i = 0; i < (size_t)ci->ndim; i++)
		dims[i] = (size_t)ci->shape[i];
	dims[nd - 1] *= (size_t)per;	/* fp4: two codes per byte */
	for (i = 0; i < (size_t)nd; i++)
		n *= dims[i];
	info.ndim = nd;
	info.count = n;
	for (i = 0; i < (size_t)nd; i++)
		info.shape[i] = dims[i];
	snprintf(nm, sizeof nm, "%s.scales", info.name);
	if (fpl_block_layout(b, dims, nd, &nb, NULL, NULL))
		return error("'%s': %s: shape does not fit block format %s", path, ci->name, b->name);
	v = read_named(tf, path, ci->name, &nv);
	sv = v ? read_named(tf, path, nm, &ns) : NULL;
	codes = malloc(n * sizeof *codes + 8);
	bytes = malloc(nv * sizeof *bytes + 8);
	sc = malloc(ns * sizeof *sc + 8);
	pk = malloc(nv + 8);
	y = malloc(n * sizeof *y + 8);
	if (!v || !sv)
		goto out;	/* message printed */
	if (!codes || !bytes || !sc || !pk || !y) {
		error("out of memory");
		goto out;
	}
	if (ns != nb) {
		error("'%s': %s holds %zu scale codes; the blocks of %s under %s need %zu", path, nm,
		      ns, ci->name, b->name, nb);
		goto out;
	}
	if (per == 2) {	/* bytes of two nibbles each */
		if (to_codes(bytes, v, nv, 8, path, ci->name))
			goto out;
		for (i = 0; i < nv; i++)
			pk[i] = (unsigned char)bytes[i];
		if (fpl_block_unpack(codes, pk, nv, b->elem.nbits, dims, nd))
			goto out_bad;
	} else if (to_codes(codes, v, n, b->elem.nbits, path, ci->name)) {
		goto out;
	}
	if (to_codes(sc, sv, ns, b->scale.nbits, path, nm))
		goto out;
	if (b->tensor_scale) {
		double *t;

		snprintf(nm, sizeof nm, "%s.tensor_scale", info.name);
		t = read_named(tf, path, nm, &nt);
		if (!t || nt != 1) {
			if (t)
				error("'%s': %s holds %zu values, not 1", path, nm, nt);
			free(t);
			goto out;
		}
		ts = t[0];
		free(t);
	}
	if (fpl_block_dequantize(b, y, codes, sc, ts, dims, nd))
		goto out_bad;
	bjob->es.n += n;
	rc = w ? (cli_writer_tensor(w, &info, out_dtype_for(&info)) || cli_writer_put(w, y, n)
		  ? -1 : 0)
	       : 0;
	goto out;
out_bad:
	error("'%s': %s does not hold codes of %s", path, ci->name, b->name);
out:
	free(v);
	free(sv);
	free(codes);
	free(bytes);
	free(sc);
	free(pk);
	free(y);
	return rc;
}

/* The pairs NAME.codes / NAME.scales of the tensor file at path, opened
 * into *tf (NULL when it is none or unreadable so: 0 pairs). */
static size_t open_packed(const char *path, fpl_tensor_file **tf)
{
	fpl_tensor_opts o;
	char err[1024] = "", nm[FPL_TENSOR_NAME_MAX + 16];
	size_t i, base, n = strlen(path), pairs = 0;

	*tf = NULL;
	if (!strcmp(path, "-") || !cli_is_tensor_file(path))
		return 0;
	memset(&o, 0, sizeof o);
	if (n > 4 && !strcmp(path + n - 4, ".npz"))
		o.dtype = FPL_DT_U8;	/* '|u1' members: codes, read as uint8 */
	if (fpl_tensor_open(tf, path, &o, err, sizeof err))
		return 0;	/* not readable so: the plain path says why */
	for (i = 0; i < fpl_tensor_count(*tf); i++) {
		const char *name = fpl_tensor_get(*tf, i)->name;

		snprintf(nm, sizeof nm, "%s", name);
		if (is_suffixed(name, ".codes", &base)) {
			snprintf(nm + base, sizeof nm - base, ".scales");
			pairs += fpl_tensor_find(*tf, nm) >= 0;
		}
	}
	return pairs;
}

/* Decode every pair of a packed file; 1 when the file is not packed. */
static int unpack_file(const char *path, struct cli_writer *w)
{
	fpl_tensor_file *tf;
	size_t i, base, pairs = open_packed(path, &tf);
	int rc = 0;

	for (i = 0; pairs && !rc && i < fpl_tensor_count(tf); i++) {
		const fpl_tensor_info *ci = fpl_tensor_get(tf, i);

		if (is_suffixed(ci->name, ".codes", &base))
			rc = unpack_one(tf, path, ci, base, w);
	}
	if (tf)
		fpl_tensor_close(tf);
	return pairs ? rc : 1;
}

/* A file under a block format: packed pairs decoded, anything else
 * quantized. */
static int block_input(const char *path, struct cli_writer *w)
{
	int rc = packing ? 1 : unpack_file(path, w);

	return rc == 1 ? round_block_file(path, w) : rc;
}

/* What a block format does not do in round (usage error printed). */
static int block_limits(void)
{
	size_t j;
	int any = 0;

	for (j = 0; j < grid.n; j++)
		any |= grid.ro[j].is_block;

	if (packing && (grid.n != 1 || !grid.ro[0].is_block))
		return usage_error(round_usage, "--out-dtype %s: packed output needs -f naming "
				   "that block format (one)", packing);
	if (packing) {
		fpl_block_format pb;
		char a[2 * FPL_BLOCK_NAME_MAX], c[2 * FPL_BLOCK_NAME_MAX], err[256];

		if (fpl_block_parse(&pb, packing, err, sizeof err))
			return usage_error(round_usage, "--out-dtype: %s", err);
		fpl_block_spec(&pb, a, sizeof a);
		fpl_block_spec(&grid.ro[0].block, c, sizeof c);
		if (strcmp(a, c))
			return usage_error(round_usage, "--out-dtype %s: packed codes are those of "
					   "-f; give the same block format (got -f %s)", packing,
					   grid.ro[0].block.name);
		if (opt.out != CLI_OUT_SAFETENSORS && opt.out != CLI_OUT_NPZ)
			return usage_error(round_usage, "--out-dtype %s: packed codes and scales are "
					   "a pair of tensors: -o FILE.safetensors or FILE.npz",
					   packing);
	}
	if (!any)
		return 0;
	if (opt.flags)
		return usage_error(round_usage, "--flags: a block format's results are reported "
				   "per run (--stats), not per value");
	if (opt.backend != CLI_BACKEND_EMU)
		return usage_error(round_usage, "--backend: block formats have no native kernel");
	if (opt.out == CLI_OUT_BITS)
		return usage_error(round_usage, "--out bits: a block format's value is an element "
				   "code times its block's scale, not one code; for the codes "
				   "and scales write --out-dtype %s -o FILE.safetensors (or .npz)",
				   grid.ro[0].block.name);
	return 0;
}

/* --------------------------------------------------------- the sweep */
/* Chunk state shared by the threads of run_jobs. */
struct sweep_chunk {
	const double *x;
	size_t n;
	const struct cli_inexact_list *inx;
	int nthreads;
	double *y[MAX_THREADS];
	int rc[MAX_THREADS];
};

struct sweep_arg {
	struct sweep_chunk *c;
	int t;
};

/* Thread t rounds the chunk with jobs t, t + T, t + 2T, ... */
static void *sweep_thread(void *p)
{
	struct sweep_arg *a = p;
	struct sweep_chunk *c = a->c;
	size_t j;

	for (j = (size_t)a->t; j < grid.n && !c->rc[a->t]; j += (size_t)c->nthreads)
		c->rc[a->t] = job_chunk(&jobs[j], c->y[a->t], c->x, c->n, c->inx, NULL);
	return NULL;
}

/* Every job on one chunk.  The jobs are independent (own state, own
 * statistics), so which thread runs which changes no bit. */
static int run_jobs(struct sweep_chunk *c)
{
	pthread_t tid[MAX_THREADS];
	struct sweep_arg arg[MAX_THREADS];
	int started[MAX_THREADS] = { 0 };
	int t, rc = 0;

	for (t = 0; t < c->nthreads; t++) {
		arg[t].c = c;
		arg[t].t = t;
		c->rc[t] = 0;
		if (t && !pthread_create(&tid[t], NULL, sweep_thread, &arg[t]))
			started[t] = 1;
	}
	sweep_thread(&arg[0]);
	for (t = 1; t < c->nthreads; t++) {
		if (started[t])
			pthread_join(tid[t], NULL);
		else
			sweep_thread(&arg[t]);	/* no thread: run its share here */
	}
	for (t = 0; t < c->nthreads; t++)
		rc |= c->rc[t];
	return rc ? -1 : 0;
}

/* Statistics only: every input read once, each chunk through every job. */
static int sweep(char **files, int nfiles, int nthreads)
{
	struct sweep_chunk c;
	double *x = malloc(CHUNK * sizeof *x);
	int i, t, rc = 0;

	memset(&c, 0, sizeof c);
	c.nthreads = nthreads;
	for (t = 0; t < nthreads; t++)
		c.y[t] = malloc(CHUNK * sizeof *c.y[t]);
	for (t = 0; t < nthreads && x; t++)
		if (!c.y[t])
			x = (free(x), NULL);
	if (!x)
		rc = error("out of memory");
	for (i = 0; i < nfiles && !rc; i++) {
		struct cli_reader r;
		size_t got;

		if (cli_reader_open(&r, files[i], opt.in, &jobs[0].ro.fmt, opt.dtype)) {
			rc = -1;
			break;
		}
		while (!(rc = cli_reader_read(&r, x, CHUNK, &got)) && got) {
			c.x = x;
			c.n = got;
			c.inx = &r.inexact;
			rc = run_jobs(&c);
			if (rc)
				break;
		}
		cli_reader_release(&r);
	}
	for (t = 0; t < nthreads; t++)
		free(c.y[t]);
	free(x);
	return rc;
}

/* How many jobs have a plain format. */
static size_t plain_jobs(void)
{
	size_t j, k = 0;

	for (j = 0; j < grid.n; j++)
		k += !jobs[j].ro.is_block;
	return k;
}

/*
 * Statistics only, the block formats of the sweep: each reads the inputs
 * itself, whole tensors at a time (the plain formats share one pass,
 * sweep).  A packed input is decoded by the one block format it was
 * written in, so a sweep refuses one; stdin, read more than once, is
 * kept in a temporary file (files[i] then names it).
 */
static int block_sweep(char **files, int nfiles)
{
	static char spooled[32];
	size_t j, passes = plain_jobs() ? 1 : 0;
	int i, rc = 0;

	for (j = 0; j < grid.n; j++)
		passes += jobs[j].ro.is_block;
	/* stdin read more than once: kept in a temporary file */
	for (i = 0; i < nfiles && passes > 1; i++)
		if (!strcmp(files[i], "-")) {
			if (cli_stdin_spool(spooled, sizeof spooled))
				return -1;
			files[i] = spooled;
		}
	for (i = 0; i < nfiles && grid.n > 1 && passes; i++) {
		fpl_tensor_file *tf;
		size_t pairs = open_packed(files[i], &tf);

		if (tf)
			fpl_tensor_close(tf);
		if (pairs)
			return error("'%s' holds packed codes and scales, which only the block "
				     "format they were written in decodes: give that -f alone",
				     files[i]);
	}
	for (j = 0; j < grid.n && !rc; j++) {
		if (!jobs[j].ro.is_block)
			continue;
		bjob = &jobs[j];
		for (i = 0; i < nfiles && !rc; i++)
			rc = grid.n > 1 ? round_block_file(files[i], NULL)
					: block_input(files[i], NULL);
	}
	bjob = &jobs[0];
	return rc;
}

/* ---------------------------------------------------------- the report */
static const char *const id_cols[] = { "format", "mode", "n" };
#define NCOLS (3 + CLI_ERRSTATS_NCOLS + 1)
/* with a block format, its events after the others */
static const char *const block_cols[] = { "bits_per_value", "blocks", "amax_saturated",
					  "scale_clamped", "nan_blocks", "zero_blocks" };
#define NBLOCK_COLS 6

static const char *job_name(const struct job *jb)
{
	return jb->ro.is_block ? jb->ro.block.name : jb->ro.fmt.name;
}

/* bits per value of the run: scales over the elements rounded */
static double block_bits(const struct job *jb)
{
	const fpl_block_format *b = &jb->ro.block;

	if (!jb->ro.is_block)
		return jb->ro.fmt.nbits;
	if (!jb->bs.elements)
		return fpl_block_bits(b, NULL, 0);
	return b->elem.nbits + ((double)jb->bs.blocks * b->scale.nbits
				+ (b->tensor_scale ? 32.0 * (double)jb->btensors : 0.0))
				   / (double)jb->bs.elements;
}

/* The human summary of one job on stderr (values on stdout). */
static void print_summary(const struct job *jb)
{
	char a[CLI_VALUE_MAX], b[CLI_VALUE_MAX];
	uint64_t ev[CLI_ERRSTATS_NEVENTS];
	double err[CLI_ERRSTATS_NERRORS];
	int i;

	cli_errstats_values(&jb->es, jb->ro.st.count, ev, err);
	fprintf(stderr, "round: %llu values to %s, mode %s\n", (unsigned long long)jb->es.n,
		job_name(jb), fpl_rnd_name(jb->ro.rnd));
	for (i = 0; i < CLI_ERRSTATS_NEVENTS; i++)
		fprintf(stderr, "  %-14s %llu\n", cli_errstats_cols[i], (unsigned long long)ev[i]);
	for (i = 0; i < CLI_ERRSTATS_NERRORS; i++) {
		fprintf(stderr, "  %-14s %s", cli_errstats_cols[CLI_ERRSTATS_NEVENTS + i],
			isnan(err[i]) ? "-" : cli_shortest(a, err[i]));
		if (i == 2 && jb->es.rel_max > 0)
			fprintf(stderr, " (at %s)", cli_shortest(b, jb->es.worst));
		fputc('\n', stderr);
	}
	if (jb->ro.is_block) {
		const uint64_t bv[NBLOCK_COLS - 1] = { jb->bs.blocks, jb->bs.amax_saturated,
						       jb->bs.scale_range, jb->bs.nan_blocks,
						       jb->bs.zero_blocks };

		fprintf(stderr, "  %-14s %s\n", block_cols[0], cli_shortest(a, block_bits(jb)));
		for (i = 1; i < NBLOCK_COLS; i++)
			fprintf(stderr, "  %-14s %llu\n", block_cols[i],
				(unsigned long long)bv[i - 1]);
	}
}

/* One row per job: on stdout, or the text summary on stderr when values
 * went to stdout. */
static void print_report(int values_on_stdout)
{
	const char *cols[NCOLS + NBLOCK_COLS];
	struct cli_table t;
	size_t j;
	int blk = 0;

	for (j = 0; j < grid.n; j++)	/* the block columns when some job has them */
		blk |= jobs[j].ro.is_block;
	if (opt.report == CLI_REPORT_TEXT && values_on_stdout) {
		print_summary(&jobs[0]);
		return;
	}
	memcpy(cols, id_cols, sizeof id_cols);
	memcpy(cols + 3, cli_errstats_cols, sizeof cli_errstats_cols);
	cols[NCOLS - 1] = "worst_input";
	memcpy(cols + NCOLS, block_cols, sizeof block_cols);
	cli_table_begin(&t, stdout, opt.report, cols, NCOLS + (blk ? NBLOCK_COLS : 0));
	for (j = 0; j < grid.n; j++) {
		cli_table_str(&t, job_name(&jobs[j]));
		cli_table_str(&t, fpl_rnd_name(jobs[j].ro.rnd));
		cli_table_int(&t, (long long)jobs[j].es.n);
		cli_errstats_cells(&t, &jobs[j].es, jobs[j].ro.st.count);
		if (jobs[j].es.rel_n)
			cli_table_num(&t, jobs[j].es.worst);
		else
			cli_table_none(&t);
		if (blk) {
			cli_table_num(&t, block_bits(&jobs[j]));
			cli_table_int(&t, (long long)jobs[j].bs.blocks);
			cli_table_int(&t, (long long)jobs[j].bs.amax_saturated);
			cli_table_int(&t, (long long)jobs[j].bs.scale_range);
			cli_table_int(&t, (long long)jobs[j].bs.nan_blocks);
			cli_table_int(&t, (long long)jobs[j].bs.zero_blocks);
		}
	}
	cli_table_end(&t);
}

static int parse_args(int argc, char **argv)
{
	static const struct option longopts[] = {
		CLI_ROUND_LONGOPTS,
		CLI_REPORT_LONGOPTS,
		{ "in", required_argument, NULL, OPT_IN },
		{ "dtype", required_argument, NULL, OPT_DTYPE },
		{ "out", required_argument, NULL, OPT_OUT },
		{ "out-dtype", required_argument, NULL, OPT_OUT_DTYPE },
		{ "output", required_argument, NULL, 'o' },
		{ "stats", no_argument, NULL, OPT_STATS },
		{ "no-values", no_argument, NULL, OPT_NO_VALUES },
		{ "flags", no_argument, NULL, OPT_FLAGS },
		CLI_BACKEND_LONGOPT,
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	int c, rc;
	/* fresh state on every call: the fuzz harness runs commands in-process */
	memset(&opt, 0, sizeof opt);
	cli_text_dtype = FPL_DT_UNKNOWN;
	optind = 0;

	cli_round_init(&opt.ro);
	opt.ro.block_ok = 1;
	flat_inputs = 0;
	packing = NULL;
	while ((c = getopt_long(argc, argv, CLI_ROUND_SHORTOPTS "ho:", longopts, NULL)) != -1) {
		rc = cli_round_option(&opt.ro, c, optarg);
		if (rc < 0)
			return usage_error(round_usage, NULL);
		if (rc > 0 || cli_report_option(&opt.report, c))
			continue;
		switch (c) {
		case 'h':
			return -1;
		case CLI_OPT_BACKEND:
			if (cli_backend_parse(optarg, &opt.backend))
				return CLI_EXIT_USAGE;
			if (opt.backend == CLI_BACKEND_ONEDNN) {
				error("--backend onednn: round has no oneDNN kernel (dot and gemm "
				      "have)");
				return CLI_EXIT_USAGE;
			}
			break;
		case OPT_IN:
			if (cli_in_parse(optarg, &opt.in))
				return usage_error(round_usage, NULL);
			break;
		case OPT_DTYPE:
			if (cli_in_dtype_parse(optarg, &opt.dtype))
				return usage_error(round_usage, NULL);
			cli_text_dtype = opt.dtype;
			break;
		case OPT_OUT:
			if (cli_out_parse(optarg, &opt.out))
				return usage_error(round_usage, NULL);
			opt.out_set = 1;
			break;
		case OPT_OUT_DTYPE:
			if (fpl_block_is_spec(optarg)) {
				packing = optarg;	/* checked against -f below */
				break;
			}
			if (cli_dtype_parse(optarg, &opt.out_dtype))
				return usage_error(round_usage, NULL);
			break;
		case 'o':
			opt.output = optarg;
			break;
		case OPT_STATS:
			opt.stats = 1;
			break;
		case OPT_NO_VALUES:
			opt.no_values = 1;
			break;
		case OPT_FLAGS:
			opt.flags = 1;
			break;
		default:
			return usage_error(round_usage, NULL);
		}
	}
	if (opt.dtype != FPL_DT_UNKNOWN && opt.in != CLI_IN_NPY && opt.in != CLI_IN_TEXT)
		return usage_error(round_usage, "--dtype applies to tensor files (.npy, .npz of raw "
				   "codes), not to --in f64|f32|f16|bf16|codes, which say what "
				   "they hold");
	if (!opt.out_set)
		opt.out = cli_out_from_path(opt.output, opt.out);
	if (packing && !opt.ro.format_arg)
		opt.ro.format_arg = packing;	/* --out-dtype mxfp4 alone: -f mxfp4 */
	if (opt.out_dtype != FPL_DT_UNKNOWN && opt.out < CLI_OUT_NPY)
		return usage_error(round_usage, "--out-dtype applies to --out npy, npz and "
				   "safetensors only");
	if (opt.flags && opt.out > CLI_OUT_BITS)
		return usage_error(round_usage, "--flags prints a result and its flags per line: "
				   "--out text, hex or bits");
	rc = cli_round_grid(&opt.ro, &grid);
	if (rc == -2)
		return usage_error(round_usage, NULL);
	if (!rc && block_limits()) {
		cli_grid_release(&grid);
		return CLI_EXIT_USAGE;
	}
	return rc ? CLI_EXIT_FAIL : 0;
}

/* 1 when path names the null device (-o /dev/null: values to nowhere). */
static int is_null_device(const char *path)
{
	struct stat a, b;

	return path && !stat(path, &a) && !stat("/dev/null", &b) && S_ISCHR(a.st_mode) &&
	       a.st_rdev == b.st_rdev;
}

/* -o names a file (not stdout). */
static int output_is_file(void)
{
	return opt.output && strcmp(opt.output, "-");
}

/*
 * Where the values go.  A machine-readable report owns stdout: the values
 * go to -o FILE only.  A sweep has no single result: no values (-o is
 * refused unless it is /dev/null).  Returns 1 (write them), 0, or -1
 * after a usage message.
 */
static int want_values(void)
{
	int to_file = output_is_file();

	if (grid.n > 1) {
		if (to_file && !is_null_device(opt.output)) {
			usage_error(round_usage, "-o %s: a sweep of %zu combinations writes no "
				    "values, only its report; round one format and mode to write "
				    "them, or use --no-values", opt.output, grid.n);
			return -1;
		}
		if (opt.flags) {
			usage_error(round_usage, "--flags: a sweep writes no values");
			return -1;
		}
		return 0;
	}
	if (opt.no_values)
		return 0;
	if (opt.report != CLI_REPORT_TEXT && !to_file)
		return 0;
	return 1;
}

/* Threads of a sweep: --threads, else every online processor. */
static int sweep_threads(void)
{
	long cores = sysconf(_SC_NPROCESSORS_ONLN);
	long t = opt.ro.has_threads ? opt.ro.st.threads : cores;

	if (t > (long)grid.n)
		t = (long)grid.n;
	if (t > MAX_THREADS)
		t = MAX_THREADS;
	return t < 1 ? 1 : (int)t;
}

/* Round every file with the single job, values through the writer. */
static int write_values(char **files, int nfiles)
{
	struct cli_writer w;
	int i, rc = 0;
	int lines = opt.in == CLI_IN_TEXT && opt.out <= CLI_OUT_BITS;
	double *x = malloc(CHUNK * sizeof *x), *y = malloc(CHUNK * sizeof *y);

	flagbuf = calloc(CHUNK, sizeof *flagbuf);
	if (!x || !y || !flagbuf)
		rc = error("out of memory");
	else if (packing) {	/* the pairs of tensors, written at the end */
		for (i = 0; i < nfiles && !rc; i++)
			rc = round_block_file(files[i], NULL);
		rc = rc ? rc : write_packed();
		ptensors_release();
	} else if (cli_writer_open(&w, opt.output, opt.out, &jobs[0].ro.fmt,
				   known_count(nfiles, files))) {
		rc = -1;
	} else {
		/* --flags: one result per line whatever the input's layout */
		if (opt.flags)
			lines = 1;
		for (i = 0; i < nfiles && !rc; i++)
			rc = jobs[0].ro.is_block ? block_input(files[i], &w)
			     : lines && !cli_is_tensor_file(files[i])
				? round_lines(files[i], w.out.fp, x, y)
				: round_stream(files[i], &w, x, y);
		if (lines && !rc && ferror(w.out.fp))
			rc = cli_output_error(&w.out);
		rc = cli_writer_close(&w, !rc);
	}
	free(x);
	free(y);
	free(flagbuf);
	flagbuf = NULL;
	return rc;
}

int cmd_round(int argc, char **argv)
{
	static char *stdin_only[] = { "-" };
	char **files;
	int nfiles, rc, values;
	size_t j;

	rc = parse_args(argc, argv);
	if (rc < 0)
		return usage_help(round_usage);
	if (rc)
		return rc;
	values = want_values();
	if (values < 0) {
		cli_grid_release(&grid);
		return CLI_EXIT_USAGE;
	}
	if (opt.backend != CLI_BACKEND_EMU && (grid.n > 1 || opt.flags)) {
		const char *be = opt.backend == CLI_BACKEND_BOTH ? "both" : "native";
		size_t n = grid.n;

		cli_grid_release(&grid);
		if (n > 1)
			return usage_error(round_usage, "--backend %s converts into one format in "
					   "one mode, not a sweep of %zu", be, n);
		return usage_error(round_usage, "--backend %s: --flags: the native conversion "
				   "reports no flags", be);
	}
	/* a report beyond the values: --stats, --tsv/--json/--ndjson, a sweep */
	if (opt.report != CLI_REPORT_TEXT || grid.n > 1 || !values
	    || opt.backend != CLI_BACKEND_EMU)
		opt.stats = 1;
	files = argv + optind;
	nfiles = argc - optind;
	if (!nfiles) {
		files = stdin_only;
		nfiles = 1;
	}
	jobs = calloc(grid.n, sizeof *jobs);
	if (!jobs) {
		cli_grid_release(&grid);
		return error("out of memory"), CLI_EXIT_FAIL;
	}
	for (j = 0; j < grid.n; j++) {
		jobs[j].ro = grid.ro[j];
		fpl_block_stats_init(&jobs[j].bs);
	}
	bjob = &jobs[0];
	emu_seconds = 0;
	if (cli_round_native_setup(&rnat, opt.backend, &jobs[0].ro.fmt, jobs[0].ro.rnd, CHUNK)) {
		free(jobs);
		jobs = NULL;
		cli_grid_release(&grid);
		return CLI_EXIT_FAIL;
	}
	if (values) {
		rc = write_values(files, nfiles);
	} else {
		int t = sweep_threads();

		/* threads go to the jobs; a single job rounds its arrays with them */
		for (j = 0; j < grid.n; j++)
			jobs[j].ro.st.threads = grid.n == 1 ? opt.ro.st.threads : 1;
		rc = block_sweep(files, nfiles);
		if (!rc && plain_jobs())
			rc = sweep(files, nfiles, grid.n == 1 ? 1 : t);
	}
	if (!rc && rnat.be != CLI_BACKEND_EMU)
		cli_round_native_report(&rnat, &jobs[0].es, emu_seconds, opt.report,
					values && !output_is_file() ? stderr : stdout);
	else if (!rc && opt.stats)
		print_report(values && !output_is_file());
	cli_round_native_release(&rnat);
	free(jobs);
	jobs = NULL;
	cli_grid_release(&grid);
	return rc ? CLI_EXIT_FAIL : CLI_EXIT_OK;
}
