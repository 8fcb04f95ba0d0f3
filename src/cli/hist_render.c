/* SPDX-License-Identifier: MIT */
/*
 * hist_render.c - the two pictures of `fplab hist`: the terminal chart
 * (one row per binade, Unicode eighth-block bars, the format's range
 * marked, ANSI colour only when asked) and the SVG document (a panel per
 * tensor with a legend, axes with integer count ticks, linear or log, the
 * format's range shaded and named, and the counts labelled).
 *
 * Invariant: both read the finished fpl_hist only; the SVG is a complete,
 * self-contained XML document (no external references; names escaped) in
 * which no label overlaps another label or a bar, by the text estimate
 * below (tests/cli/hist_svg.sh checks it on the SVG itself).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/hist_render.h"

/* ------------------------------------------------------------ chart */
#define BAR_WIDTH 40

enum zone { Z_ZERO, Z_SUB, Z_NORMAL, Z_OVER };

static enum zone zone_of(const fpl_hist *h, int e)
{
	if (e > h->e_max)
		return Z_OVER;
	if (e >= h->e_minnorm)
		return Z_NORMAL;
	if (e >= h->e_minsub)
		return Z_SUB;
	return Z_ZERO;
}

static void bar(FILE *fp, uint64_t c, uint64_t max)
{
	static const char *const eighths[8] = { "", "\u258f", "\u258e", "\u258d",
						"\u258c", "\u258b", "\u258a", "\u2589" };
	int units = max ? (int)llround((double)c / (double)max * BAR_WIDTH * 8) : 0;
	if (c && units == 0)
		units = 1;
	int full = units / 8, cells = full + (units % 8 != 0);
	for (int i = 0; i < full; i++)
		fputs("\u2588", fp);
	fputs(eighths[units % 8], fp);
	for (int i = cells; i < BAR_WIDTH; i++)
		fputc(' ', fp);
}

static void pct(FILE *fp, const char *label, uint64_t v, uint64_t n)
{
	fprintf(fp, "  %s %llu (%.3g%%)", label, (unsigned long long)v, 100 * hist_frac(v, n));
}

/* "3-4 " style label of bucket i of the losses per block */
static void bucket_label(char *buf, size_t cap, int i)
{
	uint64_t hi = fpl_hist_block_bucket_max(i), lo = i >= 2 ? fpl_hist_block_bucket_max(i - 1) + 1 : hi;

	if (lo == hi)
		snprintf(buf, cap, "%llu", (unsigned long long)hi);
	else
		snprintf(buf, cap, "%llu-%llu", (unsigned long long)lo, (unsigned long long)hi);
}

/* The block view of one tensor or the total (fplab/hist_block.h). */
static void chart_block(FILE *fp, const fpl_hist_block *bv, const struct hist_run *r)
{
	char a[CLI_VALUE_MAX], b[CLI_VALUE_MAX];
	uint64_t max = 0;
	int top = 0;

	fprintf(fp, "  blocks %llu", (unsigned long long)bv->s.blocks);
	if (bv->s.elements)
		fprintf(fp, ", %s bits per value", cli_shortest(a, bv->bits_sum / (double)bv->s.elements));
	if (r->block->tensor_scale)
		bv->tscale_varies ? fprintf(fp, ", tensor scale varies")
				  : fprintf(fp, ", tensor scale %s", cli_shortest(a, bv->tscale));
	fprintf(fp, ": zero %llu  nan %llu  scale clamped %llu  largest element saturated %llu\n",
		(unsigned long long)bv->s.zero_blocks, (unsigned long long)bv->s.nan_blocks,
		(unsigned long long)bv->s.scale_range, (unsigned long long)bv->s.amax_saturated);
	if (bv->scale_lo <= bv->scale_hi) {
		fprintf(fp, "  block scales (%s): min %s  max %s\n", r->block->scale.name,
			cli_shortest(a, bv->min_scale), cli_shortest(b, bv->max_scale));
		for (int e = bv->scale_lo; e <= bv->scale_hi; e++)
			max = bv->scale_hist[e - FPL_HIST_EMIN] > max ? bv->scale_hist[e - FPL_HIST_EMIN]
								      : max;
		for (int e = bv->scale_hi; e >= bv->scale_lo; e--) {
			char lab[16];
			snprintf(lab, sizeof lab, "2^%d", e);
			fprintf(fp, "  %7s scale ", lab);
			bar(fp, bv->scale_hist[e - FPL_HIST_EMIN], max);
			fprintf(fp, " %10llu\n", (unsigned long long)bv->scale_hist[e - FPL_HIST_EMIN]);
		}
	}
	for (int i = 0; i < FPL_HB_NBUCKETS; i++)
		if (bv->flushed_by[i] || bv->saturated_by[i])
			top = i;
	fputs("  elements lost per block   blocks: to zero  to saturation\n", fp);
	for (int i = 0; i <= top; i++) {
		if (!bv->flushed_by[i] && !bv->saturated_by[i])
			continue;
		bucket_label(a, sizeof a, i);
		fprintf(fp, "  %24s %15llu %14llu\n", a, (unsigned long long)bv->flushed_by[i],
			(unsigned long long)bv->saturated_by[i]);
	}
}

