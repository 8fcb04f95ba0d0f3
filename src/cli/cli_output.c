/* SPDX-License-Identifier: MIT */
/*
 * cli_output.c - writing numbers: value formatting (text, hex, bits),
 * atomic output files (temporary, rename, removal on signals) and the
 * binary/.npy writers.  The --tsv/--json tables are in cli_report.c.
 *
 * Invariant: nothing here exits; every failure prints one message through
 * error() (or usage_error()) and returns a negative value.
 */
#include <ctype.h>
#include <errno.h>
#include <float.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>


#include "cli/cli.h"

/* ------------------------------------------------------- value output */
enum cli_out_kind cli_out_from_path(const char *path, enum cli_out_kind dflt)
{
	static const struct { const char *ext; enum cli_out_kind k; } ext[] = {
		{ ".npy", CLI_OUT_NPY }, { ".npz", CLI_OUT_NPZ },
		{ ".safetensors", CLI_OUT_SAFETENSORS }
	};
	size_t n = path ? strlen(path) : 0, i, k;

	for (i = 0; i < sizeof ext / sizeof *ext; i++) {
		k = strlen(ext[i].ext);
		if (n > k && !strcmp(path + n - k, ext[i].ext))
			return ext[i].k;
	}
	return dflt;
}

static const char *const out_names[] = {
	"text", "hex", "bits", "f64", "f32", "npy", "npz", "safetensors"
};

int cli_out_parse(const char *s, enum cli_out_kind *out)
{
	int i = cli_name_index("output kind", s, out_names, sizeof out_names / sizeof *out_names);

	if (i < 0)
		return -2;
	*out = (enum cli_out_kind)i;
	return 0;
}

char *cli_shortest(char *buf, double x)
{
	char e[CLI_VALUE_MAX];
	int prec, ex;

	if (isnan(x))
		return strcpy(buf, "nan");
	if (isinf(x))
		return strcpy(buf, x < 0 ? "-inf" : "inf");
	/* fewest significant digits that read back exactly */
	for (prec = 1; prec < 17; prec++) {
		snprintf(e, sizeof e, "%.*e", prec - 1, x);
		if (strtod(e, NULL) == x)
			break;
	}
	snprintf(e, sizeof e, "%.*e", prec - 1, x);
	ex = atoi(strchr(e, 'e') + 1);
	/* plain notation for moderate exponents, as %g would choose */
	if (ex >= -4 && ex < 17)
		snprintf(buf, CLI_VALUE_MAX, "%.*f", prec - 1 - ex > 0 ? prec - 1 - ex : 0, x);
	else
		snprintf(buf, CLI_VALUE_MAX, "%s", e);
	return buf;
}

char *cli_nan_str(char *buf, double x)
{
	uint64_t b, p;

	memcpy(&b, &x, sizeof b);
	p = b & ((1ull << 51) - 1);
	snprintf(buf, CLI_VALUE_MAX, "%s%snan", b >> 63 ? "-" : "", b >> 51 & 1 ? "" : "s");
	if (p)
		snprintf(buf + strlen(buf), CLI_VALUE_MAX - strlen(buf), "(%#llx)",
			 (unsigned long long)p);
	return buf;
}

char *cli_value_str(char *buf, double x, enum cli_out_kind kind, const fpl_format *f)
{
	uint64_t c;

	switch (kind) {
	case CLI_OUT_HEX:
		if (isnan(x))
			return cli_nan_str(buf, x);
		snprintf(buf, CLI_VALUE_MAX, "%a", x);
		return buf;
	case CLI_OUT_BITS:
		if (fpl_encode_checked(f, x, &c))
			return strcpy(buf, "none");
		return cli_code_str(buf, f, c);
	default:
		return cli_shortest(buf, x);
	}
}

