/* SPDX-License-Identifier: MIT */
/*
 * cli_plot.c - SVG line charts (cli_plot.h): a title, a legend of every
 * series (colour, dash pattern and marker), then panels stacked over one
 * shared x axis, each headed by its label and its notes, with its own
 * linear or log10 y axis fitted to the data.
 *
 * Ticks: on a linear axis the largest step of 1, 2 or 5 times a power of
 * ten that puts at least five ticks in the axis (the data plus 5% each
 * side); all labels with the step's decimals, or, when that would take
 * more than three decimals or values reach a million, the same decimals
 * of value / 10^E with "x10^E" written once beside the axis.  On a log
 * axis (positive data spanning more than 1.5 decades) labels at 1, 2 and
 * 5 times each power of ten up to 3.5 decades, powers of ten beyond.
 *
 * Invariant: the document is self-contained, well-formed XML; every
 * coordinate written is finite (points that are not finite, or not
 * positive on a log axis, break the line instead of being drawn).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "cli/cli_plot.h"

#define W 760		/* picture width */
#define ML 70		/* plot margins: left (tick labels), right */
#define MR 24
#define PH 200		/* plot height of one panel */
#define GAP 18		/* between panels */
#define HEAD 20		/* a panel's heading line, above its frame */
#define NOTE 14		/* a note line under the heading */
#define MB 56		/* below the last panel: tick labels, x label */
#define TW 0.62		/* estimated glyph width, em per byte */
#define MAXSER 64	/* distinct series names with their own style */
#define MAXNOTE 4	/* notes per panel */
#define NSTYLE 6	/* dash patterns and marker shapes */

static const char *const palette[10] = {
	"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd",
	"#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"
};
static const char *const dashes[NSTYLE] = {
	NULL, "9 4", "2 3", "10 3 2 3", "5 5", "14 4 2 4 2 4"
};

/* s with XML's special characters as entities, control characters as '?' */
static void xml(FILE *fp, const char *s)
{
	for (; s && *s; s++) {
		unsigned char c = (unsigned char)*s;

		switch (c) {
		case '&': fputs("&amp;", fp); break;
		case '<': fputs("&lt;", fp); break;
		case '>': fputs("&gt;", fp); break;
		case '"': fputs("&quot;", fp); break;
		case '\'': fputs("&apos;", fp); break;
		default: fputc(c < 0x20 || c == 0x7f ? '?' : c, fp);
		}
	}
}

/* ------------------------------------------------------------ axes */

/* An axis: [lo, hi] mapped to pixels [p0, p1]. */
struct axis {
	int log;
	double lo, hi;		/* in data units (log: log10 of them) */
	double p0, p1;
	double step;		/* linear: between ticks */
	int dec;		/* linear: decimals of every label */
	int e10;		/* linear: labels are value / 10^e10 (0: plain) */
	int minor;		/* log: 1 labels at 1, 2, 5; else every `step` decades */
	int lstep;		/* log: decades between labels */
};

static double ax_pos(const struct axis *a, double v)
{
	double t = a->log ? log10(v) : v;

	return a->p0 + (t - a->lo) / (a->hi - a->lo) * (a->p1 - a->p0);
}

/* The number of multiples of step in [lo, hi]. */
static double nticks(double lo, double hi, double step)
{
	return floor(hi / step + 1e-9) - ceil(lo / step - 1e-9) + 1;
}

/* Fit a linear axis to the data range [lo, hi] (finite). */
static void lin_fit(struct axis *a, double lo, double hi, int whole)
{
	static const double mant[3] = { 1, 2, 5 };
	double span = hi - lo, big;
	int e, i;

	if (!(span > 0)) {
		double d = lo != 0 ? fabs(lo) * 0.05 : 1;

		lo -= d;
		hi += d;
		span = hi - lo;
	}
	a->log = 0;
	a->lo = lo - 0.05 * span;
	a->hi = hi + 0.05 * span;
	/* from a step wider than the axis down the 1-2-5 ladder until five
	 * ticks fit (whole numbers: not below 1) */
	e = (int)ceil(log10(a->hi - a->lo));
	i = 0;
	a->step = pow(10, e);
	while (nticks(a->lo, a->hi, a->step) < 5 && !(whole && a->step <= 1)) {
		if (--i < 0) {
			i = 2;
			e--;
		}
		a->step = mant[i] * pow(10, e);
	}
	big = fmax(fabs(a->lo), fabs(a->hi));
	a->e10 = 0;
	if (a->step < 1e-3 || big >= 1e6)
		a->e10 = (int)floor(log10(big) + 1e-9);
	a->dec = (int)-floor(log10(a->step) - a->e10 + 1e-9);
	if (a->dec < 0)
		a->dec = 0;
}