void hist_chart_one(FILE *fp, const char *name, const struct hist_entry *e, const fpl_hist *h,
		    const fpl_hist_block *bv, const struct hist_run *r, int colour)
{
	char shown[FPL_ESCAPED_NAME_MAX + 256];

	static const char *const zname[4] = { "zero", "sub", "norm", "over" };
	static const char *const zcol[4] = { "\033[31m", "\033[33m", "\033[32m", "\033[31m" };
	char a[CLI_VALUE_MAX];

	fprintf(fp, "%s%s%s", colour ? "\033[1m" : "", fpl_escape(shown, sizeof shown, name),
		colour ? "\033[0m" : "");
	if (e) {
		fprintf(fp, "  %s [", fpl_dtype_name(e->dtype));
		for (int i = 0; i < e->ndim; i++)
			fprintf(fp, "%s%llu", i ? ", " : "", (unsigned long long)e->shape[i]);
		fputc(']', fp);
	}
	fprintf(fp, "  %llu values", (unsigned long long)h->count);
	if (h->scale_varies)
		fprintf(fp, ", scale %s", r->scaling);
	else if (h->scale != 1)
		h->scale_pow2 ? fprintf(fp, ", scaled by 2^%d", h->scale_log2)
			      : fprintf(fp, ", scaled by %s", cli_shortest(a, h->scale));
	fputc('\n', fp);
	fprintf(fp, "  zeros %llu  nan/inf %llu", (unsigned long long)h->zeros,
		(unsigned long long)h->nan_inf);
	pct(fp, " became zero", h->became_zero, h->count);
	pct(fp, "subnormal", h->subnormal, h->count);
	pct(fp, "normal", h->normal, h->count);
	pct(fp, "overflow", h->overflow, h->count);
	fputc('\n', fp);
	/* the engine's events under their shared names (cli.h) */
#define EV(fl) ((unsigned long long)h->events[__builtin_ctz(fl)])
	fprintf(fp, "  events: inexact %llu  underflow %llu  flushed %llu  saturated %llu"
		"  invalid %llu\n", EV(FPL_FLAG_INEXACT), EV(FPL_FLAG_UNDERFLOW),
		EV(FPL_FLAG_FLUSHED), EV(FPL_FLAG_SATURATED), EV(FPL_FLAG_INVALID));
#undef EV
	if (h->err_n)
		fprintf(fp, "  relative error: max %.3g  mean %.3g  rms %.3g\n", h->err_max,
			h->err_sum / (double)h->err_n, sqrt(h->err_sumsq / (double)h->err_n));
	if (h->abs_n)
		fprintf(fp, "  absolute error: max %.3g  mean %.3g  rms %.3g\n", h->abs_max,
			h->abs_sum / (double)h->abs_n, sqrt(h->abs_sumsq / (double)h->abs_n));
	if (h->in_lo <= h->in_hi)
		fprintf(fp, "  suggested scale: 2^%d (APS: largest without overflow), "
			"2^%d (fewest values lost to zero or overflow, about %llu)\n", h->aps_k, h->best_k,
			(unsigned long long)h->best_loss);
	if (bv && r->block)
		chart_block(fp, bv, r);
	if (h->lo > h->hi) {
		fputs("  (no finite nonzero values)\n\n", fp);
		return;
	}
	uint64_t max = 0;
	for (int b = h->lo; b <= h->hi; b++)
		if (h->hist[b - FPL_HIST_EMIN] > max)
			max = h->hist[b - FPL_HIST_EMIN];
	/* rows: the data's binades and the format's marked ones (long empty
	 * stretches collapse to one row of dots) */
	int top = h->hi > h->e_max ? h->hi : h->e_max;
	int bottom = h->lo < h->e_minsub ? h->lo : h->e_minsub;
	int empty_run = 0;
	for (int b = top; b >= bottom; b--) {
		uint64_t c = h->hist[b - FPL_HIST_EMIN];
		int marked = b == h->e_max || b == h->e_minnorm || b == h->e_minsub;
		if (!c && !marked) {
			if (++empty_run == 2)
				fputs("     \u22ee\n", fp);
			if (empty_run >= 2)
				continue;
		} else
			empty_run = 0;
		enum zone z = zone_of(h, b);
		char lab[16];
		snprintf(lab, sizeof lab, "2^%d", b);
		fprintf(fp, "  %7s %-5s ", lab, zname[z]);
		if (colour)
			fputs(zcol[z], fp);
		bar(fp, c, max);
		if (colour)
			fputs("\033[0m", fp);
		fprintf(fp, " %10llu", (unsigned long long)c);
		if (b == h->e_max)
			fprintf(fp, "  \u2190 max %s", cli_shortest(a, r->fmt->max));
		if (b == h->e_minnorm)
			fprintf(fp, "  \u2190 min normal 2^%d", h->e_minnorm);
		if (b == h->e_minsub && h->e_minsub != h->e_minnorm)
			fprintf(fp, "  \u2190 min subnormal 2^%d", h->e_minsub);
		fputc('\n', fp);
	}
	fputc('\n', fp);
}

