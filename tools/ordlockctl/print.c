// SPDX-License-Identifier: GPL-2.0
/*
 * ordlockctl: tables, JSON and colour (see print.h).
 */
#define _GNU_SOURCE		/* vasprintf() */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <libsmartcols.h>

#include "print.h"

#define ARRAY_LEN(a)	(sizeof(a) / sizeof((a)[0]))

static int olc_colors;

static const char *const olc_color_seq[OLC_NCOLORS] = {
	[OLC_RESET] = "\033[0m",
	[OLC_BOLD] = "\033[1m",
	[OLC_RED] = "\033[31m",
	[OLC_GREEN] = "\033[32m",
	[OLC_YELLOW] = "\033[33m",
	[OLC_BLUE] = "\033[34m",
	[OLC_MAGENTA] = "\033[35m",
	[OLC_CYAN] = "\033[36m",
	[OLC_DIM] = "\033[2m",
};

int olc_color_init(const char *when)
{
	if (!when || !strcmp(when, "auto")) {
		const char *term = getenv("TERM");

		olc_colors = isatty(STDOUT_FILENO) && !getenv("NO_COLOR") &&
			     !(term && !strcmp(term, "dumb"));
	} else if (!strcmp(when, "always")) {
		olc_colors = 1;
	} else if (!strcmp(when, "never")) {
		olc_colors = 0;
	} else {
		return -1;
	}
	return 0;
}

int olc_color_on(void)
{
	return olc_colors;
}

const char *olc_c(enum olc_color c)
{
	if (!olc_colors || c >= OLC_NCOLORS)
		return "";
	return olc_color_seq[c];
}

/* Tables */

struct olc_cell {
	char *text;
	enum olc_color color;
};

struct olc_table {
	unsigned int ncols;
	const char *const *headers;
	const char *align;
	struct olc_cell *cells;
	size_t n, cap;
};

struct olc_table *olc_table_new(unsigned int ncols, const char *const *headers,
				const char *align)
{
	struct olc_table *t = calloc(1, sizeof(*t));

	if (!t)
		return NULL;
	t->ncols = ncols;
	t->headers = headers;
	t->align = align;
	return t;
}

unsigned int olc_table_rows(const struct olc_table *t)
{
	return t ? (unsigned int)(t->n / t->ncols) : 0;
}

void olc_table_cell(struct olc_table *t, enum olc_color color,
		    const char *fmt, ...)
{
	va_list ap;
	char *s = NULL;
	int ret;

	if (!t)
		return;
	if (t->n == t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 64;
		struct olc_cell *p = realloc(t->cells, cap * sizeof(*p));

		if (!p)
			return;
		t->cells = p;
		t->cap = cap;
	}
	va_start(ap, fmt);
	ret = vasprintf(&s, fmt, ap);
	va_end(ap);
	if (ret < 0)
		s = NULL;
	t->cells[t->n].text = s;
	t->cells[t->n].color = color;
	t->n++;
}

struct olc_table_opts olc_tab;

/* The column of @t named @name (case and '_' for ' ' aside), or -1 */
static int olc_table_col(const char *const *headers, unsigned int ncols,
			 const char *name, size_t len)
{
	unsigned int c;
	size_t k;

	for (c = 0; c < ncols; c++) {
		const char *h = headers[c];

		if (strlen(h) != len)
			continue;
		for (k = 0; k < len; k++) {
			char x = h[k] == ' ' ? '_' : h[k], y = name[k] == '-' ? '_' : name[k];

			if (x != (y >= 'a' && y <= 'z' ? y - 'a' + 'A' : y))
				break;
		}
		if (k == len)
			return (int)c;
	}
	return -1;
}

