/* SPDX-License-Identifier: MIT */
/*
 * cli.h - the fplab command line: the command table, messages, the shared
 * rounding options, number input and value output used by every command.
 *
 * Invariant: a command function returns an exit status (0 ok, 1 runtime
 * error, 2 usage error) and never calls exit(); main() flushes and checks
 * stdout afterwards, so a full disk is an error, never a silent truncation.
 *
 * Adding a command (the checklist):
 *   1. src/cli/cmd_NAME.c: `int cmd_NAME(int argc, char **argv)` with a
 *      file-static options struct and a file-static usage text whose lines
 *      after "usage: " are exactly the man page's SYNOPSIS lines;
 *      parse with getopt_long, put CLI_ROUND_LONGOPTS in the option table
 *      and CLI_ROUND_SHORTOPTS in the short string if the command rounds,
 *      and give every option code to cli_round_option() first.
 *   2. Declare cmd_NAME below.
 *   3. Add { "NAME", cmd_NAME } to `commands[]` in src/cli/main.c, keeping
 *      the table sorted by name.
 *   4. Add src/cli/cmd_NAME.c to CLI_SRCS in the Makefile (one per line).
 *   5. Write man/fplab-NAME.1 (SYNOPSIS, OPTIONS, OUTPUT with the --tsv and
 *      --json columns, EXIT STATUS, EXAMPLES) and list it in fplab(1).
 *   6. Add tests/cli/NAME.sh (and golden cases in tests/cli/golden/); the
 *      synopsis and examples tests pick the man page up by themselves.
 */
#ifndef FPLAB_CLI_H
#define FPLAB_CLI_H

#include <getopt.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <fplab/fplab.h>
#include <fplab/native.h>

#include "util/gen.h"

/* Exit statuses. */
enum {
	CLI_EXIT_OK = 0,
	CLI_EXIT_FAIL = 1,	/* runtime error: bad data, I/O, ... */
	CLI_EXIT_USAGE = 2	/* bad command line */
};

/* ------------------------------------------------------------ commands */
typedef int (*cli_fn)(int argc, char **argv);

struct cli_command {
	const char *name;
	cli_fn fn;
	const char *summary;	/* one line for `fplab -h` */
};

int cmd_calc(int argc, char **argv);
int cmd_formats(int argc, char **argv);
int cmd_help(int argc, char **argv);
int cmd_hist(int argc, char **argv);
int cmd_info(int argc, char **argv);
int cmd_round(int argc, char **argv);

/* The sorted command table (main.c) and its length. */
extern const struct cli_command cli_commands[];
extern const size_t cli_ncommands;

/* The command called `name`, or NULL. */
const struct cli_command *cli_find_command(const char *name);
/* Say that `name` is no command (with the nearest one, or a hint to
 * --version) and return CLI_EXIT_USAGE. */
int cli_unknown_command(const char *name);

/* Name of the running command, for messages ("round"); NULL in main. */
extern const char *cli_cmd;

/* ------------------------------------------------------------ messages */
/*
 * "fplab: CMD: MESSAGE\n" on stderr (printf-style).  error() returns -1 so
 * that `return error(...)` composes; warning() returns nothing.
 */
