/* SPDX-License-Identifier: MIT */
/*
 * cmd_help.c - `fplab help [COMMAND]`: the manual page of fplab or of a
 * command, through man (man -l for the page installed next to the
 * binary), else groff or nroff, else a plain rendering of the page's roff
 * source of our own, so that a minimal Debian without man-db still shows
 * it.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli/cli.h"
static const char help_usage[] =
	"usage: fplab help [COMMAND]\n";

/* Is `path` a regular file? */
static int is_file(const char *path)
{
	struct stat sb;

	return !stat(path, &sb) && S_ISREG(sb.st_mode);
}

/*
 * The man page `page` (e.g. "fplab-round.1") next to the binary: the
 * source tree (build/DIR/fplab -> ../../man, ./fplab -> man) or an
 * installation (PREFIX/bin/fplab -> PREFIX/share/man/man1).
 */
static int find_page(const char *page, char *out, size_t len)
{
	static const char *const rel[] = {
		"../../man", "../man", "man", "../share/man/man1", "../share/man/man5"
	};
	char exe[PATH_MAX];
	ssize_t k = readlink("/proc/self/exe", exe, sizeof exe - 1);
	char *slash;
	size_t i;

	if (k <= 0)
		return -1;
	exe[k] = 0;
	slash = strrchr(exe, '/');
	if (!slash)
		return -1;
	*slash = 0;
	for (i = 0; i < sizeof rel / sizeof *rel; i++) {
		snprintf(out, len, "%s/%s/%s", exe, rel[i], page);
		if (is_file(out))
			return 0;
	}
	return -1;
}

/* Is `name` an executable file in a directory of $PATH? */
static int on_path(const char *name)
{
	const char *p = getenv("PATH"), *colon;
	char file[PATH_MAX];

	if (!p)
		p = "/usr/bin:/bin";
	for (; *p; p = *colon ? colon + 1 : colon) {
		int len;

		colon = strchr(p, ':');
		if (!colon)
			colon = p + strlen(p);
		len = (int)(colon - p);
		snprintf(file, sizeof file, "%.*s/%s", len, len ? p : ".", name);
		if (is_file(file) && !access(file, X_OK))
			return 1;
	}
	return 0;
}

/* Text of a roff escape at s (after the backslash); *len its length. */
static const char *roff_escape(const char *s, size_t *len)
{
	static const struct { const char *name, *text; } chars[] = {
		{ "bu", "*" }, { "em", "--" }, { "en", "-" }, { "lq", "\"" },
		{ "rq", "\"" }, { "aq", "'" }, { "dq", "\"" }, { "mu", "x" },
		{ "<=", "<=" }, { ">=", ">=" }, { "+-", "+-" }, { "ti", "~" },
		{ "ha", "^" }, { "rs", "\\" }, { "co", "(c)" }
	};
	size_t i;

	switch (*s) {
	case '-': case '.': case '\'': case ' ': case '`':
		*len = 1;
		return *s == ' ' ? " " : *s == '-' ? "-" : *s == '.' ? "." :
		       *s == '`' ? "`" : "'";
	case 'e': case '\\':
		*len = 1;
		return "\\";
	case 'f':	/* font: \fB, \f(CW, \f[B] */
		*len = s[1] == '(' ? 4 : s[1] == '[' && strchr(s, ']') ?
		       (size_t)(strchr(s, ']') - s) + 1 : 2;
		return "";
	case '(':
		for (i = 0; i < sizeof chars / sizeof *chars; i++)
			if (s[1] && s[2] && !strncmp(s + 1, chars[i].name, 2)) {
				*len = 3;
				return chars[i].text;
			}
		*len = s[1] && s[2] ? 3 : 1;
		return "";
	case '*':	/* strings: \*(xx, \*x */
		*len = s[1] == '(' ? 4 : 2;
		return "";
	case '"':	/* a comment to the end of the line */
		*len = strlen(s);
		return "";
	case 0:
		*len = 0;
		return "";
	default:	/* \&, \|, \^, \c and the rest: nothing */
		*len = 1;
		return "";
	}
}

/* Print text with roff escapes resolved; `args`: a request's arguments,
 * quotes removed and words joined (".BR a b" -> "ab"). */
static void roff_text(FILE *out, const char *s, int args)
{
	size_t len;
	int quoted = 0;

	for (; *s; s++) {
		if (*s == '\\') {
			fputs(roff_escape(s + 1, &len), out);
			s += len;
			if (!*s)
				break;
		} else if (args && *s == '"') {
			quoted = !quoted;
		} else if (args == 2 && *s == ' ' && !quoted) {
			continue;
		} else {
			fputc(*s, out);
		}
	}
}