/* Fit a log axis to the positive data range [lo, hi] (hi/lo > 10^1.5). */
static void log_fit(struct axis *a, double lo, double hi)
{
	double l = log10(lo), h = log10(hi), m = 0.05 * (h - l);

	a->log = 1;
	a->lo = l - m;
	a->hi = h + m;
	a->minor = a->hi - a->lo <= 3.5;
	a->lstep = (int)ceil((a->hi - a->lo) / 7);
}

/* The ticks of axis a: values (data units) into v, 1 into lab[] where
 * labelled; their number (at most cap). */
static int ticks(const struct axis *a, double *v, int *lab, int cap)
{
	int n = 0, k, m;

	if (!a->log) {
		double t = ceil(a->lo / a->step - 1e-9);

		for (; t * a->step <= a->hi + a->step * 1e-9 && n < cap; t++, n++) {
			v[n] = fabs(t) < 0.5 ? 0 : t * a->step;
			lab[n] = 1;
		}
		return n;
	}
	for (k = (int)floor(a->lo); k <= (int)ceil(a->hi) && n < cap; k++)
		for (m = 1; m <= 5 && n < cap; m += m == 1 ? 1 : 3) {
			double x = m * pow(10, k), lx = log10(x);

			if (lx < a->lo - 1e-9 || lx > a->hi + 1e-9)
				continue;
			if (!a->minor && (m != 1 || k % a->lstep) && a->hi - a->lo > 7)
				continue;	/* wide: the labelled decades only */
			v[n] = x;
			lab[n++] = a->minor || (m == 1 && !(k % a->lstep));
		}
	return n;
}

/* Tick label of value v on axis a into fp (with its markup). */
static void tick_text(FILE *fp, const struct axis *a, double v)
{
	if (a->log) {
		int k = (int)floor(log10(v) + 1e-9), m = (int)lround(v / pow(10, k));

		if (m != 1)
			fprintf(fp, "%d\xc3\x97", m);	/* U+00D7 multiplication sign */
		fprintf(fp, "10<tspan dy=\"-5\" font-size=\"8\">%d</tspan>", k);
		return;
	}
	fprintf(fp, "%.*f", a->dec, a->e10 ? v / pow(10, a->e10) : v);
}

/* "x10^E" once beside axis a when its labels are scaled. */
static void axis_scale(FILE *fp, const struct axis *a, char which, double x, double y,
		       const char *anchor)
{
	if (a->log || !a->e10)
		return;
	fprintf(fp, "<text class=\"axis-scale\" data-axis=\"%c\" x=\"%.1f\" y=\"%.1f\" "
		"font-size=\"11\" text-anchor=\"%s\">\xc3\x97" "10<tspan dy=\"-5\" font-size=\"8\">"
		"%d</tspan></text>\n", which, x, y, anchor, a->e10);
}

/* Grid lines and tick labels of the y axis a over [x0, x1]. */
static void y_ticks(FILE *fp, const struct axis *a, double x0, double x1)
{
	double v[128];
	int lab[128], n = ticks(a, v, lab, 128), i;

	for (i = 0; i < n; i++) {
		double py = ax_pos(a, v[i]);

		fprintf(fp, "<line class=\"grid\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" "
			"stroke=\"%s\"/>\n", x0, py, x1, py, lab[i] ? "#dcdcdc" : "#efefef");
		if (!lab[i])
			continue;
		fprintf(fp, "<text class=\"ytick\" data-value=\"%.17g\" x=\"%.1f\" y=\"%.1f\" "
			"font-size=\"11\" text-anchor=\"end\">", v[i], x0 - 6, py + 4);
		tick_text(fp, a, v[i]);
		fputs("</text>\n", fp);
	}
}