char *cli_code_str(char *buf, const fpl_format *f, uint64_t c)
{
	static const char hex[] = "0123456789abcdef";
	int digits = (f->nbits + 3) / 4, i;

	if (digits < 1)
		digits = 1;
	if (digits > 16)
		digits = 16;
	buf[0] = '0';
	buf[1] = 'x';
	for (i = 0; i < digits; i++)
		buf[2 + i] = hex[(c >> (4 * (digits - 1 - i))) & 15];
	buf[2 + digits] = 0;
	return buf;
}

/* ------------------------------------------------------ atomic output */
/*
 * The temporaries of open outputs, removed by the handler of SIGHUP,
 * SIGINT and SIGTERM before the process dies of the signal.  The paths
 * live in static slots, written by mkstemp() in place: the handler touches
 * no allocator.  A slot is filled and marked live, or unlinked/renamed and
 * marked dead, only with those signals blocked (pthread_sigmask: outputs
 * are opened and closed by the main thread while no worker runs).
 */
#define TMP_SLOTS 8
static char tmp_slot[TMP_SLOTS][PATH_MAX];
static volatile sig_atomic_t tmp_live[TMP_SLOTS];
static const int cleanup_signals[] = { SIGHUP, SIGINT, SIGTERM };
static int stdout_reported;	/* a write error on stdout was reported */

/* Remove the live temporaries, then die of `sig` (SA_RESETHAND restored its
 * default action; the raised signal is delivered when the handler returns). */
static void remove_temporaries(int sig)
{
	int i;

	for (i = 0; i < TMP_SLOTS; i++)
		if (tmp_live[i])
			unlink(tmp_slot[i]);
	raise(sig);
}

/* Once: catch the cleanup signals, except those ignored (nohup keeps
 * SIGHUP ignored; a background job of a script, SIGINT). */
static void catch_signals(void)
{
	static int done;
	struct sigaction sa, old;
	size_t i;

	if (done)
		return;
	done = 1;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = remove_temporaries;
	sa.sa_flags = (int)SA_RESETHAND;
	sigemptyset(&sa.sa_mask);
	for (i = 0; i < sizeof cleanup_signals / sizeof *cleanup_signals; i++)
		sigaddset(&sa.sa_mask, cleanup_signals[i]);
	for (i = 0; i < sizeof cleanup_signals / sizeof *cleanup_signals; i++)
		if (!sigaction(cleanup_signals[i], NULL, &old) && old.sa_handler != SIG_IGN)
			sigaction(cleanup_signals[i], &sa, NULL);
}

static void block_signals(sigset_t *old)
{
	sigset_t set;
	size_t i;

	sigemptyset(&set);
	for (i = 0; i < sizeof cleanup_signals / sizeof *cleanup_signals; i++)
		sigaddset(&set, cleanup_signals[i]);
	pthread_sigmask(SIG_BLOCK, &set, old);
}

static void restore_signals(const sigset_t *old)
{
	pthread_sigmask(SIG_SETMASK, old, NULL);
}

/*
 * mkstemp("<file>.<tag>-XXXXXX"): the descriptor, with *slot its registry
 * slot, or -1 with errno set (ENAMETOOLONG, EMFILE when all slots are
 * taken, or mkstemp's).  With `unlinked` the file is removed at once
 * (a spool only reached through the descriptor) and takes no slot.
 */
static int temp_create(const char *file, const char *tag, int unlinked, int *slot)
{
	sigset_t old;
	int i, fd = -1, e;

	catch_signals();
	block_signals(&old);
	for (i = 0; i < TMP_SLOTS && tmp_live[i]; i++)
		;
	if (i == TMP_SLOTS) {
		e = EMFILE;
	} else if ((size_t)snprintf(tmp_slot[i], PATH_MAX, "%s.%s-XXXXXX", file, tag) >= PATH_MAX) {
		e = ENAMETOOLONG;
	} else {
		fd = mkstemp(tmp_slot[i]);
		e = errno;
		if (fd >= 0 && unlinked)
			unlink(tmp_slot[i]);
		else if (fd >= 0)
			tmp_live[i] = 1;
	}
	restore_signals(&old);
	*slot = i;
	errno = e;
	return fd;
}