/* Filled output of the plain rendering: words wrapped at 78 columns. */
struct fill {
	int col;	/* 0: at the start of a line */
	int indent;
	int nofill;	/* inside .nf ... .fi */
};

static void fill_break(struct fill *f)
{
	if (f->col)
		putchar('\n');
	f->col = 0;
}

/* Add the text of roff source s (escapes resolved, see roff_text). */
static void fill_add(struct fill *f, const char *s, int args)
{
	char buf[4096], *w, *save;
	FILE *m = fmemopen(buf, sizeof buf, "w");

	if (!m)
		return;
	roff_text(m, s, args);
	fputc(0, m);
	fclose(m);
	buf[sizeof buf - 1] = 0;
	if (f->nofill) {
		printf("%*s%s\n", f->indent, "", buf);
		return;
	}
	for (w = strtok_r(buf, " \t", &save); w; w = strtok_r(NULL, " \t", &save)) {
		int len = (int)strlen(w);

		if (f->col && f->col + 1 + len > 78)
			fill_break(f);
		if (!f->col)
			f->col = printf("%*s%s", f->indent, "", w);
		else
			f->col += printf(" %s", w);
	}
}

/*
 * A plain rendering of the man page at `path` on stdout, for a system
 * with neither man nor groff: requests are dropped, their text kept and
 * filled (section headings flush left, body text indented by 7, .TP and
 * .IP tags on their own line, .nf blocks as written).  Returns an exit
 * status.
 */
static int render_plain(const char *path)
{
	FILE *fp = fopen(path, "r");
	char line[4096];
	struct fill f = { 0, 7, 0 };
	int tag = 0;

	if (!fp)
		return error("cannot open '%s': %s", path, strerror(errno)), CLI_EXIT_FAIL;
	while (fgets(line, sizeof line, fp)) {
		char req[8] = "", *arg = line + 1;

		line[strcspn(line, "\n")] = 0;
		if (line[0] != '.' && line[0] != '\'') {
			if (!line[0]) {
				fill_break(&f);
				putchar('\n');
			} else {
				fill_add(&f, line, 0);
			}
			if (tag) {	/* a .TP tag: alone on its line */
				fill_break(&f);
				f.indent = 14;
				tag = 0;
			}
			continue;
		}
		sscanf(arg, "%7s", req);
		arg += strlen(req);
		arg += strspn(arg, " \t");
		if (!strcmp(req, "TH")) {
			char name[64] = "", sec[8] = "";

			sscanf(arg, "%63s %7s", name, sec);
			printf("%s(%s)\n", name, sec);
		} else if (!strcmp(req, "SH") || !strcmp(req, "SS")) {
			fill_break(&f);
			f.indent = req[1] == 'S' ? 3 : 0;
			putchar('\n');
			fill_add(&f, arg, 1);
			fill_break(&f);
			f.indent = 7;
		} else if (!strcmp(req, "B") || !strcmp(req, "I") || !strcmp(req, "SM") ||
			   (strlen(req) == 2 && strchr("BIR", req[0]) && strchr("BIR", req[1]))) {
			fill_add(&f, arg, req[1] && req[0] != 'S' ? 2 : 1);
			if (tag) {
				fill_break(&f);
				f.indent = 14;
				tag = 0;
			}
		} else if (!strcmp(req, "TP") || !strcmp(req, "IP")) {
			fill_break(&f);
			f.indent = 7;
			if (req[0] == 'T') {
				tag = 1;
			} else {
				char t[64] = "";

				sscanf(arg, "%63s", t);
				if (*t) {
					fill_add(&f, t, 1);
					fill_break(&f);
				}
				f.indent = 14;
			}
		} else if (!strcmp(req, "PP") || !strcmp(req, "LP") || !strcmp(req, "P") ||
			   !strcmp(req, "sp")) {
			fill_break(&f);
			putchar('\n');
			f.indent = 7;
		} else if (!strcmp(req, "br")) {
			fill_break(&f);
		} else if (!strcmp(req, "nf") || !strcmp(req, "fi")) {
			fill_break(&f);
			f.nofill = req[0] == 'n';
		}
		/* every other request (.RS .RE .\" ...) prints nothing */
	}
	fill_break(&f);
	fclose(fp);
	return CLI_EXIT_OK;
}

/*
 * Copy the formatter's output from fd to stdout as plain text: SGR
 * escapes (ESC [ ... m) dropped, overstrikes (X BS X bold, _ BS X
 * underline) reduced to the last character, UTF-8 sequences kept whole.
 */