void hist_chart_head(FILE *fp, const struct hist_run *r)
{
	const fpl_format *f = r->fmt;
	char a[CLI_VALUE_MAX];
	if (r->block) {
		char spec[2 * FPL_BLOCK_NAME_MAX];
		fpl_block_spec(r->block, spec, sizeof spec);
		fprintf(fp, "block format %s%s%s: each block's values divided by its scale, then "
			"cast to the element format\n", r->block->name,
			strcmp(spec, r->block->name) ? " = " : "",
			strcmp(spec, r->block->name) ? spec : "");
		fprintf(fp, "element format %s: min subnormal 2^%d, min normal 2^%d, max %s; mode %s\n"
			"rows: floor(log2|x/scale|) of the values cast; zero/sub/norm/over: where the "
			"binade falls (zero: below the min subnormal)\n\n",
			f->name, f->subnormal == FPL_SUB_YES ? f->emin - f->m : f->emin, f->emin,
			cli_shortest(a, f->max), fpl_rnd_name(r->rnd));
		return;
	}
	fprintf(fp, "format %s: min subnormal 2^%d, min normal 2^%d, max %s; mode %s; scaling %s\n"
		"rows: floor(log2|x|) of the values cast (after scaling); zero/sub/norm/over: "
		"where the binade falls (zero: below the min subnormal)\n\n",
		f->name, f->subnormal == FPL_SUB_YES ? f->emin - f->m : f->emin, f->emin,
		cli_shortest(a, f->max), fpl_rnd_name(r->rnd), r->scaling);
}

/* ------------------------------------------------------------ SVG */
/*
 * Layout of a panel, top down: title, summary, legend (the bar colours
 * with their counts), a strip of lanes for the range labels (max, min
 * normal, subnormal from), the plot (headroom for the count labels
 * above the tallest bar), the exponent ticks and the axis title.
 *
 * No label may overlap another label or a bar.  Text is measured with a
 * conservative estimate, the same one tests/cli/hist_svg.sh checks: TW
 * times the font size per byte (DejaVu Sans's widest digits are 0.64 em;
 * a non-ASCII character is 2-3 bytes, so 1.3-1.95 em), from 0.8 size
 * above the baseline to 0.25 size below it.
 */
#define PW 720		/* panel width */
#define HEAD 58		/* the page's heading, above the panels */
#define ML 70		/* plot margins: left, right */
#define MR 20
#define PLOT_H 190	/* plot height, count headroom included */
#define MB 44		/* below the plot: ticks and the axis title */
#define LANE 13		/* one lane of range labels */
#define TW 0.65		/* estimated glyph width, em per byte */

/* s with XML's special characters as entities (s already fpl_escape'd) */
static void xml_raw(FILE *fp, const char *s)
{
	for (; *s; s++) {
		switch (*s) {
		case '&': fputs("&amp;", fp); break;
		case '<': fputs("&lt;", fp); break;
		case '>': fputs("&gt;", fp); break;
		case '"': fputs("&quot;", fp); break;
		case '\'': fputs("&apos;", fp); break;
		default:
			fputc(*s, fp);
		}
	}
}

/* a name or any raw text: control characters are not allowed in XML 1.0,
 * so fpl_escape shows them as \t, \x1b first */
static void xml_text(FILE *fp, const char *raw)
{
	char buf[FPL_ESCAPED_NAME_MAX + 256];
	xml_raw(fp, fpl_escape(buf, sizeof buf, raw));
}

struct box { double x0, y0, x1, y1; };

/* width of s in font size sz (the estimate above) */
static double text_w(const char *s, double sz)
{
	return TW * sz * (double)strlen(s);
}

/* the box of s at (x, y), anchor -1 end, 0 start, 1 middle */
static struct box text_box(const char *s, double sz, double x, double y, int anchor)
{
	double w = text_w(s, sz), x0 = anchor < 0 ? x - w : anchor ? x - w / 2 : x;
	return (struct box){ x0, y - 0.8 * sz, x0 + w, y + 0.25 * sz };
}