/* Rename the temporary of `slot` over `target` (NULL: remove it) and free
 * the slot.  Returns 0, or -1 with errno set and the temporary removed. */
static int temp_finish(int slot, const char *target)
{
	sigset_t old;
	int rc = 0, e = 0;

	block_signals(&old);
	if (target && rename(tmp_slot[slot], target)) {
		rc = -1;
		e = errno;
	}
	if (!target || rc)
		unlink(tmp_slot[slot]);
	tmp_live[slot] = 0;
	restore_signals(&old);
	errno = e;
	return rc;
}

/*
 * The file that writing `path` must replace: `path` itself, or the file
 * its chain of symbolic links names (existing or not: a dangling link is
 * written through).  Returns a malloc'd path, or NULL with errno (ELOOP,
 * ENOMEM).
 */
static char *link_target(const char *path)
{
	char buf[PATH_MAX], *cur = strdup(path);
	int hops;

	for (hops = 0; cur && hops < 40; hops++) {
		struct stat sb;
		const char *slash;
		char *next;
		ssize_t k;

		if (lstat(cur, &sb) || !S_ISLNK(sb.st_mode))
			return cur;
		k = readlink(cur, buf, sizeof buf - 1);
		if (k < 0)
			return cur;
		buf[k] = 0;
		/* a relative link is relative to the link's directory */
		slash = strrchr(cur, '/');
		if (buf[0] == '/' || !slash) {
			next = strdup(buf);
		} else {
			size_t d = (size_t)(slash - cur) + 1;

			next = malloc(d + (size_t)k + 1);
			if (next) {
				memcpy(next, cur, d);
				memcpy(next + d, buf, (size_t)k + 1);
			}
		}
		free(cur);
		cur = next;
	}
	if (!cur) {
		errno = ENOMEM;
		return NULL;
	}
	free(cur);
	errno = ELOOP;
	return NULL;
}

/* The directory holding `file`, as an absolute path when it exists, for
 * messages; malloc'd (NULL when out of memory). */
static char *dir_of(const char *file)
{
	const char *slash = strrchr(file, '/');
	char *dir, *abs;

	if (!slash)
		dir = strdup(".");
	else
		dir = strndup(file, slash == file ? 1 : (size_t)(slash - file));
	if (!dir)
		return NULL;
	abs = realpath(dir, NULL);
	if (!abs)
		return dir;
	free(dir);
	return abs;
}

/*
 * Give the temporary `fd` the mode of the file it replaces (`old`) and,
 * where allowed (root, or a group of ours), its owner and group.  When the
 * group cannot be kept, the new group gets no more than others had; when
 * the owner cannot, set-user-ID is dropped.  Without `old`: 0666 less the
 * umask.  A failure leaves mkstemp's 0600, never a laxer mode.
 */
static void temp_mode(int fd, const struct stat *old)
{
	struct stat now;
	mode_t m;

	if (!old) {
		mode_t um = umask(0);

		umask(um);
		if (fchmod(fd, 0666 & ~um)) {
			/* stays 0600 */
		}
		return;
	}
	m = old->st_mode & 07777;
	if (fchown(fd, old->st_uid, old->st_gid) && fchown(fd, (uid_t)-1, old->st_gid)) {
		/* not ours to give: checked below */
	}
	if (fstat(fd, &now)) {
		m &= 0700;
	} else {
		if (now.st_uid != old->st_uid)
			m &= ~(mode_t)S_ISUID;
		if (now.st_gid != old->st_gid)
			m = (m & ~(mode_t)(S_ISGID | 070)) | (m & 070 & ((m & 07) << 3));
	}
	if (fchmod(fd, m)) {
		/* stays 0600 */
	}
}

/* Open the existing non-regular file `path` (a device, a FIFO) in place. */
static int output_in_place(struct cli_output *o, const char *path)
{
	o->fp = fopen(path, "wb");
	if (!o->fp) {
		error("cannot open '%s': %s", path, strerror(errno));
		free(o->path);
		o->path = NULL;
		return -1;
	}
	return 0;
}