static void copy_plain(int fd)
{
	FILE *in = fdopen(fd, "r");
	char pend[8];
	size_t np = 0;
	int c;

	if (!in)
		return;
	while ((c = getc(in)) != EOF) {
		if (c == 033) {
			while ((c = getc(in)) != EOF && c != 'm')
				;
			continue;
		}
		if (c == '\b') {
			np = 0;
			continue;
		}
		if ((c & 0xc0) != 0x80 || !np || np == sizeof pend) {
			fwrite(pend, 1, np, stdout);
			np = 0;
		}
		pend[np++] = (char)c;
	}
	fwrite(pend, 1, np, stdout);
	fclose(in);
}

/*
 * The man page at `path` rendered by `tool` (groff or nroff, -Tutf8
 * -man): into $MANPAGER, $PAGER or `less -R` (through sh -c, as man
 * does) when stdout is a terminal and a pager exists, else as plain
 * text on stdout.  Returns the tool's exit status, or CLI_EXIT_FAIL
 * (message printed) when it cannot be run.
 */
static int render_roff(const char *tool, const char *path)
{
	const char *argv[] = { tool, "-Tutf8", "-man", path, NULL };
	const char *pager = NULL;
	int fd[2], st;
	pid_t pid;

	if (isatty(STDOUT_FILENO)) {
		pager = getenv("MANPAGER");
		if (!pager || !*pager)
			pager = getenv("PAGER");
		if (!pager || !*pager)
			pager = on_path("less") ? "less" : on_path("more") ? "more" : NULL;
	}
	if (pipe(fd))
		return error("cannot run %s: %s", tool, strerror(errno)), CLI_EXIT_FAIL;
	pid = fork();
	if (pid < 0)
		return error("cannot run %s: %s", tool, strerror(errno)), CLI_EXIT_FAIL;
	if (pid == 0) {
		dup2(fd[1], STDOUT_FILENO);
		close(fd[0]);
		close(fd[1]);
		execvp(tool, (char *const *)argv);
		fprintf(stderr, "fplab: help: cannot run %s: %s\n", tool, strerror(errno));
		_exit(127);
	}
	close(fd[1]);
	if (pager) {
		setenv("LESS", "-R", 0);	/* let less show groff's bold */
		dup2(fd[0], STDIN_FILENO);
		close(fd[0]);
		execl("/bin/sh", "sh", "-c", pager, (char *)NULL);
		return error("cannot run the pager '%s': %s", pager, strerror(errno)),
		       CLI_EXIT_FAIL;
	}
	copy_plain(fd[0]);
	if (waitpid(pid, &st, 0) < 0 || !WIFEXITED(st))
		return CLI_EXIT_FAIL;
	return WEXITSTATUS(st) ? CLI_EXIT_FAIL : CLI_EXIT_OK;
}

/*
 * `fplab help [COMMAND]`: the page through man (`man -l` for the page
 * next to the binary); without man, through groff or nroff; without
 * those either, a plain rendering of our own (a minimal Debian has no
 * man-db).  The first tool found on $PATH is used.
 */
int cmd_help(int argc, char **argv)
{
	char page[128], path[PATH_MAX + 160];
	const char *topic = argc > 1 ? argv[1] : NULL;
	const char *tool = NULL;
	int found;

	if (topic && (!strcmp(topic, "-h") || !strcmp(topic, "--help")))
		return usage_help(help_usage);
	if (argc > 2)
		return usage_error(help_usage, "too many arguments");
	if (topic && !cli_find_command(topic))
		return cli_unknown_command(topic);
	if (topic)
		snprintf(page, sizeof page, "fplab-%s.1", topic);
	else
		snprintf(page, sizeof page, "fplab.1");
	if (cli_flush_stdout())
		return CLI_EXIT_FAIL;
	found = !find_page(page, path, sizeof path);
	if (on_path("man")) {
		if (found) {
			execlp("man", "man", "-l", path, (char *)NULL);
		} else {
			char name[128];

			snprintf(name, sizeof name, "%.*s", (int)(strlen(page) - 2), page);
			execlp("man", "man", name, (char *)NULL);
		}
		error("cannot run man to show %s: %s", page, strerror(errno));
		return CLI_EXIT_FAIL;
	}
	if (!found)
		return error("no man on PATH, and %s is not next to the fplab binary", page),
		       CLI_EXIT_FAIL;
	if (on_path("groff"))
		tool = "groff";
	else if (on_path("nroff"))
		tool = "nroff";
	if (tool)
		return render_roff(tool, path);
	return render_plain(path);
}