static int overlap(struct box a, struct box b, double gap)
{
	return a.x0 < b.x1 + gap && b.x0 < a.x1 + gap && a.y0 < b.y1 + gap && b.y0 < a.y1 + gap;
}

struct mark {
	char text[CLI_VALUE_MAX + 48];
	double x;
	int anchor, lane;
	const char *fill;
};

struct layout {
	int xlo, xhi;		/* the exponent axis, bins xlo..xhi */
	double bw;		/* bin width */
	int logy;		/* log count axis */
	double ytop;		/* count (linear) or log10 count (log) at the plot's top */
	double step;		/* between ticks: counts (linear) or decades (log) */
	double headroom;	/* above the tallest bar, for its label */
	double leg_y;		/* the legend's first baseline */
	int leg_rows;
	int nm, lanes;
	struct mark m[3];
	double mt;		/* the plot's top */
	double height;		/* the panel's */
	int block;		/* a block format: the x axis is of x/scale */
};

static const char *const zcolour[4] = { "#8c8c8c", "#d8a53b", "#3b7dd8", "#d83b3b" };

static double lx(const struct layout *L, double e)
{
	return ML + (e - L->xlo) * L->bw;
}

/* the exponent axis: the data and the format's range, zoomed on the data
 * when that spans more than 72 binades (bf16, fp32...) */
static void axis_x(struct layout *L, const fpl_hist *h)
{
	int lo = h->lo <= h->hi ? h->lo : h->e_minsub, hi = h->lo <= h->hi ? h->hi : h->e_max;
	int xlo = (lo < h->e_minsub ? lo : h->e_minsub) - 1;
	int xhi = (hi > h->e_max ? hi : h->e_max) + 1;
	if (xhi - xlo + 1 > 72 && h->lo <= h->hi) {
		xlo = lo - 4 < xlo ? xlo : lo - 4;
		xhi = hi + 4 > xhi ? xhi : hi + 4;
		if (xhi - xlo + 1 < 24) {
			int pad = (24 - (xhi - xlo + 1)) / 2 + 1;
			xlo -= pad;
			xhi += pad;
		}
	}
	L->xlo = xlo;
	L->xhi = xhi;
	L->bw = (double)(PW - ML - MR) / (xhi - xlo + 1);
}

/* one range label for the binade boundary e; beyond the axis it sits at
 * the edge with an arrow pointing where it is */
static void add_mark(struct layout *L, double e, int anchor, const char *fill, const char *text)
{
	struct mark *m = &L->m[L->nm++];
	m->fill = fill;
	if (e < L->xlo) {
		snprintf(m->text, sizeof m->text, "\u2190 %s", text);
		m->x = lx(L, L->xlo) + 2;
		m->anchor = 0;
	} else if (e > L->xhi + 1) {
		snprintf(m->text, sizeof m->text, "%s \u2192", text);
		m->x = lx(L, L->xhi + 1) - 2;
		m->anchor = -1;
	} else {
		snprintf(m->text, sizeof m->text, "%s", text);
		m->x = lx(L, e) + (anchor < 0 ? -2 : 2);
		m->anchor = anchor;
	}
	/* keep it within the plot's width */
	double w = text_w(m->text, 10), x0 = m->anchor < 0 ? m->x - w : m->x;
	if (x0 < ML)
		m->x += ML - x0;
	else if (x0 + w > PW - MR)
		m->x -= x0 + w - (PW - MR);
	/* the first lane where it overlaps no label already placed */
	struct box b = text_box(m->text, 10, m->x, 0, m->anchor);
	for (m->lane = 0;; m->lane++) {
		int clash = 0;
		for (int i = 0; i < L->nm - 1; i++)
			if (L->m[i].lane == m->lane &&
			    overlap(b, text_box(L->m[i].text, 10, L->m[i].x, 0, L->m[i].anchor), 6))
				clash = 1;
		if (!clash)
			break;
	}
	if (m->lane + 1 > L->lanes)
		L->lanes = m->lane + 1;
}

/* the legend's entries: colour i with its text */
static void legend_text(char *buf, size_t cap, int z, const fpl_hist *h)
{
	static const char *const name[4] = { "became zero", "subnormal", "normal",
					     "overflow" };
	uint64_t v = z == Z_ZERO ? h->became_zero : z == Z_SUB ? h->subnormal
		   : z == Z_NORMAL ? h->normal : h->overflow;
	snprintf(buf, cap, "%s %llu (%.3g%%)", name[z], (unsigned long long)v,
		 100 * hist_frac(v, h->count));
}