/* A temporary next to o->target, with the mode of the file it replaces. */
static int output_temp(struct cli_output *o)
{
	struct stat sb;
	int fd, e, exists = !stat(o->target, &sb);

	fd = temp_create(o->target, "tmp", 0, &o->slot);
	if (fd < 0) {
		char *dir;

		e = errno;
		if (e == ENOENT || e == ENOTDIR)	/* no such directory */
			return error("cannot create '%s': %s", o->path, strerror(e));
		dir = dir_of(o->target);
		error("cannot create a temporary file in '%s' for '%s': %s",
		      dir ? dir : o->target, o->path, strerror(e));
		free(dir);
		return -1;
	}
	o->tmp = tmp_slot[o->slot];
	temp_mode(fd, exists ? &sb : NULL);
	o->fp = fdopen(fd, "wb");
	if (!o->fp) {
		e = errno;
		close(fd);
		temp_finish(o->slot, NULL);
		o->tmp = NULL;
		return error("cannot open '%s': %s", o->path, strerror(e));
	}
	return 0;
}

int cli_output_open(struct cli_output *o, const char *path)
{
	struct stat sb;

	memset(o, 0, sizeof *o);
	if (!path || !strcmp(path, "-")) {
		o->fp = stdout;
		return 0;
	}
	o->path = strdup(path);
	if (!o->path)
		return error("out of memory");
	/* a device or FIFO (/dev/null, /dev/full, a pipe) is written in place:
	 * renaming over it would replace the node by a file */
	if (!stat(path, &sb) && !S_ISREG(sb.st_mode))
		return output_in_place(o, path);
	o->target = link_target(path);
	if (!o->target) {
		error("cannot open '%s': %s", path, strerror(errno));
	} else if (!output_temp(o)) {
		return 0;
	}
	free(o->path);
	free(o->target);
	memset(o, 0, sizeof *o);
	return -1;
}

/*
 * The errno of a stream's failed write.  stdio keeps only the error
 * indicator: by the time a caller notices it, errno may have been reset
 * (or reused).  When errno is 0 and the stream's buffer still holds the
 * unwritten bytes, clearing the indicator and flushing again repeats the
 * failing write(2) and so recovers its errno (ENOSPC on /dev/full); that
 * flush sets the indicator again.  EIO when nothing tells.
 */
static int write_errno(FILE *fp)
{
	if (errno)
		return errno;
	if (fp && ferror(fp)) {
		clearerr(fp);
		errno = 0;
		if (fflush(fp) && errno)
			return errno;
		return EIO;	/* the bytes were dropped: errno is lost */
	}
	return EIO;
}

int cli_output_error(const struct cli_output *o)
{
	int e = write_errno(o->fp ? o->fp : (o->path ? NULL : stdout));

	if (o->path)
		return error("write error on '%s': %s", o->path, strerror(e));
	if (stdout_reported)
		return -1;
	stdout_reported = 1;
	return error("write error on stdout: %s", strerror(e));
}

int cli_output_close(struct cli_output *o, int ok)
{
	int rc = 0;

	if (!o->fp)
		return ok ? 0 : -1;
	if (!o->path) {
		o->fp = NULL;
		return ok ? 0 : -1;
	}
	if (ok) {
		errno = 0;
		if (fflush(o->fp) || ferror(o->fp))
			rc = cli_output_error(o);
		errno = 0;
		if (fclose(o->fp) && !rc)
			rc = cli_output_error(o);
	} else {
		fclose(o->fp);
		rc = -1;
	}
	if (o->tmp && temp_finish(o->slot, rc ? NULL : o->target) && !rc)
		rc = error("cannot replace '%s': %s", o->target, strerror(errno));
	free(o->path);
	free(o->target);
	memset(o, 0, sizeof *o);
	return rc;
}