/* Grid lines of the x axis over [y0, y1], with labels below y1 if asked. */
static void x_ticks(FILE *fp, const struct axis *a, double y0, double y1, int labels)
{
	double v[128];
	int lab[128], n = ticks(a, v, lab, 128), i;

	for (i = 0; i < n; i++) {
		double px = ax_pos(a, v[i]);

		fprintf(fp, "<line class=\"grid\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" "
			"stroke=\"#dcdcdc\"/>\n", px, y0, px, y1);
		if (!labels)
			continue;
		fprintf(fp, "<text class=\"xtick\" data-value=\"%.17g\" x=\"%.1f\" y=\"%.1f\" "
			"font-size=\"11\" text-anchor=\"middle\">", v[i], px, y1 + 16);
		tick_text(fp, a, v[i]);
		fputs("</text>\n", fp);
	}
}

/* ------------------------------------------------------------ data */

/* Whether point i of series s is drawable (log: y > 0). */
static int drawable(const struct cli_plot *pl, const struct cli_plot_series *s, size_t i,
		    int logy)
{
	const double *x = s->x ? s->x : pl->x;

	return isfinite(x[i]) && isfinite(s->y[i]) && (!logy || s->y[i] > 0);
}

/* The range of panel p's y (x when which is 0) over its points drawable
 * on a linear (logy 0) or log axis; 0 when there is none. */
static int range(const struct cli_plot *pl, const struct cli_plot_panel *p, int which,
		 int logy, double *lo, double *hi)
{
	size_t s, i;
	int any = 0;

	*lo = INFINITY;
	*hi = -INFINITY;
	for (s = 0; s < p->ns; s++)
		for (i = 0; i < p->s[s].n; i++) {
			const double *x = p->s[s].x ? p->s[s].x : pl->x;
			double v = which ? p->s[s].y[i] : x[i];

			if (!drawable(pl, &p->s[s], i, logy))
				continue;
			any = 1;
			*lo = v < *lo ? v : *lo;
			*hi = v > *hi ? v : *hi;
		}
	return any;
}

/* Whether series a and b have the same points (NaN equal to NaN). */
static int same(const struct cli_plot *pl, const struct cli_plot_series *a,
		const struct cli_plot_series *b)
{
	const double *xa = a->x ? a->x : pl->x, *xb = b->x ? b->x : pl->x;
	size_t i;

	if (a->n != b->n || !a->n)
		return 0;
	for (i = 0; i < a->n; i++) {
		if (!(xa[i] == xb[i] || (isnan(xa[i]) && isnan(xb[i]))))
			return 0;
		if (!(a->y[i] == b->y[i] || (isnan(a->y[i]) && isnan(b->y[i]))))
			return 0;
	}
	return 1;
}

/* The style index of series name `name` among the names seen so far. */
static int style_of(const char **names, int *nnames, const char *name)
{
	int i;

	name = name ? name : "";
	for (i = 0; i < *nnames; i++)
		if (!strcmp(names[i], name))
			return i;
	if (*nnames == MAXSER)
		return MAXSER - 1;
	names[*nnames] = name;
	return (*nnames)++;
}

/* ------------------------------------------------------------ drawing */

static void stroke(FILE *fp, int c)
{
	fprintf(fp, "stroke=\"%s\"", palette[c % 10]);
	if (dashes[c % NSTYLE])
		fprintf(fp, " stroke-dasharray=\"%s\"", dashes[c % NSTYLE]);
}

/* Marker of style c at (x, y): hollow, so coinciding markers all show. */
static void marker(FILE *fp, int c, double x, double y)
{
	const char *col = palette[c % 10];

	switch (c % NSTYLE) {
	case 0:
		fprintf(fp, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"4.5\" stroke=\"%s\"/>\n", x, y, col);
		break;
	case 1:
		fprintf(fp, "<rect x=\"%.1f\" y=\"%.1f\" width=\"8\" height=\"8\" stroke=\"%s\"/>\n",
			x - 4, y - 4, col);
		break;
	case 2:
		fprintf(fp, "<path d=\"M%.1f %.1fl5.5 9.5h-11z\" stroke=\"%s\"/>\n", x, y - 6, col);
		break;
	case 3:
		fprintf(fp, "<path d=\"M%.1f %.1fl6 6l-6 6l-6 -6z\" stroke=\"%s\"/>\n", x, y - 6,
			col);
		break;
	case 4:
		fprintf(fp, "<path d=\"M%.1f %.1fl5.5 -9.5h-11z\" stroke=\"%s\"/>\n", x, y + 6, col);
		break;
	default:
		fprintf(fp, "<path d=\"M%.1f %.1fl9 9m0 -9l-9 9\" stroke=\"%s\"/>\n", x - 4.5, y - 4.5,
			col);
	}
}

