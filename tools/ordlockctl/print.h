/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ordlockctl: output for people (aligned tables, colour on a terminal) and
 * for scripts (JSON with stable field names).
 */
#ifndef ORDLOCKCTL_PRINT_H
#define ORDLOCKCTL_PRINT_H

#include <stdint.h>
#include <stdio.h>

/* Colours: empty strings unless colour is on (olc_color_init()) */
enum olc_color {
	OLC_RESET,
	OLC_BOLD,
	OLC_RED,
	OLC_GREEN,
	OLC_YELLOW,
	OLC_BLUE,
	OLC_MAGENTA,
	OLC_CYAN,
	OLC_DIM,
	OLC_NCOLORS,
};

/* "auto" (on when stdout is a terminal and NO_COLOR is unset), "always", "never" */
int olc_color_init(const char *when);
int olc_color_on(void);
const char *olc_c(enum olc_color c);

/* An aligned table: cells are added row by row */
struct olc_table;

/*
 * olc_table_new() - a table with @ncols columns named @headers; @align has
 * one letter per column, 'l' or 'r' (numbers). NULL on out of memory.
 */
struct olc_table *olc_table_new(unsigned int ncols, const char *const *headers,
				const char *align);
/* Add the next cell (a new row starts after the last column), in @color */
void olc_table_cell(struct olc_table *t, enum olc_color color,
		    const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/*
 * How tables are printed (lslocks' options): @columns the header names of
 * -o, comma-separated (NULL: all), @noheadings -n, @raw -r
 */
/*
 * @columns: -o LIST, or NULL; "+LIST" (lslocks' form) adds LIST to the
 *	default columns
 * @defaults: the command's default columns (NULL: every column)
 */
struct olc_table_opts {
	const char *columns;
	const char *defaults;
	int noheadings;
	int raw;
};

extern struct olc_table_opts olc_tab;

/*
 * olc_columns_check() - 0 when every name of the -o @list ("+LIST" too)
 * is one of @headers (NULL-terminated), else -1 with the first unknown in
 * @bad
 */
int olc_columns_check(const char *list, const char *const *headers, char *bad,
		      size_t badlen);

/* Print the header and the rows (olc_tab says how, libsmartcols does it); free @t */
void olc_table_print(struct olc_table *t, FILE *f);
unsigned int olc_table_rows(const struct olc_table *t);
void olc_table_free(struct olc_table *t);

/* A JSON writer: compact, or indented with @pretty */
struct olc_json {
	FILE *f;
	int pretty;
	int depth;
	int first[64];
};

void olc_json_init(struct olc_json *j, FILE *f, int pretty);
/* @key is NULL inside arrays and for the top level */
void olc_json_obj(struct olc_json *j, const char *key);
void olc_json_obj_end(struct olc_json *j);
void olc_json_arr(struct olc_json *j, const char *key);
void olc_json_arr_end(struct olc_json *j);
void olc_json_str(struct olc_json *j, const char *key, const char *s);
/*
 * An unsigned 64-bit integer: a JSON number up to OLC_JSON_MAX_SAFE (2^53 - 1,
 * exact in a double), else a string of its decimal digits
 */
#define OLC_JSON_MAX_SAFE	((1ULL << 53) - 1)
void olc_json_u64(struct olc_json *j, const char *key, uint64_t v);
void olc_json_int(struct olc_json *j, const char *key, long long v);
void olc_json_bool(struct olc_json *j, const char *key, int v);
void olc_json_null(struct olc_json *j, const char *key);
/* Ends the document with a newline */
/* @text: a JSON value as it is (one object, already valid JSON) */
void olc_json_raw(struct olc_json *j, const char *key, const char *text);
void olc_json_end(struct olc_json *j);

/* "1.23 s", "45 ms", "120 us": a duration in microseconds for people */
char *olc_us_str(char *buf, size_t len, uint64_t us);
/*
 * A table cell of a duration: olc_us_str(), or in raw mode (-r) the bare
 * number of microseconds, so that raw output holds no escaped space
 */
char *olc_us_cell(char *buf, size_t len, uint64_t us);
/* What joins two words of one table cell: a space, in raw mode "-" */
const char *olc_cell_sep(void);
/* "2026-11-30T10:21:03.123+00:00": wall-clock nanoseconds, local time */
char *olc_time_str(char *buf, size_t len, uint64_t ns);

#endif /* ORDLOCKCTL_PRINT_H */