/* the legend, in the order normal, subnormal, overflow, became zero:
 * a swatch and its text per entry, wrapping onto a new row at the edge;
 * draws when fp is not NULL, returns the number of rows */
static int legend(FILE *fp, const struct layout *L, const fpl_hist *h)
{
	static const int order[4] = { Z_NORMAL, Z_SUB, Z_OVER, Z_ZERO };
	double x = 10, y = L->leg_y;
	int rows = 1;
	for (int i = 0; i < 4; i++) {
		char t[128];
		legend_text(t, sizeof t, order[i], h);
		double w = 14 + text_w(t, 10);
		if (x > 10 && x + w > PW - 10) {
			x = 10;
			y += 14;
			rows++;
		}
		if (fp)
			fprintf(fp, "<rect class=\"legend\" x=\"%.1f\" y=\"%.1f\" width=\"10\" "
				"height=\"10\" fill=\"%s\"/><text class=\"legend\" x=\"%.1f\" "
				"y=\"%.1f\" font-size=\"10\">%s</text>\n", x, y - 9, zcolour[order[i]],
				x + 14, y, t);
		x += w + 12;
	}
	return rows;
}

static uint64_t count_at(const fpl_hist *h, int b)
{
	return h->lo <= h->hi && b >= h->lo && b <= h->hi ? h->hist[b - FPL_HIST_EMIN] : 0;
}

/* orientation of bar b's count label: 1 horizontal (font 9), 0 rotated (8) */
static int label_flat(const char *t, double bw)
{
	return text_w(t, 9) <= bw - 1;
}

static void panel_layout(struct layout *L, const fpl_hist *h, const struct hist_run *r)
{
	memset(L, 0, sizeof *L);
	axis_x(L, h);
	L->leg_y = 56;
	L->leg_rows = legend(NULL, L, h);
	char a[CLI_VALUE_MAX], t[CLI_VALUE_MAX + 32];
	snprintf(t, sizeof t, "max %s (2^%d)", cli_shortest(a, r->fmt->max), h->e_max);
	add_mark(L, h->e_max + 1, -1, "#2a7a2a", t);
	snprintf(t, sizeof t, "min normal 2^%d", h->e_minnorm);
	add_mark(L, h->e_minnorm, 0, "#2a7a2a", t);
	if (h->e_minsub < h->e_minnorm) {
		snprintf(t, sizeof t, "subnormal from 2^%d", h->e_minsub);
		add_mark(L, h->e_minsub, 0, "#9a7a00", t);
	}
	L->mt = L->leg_y + 14.0 * (L->leg_rows - 1) + 8 + LANE * L->lanes;
	L->height = L->mt + PLOT_H + MB;
	/* counts: log when they span more than two decades */
	uint64_t cmax = 0, cmin = UINT64_MAX;
	for (int b = L->xlo; b <= L->xhi; b++) {
		uint64_t c = count_at(h, b);
		if (c && c > cmax)
			cmax = c;
		if (c && c < cmin)
			cmin = c;
	}
	L->logy = cmax != 0 && (double)cmax > 100.0 * (double)cmin;
	if (L->logy) {
		L->ytop = log10((double)cmax);	/* ticks at the decades up to it */
		L->step = L->ytop > 8 ? ceil(L->ytop / 8) : 1;	/* decades per tick */
	} else {
		/* 1, 2, 5 x 10^k, at least 1: four or five intervals */
		double raw = (double)(cmax ? cmax : 1) / 4, step = 1;
		for (double p = 1;; p *= 10) {
			if (p >= raw) { step = p; break; }
			if (2 * p >= raw) { step = 2 * p; break; }
			if (5 * p >= raw) { step = 5 * p; break; }
		}
		L->step = step;
		L->ytop = ceil((double)(cmax ? cmax : 1) / step) * step;
	}
	/* headroom: the highest count label, and a little */
	L->headroom = 12;
	for (int b = L->xlo; b <= L->xhi; b++) {
		uint64_t c = count_at(h, b);
		if (!c)
			continue;
		snprintf(t, sizeof t, "%llu", (unsigned long long)c);
		double need = label_flat(t, L->bw) ? 9 * 1.05 + 5 : text_w(t, 8) + 5;
		if (need > L->headroom)
			L->headroom = need;
	}
}

/* the log axis starts at 10^-0.3 (about 1/2), so a count of 1 shows as
 * a short bar */
#define LOG_FLOOR (-0.3)

static double ly(const struct layout *L, double c)
{
	double base = L->mt + PLOT_H, span = PLOT_H - L->headroom;
	if (L->logy)
		return base - (log10(c) - LOG_FLOOR) / (L->ytop - LOG_FLOOR) * span;
	return base - c / L->ytop * span;
}