int cli_flush_stdout(void)
{
	static const struct cli_output out;	/* path NULL: stdout */

	errno = 0;
	if (fflush(stdout) || ferror(stdout))
		return cli_output_error(&out);	/* EIO: errno lost with an earlier write */
	return 0;
}

/* ------------------------------------------------------------ writer */
/* An unlinked temporary "<base>.<tag>-XXXXXX" open for reading and
 * writing, base the output file (o->tmp) or $TMPDIR/fplab (o NULL, or
 * stdout and devices); NULL after a message. */
static FILE *unlinked_temp(const struct cli_output *o, const char *tag)
{
	const char *tmpdir = getenv("TMPDIR");
	char base[PATH_MAX], *dir;
	FILE *fp = NULL;
	int fd, slot, e;

	if (o && o->tmp)
		snprintf(base, sizeof base, "%s", o->target);
	else
		snprintf(base, sizeof base, "%s/fplab", tmpdir && *tmpdir ? tmpdir : "/tmp");
	fd = temp_create(base, tag, 1, &slot);
	if (fd >= 0) {
		fp = fdopen(fd, "w+b");
		if (fp)
			return fp;
		e = errno;
		close(fd);
		errno = e;
	}
	e = errno;
	dir = dir_of(base);
	error("cannot create a temporary file in '%s': %s", dir ? dir : base, strerror(e));
	free(dir);
	return NULL;
}

/*
 * The npy spool: an unlinked temporary, next to the output file (on the
 * file system that must hold the result anyway) or, for stdout and
 * devices, in $TMPDIR or /tmp.  Unlinked at once: a signal leaves nothing.
 */
static FILE *spool_open(const struct cli_output *o)
{
	return unlinked_temp(o, "spool");
}

int cli_stdin_spool(char *path, size_t len)
{
	char buf[65536];
	size_t got;
	int e;
	FILE *fp = unlinked_temp(NULL, "stdin");

	if (!fp)
		return -1;
	while ((got = fread(buf, 1, sizeof buf, stdin)) > 0)
		if (fwrite(buf, 1, got, fp) != got)
			break;
	if (ferror(stdin) || ferror(fp) || fflush(fp)) {
		e = errno;
		fclose(fp);
		return error("cannot keep stdin in a temporary file: %s", strerror(e));
	}
	/* the descriptor stays open (the file is unlinked): each open of
	 * /dev/fd/N reads it from its start */
	snprintf(path, len, "/dev/fd/%d", fileno(fp));
	return 0;
}

int cli_writer_open(struct cli_writer *w, const char *path, enum cli_out_kind kind,
		    const fpl_format *f, uint64_t known)
{
	memset(w, 0, sizeof *w);
	w->kind = kind;
	w->f = f;
	w->known = known;
	if (cli_output_open(&w->out, path))
		return -1;
	if (kind < CLI_OUT_NPY)
		return 0;
	/* always spooled: the header (shape, dtype) is known at the end */
	w->spool = spool_open(&w->out);
	if (w->spool)
		return 0;
	cli_output_close(&w->out, 0);
	return -1;
}

int cli_writer_tensor(struct cli_writer *w, const fpl_tensor_info *info, fpl_dtype out_dtype)
{
	struct cli_wtensor *e;

	if (w->kind < CLI_OUT_NPY)
		return 0;
	w->out_dtype = out_dtype;
	if (w->nt == w->tcap) {
		size_t cap = w->tcap ? 2 * w->tcap : 4;

		e = realloc(w->t, cap * sizeof *e);
		if (!e)
			return error("out of memory");
		w->t = e;
		w->tcap = cap;
	}
	e = &w->t[w->nt];
	memset(e, 0, sizeof *e);
	e->start = w->n;
	if (info)
		e->info = *info;
	else
		snprintf(e->info.name, sizeof e->info.name, "arr_%zu", w->nt);
	e->shaped = info && info->dtype != FPL_DT_TEXT;
	e->info.dtype = out_dtype != FPL_DT_UNKNOWN ? out_dtype
		: e->shaped ? info->dtype : FPL_DT_F64;
	w->nt++;
	return 0;
}