int olc_columns_check(const char *list, const char *const *headers, char *bad,
		      size_t badlen)
{
	unsigned int n = 0;
	const char *p = list, *e;

	while (headers[n])
		n++;
	if (*list == '+')
		p = ++list;
	if (!*list)
		goto fail;
	for (; *p; p = *e ? e + 1 : e) {
		e = strchr(p, ',');
		if (!e)
			e = p + strlen(p);
		if (olc_table_col(headers, n, p, (size_t)(e - p)) < 0) {
			snprintf(bad, badlen, "%.*s", (int)(e - p), p);
			return -1;
		}
	}
	return 0;
fail:
	snprintf(bad, badlen, "%s", list);
	return -1;
}

/* Append the columns of @list to the @ncols of @cols (@cap at most); their number */
static unsigned int olc_table_cols(const struct olc_table *t, const char *list,
				   int *cols, unsigned int ncols, unsigned int cap)
{
	const char *p = list, *e;

	for (; *p && ncols < cap; p = *e ? e + 1 : e) {
		int k;

		e = strchr(p, ',');
		if (!e)
			e = p + strlen(p);
		k = olc_table_col(t->headers, t->ncols, p, (size_t)(e - p));
		if (k >= 0)
			cols[ncols++] = k;
	}
	return ncols;
}

static const char *const olc_scols_color[OLC_NCOLORS] = {
	[OLC_BOLD] = "bold",
	[OLC_RED] = "red",
	[OLC_GREEN] = "green",
	[OLC_YELLOW] = "yellow",
	[OLC_BLUE] = "blue",
	[OLC_MAGENTA] = "magenta",
	[OLC_CYAN] = "cyan",
	[OLC_DIM] = "halfbright",
};

/*
 * Printed by libsmartcols (util-linux's, as lslocks(8)): the columns of
 * -o in its order (all without it), -n no header, -r raw
 */
void olc_table_print(struct olc_table *t, FILE *f)
{
	struct libscols_table *tb;
	int cols[64];
	unsigned int c, ncols = 0;
	size_t i, rows;

	if (!t)
		return;
	tb = scols_new_table();
	if (!tb)
		goto out;
	/* -o +LIST: the default columns, then LIST (as lslocks -o +LIST) */
	if (!olc_tab.columns || olc_tab.columns[0] == '+') {
		if (olc_tab.defaults)
			ncols = olc_table_cols(t, olc_tab.defaults, cols, 0, ARRAY_LEN(cols));
		else
			for (c = 0; c < t->ncols && c < ARRAY_LEN(cols); c++)
				cols[ncols++] = (int)c;
	}
	if (olc_tab.columns)
		ncols = olc_table_cols(t, olc_tab.columns + (olc_tab.columns[0] == '+'),
				       cols, ncols, ARRAY_LEN(cols));
	scols_table_set_stream(tb, f);
	scols_table_enable_colors(tb, olc_colors);
	scols_table_enable_raw(tb, olc_tab.raw);
	scols_table_enable_noheadings(tb, olc_tab.noheadings);
	if (!olc_tab.raw)
		scols_table_set_column_separator(tb, "  ");
	for (c = 0; c < ncols; c++) {
		int right = t->align && t->align[cols[c]] == 'r';
		struct libscols_column *cl;
		char name[64], *sp;

		/* raw: "WAITS_FOR", as -o names it, not an escaped space */
		snprintf(name, sizeof(name), "%s", t->headers[cols[c]]);
		for (sp = name; olc_tab.raw && *sp; sp++)
			if (*sp == ' ')
				*sp = '_';
		cl = scols_table_new_column(tb, name, 1, right ? SCOLS_FL_RIGHT : 0);
		if (!cl)
			goto out;
		if (olc_colors)
			scols_cell_set_color(scols_column_get_header(cl), "bold");
	}
	rows = t->n / t->ncols;
	for (i = 0; i < rows; i++) {
		struct libscols_line *ln = scols_table_new_line(tb, NULL);

		if (!ln)
			goto out;
		for (c = 0; c < ncols; c++) {
			const struct olc_cell *cell = &t->cells[i * t->ncols + cols[c]];

			scols_line_set_data(ln, c, cell->text ? cell->text : "");
			if (olc_colors && cell->color != OLC_RESET && olc_scols_color[cell->color])
				scols_cell_set_color(scols_line_get_cell(ln, c),
						     olc_scols_color[cell->color]);
		}
	}
	scols_print_table(tb);
out:
	scols_unref_table(tb);
	olc_table_free(t);
}