/* an integer count as a tick label: 1, 10, 100, 1k, 2M... */
static void count_label(char *buf, size_t cap, double v)
{
	static const char *const sfx[] = { "", "k", "M", "G", "T", "P", "E" };
	int k = 0;
	while (k < 6 && v >= 1000 && fmod(v, 1000) == 0) {
		v /= 1000;
		k++;
	}
	snprintf(buf, cap, "%.0f%s", v, sfx[k]);
}

static void axis_y(FILE *fp, const struct layout *L)
{
	char t[32];
	for (double v = 0; v <= L->ytop + 1e-9; v += L->step) {
		double c = L->logy ? pow(10, v) : v, y = ly(L, c);
		count_label(t, sizeof t, c);
		fprintf(fp, "<line x1=\"%d\" y1=\"%.2f\" x2=\"%d\" y2=\"%.2f\" stroke=\"#333\"/>"
			"<text class=\"tick\" x=\"%d\" y=\"%.2f\" font-size=\"10\" "
			"text-anchor=\"end\">%s</text>\n", ML - 4, y, ML, y, ML - 6, y + 3.5, t);
	}
	fprintf(fp, "<text font-size=\"11\" text-anchor=\"middle\" transform=\"translate(18,%.0f) "
		"rotate(-90)\">count%s</text>\n", L->mt + PLOT_H / 2, L->logy ? " (log)" : "");
}

static void axis_x_ticks(FILE *fp, const struct layout *L)
{
	/* step: the widest label ("2" and a superscript) and a gap fit */
	double widest = 0;
	for (int e = L->xlo; e <= L->xhi; e++) {
		char t[16];
		snprintf(t, sizeof t, "%d", e);
		double w = text_w("2", 10) + text_w(t, 8);
		if (w > widest)
			widest = w;
	}
	int step = 1;
	while (step * L->bw < widest + 8)
		step = step < 5 ? step + 1 : step * 2;
	double base = L->mt + PLOT_H;
	for (int e = L->xlo; e <= L->xhi; e++) {
		if (((e % step) + step) % step)
			continue;
		fprintf(fp, "<line x1=\"%.2f\" y1=\"%.0f\" x2=\"%.2f\" y2=\"%.0f\" stroke=\"#333\"/>"
			"<text class=\"tick\" x=\"%.2f\" y=\"%.0f\" font-size=\"10\" "
			"text-anchor=\"middle\">2<tspan dy=\"-5\" font-size=\"8\">%d</tspan></text>\n",
			lx(L, e), base, lx(L, e), base + 4, lx(L, e), base + 19, e);
	}
	fprintf(fp, "<text x=\"%.0f\" y=\"%.0f\" font-size=\"11\" text-anchor=\"middle\">"
		"floor(log2 |x%s|) of the values cast</text>\n", ML + (PW - ML - MR) / 2.0,
		base + 38, L->block ? "/scale" : "");
}

/* the bars, then their count labels, tallest first, each where it
 * overlaps no bar and no label already placed */
static void bars(FILE *fp, const struct layout *L, const fpl_hist *h)
{
	int n = L->xhi - L->xlo + 1;
	struct box *bar = calloc((size_t)n, sizeof *bar), *lab = calloc((size_t)n, sizeof *lab);
	int *ord = calloc((size_t)n, sizeof *ord), nb = 0, nl = 0;
	if (!bar || !lab || !ord)
		goto out;	/* no labels then: the bars still come */
	double base = L->mt + PLOT_H, w = L->bw > 1.5 ? L->bw - 1 : L->bw;
	for (int b = L->xlo; b <= L->xhi; b++) {
		uint64_t c = count_at(h, b);
		if (!c)
			continue;
		double x = lx(L, b) + (L->bw > 1.5 ? 0.5 : 0), y = ly(L, (double)c);
		fprintf(fp, "<rect class=\"bar\" x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"%.2f\" "
			"fill=\"%s\"><title>2^%d: %llu</title></rect>\n", x, y, w, base - y,
			zcolour[zone_of(h, b)], b, (unsigned long long)c);
		bar[nb] = (struct box){ x, y, x + w, base };
		ord[nb++] = b;
	}
	/* tallest first (insertion sort: at most a few thousand bins) */
	for (int i = 1; i < nb; i++)
		for (int j = i; j > 0 && count_at(h, ord[j]) > count_at(h, ord[j - 1]); j--) {
			int t = ord[j];
			ord[j] = ord[j - 1];
			ord[j - 1] = t;
		}
	for (int i = 0; i < nb; i++) {
		int b = ord[i];
		uint64_t c = count_at(h, b);
		char t[32];
		snprintf(t, sizeof t, "%llu", (unsigned long long)c);
		double xc = lx(L, b) + L->bw / 2, y = ly(L, (double)c) - 3;
		int flat = label_flat(t, L->bw);
		struct box k = flat ? text_box(t, 9, xc, y, 1)
				    : (struct box){ xc - 0.5 * 8 * 1.05, y - text_w(t, 8),
						    xc + 0.5 * 8 * 1.05, y };
		int ok = k.y0 >= L->mt && k.x0 >= ML && k.x1 <= PW - MR;
		for (int j = 0; ok && j < nb; j++)
			ok = !overlap(k, bar[j], 0);
		for (int j = 0; ok && j < nl; j++)
			ok = !overlap(k, lab[j], 1);
		if (!ok)
			continue;
		lab[nl++] = k;
		if (flat)
			fprintf(fp, "<text class=\"count\" x=\"%.2f\" y=\"%.2f\" font-size=\"9\" "
				"text-anchor=\"middle\">%s</text>\n", xc, y, t);
		else	/* rotated: the glyphs lie 0.8 size left, 0.25 right of x */
			fprintf(fp, "<text class=\"count\" font-size=\"8\" transform=\"translate(%.2f,%.2f) "
				"rotate(-90)\">%s</text>\n", xc + 0.275 * 8, y, t);
	}
out:
	free(bar);
	free(lab);
	free(ord);
}