/* The legend: a swatch (line and marker) and the name per series,
 * wrapping at the width; draws when fp is not NULL; the number of rows. */
static int legend(FILE *fp, const char **names, int n, double y0)
{
	double x = ML, y = y0;
	int i, rows = n ? 1 : 0;

	for (i = 0; i < n; i++) {
		double w = 40 + TW * 12 * (double)strlen(names[i]) + 20;

		if (x > ML && x + w > W - MR) {
			x = ML;
			y += 18;
			rows++;
		}
		if (fp) {
			fprintf(fp, "<g class=\"legend-entry\" data-name=\"");
			xml(fp, names[i]);
			fprintf(fp, "\"><line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" "
				"stroke-width=\"2\" ", x, y - 4, x + 34, y - 4);
			stroke(fp, i);
			fputs("/>\n<g fill=\"none\" stroke-width=\"1.5\">", fp);
			marker(fp, i, x + 17, y - 4);
			fprintf(fp, "</g><text class=\"legend\" x=\"%.1f\" y=\"%.1f\" font-size=\"12\">",
				x + 40, y);
			xml(fp, names[i]);
			fputs("</text></g>\n", fp);
		}
		x += w;
	}
	return rows;
}

/* One series: polylines between breaks, then its markers (every point
 * with `all`, else about ten, staggered by style so that coinciding
 * series show each other's). */
static void series(FILE *fp, const struct cli_plot *pl, const struct cli_plot_series *s,
		   const struct axis *ax, const struct axis *ay, int c, int all)
{
	const double *x = s->x ? s->x : pl->x;
	size_t i, run = 0, stride = all || s->n <= 30 ? 1 : s->n / 10;
	size_t off = stride * (size_t)(c % NSTYLE) / NSTYLE;
	double w = 2.8 - 0.3 * (double)c;

	fprintf(fp, "<g class=\"series\" data-name=\"");
	xml(fp, s->name);
	fprintf(fp, "\" fill=\"none\" stroke-width=\"%.2f\" stroke-linejoin=\"round\" ",
		w < 1.3 ? 1.3 : w);
	stroke(fp, c);
	fputs(">\n", fp);
	for (i = 0; i <= s->n; i++) {
		if (i < s->n && drawable(pl, s, i, ay->log)) {
			fprintf(fp, run ? " %.1f,%.1f" : "<polyline points=\"%.1f,%.1f",
				ax_pos(ax, x[i]), ax_pos(ay, s->y[i]));
			run++;
			continue;
		}
		if (run)
			fputs("\"/>\n", fp);
		run = 0;
	}
	fputs("</g>\n<g class=\"markers\" fill=\"none\" stroke-width=\"1.5\">\n", fp);
	for (i = off; i < s->n; i += stride)
		if (drawable(pl, s, i, ay->log))
			marker(fp, c, ax_pos(ax, x[i]), ax_pos(ay, s->y[i]));
	fputs("</g>\n", fp);
}

/* The notes of panel p, one a line from y on (drawn when fp is not NULL):
 * the groups of identical series, then the series with points not drawn
 * (the first x where y is not finite, or <= 0 on a log axis, in the
 * series' colour).  At most MAXNOTE; their number. */