void olc_table_free(struct olc_table *t)
{
	size_t i;

	if (!t)
		return;
	for (i = 0; i < t->n; i++)
		free(t->cells[i].text);
	free(t->cells);
	free(t);
}

/* JSON */

void olc_json_init(struct olc_json *j, FILE *f, int pretty)
{
	memset(j, 0, sizeof(*j));
	j->f = f;
	j->pretty = pretty;
	j->first[0] = 1;
}

static void olc_json_indent(struct olc_json *j)
{
	int i;

	if (!j->pretty)
		return;
	fputc('\n', j->f);
	for (i = 0; i < j->depth; i++)
		fputs("  ", j->f);
}

/*
 * The length of the valid UTF-8 sequence at @s (2 to 4 bytes: no overlong
 * form, no surrogate, nothing above U+10FFFF), or 0
 */
static size_t olc_utf8_len(const unsigned char *s)
{
	size_t n, i;
	unsigned int cp;

	if (s[0] >= 0xc2 && s[0] <= 0xdf) {
		n = 2;
		cp = s[0] & 0x1f;
	} else if (s[0] >= 0xe0 && s[0] <= 0xef) {
		n = 3;
		cp = s[0] & 0x0f;
	} else if (s[0] >= 0xf0 && s[0] <= 0xf4) {
		n = 4;
		cp = s[0] & 0x07;
	} else {
		return 0;
	}
	for (i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;	/* the NUL included: a sequence cut short */
		cp = cp << 6 | (s[i] & 0x3f);
	}
	if ((n == 3 && cp < 0x800) || (n == 4 && cp < 0x10000) || cp > 0x10ffff ||
	    (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return n;
}

/*
 * A JSON string (RFC 8259): quotes, backslashes and control characters
 * escaped; valid UTF-8 (a path, a name given by the user) written as it is,
 * so that a reader gets the same characters back; a byte that is not part
 * of valid UTF-8 becomes U+FFFD (the document stays valid UTF-8)
 */
static void olc_json_string(FILE *f, const char *str)
{
	const unsigned char *s = (const unsigned char *)str;
	size_t n;

	fputc('"', f);
	while (*s) {
		unsigned char c = *s;

		if (c == '"' || c == '\\') {
			fprintf(f, "\\%c", c);
		} else if (c == '\n') {
			fputs("\\n", f);
		} else if (c == '\t') {
			fputs("\\t", f);
		} else if (c < 0x20 || c == 0x7f) {
			fprintf(f, "\\u%04x", c);
		} else if (c < 0x80) {
			fputc(c, f);
		} else {
			n = olc_utf8_len(s);
			if (!n) {
				fputs("\\ufffd", f);
				s++;
				continue;
			}
			fwrite(s, 1, n, f);
			s += n;
			continue;
		}
		s++;
	}
	fputc('"', f);
}

/* The separator and key before a value */
static void olc_json_key(struct olc_json *j, const char *key)
{
	if (!j->first[j->depth])
		fputc(',', j->f);
	j->first[j->depth] = 0;
	if (j->depth)
		olc_json_indent(j);
	if (key) {
		olc_json_string(j->f, key);
		fputs(j->pretty ? ": " : ":", j->f);
	}
}

static void olc_json_open(struct olc_json *j, const char *key, char c)
{
	olc_json_key(j, key);
	fputc(c, j->f);
	if (j->depth < 63)
		j->depth++;
	j->first[j->depth] = 1;
}

static void olc_json_close(struct olc_json *j, char c)
{
	int empty = j->first[j->depth];

	if (j->depth)
		j->depth--;
	if (!empty)
		olc_json_indent(j);
	fputc(c, j->f);
}

void olc_json_obj(struct olc_json *j, const char *key)
{
	olc_json_open(j, key, '{');
}

void olc_json_obj_end(struct olc_json *j)
{
	olc_json_close(j, '}');
}

void olc_json_arr(struct olc_json *j, const char *key)
{
	olc_json_open(j, key, '[');
}

void olc_json_arr_end(struct olc_json *j)
{
	olc_json_close(j, ']');
}

void olc_json_str(struct olc_json *j, const char *key, const char *s)
{
	olc_json_key(j, key);
	if (s)
		olc_json_string(j->f, s);
	else
		fputs("null", j->f);
}

void olc_json_u64(struct olc_json *j, const char *key, uint64_t v)
{
	olc_json_key(j, key);
	/*
	 * A double (JavaScript, jq 1.6) holds integers exactly up to 2^53 - 1:
	 * past that the number is written as a string of its decimal digits,
	 * so that no reader rounds it ("id": 5, "id": "18446744073709551615";
	 * jq's "tostring" gives the exact digits of both)
	 */
	if (v > OLC_JSON_MAX_SAFE)
		fprintf(j->f, "\"%llu\"", (unsigned long long)v);
	else
		fprintf(j->f, "%llu", (unsigned long long)v);
}

void olc_json_int(struct olc_json *j, const char *key, long long v)
{
	olc_json_key(j, key);
	fprintf(j->f, "%lld", v);
}

void olc_json_bool(struct olc_json *j, const char *key, int v)
{
	olc_json_key(j, key);
	fputs(v ? "true" : "false", j->f);
}

void olc_json_null(struct olc_json *j, const char *key)
{
	olc_json_key(j, key);
	fputs("null", j->f);
}

void olc_json_raw(struct olc_json *j, const char *key, const char *text)
{
	olc_json_key(j, key);
	fputs(text, j->f);
}

void olc_json_end(struct olc_json *j)
{
	fputc('\n', j->f);
	fflush(j->f);
}

char *olc_us_str(char *buf, size_t len, uint64_t us)
{
	if (us < 1000)
		snprintf(buf, len, "%llu us", (unsigned long long)us);
	else if (us < 1000000)
		snprintf(buf, len, "%llu ms", (unsigned long long)(us / 1000));
	else if (us < 600000000ULL)
		snprintf(buf, len, "%.2f s", (double)us / 1e6);
	else
		snprintf(buf, len, "%llu min", (unsigned long long)(us / 60000000ULL));
	return buf;
}

char *olc_us_cell(char *buf, size_t len, uint64_t us)
{
	if (!olc_tab.raw)
		return olc_us_str(buf, len, us);
	snprintf(buf, len, "%llu", (unsigned long long)us);
	return buf;
}

const char *olc_cell_sep(void)
{
	return olc_tab.raw ? "-" : " ";
}

char *olc_time_str(char *buf, size_t len, uint64_t ns)
{
	time_t sec = (time_t)(ns / 1000000000ULL);
	struct tm tm;
	char date[32], zone[8];

	if (!localtime_r(&sec, &tm)) {
		snprintf(buf, len, "%llu", (unsigned long long)ns);
		return buf;
	}
	strftime(date, sizeof(date), "%Y-%m-%dT%H:%M:%S", &tm);
	strftime(zone, sizeof(zone), "%z", &tm);
	/* +0100 -> +01:00 (RFC 3339) */
	if (strlen(zone) == 5) {
		zone[6] = '\0';
		zone[5] = zone[4];
		zone[4] = zone[3];
		zone[3] = ':';
	}
	snprintf(buf, len, "%s.%06llu%s", date,
		 (unsigned long long)(ns % 1000000000ULL / 1000), zone);
	return buf;
}