/* a name fitting width w in font size sz: cut at a character boundary,
 * "..." appended */
static void fit_name(char *out, size_t cap, const char *raw, double w, double sz)
{
	char buf[FPL_ESCAPED_NAME_MAX + 256];
	fpl_escape(buf, sizeof buf, raw);
	size_t n = strlen(buf), keep = (size_t)(w / (TW * sz));
	if (n > keep) {
		keep = keep > 3 ? keep - 3 : 0;
		while (keep > 0 && ((unsigned char)buf[keep] & 0xc0) == 0x80)
			keep--;
		snprintf(buf + keep, sizeof buf - keep, "...");
	}
	snprintf(out, cap, "%s", buf);
}

static void svg_panel(FILE *fp, int idx, double y0, const char *name, const fpl_hist *h,
		      const fpl_hist_block *bv, const struct hist_run *r)
{
	struct layout L;
	panel_layout(&L, h, r);
	L.block = r->block != NULL;
	char shown[FPL_ESCAPED_NAME_MAX + 256];
	fprintf(fp, "<g class=\"panel\" id=\"panel-%d\" data-tensor=\"", idx);
	xml_text(fp, name);
	fprintf(fp, "\" transform=\"translate(0,%.0f)\">\n", y0);
	fprintf(fp, "<rect x=\"0.5\" y=\"0.5\" width=\"%d\" height=\"%.0f\" fill=\"#fff\" "
		"stroke=\"#ccc\"/>\n", PW - 1, L.height - 1);
	fputs("<text class=\"title\" x=\"10\" y=\"20\" font-size=\"14\" font-weight=\"bold\">", fp);
	fit_name(shown, sizeof shown, name, PW - 20, 14 * 1.1);	/* bold: a little wider */
	xml_raw(fp, shown);
	fputs("</text>\n", fp);
	fprintf(fp, "<text class=\"summary\" x=\"10\" y=\"37\" font-size=\"11\">%llu values: "
		"zeros %llu, nan/inf %llu",
		(unsigned long long)h->count, (unsigned long long)h->zeros,
		(unsigned long long)h->nan_inf);
	if (r->block && bv) {	/* the block view, short */
		fprintf(fp, "; %llu blocks", (unsigned long long)bv->s.blocks);
		if (bv->scale_lo <= bv->scale_hi)
			fprintf(fp, ", scales 2^%d..2^%d", bv->scale_lo, bv->scale_hi);
		fprintf(fp, ", %llu amax saturated", (unsigned long long)bv->s.amax_saturated);
	}
	fputs("</text>\n", fp);
	legend(fp, &L, h);
	/* the format's range, shaded from the label strip down (clipped) */
	double top = L.mt - LANE * L.lanes - 3, bot = L.mt + PLOT_H;
#define CLIPX(e) lx(&L, (e) < L.xlo ? L.xlo : (e) > L.xhi + 1 ? L.xhi + 1 : (e))
	if (h->e_minsub < h->e_minnorm)
		fprintf(fp, "<rect class=\"range-subnormal\" x=\"%.2f\" y=\"%.1f\" width=\"%.2f\" "
			"height=\"%.1f\" fill=\"#fff2cc\"/>\n", CLIPX(h->e_minsub), top,
			CLIPX(h->e_minnorm) - CLIPX(h->e_minsub), bot - top);
	fprintf(fp, "<rect class=\"range-normal\" x=\"%.2f\" y=\"%.1f\" width=\"%.2f\" "
		"height=\"%.1f\" fill=\"#dcf2dc\"/>\n", CLIPX(h->e_minnorm), top,
		CLIPX(h->e_max + 1) - CLIPX(h->e_minnorm), bot - top);
#undef CLIPX
	for (int i = 0; i < L.nm; i++) {
		const struct mark *m = &L.m[i];
		fprintf(fp, "<text class=\"range-label\" x=\"%.2f\" y=\"%.1f\" font-size=\"10\" "
			"fill=\"%s\"%s>", m->x, top + 10 + LANE * m->lane, m->fill,
			m->anchor < 0 ? " text-anchor=\"end\"" : "");
		xml_text(fp, m->text);
		fputs("</text>\n", fp);
	}
	bars(fp, &L, h);
	if (h->lo > h->hi)
		fprintf(fp, "<text class=\"empty\" x=\"%.0f\" y=\"%.0f\" font-size=\"13\" "
			"text-anchor=\"middle\" fill=\"#555\">no finite nonzero values</text>\n",
			ML + (PW - ML - MR) / 2.0, L.mt + PLOT_H / 2);
	fprintf(fp, "<g class=\"axes\" stroke=\"#333\" fill=\"none\">"
		"<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\"/>"
		"<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\"/></g>\n",
		ML, bot, PW - MR, bot, ML, L.mt, ML, bot);
	axis_x_ticks(fp, &L);
	if (h->lo <= h->hi)
		axis_y(fp, &L);
	fputs("</g>\n", fp);
}

