/* SPDX-License-Identifier: MIT */
/*
 * cli_onednn.c - oneDNN's own matmul for `--backend onednn`, loaded at run
 * time: fplab does not link oneDNN (it is optional); libdnnl.so.2 is
 * opened with dlopen and its C API (the oneDNN 2.x ABI, Debian's libdnnl
 * 2.6) called through dlsym.  The few types and constants are written
 * here from oneDNN 2.6's dnnl_types.h; the descriptors are opaque buffers
 * larger than oneDNN 2.6's (696 and 2800 bytes).
 *
 * C (m x n, f32) = A (m x k) B (k x n), row major, A and B bf16 (their
 * floats' top halves: every input must be a bf16 value) or f32.  oneDNN
 * picks its implementation (the CPU's best, or ONEDNN_MAX_CPU_ISA's cap);
 * its name comes back in impl.  Threads: Debian's oneDNN runs on OpenMP;
 * omp_set_num_threads (found through the library) sets the count.
 */
#include <dlfcn.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"

/* oneDNN 2.6 (dnnl_types.h) */
enum { D_SUCCESS = 0, D_BF16 = 2, D_F32 = 3, D_TAG_AB = 3, D_QUERY_IMPL_INFO_STR = 8,
       D_CPU = 1, D_STREAM_DEFAULT = 1, D_ARG_SRC = 1, D_ARG_DST = 17, D_ARG_WEIGHTS = 33 };
typedef int64_t d_dims[12];
typedef struct { _Alignas(64) unsigned char b[4096]; } d_md;	/* dnnl_memory_desc_t */
typedef struct { _Alignas(64) unsigned char b[16384]; } d_mm;	/* dnnl_matmul_desc_t */
typedef struct { int arg; void *mem; } d_arg;			/* dnnl_exec_arg_t */
typedef struct { int major, minor, patch; const char *hash; unsigned cpu_runtime, gpu_runtime; }
	d_version;

static struct {
	void *h;
	const d_version *(*version)(void);
	int (*md_init)(d_md *, int, const int64_t *, int, int);
	int (*mm_init)(d_mm *, const d_md *, const d_md *, const d_md *, const d_md *);
	int (*pd_create)(void **, const void *, const void *, void *, const void *);
	int (*pd_query)(const void *, int, int, void *);
	int (*pd_destroy)(void *);
	int (*prim_create)(void **, const void *);
	int (*prim_destroy)(void *);
	int (*prim_execute)(const void *, void *, int, const d_arg *);
	int (*eng_create)(void **, int, size_t);
	int (*eng_destroy)(void *);
	int (*strm_create)(void **, void *, unsigned);
	int (*strm_wait)(void *);
	int (*strm_destroy)(void *);
	int (*mem_create)(void **, const d_md *, void *, void *);
	int (*mem_destroy)(void *);
	void (*omp_threads)(int);
} dl;

#define SYM(field, name)                                                                    \
	do {                                                                                \
		*(void **)&dl.field = dlsym(dl.h, name);                                    \
		if (!dl.field)                                                              \
			return error("--backend onednn: %s has no %s (fplab needs oneDNN 2.x)", \
				     lib, name);                                            \
	} while (0)

static int onednn_load(void)
{
	static const char lib[] = "libdnnl.so.2";

	if (dl.h)
		return 0;
	dl.h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
	if (!dl.h)
		return error("--backend onednn: cannot load %s (oneDNN; on Debian: sudo apt-get "
			     "install libdnnl2): %s", lib, dlerror());
	SYM(version, "dnnl_version");
	SYM(md_init, "dnnl_memory_desc_init_by_tag");
	SYM(mm_init, "dnnl_matmul_desc_init");
	SYM(pd_create, "dnnl_primitive_desc_create");
	SYM(pd_query, "dnnl_primitive_desc_query");
	SYM(pd_destroy, "dnnl_primitive_desc_destroy");
	SYM(prim_create, "dnnl_primitive_create");
	SYM(prim_destroy, "dnnl_primitive_destroy");
	SYM(prim_execute, "dnnl_primitive_execute");
	SYM(eng_create, "dnnl_engine_create");
	SYM(eng_destroy, "dnnl_engine_destroy");
	SYM(strm_create, "dnnl_stream_create");
	SYM(strm_wait, "dnnl_stream_wait");
	SYM(strm_destroy, "dnnl_stream_destroy");
	SYM(mem_create, "dnnl_memory_create");
	SYM(mem_destroy, "dnnl_memory_destroy");
	*(void **)&dl.omp_threads = dlsym(dl.h, "omp_set_num_threads");
	if (dl.version()->major != 2)
		return error("--backend onednn: %s is oneDNN %d.%d; fplab calls the 2.x API", lib,
			     dl.version()->major, dl.version()->minor);
	return 0;
}