/* The storage format of an .npy dtype narrower than binary32, with every
 * value the dtype holds (bf16 with subnormals, unlike fplab's bf16). */
static int dtype_format(fpl_dtype t, fpl_format *f)
{
	switch (t) {
	case FPL_DT_F16: return fpl_format_ieee(f, 5, 10);
	case FPL_DT_BF16: return fpl_format_ieee(f, 8, 7);
	case FPL_DT_E4M3FN: return fpl_format_lookup(f, "e4m3fn");
	case FPL_DT_E5M2: return fpl_format_ieee(f, 5, 2);
	default: return FPL_EINVAL;
	}
}

/* n binary64 values to the little-endian bytes of dtype t at p, rounded
 * to nearest-even (numpy's astype); returns the bytes written. */
static size_t to_dtype(unsigned char *p, const double *v, size_t n, fpl_dtype t,
		       const fpl_format *f)
{
	size_t es = fpl_dtype_size(t), i, k;

	for (i = 0; i < n; i++) {
		uint64_t b;

		if (t == FPL_DT_F64) {
			memcpy(&b, &v[i], 8);
		} else if (t == FPL_DT_F32) {
			float fl = (float)v[i];
			uint32_t b32;

			memcpy(&b32, &fl, 4);
			b = b32;
		} else {
			b = fpl_encode(f, v[i]);
		}
		for (k = 0; k < es; k++)
			*p++ = (unsigned char)(b >> (8 * k));
	}
	return n * es;
}

/* An I/O error on the spool (a full temporary directory, say). */
static int spool_error(const struct cli_writer *w)
{
	return error("i/o error on the temporary file for '%s': %s",
		     w->out.path ? w->out.path : "stdout", strerror(errno ? errno : EIO));
}

static int put_binary(struct cli_writer *w, FILE *fp, const double *v, size_t n)
{
	size_t es = w->kind == CLI_OUT_F32 ? 4 : 8, i;
	unsigned char *p;

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	if (es == 8) {
		if (fwrite(v, 8, n, fp) != n)
			return fp == w->spool ? spool_error(w) : cli_output_error(&w->out);
		return 0;
	}
#endif
	if (w->bufcap < n * es) {
		free(w->buf);
		w->buf = malloc(n * es);
		w->bufcap = w->buf ? n * es : 0;
		if (!w->buf)
			return error("out of memory");
	}
	p = w->buf;
	for (i = 0; i < n; i++) {
		uint64_t b;
		size_t k;

		if (es == 4) {
			float fl = (float)v[i];
			uint32_t b32;

			memcpy(&b32, &fl, 4);
			b = b32;
		} else {
			memcpy(&b, &v[i], 8);
		}
		for (k = 0; k < es; k++)
			*p++ = (unsigned char)(b >> (8 * k));
	}
	if (fwrite(w->buf, es, n, fp) != n)
		return fp == w->spool ? spool_error(w) : cli_output_error(&w->out);
	return 0;
}

int cli_writer_put(struct cli_writer *w, const double *v, size_t n)
{
	char s[CLI_VALUE_MAX];
	size_t i;

	w->n += n;
	switch (w->kind) {
	case CLI_OUT_F64:
	case CLI_OUT_F32:
		return put_binary(w, w->out.fp, v, n);
	case CLI_OUT_NPY:
	case CLI_OUT_NPZ:
	case CLI_OUT_SAFETENSORS:
		return put_binary(w, w->spool, v, n);
	default:
		for (i = 0; i < n; i++) {
			fputs(cli_value_str(s, v[i], w->kind, w->f), w->out.fp);
			fputc('\n', w->out.fp);
		}
		if (ferror(w->out.fp))
			return cli_output_error(&w->out);
		return 0;
	}
}

/* Where converted bytes go: the output file, or the open .npz member. */
struct sink {
	struct cli_writer *w;
	fpl_zip_writer *zip;
};