static int notes(FILE *fp, const struct cli_plot *pl, const struct cli_plot_panel *p, int logy,
		 const char **names, int *nnames, double y)
{
	size_t s, t, i;
	int k = 0;

	for (s = 0; s < p->ns && k < MAXNOTE; s++) {
		size_t m = 0, last = s;

		for (t = 0; t < s && !same(pl, &p->s[t], &p->s[s]); t++)
			;
		if (t < s)
			continue;	/* in an earlier group */
		for (t = s + 1; t < p->ns; t++)
			if (same(pl, &p->s[s], &p->s[t]))
				m++, last = t;
		if (!m)
			continue;
		if (fp) {
			fprintf(fp, "<text class=\"identical\" x=\"%d\" y=\"%.1f\" font-size=\"11\" "
				"fill=\"#333\">", ML, y + NOTE * k);
			xml(fp, p->s[s].name);
			for (t = s + 1; t < p->ns; t++)
				if (same(pl, &p->s[s], &p->s[t])) {
					fputs(t == last ? (m > 1 ? ", and " : " and ") : ", ", fp);
					xml(fp, p->s[t].name);
				}
			fputs(" are identical (drawn over each other)</text>\n", fp);
		}
		k++;
	}
	for (s = 0; s < p->ns && k < MAXNOTE; s++) {
		const double *x = p->s[s].x ? p->s[s].x : pl->x, *yy = p->s[s].y;
		int c = style_of(names, nnames, p->s[s].name);

		for (i = 0; i < p->s[s].n; i++)
			if (isfinite(x[i]) && (!isfinite(yy[i]) || (logy && !(yy[i] > 0))))
				break;
		if (i == p->s[s].n)
			continue;
		if (fp) {
			fprintf(fp, "<text class=\"note\" x=\"%d\" y=\"%.1f\" font-size=\"11\" "
				"fill=\"%s\">", ML, y + NOTE * k, palette[c % 10]);
			xml(fp, p->s[s].name);
			fprintf(fp, ": %s from %s %g on%s</text>\n", isfinite(yy[i]) ? "0 or less" :
				"nan or inf", pl->xlabel ? pl->xlabel : "x", x[i],
				isfinite(yy[i]) ? " (not on the log axis)" : ", not drawn");
		}
		k++;
	}
	return k;
}

/* The y axis of panel p: log when allowed and the positive data span more
 * than 1.5 decades, else linear over the data and ymin/ymax.  0 when
 * there is nothing to draw. */
static int y_axis(const struct cli_plot *pl, const struct cli_plot_panel *p, struct axis *a)
{
	double lo, hi;
	int any;

	if (p->logy && range(pl, p, 1, 1, &lo, &hi) && log10(hi / lo) > 1.5) {
		log_fit(a, lo, hi);
		return 1;
	}
	any = range(pl, p, 1, 0, &lo, &hi);
	if (!any)
		return 0;
	if (!isnan(p->ymin))
		lo = fmin(lo, p->ymin);
	if (!isnan(p->ymax))
		hi = fmax(hi, p->ymax);
	if (hi == lo && (lo == 0 || !isnan(p->ymin)))
		hi = lo + 1;	/* a drift or fraction that stays 0: 0..1, not -1..1 */
	lin_fit(a, lo, hi, 0);
	return 1;
}

/* Panel k (its heading at `top`), the shared x axis ax. */
static void panel(FILE *fp, const struct cli_plot *pl, size_t k, const struct axis *ax,
		  const char **names, int *nnames, double top)
{
	const struct cli_plot_panel *p = &pl->p[k];
	struct axis ay = { 0, 0, 1, 0, 0, 1, 0, 0, 0, 1 };
	int any = y_axis(pl, p, &ay), nn = notes(NULL, pl, p, ay.log, names, nnames, 0);
	double ft = top + HEAD + NOTE * nn, fb = ft + PH;
	size_t s;

	ay.p0 = fb;
	ay.p1 = ft;
	fprintf(fp, "<g class=\"panel\" data-panel=\"%zu\" data-scale=\"%s\">\n<clipPath "
		"id=\"clip%zu\"><rect x=\"%d\" y=\"%.1f\" width=\"%d\" height=\"%d\"/></clipPath>\n",
		k, any && ay.log ? "log" : "linear", k, ML - 6, ft - 6, W - ML - MR + 12, PH + 12);
	fprintf(fp, "<text class=\"ylabel\" x=\"%d\" y=\"%.1f\" font-size=\"12\" "
		"font-weight=\"bold\">", ML, top + 14);
	xml(fp, p->ylabel);
	fprintf(fp, "%s</text>\n", any && ay.log ? " (log scale)" : "");
	notes(fp, pl, p, ay.log, names, nnames, top + HEAD + 11);
	fputs("<g class=\"axes\">\n", fp);
	if (any) {
		y_ticks(fp, &ay, ML, W - MR);
		axis_scale(fp, &ay, 'y', ML - 6, ft - 5, "end");
	}
	x_ticks(fp, ax, ft, fb, k + 1 == pl->np);
	if (k + 1 == pl->np)
		axis_scale(fp, ax, 'x', W - MR, fb + 32, "end");
	fprintf(fp, "<rect x=\"%d\" y=\"%.1f\" width=\"%d\" height=\"%d\" fill=\"none\" "
		"stroke=\"#333\"/>\n</g>\n", ML, ft, W - ML - MR, PH);
	if (!any)
		fprintf(fp, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"12\" fill=\"#888\" "
			"text-anchor=\"middle\">no finite points</text>\n", (ML + W - MR) / 2.0,
			ft + PH / 2.0);
	fprintf(fp, "<g clip-path=\"url(#clip%zu)\">\n", k);
	for (s = 0; any && s < p->ns; s++)
		series(fp, pl, &p->s[s], ax, &ay, style_of(names, nnames, p->s[s].name),
		       pl->markers);
	fputs("</g>\n</g>\n", fp);
}