static double panel_height(const fpl_hist *h, const struct hist_run *r)
{
	struct layout L;
	panel_layout(&L, h, r);
	return L.height;
}

void hist_svg(FILE *fp, const struct hist_run *r)
{
	size_t np = r->n + (r->total != NULL);
	int note = r->more > 0 || np == 0;	/* a line below the panels */
	double height = HEAD + 20 * note;
	for (size_t i = 0; i < r->n; i++)
		height += panel_height(&r->e[i].h, r);
	if (r->total)
		height += panel_height(r->total, r);
	fprintf(fp, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
		"<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" width=\"%d\" height=\"%.0f\" "
		"viewBox=\"0 0 %d %.0f\" font-family=\"sans-serif\">\n", PW, height, PW, height);
	const char *fname = r->block ? r->block->name : r->fmt->name;
	char head[FPL_ESCAPED_NAME_MAX + 512], shown[FPL_ESCAPED_NAME_MAX + 512];
	fprintf(fp, "<title>fplab hist: %s, mode %s, scaling ", fname, fpl_rnd_name(r->rnd));
	xml_text(fp, r->scaling);
	fputs("</title>\n<rect width=\"100%\" height=\"100%\" fill=\"#fafafa\"/>\n", fp);
	if (r->block)	/* a spec may be long: shortened to the width */
		snprintf(head, sizeof head, "fplab hist: format %s, mode %s, scaling block (elements %s)",
			 fname, fpl_rnd_name(r->rnd), r->fmt->name);
	else
		snprintf(head, sizeof head, "fplab hist: format %s, mode %s, scaling %s", fname,
			 fpl_rnd_name(r->rnd), r->scaling);
	fit_name(shown, sizeof shown, head, PW - 20, 13);
	fputs("<text x=\"10\" y=\"18\" font-size=\"13\">", fp);
	xml_raw(fp, shown);
	fprintf(fp, "</text>\n<text x=\"10\" y=\"35\" font-size=\"11\">bars: values per binade of "
		"the value cast%s, coloured by where the binade falls</text>\n"
		"<text x=\"10\" y=\"50\" font-size=\"11\">shaded: the format's subnormal "
		"(yellow) and normal (green) binades</text>\n", r->block ? " (x/scale)" : "");
	double y = HEAD;
	for (size_t i = 0; i < r->n; i++) {
		svg_panel(fp, (int)i, y, r->e[i].name, &r->e[i].h, &r->e[i].bv, r);
		y += panel_height(&r->e[i].h, r);
	}
	if (r->total) {
		svg_panel(fp, (int)r->n, y, "(total)", r->total, r->btotal, r);
		y += panel_height(r->total, r);
	}
	if (np == 0)
		fprintf(fp, "<text class=\"note\" x=\"10\" y=\"%d\" font-size=\"12\">no tensors "
			"in the input</text>\n", HEAD + 14);
	else if (r->more)
		fprintf(fp, "<text class=\"note\" x=\"10\" y=\"%.0f\" font-size=\"12\">and %zu "
			"more tensor%s without a panel (at most %d are drawn; the total counts "
			"all)</text>\n", y + 14, r->more, r->more > 1 ? "s" : "", HIST_SVG_MAX);
	fputs("</svg>\n", fp);
}