static int sink_put(struct sink *k, const void *p, size_t n)
{
	int rc;

	if (!k->zip)
		return fwrite(p, 1, n, k->w->out.fp) == n ? 0 : cli_output_error(&k->w->out);
	rc = fpl_zip_member_write(k->zip, p, n);
	if (rc == FPL_ERANGE)
		return error("'%s': over 4 GiB, which .npz output without zip64 cannot hold",
			     k->w->out.path ? k->w->out.path : "stdout");
	return rc ? cli_output_error(&k->w->out) : 0;
}

/* The next n values of the spool, converted to e's dtype, to the sink;
 * a Fortran-order tensor is put in C order when `c_order` (held in
 * memory whole). */
static int spool_copy(struct cli_writer *w, const struct cli_wtensor *e, uint64_t n,
		      int c_order, struct sink *k)
{
	double v[4096], *all = NULL, *perm = NULL;
	unsigned char b[8 * 4096];
	fpl_dtype t = e->info.dtype;
	fpl_format f;
	uint64_t done = 0;
	int rc = 0;

	memset(&f, 0, sizeof f);
	if (t != FPL_DT_F64 && t != FPL_DT_F32 && dtype_format(t, &f))
		return error("internal: no storage format for dtype %s", fpl_dtype_name(t));
	if (c_order && e->info.fortran_order && e->info.ndim > 1) {
		if (n > SIZE_MAX / 16)
			return error("tensor '%s' too large to reorder", e->info.name);
		all = malloc((size_t)n * 8 + 8);
		perm = malloc((size_t)n * 8 + 8);
		if (!all || !perm || fread(all, 8, (size_t)n, w->spool) != n) {
			rc = !all || !perm ? error("out of memory") : spool_error(w);
			free(all);
			free(perm);
			return rc;
		}
		cli_fortran_to_c(perm, all, e->info.ndim, e->info.shape);
		for (; !rc && done < n; done += 4096) {
			size_t c = n - done < 4096 ? (size_t)(n - done) : 4096;

			rc = sink_put(k, b, to_dtype(b, perm + done, c, t, &f));
		}
		free(all);
		free(perm);
		return rc;
	}
	while (!rc && done < n) {
		size_t c = n - done < 4096 ? (size_t)(n - done) : 4096;

		if (fread(v, 8, c, w->spool) != c)
			return spool_error(w);
		rc = sink_put(k, b, to_dtype(b, v, c, t, &f));
		done += c;
	}
	return rc;
}

/* The .npy header of e (n values) to the sink. */
static int npy_header(struct cli_writer *w, const struct cli_wtensor *e, struct sink *k)
{
	char *mem = NULL;
	size_t len = 0;
	FILE *m;
	int rc;

	if (!k->zip) {
		rc = fpl_npy_write_header_ex(w->out.fp, e->info.dtype, e->info.ndim,
					     e->info.shape, e->info.fortran_order);
		return rc ? cli_output_error(&w->out) : 0;
	}
	m = open_memstream(&mem, &len);
	if (!m)
		return error("out of memory");
	rc = fpl_npy_write_header_ex(m, e->info.dtype, e->info.ndim, e->info.shape,
				     e->info.fortran_order);
	if (fclose(m) || rc) {
		free(mem);
		return error("out of memory");
	}
	rc = sink_put(k, mem, len);
	free(mem);
	return rc;
}