/* x's bf16 encoding (its top half); -1 (message) when x is not bf16. */
static int to_bf16(float x, uint16_t *h, const char *name, size_t i, size_t j)
{
	uint32_t u;

	memcpy(&u, &x, sizeof u);
	*h = (uint16_t)(u >> 16);
	if (!(u & 0xffff))
		return 0;
	return error("%s[%zu][%zu] = %.9g is not a bf16 value: oneDNN's bf16 matmul takes bf16 "
		     "inputs", name, i, j, (double)x);
}

int cli_onednn_gemm(int bf16, size_t m, size_t n, size_t k, const float *A, const float *B,
		    float *C, int threads, char *impl, size_t implsz)
{
	d_dims da = { (int64_t)m, (int64_t)k }, db = { (int64_t)k, (int64_t)n },
	       dc = { (int64_t)m, (int64_t)n };
	const int in = bf16 ? D_BF16 : D_F32;
	void *eng = NULL, *strm = NULL, *pd = NULL, *prim = NULL, *ma = NULL, *mb = NULL,
	     *mc = NULL;
	uint16_t *ha = NULL, *hb = NULL;
	d_md *amd = NULL, *bmd = NULL, *cmd = NULL;
	d_mm *mmd = NULL;
	const char *name = NULL;
	size_t i, q;
	int rc;

	if (onednn_load())
		return -1;
	if (dl.omp_threads && threads > 0)
		dl.omp_threads(threads);
	snprintf(impl, implsz, "?");
	amd = calloc(1, sizeof *amd);
	bmd = calloc(1, sizeof *bmd);
	cmd = calloc(1, sizeof *cmd);
	mmd = calloc(1, sizeof *mmd);
	if (bf16) {
		ha = malloc((m * k + 1) * sizeof *ha);
		hb = malloc((k * n + 1) * sizeof *hb);
	}
	if (!amd || !bmd || !cmd || !mmd || (bf16 && (!ha || !hb))) {
		rc = error("out of memory");
		goto out;
	}
	rc = 0;
	for (i = 0; bf16 && i < m && !rc; i++)
		for (q = 0; q < k && !rc; q++)
			rc = to_bf16(A[i * k + q], &ha[i * k + q], "A", i, q);
	for (q = 0; bf16 && q < k && !rc; q++)
		for (i = 0; i < n && !rc; i++)
			rc = to_bf16(B[q * n + i], &hb[q * n + i], "B", q, i);
	if (rc)
		goto out;
	if ((rc = dl.eng_create(&eng, D_CPU, 0)) || (rc = dl.strm_create(&strm, eng, D_STREAM_DEFAULT))
	    || (rc = dl.md_init(amd, 2, da, in, D_TAG_AB)) || (rc = dl.md_init(bmd, 2, db, in, D_TAG_AB))
	    || (rc = dl.md_init(cmd, 2, dc, D_F32, D_TAG_AB))
	    || (rc = dl.mm_init(mmd, amd, bmd, NULL, cmd))
	    || (rc = dl.pd_create(&pd, mmd, NULL, eng, NULL)))
		goto fail;
	if (!dl.pd_query(pd, D_QUERY_IMPL_INFO_STR, 0, &name) && name)
		snprintf(impl, implsz, "%s", name);
	if ((rc = dl.prim_create(&prim, pd))
	    || (rc = dl.mem_create(&ma, amd, eng, bf16 ? (void *)ha : (void *)A))
	    || (rc = dl.mem_create(&mb, bmd, eng, bf16 ? (void *)hb : (void *)B))
	    || (rc = dl.mem_create(&mc, cmd, eng, C)))
		goto fail;
	{
		d_arg args[3] = { { D_ARG_SRC, ma }, { D_ARG_WEIGHTS, mb }, { D_ARG_DST, mc } };

		if ((rc = dl.prim_execute(prim, strm, 3, args)) || (rc = dl.strm_wait(strm)))
			goto fail;
	}
	goto out;
fail:
	rc = error("--backend onednn: oneDNN's %s matmul failed (dnnl status %d%s)",
		   bf16 ? "bf16" : "f32", rc, rc == 3 ? ", unimplemented: the CPU lacks it" : "");
out:
	if (mc)
		dl.mem_destroy(mc);
	if (mb)
		dl.mem_destroy(mb);
	if (ma)
		dl.mem_destroy(ma);
	if (prim)
		dl.prim_destroy(prim);
	if (pd)
		dl.pd_destroy(pd);
	if (strm)
		dl.strm_destroy(strm);
	if (eng)
		dl.eng_destroy(eng);
	free(ha);
	free(hb);
	free(amd);
	free(bmd);
	free(cmd);
	free(mmd);
	return rc ? -1 : 0;
}