int error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void warning(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/*
 * A usage error: the message (if fmt is not NULL), then `usage` on
 * stderr.  Returns CLI_EXIT_USAGE, so `return usage_error(u, ...)`.
 */
int usage_error(const char *usage, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/*
 * error() (usage NULL) or usage_error(usage, ...) with the whole message
 * passed through fpl_escape first (\t, \x1b, a doubled backslash), for
 * messages that quote arguments, paths or what files hold.  Returns what
 * error() or usage_error() returns.
 */
int cli_escaped_msg(const char *usage, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* Print `usage` to stdout (for -h); returns CLI_EXIT_OK. */
int usage_help(const char *usage);

/*
 * The candidate closest to `name` by Levenshtein distance (case-folded),
 * or NULL when none is close (more than (strlen(name)+2)/3 edits, at least
 * 1); an adjacent transposition counts as one edit.
 */
const char *cli_closest(const char *name, const char *const *cands, size_t n);

/*
 * "unknown WHAT 'NAME'; did you mean 'X'?" (or without the suggestion)
 * as an error(); returns -1.
 */
int cli_unknown(const char *what, const char *name, const char *const *cands, size_t n);
/* The index of `name` among names[0..n), or -1 after cli_unknown(). */
int cli_name_index(const char *what, const char *name, const char *const *names, size_t n);

/* ------------------------------------------------- parsing helpers */
/* Whole-string conversions; return 0 or -1 (no message). */
int cli_parse_long(const char *s, long *out);
int cli_parse_u64(const char *s, uint64_t *out);
/*
 * A number as fplab reads it everywhere: decimal or C99 hex float,
 * optionally signed, "inf"/"infinity"/"nan" in any case.  Returns 0 or -1.
 */
int cli_parse_double(const char *s, double *out);
/* Numbers from text are read exactly with fpl_parse_number() (fplab/number.h). */

/* An option value that must be 0 or 1 (or 0..max): usage error on failure. */
int cli_parse_switch(const char *opt, const char *s, int max, int *out);

/* ------------------------------------------- shared rounding options */
/*
 * Every command that rounds takes the same options, parsed here:
 *   -f/--format NAME|eXmY|FILE.fmt  --params p,emin,emax (or chop's t,emax)
 *   --subnormal 0|1|ftz  --saturation 0|1|2  --infinity 0|1  --explim 0|1
 *   --tininess before|after
 *   -r/--round MODE|CODE  --seed N  --sr-bits R  --flip 0|1|2  -p PROB
 *   --threads N
 * Put CLI_ROUND_LONGOPTS into the getopt_long table, CLI_ROUND_SHORTOPTS
 * into the short option string, hand every code to cli_round_option(),
 * then call cli_round_finish() once after parsing.
 */
enum {
	CLI_OPT_PARAMS = 0x1000,
	CLI_OPT_SUBNORMAL,
	CLI_OPT_SATURATION,
	CLI_OPT_INFINITY,
	CLI_OPT_EXPLIM,
	CLI_OPT_SEED,
	CLI_OPT_SR_BITS,
	CLI_OPT_FLIP,
	CLI_OPT_THREADS,
	CLI_OPT_TININESS,
	CLI_OPT_ROUND_END,
	CLI_OPT_TSV,		/* --tsv, --json, --ndjson: CLI_REPORT_LONGOPTS */
	CLI_OPT_JSON,
	CLI_OPT_NDJSON,
	/* codes from here on are free for a command's own long options */
	CLI_OPT_CMD = 0x1100
};

#define CLI_ROUND_SHORTOPTS "f:r:p:"
#define CLI_ROUND_LONGOPTS \
	{ "format", required_argument, NULL, 'f' }, \
	{ "round", required_argument, NULL, 'r' }, \
	{ "params", required_argument, NULL, CLI_OPT_PARAMS }, \
	{ "subnormal", required_argument, NULL, CLI_OPT_SUBNORMAL }, \
	{ "saturation", required_argument, NULL, CLI_OPT_SATURATION }, \
	{ "infinity", required_argument, NULL, CLI_OPT_INFINITY }, \
	{ "explim", required_argument, NULL, CLI_OPT_EXPLIM }, \
	{ "tininess", required_argument, NULL, CLI_OPT_TININESS }, \
	{ "seed", required_argument, NULL, CLI_OPT_SEED }, \
	{ "sr-bits", required_argument, NULL, CLI_OPT_SR_BITS }, \
	{ "flip", required_argument, NULL, CLI_OPT_FLIP }, \
	{ "threads", required_argument, NULL, CLI_OPT_THREADS }

/* The synopsis fragment for usage texts and man pages. */
#define CLI_ROUND_SYNOPSIS \
	"[-f FORMAT] [--params P,EMIN,EMAX] [-r MODE]\n" \
	"    [--subnormal 0|1|ftz] [--saturation 0|1|2] [--infinity 0|1] [--explim 0|1]\n" \
	"    [--tininess before|after] [--seed N]\n" \
	"    [--sr-bits R] [--flip 0|1|2] [-p PROB] [--threads N]"

struct cli_round {
	fpl_format fmt;		/* the finished format (after cli_round_finish) */
	fpl_rnd rnd;		/* default ne (CPFloat 1) */
	fpl_state st;		/* seed, sr_bits, flip, threads set */

	/* as given on the command line (-1 = not given) */
	const char *format_arg;	/* default "fp16" */
	int has_params, p, emin, emax;	/* chop's t,emax is stored as t,1-emax,emax */
	int subnormal, saturation, infinity, explim, tininess;
	int has_prob;			/* -p given (needs --flip 1 or 2) */
	int has_threads;		/* --threads given */
	const char *rnd_arg;		/* -r as given: a mode or a comma list */

	/* block-scaled formats (fplab/block.h): a command that takes them
	 * sets block_ok before cli_round_finish; -f mxfp4 then finishes with
	 * is_block = 1, block = the descriptor and fmt = block.elem.  Without
	 * block_ok a block spec is a usage error naming the command's limit. */
	int block_ok;
	int is_block;
	fpl_block_format block;
};

/* Defaults: fp16, ne, seed 0, sr_bits 32, no flips, one thread. */
void cli_round_init(struct cli_round *ro);

/*
 * Handle option code `c` with argument `arg`.  Returns 1 when the option
 * was a rounding option and was valid, 0 when it is not a rounding option
 * (the command handles it), or -2 when the value is invalid (message
 * printed; the caller exits CLI_EXIT_USAGE).
 */
int cli_round_option(struct cli_round *ro, int c, const char *arg);

/*
 * Resolve the format and apply the switches.  Returns 0, or -2 for a
 * usage error (unknown or impossible format, with a suggestion) or -1 for
 * a runtime error (an unreadable .fmt file); the message is printed.
 */
int cli_round_finish(struct cli_round *ro);

/*
 * A sweep: -f and -r take comma lists (-f fp16,bf16 -r ne,sp); the grid
 * is every combination, format-major (fp16 ne, fp16 sp, bf16 ne, ...),
 * each a finished copy of the command's options.  A -f value that names
 * an existing .fmt file is one format even with commas in its path.
 * Returns 0, or -2 (usage error printed) or -1 as cli_round_finish.
 */
struct cli_grid {
	struct cli_round *ro;
	size_t n, nformats, nmodes;
	char *store;		/* the split names */
};
int cli_round_grid(const struct cli_round *base, struct cli_grid *g);
void cli_grid_release(struct cli_grid *g);

/*
 * Resolve a format name, alias, eXmY or .fmt path alone (no switches), as
 * -f does.  Returns 0, -2 (unknown/impossible, message printed) or -1.
 */
int cli_format_resolve(fpl_format *f, const char *name);

/* All catalogue names and aliases (static storage); `*n` their number. */
const char *const *cli_format_names(size_t *n);

/* -------------------------------------------------------- text input */
/* The inexact numbers of one read, in order (a growable list). */
struct cli_inexact_list {
	fpl_inexact *v;
	size_t n, cap;
};

/*
 * A text source: numbers separated by blanks (spaces, tabs, commas are
 * NOT separators), `#` to end of line is a comment.  Lines are counted
 * from 1 for messages: "fplab: round: FILE: line 3: 'abc' is not a number"
 * (FILE is "stdin" for standard input; the token is escaped, fpl_escape).
 *
 * Values are stored as binary64.  A number binary64 cannot hold exactly
 * (cli_parse_wide) is stored as its nearest binary64 and listed in
 * `inexact` with its position among the values of the read, so that the
 * caller can round the number itself once (fpl_round_parts) instead.
 */
struct cli_text {
	FILE *fp;
	const char *name;	/* file name, or NULL for stdin */
	long line;		/* number of the line last read */
	char *buf;		/* the line (owned) */
	size_t cap;
	int own;		/* fclose on release */
	char *pos;		/* rest of a line cut by `max`, else NULL */
	int partial;		/* 1: the last call stopped inside a line */
	struct cli_inexact_list inexact;	/* of the last cli_text_line call */
};

/* Open `path` ("-" or NULL = stdin).  Returns 0 or -1 (message printed;
 * also when cli_text_dtype, the command's --dtype, is set: it applies to
 * tensor files only and must not be silently ignored on text). */
int cli_text_open(struct cli_text *t, const char *path);
extern fpl_dtype cli_text_dtype;
void cli_text_release(struct cli_text *t);

/*
 * Read the next line holding at least one number; store up to `max`
 * values in `vals` and their number in *n.  Returns 1 for a line, 0 at end
 * of input, -1 on error (message printed: a non-number names file, line
 * and token).  A line of more than `max` numbers comes in pieces: after a
 * piece that stops inside the line, t->partial is 1 and the next call
 * continues the same line.  t->inexact then lists the numbers of this
 * call that binary64 cannot hold (pos indexes vals).
 */
int cli_text_line(struct cli_text *t, double *vals, size_t max, size_t *n);

/* ------------------------------------------------------ binary input */
/*
 * A stream of values from a file: text (any layout), raw binary
 * f64/f32/f16/bf16 (little-endian), .npy, or `codes` (raw little-endian
 * codes of a format, 1, 2, 4 or 8 bytes wide by its width).
 */
enum cli_in_kind {
	CLI_IN_TEXT = 0,
	CLI_IN_F64,
	CLI_IN_F32,
	CLI_IN_F16,
	CLI_IN_BF16,
	CLI_IN_NPY,
	CLI_IN_CODES
};
/* Parse an --in name; returns 0 or -2 (usage error printed). */
int cli_in_parse(const char *s, enum cli_in_kind *out);

struct cli_reader {
	enum cli_in_kind kind;
	const char *name;		/* for messages; NULL = stdin */
	const fpl_format *codes_fmt;	/* for CLI_IN_CODES */
	struct cli_text text;
	FILE *fp;
	int own;
	fpl_tensor_file *tf;		/* npy, or any tensor file (cli_is_tensor_file) */
	fpl_tensor_stream *ts;
	size_t ti;			/* the tensor being streamed */
	/* tensor files: the tensor being read (shape, dtype, storage order
	 * for cli_writer_tensor); NULL for text and raw input */
	const fpl_tensor_info *info;
	/* set by the caller after open: called when reading moves on to the
	 * next tensor of an .npz or .safetensors file (empty ones included),
	 * before its values; nonzero stops the read (error already printed) */
	int (*on_tensor)(void *ctx, const fpl_tensor_info *ti);
	void *on_tensor_ctx;
	unsigned char *raw;		/* raw read buffer */
	size_t rawcap;
	uint64_t done;			/* values delivered so far */
	struct cli_inexact_list inexact;	/* text: of the last read (pos indexes buf) */
};

/* Open `path` ("-"/NULL = stdin, not for npy).  npy_dtype (--dtype) says
 * what an .npy of raw codes holds (<u2 as bf16 or f16, |u1 as e4m3fn or
 * e5m2; FPL_DT_UNKNOWN: none, fplab/tensor.h).  With kind CLI_IN_TEXT (the
 * default) a file that cli_is_tensor_file() recognises is read through
 * fpl_tensor_open (FPL_TK_AUTO): every tensor of it, one after the other,
 * each in storage order.  Returns 0 or -1. */
int cli_reader_open(struct cli_reader *r, const char *path, enum cli_in_kind kind,
		    const fpl_format *codes_fmt, fpl_dtype npy_dtype);
/* --dtype NAME for `round` and `calc`: 0, or -2 (usage error printed,
 * with the valid names). */
int cli_dtype_parse(const char *s, fpl_dtype *out);
/* The same for an input's --dtype, which also names integers (uint8 and
 * uint16 for '|u1' and '<u2' codes; int8 .. uint64 for raw input). */
int cli_in_dtype_parse(const char *s, fpl_dtype *out);
/*
 * Up to `cap` values into buf; *got = 0 at the end.  Returns 0 or -1
 * (message printed: truncated element, non-number, I/O error).  For text,
 * r->inexact lists the numbers of this read that binary64 cannot hold
 * (as cli_text_line); binary input is always exact (the list is empty).
 */
int cli_reader_read(struct cli_reader *r, double *buf, size_t cap, size_t *got);
/* 1 when `path` is a regular file named .npy, .npz or .safetensors or
 * starting with the magic of one of them, else 0 (stdin, text, raw). */
int cli_is_tensor_file(const char *path);
/* The elements of a column-major (fortran_order) tensor of `shape`, src in
 * storage order, into dst in C (row-major, logical) order.  No aliasing. */
void cli_fortran_to_c(double *dst, const double *src, int ndim, const uint64_t *shape);
/* The inverse: src in C order into dst in column-major storage order. */
void cli_c_to_fortran(double *dst, const double *src, int ndim, const uint64_t *shape);
void cli_reader_release(struct cli_reader *r);

/* ------------------------------------------------------- value output */
enum cli_out_kind {
	CLI_OUT_TEXT = 0,	/* shortest decimal that reads back to the same binary64 */
	CLI_OUT_HEX,		/* C99 %a */
	CLI_OUT_BITS,		/* the target encoding, 0x3c00 */
	CLI_OUT_F64,		/* raw little-endian binary64 */
	CLI_OUT_F32,		/* raw little-endian binary32 (round to nearest) */
	CLI_OUT_NPY,		/* .npy: the input tensor's shape, storage order and
				 * dtype (cli_writer_tensor), else binary64 (n,) */
	CLI_OUT_NPZ,		/* .npz: one .npy member per input tensor */
	CLI_OUT_SAFETENSORS	/* .safetensors: one entry per input tensor, C order */
};
/* Parse an --out name; returns 0 or -2 (usage error printed). */
int cli_out_parse(const char *s, enum cli_out_kind *out);
/* The output kind -o PATH's extension names (.npy .npz .safetensors), or
 * dflt (no --out given: the file name decides). */
enum cli_out_kind cli_out_from_path(const char *path, enum cli_out_kind dflt);

/*
 * Format one value as text into buf (at least CLI_VALUE_MAX bytes):
 * TEXT, HEX or BITS (BITS needs f; a value without a code prints "none").
 * NaN prints "nan" in TEXT, and with its sign and payload in HEX
 * (cli_nan_str); infinities "inf" and "-inf".  Returns buf.
 */
#define CLI_VALUE_MAX 48
char *cli_value_str(char *buf, double x, enum cli_out_kind kind, const fpl_format *f);

/* A NaN as it reads back (fpl_parse_number): sign, "nan" or "snan", and
 * the binary64 payload when nonzero: "-nan", "nan(0x5)", "snan(0x1)". */
char *cli_nan_str(char *buf, double x);

/* Code c of f as "0x" and (nbits+3)/4 hex digits, into buf (CLI_VALUE_MAX). */
char *cli_code_str(char *buf, const fpl_format *f, uint64_t c);

/* ------------------------------------------------------ atomic output */
/*
 * `-o FILE` output: a temporary FILE.tmp-XXXXXX next to FILE, renamed over
 * it only on success, removed on failure, so FILE never holds partial
 * output.  Without a path ("-" or NULL) it is stdout.  An existing FILE
 * that is not a regular file (/dev/null, /dev/full, a FIFO) is written in
 * place.  Guarantees:
 *   - SIGHUP, SIGINT, SIGTERM (unless ignored) remove every open output's
 *     temporary, then the process dies of the signal (status 128+signal);
 *     at most 8 outputs are open at once.
 *   - A replaced FILE keeps its mode, and its owner and group where the
 *     user may give them (root); a group that cannot be kept gets no more
 *     access than others had.  A new FILE gets 0666 less the umask.
 *   - A symbolic link FILE (dangling or not) stays a link: the file it
 *     names is replaced, with the temporary next to that file.
 *   - Messages: "cannot create a temporary file in 'DIR' for 'FILE': ...",
 *     "write error on 'FILE': ...", "cannot replace 'TARGET': ...".
 */
struct cli_output {
	FILE *fp;
	char *path;		/* as given, NULL for stdout */
	char *target;		/* the file replaced: path, or what its links name */
	const char *tmp;	/* the temporary, NULL when writing in place */
	int slot;		/* its slot in the signal-cleanup registry */
};
int cli_output_open(struct cli_output *o, const char *path);
/* ok != 0: flush, check, rename (returns 0 or -1, message printed);
 * ok == 0: discard the temporary (returns -1). */
int cli_output_close(struct cli_output *o, int ok);
/* Report a write error on o (errno, or EIO when errno is 0): "write error
 * on 'FILE': ..." or, once per process, "write error on stdout: ...".
 * Returns -1. */
int cli_output_error(const struct cli_output *o);

/*
 * A stream of result values in one --out kind: text kinds one value per
 * line, f64/f32 raw little-endian, npy with a header for the final count
 * (when `known` is UINT64_MAX the body is spooled to an unlinked temporary
 * file, next to FILE or in $TMPDIR or /tmp for stdout, and the header
 * written at the end, so memory stays bounded).
 */
struct cli_writer {
	enum cli_out_kind kind;
	const fpl_format *f;		/* for BITS */
	struct cli_output out;
	FILE *spool;			/* npy with unknown count */
	uint64_t known, n;
	/* tensor outputs: the tensors announced by cli_writer_tensor, each
	 * from value `start` to the next one's start (or w->n) */
	struct cli_wtensor {
		fpl_tensor_info info;	/* name, dtype written, shape, order */
		int shaped;		/* info's shape is the input's */
		uint64_t start;
	} *t;
	size_t nt, tcap;
	fpl_dtype out_dtype;		/* --out-dtype, FPL_DT_UNKNOWN: keep */
	void *buf;			/* conversion buffer */
	size_t bufcap;
};
/* Stdin copied into an unlinked temporary file kept open for the rest of
 * the run, for a command that reads its input more than once; path gets
 * "/dev/fd/N", which opens it from its start.  0, or -1 after a message. */
int cli_stdin_spool(char *path, size_t len);
int cli_writer_open(struct cli_writer *w, const char *path, enum cli_out_kind kind,
		    const fpl_format *f, uint64_t known);
/*
 * Announce, before its values are put, that the next values form tensor
 * `info` (NULL: values of no tensor -- text, raw -- named arr_N as
 * np.savez names them, flat).  Tensor outputs keep each tensor's name,
 * shape and storage order (.npy, .npz members: fortran_order kept, values
 * come in storage order so the logical order is kept; .safetensors: C
 * order, reordered in memory) when the count put matches, and its dtype
 * unless out_dtype (--out-dtype) names one; values are rounded to
 * nearest-even into the dtype (as numpy's astype).  An .npy of several
 * tensors is flat: shape (n,), dtype out_dtype or f64.  Other outputs
 * ignore it.  Returns 0 or -1 (message printed).
 */
int cli_writer_tensor(struct cli_writer *w, const fpl_tensor_info *info, fpl_dtype out_dtype);
/* Write n values; returns 0 or -1 (message printed). */
int cli_writer_put(struct cli_writer *w, const double *v, size_t n);
/* ok != 0: finish and commit (0 or -1); ok == 0: discard (-1). */
int cli_writer_close(struct cli_writer *w, int ok);

/* Flush and check stdout; returns 0, or -1 with "write error on stdout: ..."
 * unless cli_output_error() already said it. */
int cli_flush_stdout(void);

/* ------------------------------------------- machine-readable reports */
enum cli_report { CLI_REPORT_TEXT = 0, CLI_REPORT_TSV, CLI_REPORT_JSON, CLI_REPORT_NDJSON };

/* --tsv, --json and --ndjson, spelled the same in every command that
 * reports figures; cli_report_option() maps their codes to the kind
 * (returns 1) or returns 0 for other codes. */
#define CLI_REPORT_LONGOPTS \
	{ "tsv", no_argument, NULL, CLI_OPT_TSV }, \
	{ "json", no_argument, NULL, CLI_OPT_JSON }, \
	{ "ndjson", no_argument, NULL, CLI_OPT_NDJSON }
int cli_report_option(enum cli_report *kind, int c);

/*
 * A table of records.  TEXT aligns columns (buffered until the end), TSV
 * prints a header line of column names then tab-separated rows, JSON
 * prints one document: an array of objects, one per line, keyed by column
 * names; NDJSON one object per line and nothing else.
 * Numbers: shortest round-trip decimal; in JSON, inf and nan are strings.
 *   struct cli_table t; cli_table_begin(&t, fp, kind, cols, ncols);
 *   cli_table_str(&t, "fp16"); cli_table_int(&t, 5); ... (row by row)
 *   cli_table_end(&t);
 * Nothing is written before the first cell (cli_table_end of an empty
 * table writes the header alone); a command that fails calls
 * cli_table_abandon() instead, which writes nothing when no row was
 * begun and otherwise ends the table as it stands.
 */
struct cli_table {
	FILE *fp;
	enum cli_report kind;
	const char *const *cols;
	int ncols;
	int col;		/* next column of the current row */
	size_t rows;
	int started;		/* the header is out */
	char **cells;		/* TEXT: buffered cells */
	size_t ncells, capcells;
};
void cli_table_begin(struct cli_table *t, FILE *fp, enum cli_report kind,
		     const char *const *cols, int ncols);
void cli_table_str(struct cli_table *t, const char *s);
void cli_table_num(struct cli_table *t, double x);
void cli_table_int(struct cli_table *t, long long v);
/* A cell without a value: "-" in text, empty in TSV, null in JSON. */
void cli_table_none(struct cli_table *t);
/* x, or no value (cli_table_none) when x is NaN: for figures that NaN
 * marks as undefined (an error over no values), never for results. */
void cli_table_num_or_none(struct cli_table *t, double x);
void cli_table_end(struct cli_table *t);
void cli_table_abandon(struct cli_table *t);

/*
 * The error and event statistics of a rounding, with one meaning in every
 * command that reports them (round, calc, hist, and the simulators):
 *   inexact, underflow, overflow, saturated, flushed, invalid: how many
 *     results raised the engine's flag of that name (fplab/state.h);
 *     "underflow" is IEEE 754's: the result is tiny (before or after
 *     rounding, --tininess) and inexact;
 *   became_zero: results that are +-0 although the exact value is finite
 *     and nonzero, whatever the cause (rounded to zero below the
 *     subnormals, no subnormals, flushed by FTZ);
 *   nan, inf: results y that are NaN, +-infinity, whatever x;
 *   *_rel_error: |y - x| / |x| over the values whose exact value x is
 *     finite and nonzero and whose result y is finite (a value that
 *     became zero counts as 1, and is counted in became_zero as well),
 *     and +inf for every y that is NaN or infinite while x is finite
 *     (zero included): a failed result never looks accurate;
 *   *_abs_error: |y - x| over the values with x finite, +inf where y is
 *     not finite.
 * A value whose x is NaN or infinite is not compared (only counted in
 * nan and inf).  mean, RMS (root mean square) and max; no value (NaN in
 * cli_errstats_values, an empty cell in the table) when no value
 * qualifies.
 */
struct cli_errstats {
	uint64_t n;			/* values seen */
	uint64_t became_zero, nan, inf;
	uint64_t rel_n, abs_n;
	double rel_sum, rel_sumsq, rel_max;
	double abs_sum, abs_sumsq, abs_max;
	double worst;			/* an exact value (binary64) reaching rel_max */
};
#define CLI_ERRSTATS_NEVENTS 9	/* inexact .. became_zero, nan, inf */
#define CLI_ERRSTATS_NERRORS 6	/* mean_rel_error .. max_abs_error */
#define CLI_ERRSTATS_NCOLS (CLI_ERRSTATS_NEVENTS + CLI_ERRSTATS_NERRORS)
extern const char *const cli_errstats_cols[CLI_ERRSTATS_NCOLS];
/* Add one value: x exact (a binary64), y its result. */
void cli_errstats_add(struct cli_errstats *s, double x, double y);
/* Add one value whose exact x is wider than binary64: xd its nearest
 * binary64, rel its relative error (its absolute error is taken as
 * rel |xd|, within 2^-53 of rel |x|). */
void cli_errstats_add_rel(struct cli_errstats *s, double xd, double y, double rel);
void cli_errstats_merge(struct cli_errstats *to, const struct cli_errstats *from);
/* The figures of the CLI_ERRSTATS_NCOLS columns, in cli_errstats_cols
 * order: the event counts (from count[], an fpl_state's) into ev, the
 * errors into err. */
void cli_errstats_values(const struct cli_errstats *s, const uint64_t count[FPL_NFLAGS],
			 uint64_t ev[CLI_ERRSTATS_NEVENTS], double err[CLI_ERRSTATS_NERRORS]);
/* Those figures as table cells. */
void cli_errstats_cells(struct cli_table *t, const struct cli_errstats *s,
			const uint64_t count[FPL_NFLAGS]);

/* The names of the FPL_FLAG_* bits in flags, "inexact,underflow", or "-"
 * for none, into buf (len bytes; 96 hold them all).  Returns buf. */
char *cli_flag_names(char *buf, size_t len, unsigned flags);

/* JSON string literal of s (quotes and escapes) on fp. */
void cli_json_str(FILE *fp, const char *s);
/* Shortest round-trip decimal of x into buf (CLI_VALUE_MAX bytes). */
char *cli_shortest(char *buf, double x);

/* --------------------------------- accumulation models (cli_accum.c) */
/*
 * The options of the commands that simulate an accumulation (dot, gemm,
 * reduce), spelled the same in all three:
 *   -f SPEC[,SPEC...]  input formats (A and B), SPEC = fpl_accum_parse_spec's
 *   NAME[+daz][+ftz][+nosub][+sat][:MODE|:given], or a block format
 *   BLOCK[:MODE] (fplab/block.h; fpl_accum_set_block cuts it along K);
 *   --a-format/--b-format SPEC
 *   --prod exact|SPEC  --acc SPEC[,...]  --order ORDER[,...]
 *   --out-format SPEC  --profile NAME  --gen GEN  --reference loaded|given
 *   -r MODE[,...]  the mode of every rounding whose SPEC gives none
 *   --seed N --sr-bits R --threads N  (the other rounding options are refused)
 * -f, -r, --acc and --order take comma lists: the grid is every
 * combination, in that nesting (-f outermost, --order innermost), each job
 * with a fresh state (counter 0), so a row equals the same run alone.
 */
enum {
	CLI_OPT_A_FORMAT = 0x1080,
	CLI_OPT_B_FORMAT,
	CLI_OPT_PROD,
	CLI_OPT_ACC,
	CLI_OPT_ORDER,
	CLI_OPT_OUT_FORMAT,
	CLI_OPT_PROFILE,
	CLI_OPT_GEN,
	CLI_OPT_REFERENCE
};

#define CLI_MODEL_LONGOPTS \
	{ "a-format", required_argument, NULL, CLI_OPT_A_FORMAT }, \
	{ "b-format", required_argument, NULL, CLI_OPT_B_FORMAT }, \
	{ "prod", required_argument, NULL, CLI_OPT_PROD }, \
	{ "acc", required_argument, NULL, CLI_OPT_ACC }, \
	{ "order", required_argument, NULL, CLI_OPT_ORDER }, \
	{ "out-format", required_argument, NULL, CLI_OPT_OUT_FORMAT }, \
	{ "profile", required_argument, NULL, CLI_OPT_PROFILE }, \
	{ "gen", required_argument, NULL, CLI_OPT_GEN }, \
	{ "reference", required_argument, NULL, CLI_OPT_REFERENCE }

/* The synopsis fragment of the model options. */
#define CLI_MODEL_SYNOPSIS \
	"[-f SPEC,...] [--a-format SPEC] [--b-format SPEC]\n" \
	"    [--prod exact|SPEC] [--acc SPEC,...] [--order ORDER,...]\n" \
	"    [--out-format SPEC] [--profile NAME] [-r MODE,...] [--seed N]\n" \
	"    [--sr-bits R] [--threads N] [--reference loaded|given]"

struct cli_model {
	struct cli_round ro;	/* -f, -r, --seed, --sr-bits, --threads */
	const char *a_format, *b_format, *prod, *acc, *order, *out_format, *profile;
	struct fpl__gen gen;	/* --gen (util/gen.h, shared with fplab-mpi); generated
				 * inputs use stream 1 for A and x, 2 for B */
	int reference_given;	/* --reference given */
};

/* One combination of the grid: the model, its spelling per column, and
 * a fresh state (seed, sr_bits, threads set, counter 0). */
#define CLI_SPEC_MAX 96
struct cli_model_job {
	fpl_accum_model mod;
	char a[CLI_SPEC_MAX], b[CLI_SPEC_MAX], prod[CLI_SPEC_MAX], acc[CLI_SPEC_MAX],
	     order[CLI_SPEC_MAX], out[CLI_SPEC_MAX];
	fpl_state st;
	int generated;		/* the inputs come from --gen */
};

void cli_model_init(struct cli_model *mo);
/* As cli_round_option: 1 handled, 0 not a model option, -2 usage error
 * (message printed). */
int cli_model_option(struct cli_model *mo, int c, const char *arg);
/* arg itself, or, when it holds a control character (so that no option
 * takes it), its escaped copy (fpl_escape; one of a few kept) for
 * parsers whose messages quote it. */
const char *cli_arg_shown(const char *arg);
/* The grid of jobs (*jobs allocated, *n of them).  0, -2 usage error or
 * -1 (messages printed). */
int cli_model_grid(const struct cli_model *mo, struct cli_model_job **jobs, size_t *n);

/* A tensor read whole, in C order.  FILE or FILE:NAME (an .npz member or
 * a .safetensors tensor); text gives ndim 1.  0 or -1 (message names the
 * file and the problem). */
struct cli_tensor {
	double *v;
	size_t n;
	int ndim;
	uint64_t shape[FPL_TENSOR_MAXDIM];
	fpl_dtype dtype;	/* the file's; FPL_DT_UNKNOWN for text */
	/* text: the decimals binary64 cannot hold (v holds their nearest
	 * binary64), in order, pos indexing v; a model loads each of them by
	 * rounding the decimal itself once (cli_operand_load) */
	fpl_inexact *inx;
	size_t ninx;
	int int_src;		/* read from an integer tensor */
};
/* cli_tensor_read keeps no inx: a decimal keeps its nearest binary64,
 * and an integer binary64 cannot hold is refused (for callers whose
 * loads cannot round it once); cli_tensor_read_exact keeps the list,
 * integers included, for cli_operand_load. */
int cli_tensor_read(struct cli_tensor *t, const char *spec);
int cli_tensor_read_exact(struct cli_tensor *t, const char *spec);
/* Tensor `name` of `path` (path:name), or the whole file when name is
 * NULL (a text file); as cli_tensor_read. */
int cli_tensor_read_member(struct cli_tensor *t, const char *path, const char *name);
/* The same as cli_tensor_read_exact (allreduce, optim: their loads hold
 * the list's numbers as fpl_wide_hold says). */
int cli_tensor_read_member_exact(struct cli_tensor *t, const char *path, const char *name);
void cli_tensor_release(struct cli_tensor *t);

/*
 * One operand of a model job read from a file, for cli_operand_load:
 * `what` names it in messages ("-a FILE"); the tensor is stored row-major
 * with rows of `cols` elements (1 for a vector), and the operand the
 * model reads is its transpose when `trans`; its load draws start at
 * d0 (from the job's counter: A at 0, B after A's m*k) in the model's
 * logical order; `b` selects the B format, else A's.
 */
struct cli_operand {
	const struct cli_tensor *t;
	const char *what;
	size_t cols;
	int trans;
	uint64_t d0;
	int b;
};
/*
 * Prepare operand o for job j, where the library's load (fplab/accum.h)
 * cannot do it alone.  A load taken as given: every element must be a
 * value of the format; the first that is not is refused naming the
 * operand, its index in the file and its value.  A rounded load: each
 * decimal of o->t->inx is rounded once, from the decimal, into the
 * format, with the mode and the draw the load gives that element (no
 * flip: the load's own rounding of the result, exact, flips it); the
 * flags are counted into j->st, and *out receives a copy of the data
 * holding those results (which the load then rounds exactly, to
 * themselves), NULL when there is no such decimal.  0 or -1 (message
 * printed).
 */
/* "OPT FILE" with FILE escaped (fpl_escape), for messages naming an
 * operand; returns buf, of CLI_WHAT_MAX bytes (a longer name is cut). */
#define CLI_WHAT_MAX 1024
const char *cli_what(char *buf, const char *opt, const char *file);
int cli_operand_load(struct cli_model_job *j, const struct cli_operand *o, double **out);
/* -1 (message naming o and the element) when o->t holds a decimal that
 * binary64 cannot hold: `why` says which path needs binary64 (or
 * binary32) values, such as "the native kernel takes binary32 values". */
int cli_operand_exact(const struct cli_operand *o, const char *why);
/* cli_operand_exact of -a FILE and -b FILE for the native kernels, which
 * read binary32 values: 0, or -1 with the message naming the first. */
int cli_operands_native_exact(const struct cli_tensor *a, const char *afile,
			      const struct cli_tensor *b, const char *bfile);

/* One report row of an accumulation run.  has_result: result and exact
 * are those of the single output (dot, a one-output reduce), else the
 * cells have no value; has_bound: normwise and bound are defined (dot,
 * gemm, reduce sum).  The relative errors follow fpl_accum_errors' rule
 * (a NaN or infinite result of a finite exact value: +inf); with no
 * relative error (rel_n 0) the error cells have no value, and with no
 * output compared (compared 0) normwise neither. */
struct cli_accum_row {
	double result, exact;
	int has_result, has_bound;
	uint64_t rel_n, compared;
	double mean_rel, rms_rel, max_rel, median_rel, normwise, bound;
	uint64_t became_zero, nan, inf;
	uint64_t count[FPL_NFLAGS];
	double seconds, reference_seconds, flops;
	fpl_block_stats blocks;	/* block events of A's and B's loads together */
};
#define CLI_MODEL_NCOLS 6
extern const char *const cli_model_cols[CLI_MODEL_NCOLS];
#define CLI_ACCUM_NCOLS 20
extern const char *const cli_accum_cols[CLI_ACCUM_NCOLS];
/* The errors of n results r against binary64 references ref (not from
 * fpl_exact: reduce's other operations), under the same rule, into row's
 * rel_n .. inf fields (has_bound left alone).  0 or -1 (out of memory). */
int cli_accum_compare(struct cli_accum_row *row, const double *r, const double *ref, size_t n);
void cli_model_cells(struct cli_table *t, const struct cli_model_job *j);
void cli_accum_cells(struct cli_table *t, const struct cli_accum_row *r);
/* The block events of the loads (fplab/block.h), columns after
 * cli_accum_cols when some job of the grid has a block operand
 * (cli_model_has_blocks); a row without one has 0 in them. */
#define CLI_ACCUM_NBLOCKCOLS 6
extern const char *const cli_accum_block_cols[CLI_ACCUM_NBLOCKCOLS];
int cli_model_has_blocks(const struct cli_model_job *jobs, size_t n);
void cli_accum_block_cells(struct cli_table *t, const struct cli_accum_row *r);
/*
 * Run job j once: kind CLI_RUN_GEMM (C = A.B, row-major, c m x n with
 * ldc n), CLI_RUN_DOT (m = n = 1, a and b vectors of k, b's stride ldb) or
 * CLI_RUN_SUM (m = n = 1, b unused), then measure it with
 * fpl_accum_errors_gemm against the loaded inputs (reference_given: the
 * inputs as given) into row.  0 or -1 (message printed).
 */
enum { CLI_RUN_GEMM = 0, CLI_RUN_DOT, CLI_RUN_SUM };
int cli_accum_run(struct cli_model_job *j, int reference_given, int kind, double *c,
		  size_t m, size_t n, size_t k, const double *a, size_t lda, int transa,
		  const double *b, size_t ldb, int transb, struct cli_accum_row *row);
/* Seconds of a monotonic clock. */
double cli_now(void);

/*
 * Generated inputs of a model that takes them as given (a profile, or a
 * ':given' spec) are first rounded (ne) into that input format: a
 * generator's doubles are not data of any format.  *ra / *rb receive
 * rounded copies of a[0..na) / b[0..nb) (b may be NULL), or NULL where
 * the input is used as it is (files, rounded loads).  0 or -1.
 */
int cli_accum_given(const struct cli_model_job *j, size_t na, const double *a, double **ra,
		    size_t nb, const double *b, double **rb);

/* --backend of dot and gemm (cli_native.c). */
enum cli_backend { CLI_BACKEND_EMU = 0, CLI_BACKEND_NATIVE, CLI_BACKEND_BOTH, CLI_BACKEND_ONEDNN };
#define CLI_OPT_BACKEND 0x10a0
#define CLI_BACKEND_LONGOPT { "backend", required_argument, NULL, CLI_OPT_BACKEND }
/* 0, or -1 with the message printed. */
int cli_backend_parse(const char *arg, enum cli_backend *b);
/* --backend's limits for a command of nj jobs writing `output` (or
 * NULL): native and both run one model, a --profile, and both writes
 * nothing.  0, or the usage error's exit code (message and usage
 * printed). */
int cli_backend_check(const char *usage, enum cli_backend be, size_t nj, const char *output,
		      const char *profile);
/*
 * Job j (a profile with a native GEMM kernel) under --backend native or
 * both, or any model beside oneDNN's matmul under --backend onednn, on the inputs as cli_accum_run takes them: prints the report (a
 * row per backend, `mismatches` between them) on stdout in `report` form
 * and leaves the native result in c (m x n).  0 or -1 (message printed:
 * no --profile, no kernel, a kernel this CPU cannot run, inputs that are
 * not binary32 values).
 */
int cli_native_accum(struct cli_model_job *j, enum cli_backend be, enum cli_report report,
		     int kind, double *c, size_t m, size_t n, size_t k, const double *a,
		     size_t lda, int transa, const double *b, size_t ldb, int transb,
		     const char *profile);
/*
 * oneDNN's matmul (cli_onednn.c, libdnnl.so.2 loaded at run time): C (m x
 * n, f32) = A (m x k) B (k x n), row major; bf16 != 0: A and B as bf16
 * (each float must be a bf16 value), else f32.  threads > 0 sets OpenMP's
 * thread count.  impl receives oneDNN's implementation name.  0, or -1
 * with the message printed (no libdnnl: the package to install).
 */
int cli_onednn_gemm(int bf16, size_t m, size_t n, size_t k, const float *A, const float *B,
		    float *C, int threads, char *impl, size_t implsz);

/* --backend of round (cli_round_native.c): the native conversion of one
 * format and mode beside the engine. */
struct cli_round_native {
	enum cli_backend be;
	const fpl_native_kernel *k;
	fpl_format fmt;			/* the emulated twin */
	fpl_rnd rnd;
	const char *twin_note;		/* the twin, in words */
	struct cli_errstats es;		/* the native results' errors */
	uint64_t n, mismatches;
	double t_native;
	float *xf;
	uint16_t *codes;
	double *yn;
};
/* For be native or both: find the conversion of *fmt in mode rnd, check
 * this CPU runs it, and turn *fmt into its emulated twin (bf16: ftz,
 * tininess before); buffers for chunks of `chunk`.  be emu: nothing.  0
 * or -1 (message printed). */
int cli_round_native_setup(struct cli_round_native *rn, enum cli_backend be, fpl_format *fmt,
			   fpl_rnd rnd, size_t chunk);
/* Convert x[0..n) natively: native: the results into y; both: y holds the
 * emulated results, compared.  0 or -1 (an input that is not a binary32
 * value, named by its position). */
int cli_round_native_chunk(struct cli_round_native *rn, const double *x, double *y, size_t n);
/* The side-by-side table (emu: the job's errors and time, for both). */
void cli_round_native_report(const struct cli_round_native *rn, const struct cli_errstats *emu,
			     double emu_seconds, enum cli_report report, FILE *fp);
void cli_round_native_release(struct cli_round_native *rn);

/* -o FILE: n values of shape (ndim, shape) through cli_writer (.npy
 * .npz .safetensors by extension, else text).  0 or -1. */
int cli_accum_write(const char *path, const double *v, size_t n, int ndim,
		    const uint64_t *shape);

/* A progress bar on stderr, only when stderr is a terminal and the work
 * lasts more than a second: start(what, total units of work), step(units
 * done so far), end.  dot, gemm and reduce count flops (every model's
 * and every reference's); large totals are shown as a percentage. */
void cli_progress_start(const char *what, size_t total);
void cli_progress_step(size_t done);
/* Add units to the work done (instead of step). */
void cli_progress_add(size_t units);
/* Watch *ctr, a count the library raises atomically (relaxed) from other
 * threads: the work done is what it was plus *ctr until
 * cli_progress_watch(NULL), which adds *ctr's last value for good. */
void cli_progress_watch(const uint64_t *ctr);
/* The units of work of one accumulation job: m*n*k products or terms of
 * the model, m*n*(k+1) of its reference. */
#define CLI_ACCUM_WORK(m, n, k) ((double)(m) * (double)(n) * (2.0 * (double)(k) + 1))
void cli_progress_end(void);

int cmd_dot(int argc, char **argv);
int cmd_gemm(int argc, char **argv);
int cmd_models(int argc, char **argv);
int cmd_reduce(int argc, char **argv);

/* ------------------------------------- all-reduce gradients (cli_layers.c) */
/*
 * The gradients of `fplab allreduce`: layers, each n values on each of P
 * nodes, generated (--layers), read one file per node (--inputs) or read
 * from one file whose tensors stack the nodes along axis 0 (--stacked).
 * Node i's values of layer l are l->g[i * l->n .. (i + 1) * l->n).
 */
struct cli_layer {
	char name[FPL_TENSOR_NAME_MAX];	/* "layer0", ... or the tensor's name */
	size_t n;			/* values per node */
	int ndim;			/* shape of one node's tensor (1, n when generated) */
	uint64_t shape[FPL_TENSOR_MAXDIM];
	struct fpl__gen gen;		/* --layers: its distribution */
	int fp32;			/* --fp32-layers names it */
	double *g;			/* nodes * n values */
	/* the numbers of the files binary64 cannot hold (pos indexes g),
	 * held in g as cli_layers_hold last chose */
	fpl_inexact *inx;
	size_t ninx;
};
struct cli_layers {
	struct cli_layer *l;
	size_t n;
	uint32_t nodes;			/* P; 0 until known */
};

/*
 * --layers SPEC: LAYER[;LAYER...], LAYER = [Kx]SIZE:GEN with GEN as
 * --gen reads it (normal:MU,SIGMA lognormal:MU,SIGMA uniform:A,B ints:A,B
 * ones) and K copies of the layer.  Fills names, sizes and generators (no
 * values yet).  0 or -2 (usage error printed).
 */
int cli_layers_parse(struct cli_layers *ls, const char *spec);
/*
 * Generate every parsed layer on `nodes` nodes: value e of node i of
 * layer l is element e of fpl__gen_fill(gen, seed, FPL__GEN_LAYER_STREAM(l, i)),
 * so nodes and layers draw from distinct streams (fplab-mpi's ranks use
 * the same streams).  0 or -1.
 */
int cli_layers_generate(struct cli_layers *ls, uint32_t nodes, uint64_t seed);
/* --inputs: files[0..nfiles) one per node (P = nfiles), each holding the
 * same tensors (names and sizes) in the same order; layer l is tensor l.
 * A text file is one layer.  0 or -1 (message names file and tensor). */
int cli_layers_read_nodes(struct cli_layers *ls, const char *const *files, size_t nfiles);
/* --stacked: every tensor of `path` has a leading axis of P (nodes, or
 * the first tensor's when nodes is 0); slice i is node i's.  0, -1, or -2
 * when the file disagrees with --nodes (message printed). */
int cli_layers_read_stacked(struct cli_layers *ls, const char *path, uint32_t nodes);
/* --fp32-layers LIST: comma list of layer names, 0-based indices, `first`
 * or `last`; sets fp32.  0 or -2 (unknown layer, with a suggestion). */
int cli_layers_fp32(struct cli_layers *ls, const char *list);
/*
 * Hold layer l's numbers that binary64 cannot hold (l->inx) in l->g as
 * the cast into f in mode rnd (sp: sr_bits) reads them once
 * (fpl_wide_hold): rounded to odd for formats of 51 bits or fewer.
 * Returns 1 when the cast rounds each of them as the number itself, 0
 * when it may not (fpl_wide_hold's cases; the caller warns).
 */
int cli_layers_hold(struct cli_layer *l, const fpl_format *f, fpl_rnd rnd, int sr_bits);
void cli_layers_release(struct cli_layers *ls);

/*
 * A format SPEC as fpl_accum_parse_spec reads it, NAME[+switches][:MODE],
 * for option `opt` (messages: unknown format with a suggestion, bad
 * switches or mode).  given: NULL, or ":given" is accepted and sets it.
 * *has_mode says whether a :MODE was given; rnd is left alone otherwise.
 * 0 or -2.  (cli_model.c; every model and format option goes through it.)
 */
int cli_format_spec(const char *opt, const char *s, fpl_format *f, fpl_rnd *rnd, int *given,
		    int *has_mode);

int cmd_allreduce(int argc, char **argv);

/* ----------------------- optimizer hyperparameters (cli_hyper.c) */
/*
 * --optim, --lr, --momentum, --dampening, --nesterov, --weight-decay,
 * --lr-decay, --initial-accumulator, --betas and --eps, shared by
 * `fplab optim` and `fplab train`.  Put CLI_HYPER_LONGOPTS into the
 * getopt_long table, start from cli_hyper_init(), hand every option code
 * to cli_hyper_option(), and after parsing set *out to the defaults for
 * h->algo and call cli_hyper_finish().
 */
enum {
	CLI_OPT_OPTIM = 0x10c0,
	CLI_OPT_LR,
	CLI_OPT_MOMENTUM,
	CLI_OPT_DAMPENING,
	CLI_OPT_NESTEROV,
	CLI_OPT_WEIGHT_DECAY,
	CLI_OPT_LR_DECAY,
	CLI_OPT_INIT_ACC,
	CLI_OPT_BETAS,
	CLI_OPT_EPS
};

#define CLI_HYPER_LONGOPTS \
	{ "optim", required_argument, NULL, CLI_OPT_OPTIM }, \
	{ "lr", required_argument, NULL, CLI_OPT_LR }, \
	{ "momentum", required_argument, NULL, CLI_OPT_MOMENTUM }, \
	{ "dampening", required_argument, NULL, CLI_OPT_DAMPENING }, \
	{ "nesterov", no_argument, NULL, CLI_OPT_NESTEROV }, \
	{ "weight-decay", required_argument, NULL, CLI_OPT_WEIGHT_DECAY }, \
	{ "lr-decay", required_argument, NULL, CLI_OPT_LR_DECAY }, \
	{ "initial-accumulator", required_argument, NULL, CLI_OPT_INIT_ACC }, \
	{ "betas", required_argument, NULL, CLI_OPT_BETAS }, \
	{ "eps", required_argument, NULL, CLI_OPT_EPS }

/* The options as given (NULL, 0: not given, the optimizer's default). */
struct cli_hyper {
	fpl_opt_algo algo;		/* --optim; sgd unless given */
	const char *lr, *momentum, *dampening, *weight_decay, *lr_decay, *init_acc, *betas, *eps;
	int nesterov;
};

void cli_hyper_init(struct cli_hyper *h);
/* 1 handled, 0 not a hyperparameter option, -2 usage error (an unknown
 * --optim; message printed): the caller adds its usage. */
int cli_hyper_option(struct cli_hyper *h, int c, const char *arg);
/* The options given into *out, which holds the defaults for h->algo
 * (fpl_opt_hyper_init's or the command's own): each option must apply to
 * h->algo, the numbers finite and >= 0 (--dampening any finite number,
 * each beta in [0, 1)), --nesterov needs momentum > 0 and dampening 0.
 * 0 or CLI_EXIT_USAGE (usage_error with `usage`, the message naming the
 * option). */
int cli_hyper_finish(const struct cli_hyper *h, fpl_opt_hyper *out, const char *usage);

/* ---------------------------- optimizer inputs (cli_optim_input.c) */
/*
 * The weights and gradients of `fplab optim`: nt tensors of sizes[j]
 * elements, initial weights w0[j] (binary64), and per step either
 * generated gradients (ggen[j] on stream CLI_OPTIM_G_STREAM(j, s) of the
 * seed) or the gradients of file step s mod nfiles (gp[s * nt + j]).
 * --spikes: at step s, with probability spike_p (draw s of
 * CLI_OPTIM_SPIKE_STREAM), every gradient of the step is multiplied by
 * spike_f.  Step numbers s here are 0-based.
 */
#define CLI_OPTIM_MAX_TENSORS 4096
#define CLI_OPTIM_W_STREAM(j) (((uint64_t)1 << 48) + (uint64_t)(j))
#define CLI_OPTIM_G_STREAM(j, s) (((uint64_t)2 << 48) + ((uint64_t)(j) << 32) + (uint64_t)(s))
#define CLI_OPTIM_SPIKE_STREAM ((uint64_t)3 << 48)

struct cli_optim_data {
	size_t nt, total;		/* tensors, their elements together */
	size_t *sizes;
	char (*names)[FPL_TENSOR_NAME_MAX];	/* tensor0.. or the files' names */
	double **w0;
	struct fpl__gen *wgen, *ggen;	/* per tensor (generated data) */
	uint64_t seed;
	double spike_p, spike_f;
	size_t nfiles;			/* steps held in files; 0: generated */
	double **gp;			/* nfiles * nt pointers into bufs */
	double **bufs;			/* owned buffers */
	size_t nbufs;
	/* the numbers of the files binary64 cannot hold, pos indexing w0[j]
	 * (winx[j], nwinx[j]) or gp[k] (ginx[k], nginx[k]); w0 holds them as
	 * cli_optim_hold_w0 last chose, gp their nearest binary64 */
	fpl_inexact **winx, **ginx;
	size_t *nwinx, *nginx;
	int ginx_any;
	fpl_opt_shape *shapes;		/* per tensor its file's dims (the first file
					 * that gives them: --init, -g, a stack's
					 * slice); NULL when generated (one row) */
};
/* --sizes N[,N...] appended to d; 0, -2 (usage error printed) or -1. */
int cli_optim_sizes(struct cli_optim_data *d, const char *spec);
/* --weights and --grads (either may be NULL) for d->nt tensors: GEN[;GEN...],
 * one for all or one per tensor.  0, -2 (usage error printed) or -1. */
int cli_optim_gens(struct cli_optim_data *d, const char *weights, const char *grads);
/* Generated initial weights (d->wgen) under `seed`, which also becomes the
 * seed of generated gradients and spikes.  0 or -1. */
int cli_optim_generate_weights(struct cli_optim_data *d, uint64_t seed);
/* --init FILE: the tensors (and sizes, names) of FILE in file order. */
int cli_optim_read_init(struct cli_optim_data *d, const char *path);
/* -g FILE...: one file per step, each holding d's tensors in order (sizes
 * set from the first file when d has none yet).  0 or -1. */
int cli_optim_read_steps(struct cli_optim_data *d, const char *const *files, size_t nfiles);
/* --grad-stack FILE: every tensor has a leading step axis.  0 or -1. */
int cli_optim_read_stack(struct cli_optim_data *d, const char *path);
/* Does step s spike?  The true gradients of step s into G[j] (d->sizes[j]
 * each). */
int cli_optim_spike(const struct cli_optim_data *d, uint64_t s);
void cli_optim_grads(const struct cli_optim_data *d, uint64_t s, double *const *G);
/*
 * Read once (fpl_wide_hold), for a run of policy p (sr_bits: its R):
 * cli_optim_hold_w0 holds the numbers of d->winx in d->w0 as p's first
 * rounding of the weights reads them (the master's, ne, for fp32-master
 * and split; else the weight format's); cli_optim_hold_grads copies G
 * (step s of cli_optim_grads) into Gr with the numbers of step s's files
 * held as p's cast into `grad` reads them (times the spike factor on a
 * spike step).  Each returns 1 when those roundings are the numbers' own,
 * 0 when they may not be (the caller warns).
 */
int cli_optim_hold_w0(const struct cli_optim_data *d, const fpl_opt_policy *p, int sr_bits);
int cli_optim_hold_grads(const struct cli_optim_data *d, uint64_t s, const double *const *G,
			 double *const *Gr, const fpl_opt_policy *p, int sr_bits);
void cli_optim_data_release(struct cli_optim_data *d);

int cmd_optim(int argc, char **argv);

/* ------------------------------ training data and model (cli_train_io.c) */
/*
 * The data of `fplab train`.  --data SRC: fashion-mnist (the default; from
 * --data-dir DIR or FPL_FASHION_MNIST_DIR), generated[:N[:D[:C]]] (Gaussian
 * blobs, fpl_dataset_generate under the run's seed; defaults below) or
 * FEATURES,LABELS (tensor files, each PATH or PATH:NAME for an .npz member
 * or a .safetensors tensor).  The test set: --test-data fashion-mnist,
 * FEATURES,LABELS or none; without it Fashion-MNIST's own test set, for a
 * generated set its continuation (examples N.. of the same generator:
 * --test-limit of them, else N/4), for files none.  The limits keep the
 * first examples (0: all).
 */
#define CLI_TRAIN_GEN_N 2048
#define CLI_TRAIN_GEN_D 16
#define CLI_TRAIN_GEN_C 4
struct cli_train_data {
	fpl_dataset train, test;
	int has_test;
	char desc[4200], test_desc[4200];	/* for the SVG's subtitle */
};
/* 0, -1 (runtime error: a file, the data set missing) or -2 (usage error);
 * the message is printed. */
int cli_train_load(struct cli_train_data *d, const char *data, const char *data_dir,
		   const char *test_data, size_t train_limit, size_t test_limit, uint64_t seed);
void cli_train_data_release(struct cli_train_data *d);

/* One policy's final weights for -o: tensors PREFIX/W1, PREFIX/b1, ...
 * (no prefix: W1, b1, ...), W_l of shape (sizes[l], sizes[l-1]). */
struct cli_train_model {
	const char *prefix;
	size_t nsizes;
	size_t sizes[FPL_TRAIN_MAX_LAYERS + 1];
	double *w[FPL_TRAIN_MAX_LAYERS], *b[FPL_TRAIN_MAX_LAYERS];
	int f32;			/* stored as F32 (the weight format fits), else F64 */
};
/* Is every value of f a binary32 value? */
int cli_train_fits_f32(const fpl_format *f);
/* The models as one .safetensors file into o (opened by cli_output_open),
 * then commit it (or discard it on error).  0 or -1 (message printed). */
int cli_train_write_model(struct cli_output *o, const struct cli_train_model *m, size_t nm);

int cmd_train(int argc, char **argv);

#endif