/* Fix each tensor's count: the input's shape when it matches, else flat. */
static int settle_tensors(struct cli_writer *w)
{
	size_t i, j;

	if (!w->nt || w->t[0].start) {
		/* values before any announcement: a flat tensor, first */
		struct cli_wtensor e;

		if (cli_writer_tensor(w, NULL, w->out_dtype))
			return -1;
		e = w->t[w->nt - 1];
		memmove(w->t + 1, w->t, (w->nt - 1) * sizeof *w->t);
		e.start = 0;
		w->t[0] = e;
	}
	for (i = 0; i < w->nt; i++) {
		struct cli_wtensor *e = &w->t[i];
		uint64_t end = i + 1 < w->nt ? w->t[i + 1].start : w->n, count = 1;
		int d;

		for (d = 0; d < e->info.ndim; d++)
			count *= e->info.shape[d];
		if (!e->shaped || count != end - e->start) {
			e->info.ndim = 1;
			e->info.shape[0] = end - e->start;
			e->info.fortran_order = 0;
		}
		e->info.count = end - e->start;
		for (j = 0; j < i; j++)
			if (w->kind != CLI_OUT_NPY && !strcmp(w->t[j].info.name, e->info.name))
				return error("two tensors named '%s': each needs its own file",
					     e->info.name);
	}
	if (w->kind == CLI_OUT_NPY && w->nt > 1) {
		/* several tensors in one .npy: flat */
		w->t[0].info.ndim = 1;
		w->t[0].info.shape[0] = w->n;
		w->t[0].info.count = w->n;
		w->t[0].info.fortran_order = 0;
		w->t[0].info.dtype = w->out_dtype != FPL_DT_UNKNOWN ? w->out_dtype : FPL_DT_F64;
		w->nt = 1;
	}
	return 0;
}

static int copy_spool(struct cli_writer *w)
{
	struct sink k = { w, NULL };
	char name[FPL_TENSOR_NAME_MAX + 8];
	size_t i;
	int rc = 0;

	errno = 0;
	if (fflush(w->spool) || ferror(w->spool) || fseek(w->spool, 0, SEEK_SET))
		return spool_error(w);
	if (settle_tensors(w))
		return -1;
	if (w->kind == CLI_OUT_NPY)
		return npy_header(w, &w->t[0], &k) || spool_copy(w, &w->t[0], w->n, 0, &k) ? -1 : 0;
	if (w->kind == CLI_OUT_SAFETENSORS) {
		fpl_tensor_info *ti = malloc(w->nt * sizeof *ti);

		if (!ti)
			return error("out of memory");
		for (i = 0; i < w->nt; i++)
			ti[i] = w->t[i].info;
		rc = fpl_safetensors_write_header(w->out.fp, w->nt, ti);
		free(ti);
		if (rc)
			return rc == FPL_EIO ? cli_output_error(&w->out)
				: error("cannot write the .safetensors header: %s", fpl_strerror(rc));
		for (i = 0; i < w->nt && !rc; i++)
			rc = spool_copy(w, &w->t[i], w->t[i].info.count, 1, &k);
		return rc;
	}
	if (fpl_zip_writer_open(&k.zip, w->out.fp))
		return error("out of memory");
	for (i = 0; i < w->nt && !rc; i++) {
		snprintf(name, sizeof name, "%s.npy", w->t[i].info.name);
		rc = fpl_zip_member_begin(k.zip, name);
		if (rc)
			rc = rc == FPL_EIO ? cli_output_error(&w->out)
				: error("cannot add '%s' to the .npz: %s", name, fpl_strerror(rc));
		if (!rc)
			rc = npy_header(w, &w->t[i], &k);
		if (!rc)
			rc = spool_copy(w, &w->t[i], w->t[i].info.count, 0, &k);
		if (!rc && fpl_zip_member_end(k.zip))
			rc = cli_output_error(&w->out);
	}
	i = (size_t)fpl_zip_writer_close(k.zip, !rc);
	if (!rc && i)
		rc = (int)i == FPL_ERANGE ? error("'%s': over 4 GiB, which .npz output without "
						  "zip64 cannot hold", w->out.path ? w->out.path : "stdout")
			: cli_output_error(&w->out);
	return rc;
}

int cli_writer_close(struct cli_writer *w, int ok)
{
	int rc = 0;

	if (ok && w->kind >= CLI_OUT_NPY)
		rc = copy_spool(w);
	if (w->spool)
		fclose(w->spool);
	free(w->buf);
	free(w->t);
	rc = cli_output_close(&w->out, ok && !rc) || rc ? -1 : 0;
	memset(w, 0, sizeof *w);
	return rc;
}