/* The height of panel k with its heading and notes. */
static double panel_height(const struct cli_plot *pl, size_t k, const char **names, int *nn)
{
	struct axis ay = { 0, 0, 1, 0, 0, 1, 0, 0, 0, 1 };
	int any = y_axis(pl, &pl->p[k], &ay);

	return HEAD + NOTE * notes(NULL, pl, &pl->p[k], any && ay.log, names, nn, 0) + PH;
}

void cli_plot_svg(FILE *fp, const struct cli_plot *pl)
{
	const char *names[MAXSER];
	int nnames = 0, rows;
	double head, height, y, xlo = INFINITY, xhi = -INFINITY;
	struct axis ax = { 0, 0, 1, ML + 8, W - MR - 8, 1, 0, 0, 0, 1 };
	size_t k, s;

	for (k = 0; k < pl->np; k++)
		for (s = 0; s < pl->p[k].ns; s++)
			style_of(names, &nnames, pl->p[k].s[s].name);
	rows = legend(NULL, names, nnames, 0);
	head = (pl->subtitle ? 54 : 38) + 18.0 * rows + 4;
	height = head + MB;
	for (k = 0; k < pl->np; k++) {
		double lo, hi;

		height += panel_height(pl, k, names, &nnames) + (k ? GAP : 0);
		if (range(pl, &pl->p[k], 0, 0, &lo, &hi)) {
			xlo = fmin(lo, xlo);
			xhi = fmax(hi, xhi);
		}
	}
	/* the shared x axis over every panel's finite points; the lines stop
	 * 8 pixels inside the frame so that markers at the ends show whole */
	if (xlo > xhi) {
		xlo = 0;
		xhi = 1;
	} else if (xlo == xhi) {
		xlo -= 0.5;
		xhi += 0.5;
	}
	lin_fit(&ax, xlo, xhi, pl->x_whole);
	ax.lo = xlo;
	ax.hi = xhi;
	fprintf(fp, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
		"<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%.0f\" "
		"viewBox=\"0 0 %d %.0f\" font-family=\"DejaVu Sans, Helvetica, Arial, sans-serif\">\n"
		"<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n", W, height, W, height);
	fputs("<text class=\"title\" x=\"16\" y=\"24\" font-size=\"16\" font-weight=\"bold\">", fp);
	xml(fp, pl->title);
	fputs("</text>\n", fp);
	if (pl->subtitle) {
		fputs("<text class=\"subtitle\" x=\"16\" y=\"42\" font-size=\"11\" fill=\"#444\">", fp);
		xml(fp, pl->subtitle);
		fputs("</text>\n", fp);
	}
	fputs("<g class=\"legend\">\n", fp);
	legend(fp, names, nnames, head - 18.0 * rows + 10);
	fputs("</g>\n", fp);
	for (k = 0, y = head; k < pl->np; k++) {
		panel(fp, pl, k, &ax, names, &nnames, y);
		y += panel_height(pl, k, names, &nnames) + GAP;
	}
	fprintf(fp, "<text class=\"xlabel\" x=\"%.1f\" y=\"%.1f\" font-size=\"12\" "
		"text-anchor=\"middle\">", (ML + W - MR) / 2.0, height - 12);
	xml(fp, pl->xlabel);
	fputs("</text>\n</svg>\n", fp);
}

int cli_plot_svg_name_ok(const char *path)
{
	size_t n = strlen(path);
	struct stat sb;

	if (!strcmp(path, "-"))
		return 1;
	if (n > 4 && path[n - 5] != '/' && !strcasecmp(path + n - 4, ".svg"))
		return 1;
	return !stat(path, &sb) && !S_ISREG(sb.st_mode) && !S_ISDIR(sb.st_mode);
}
