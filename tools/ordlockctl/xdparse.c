// SPDX-License-Identifier: GPL-2.0
/*
 * ordlockctl: ordlock-xdetectd's JSON answers read back (xdparse.h).
 *
 * A small JSON reader (RFC 8259: objects, arrays, strings with their
 * escapes, numbers, true, false, null; a depth bound) into a tree, then
 * the members the pretty outputs need. Integers are kept exact up to
 * 2^64 - 1 (owner ids, nanoseconds); members the reader does not need are
 * skipped, so that a daemon that says more is still read.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "parse.h"
#include "xdparse.h"

#define OLC_J_DEPTH	32

enum olc_jt { OLC_J_NULL, OLC_J_BOOL, OLC_J_NUM, OLC_J_STR, OLC_J_ARR, OLC_J_OBJ };

/**
 * struct olc_jv - a JSON value
 * @t: its type
 * @u: a number that is an integer in 0..2^64-1 (@is_u), or a boolean
 * @s: a string (NUL-terminated; a NUL inside is refused)
 * @kids: an array's items or an object's values, @n of them
 * @keys: an object's member names
 */
struct olc_jv {
	enum olc_jt t;
	int is_u;
	uint64_t u;
	char *s;
	struct olc_jv *kids;
	char **keys;
	size_t n;
};

struct olc_jp {
	const char *p;
	const char *start;
	char *err;
	size_t errlen;
	int failed;
};

static int olc_jp_fail(struct olc_jp *jp, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static int olc_jp_fail(struct olc_jp *jp, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (jp->failed)
		return -EPROTO;
	jp->failed = 1;
	n = snprintf(jp->err, jp->errlen, "at byte %zu: ", (size_t)(jp->p - jp->start));
	if (n >= 0 && (size_t)n < jp->errlen) {
		va_start(ap, fmt);
		vsnprintf(jp->err + n, jp->errlen - (size_t)n, fmt, ap);
		va_end(ap);
	}
	return -EPROTO;
}

static void olc_jv_free(struct olc_jv *v)
{
	size_t i;

	for (i = 0; i < v->n; i++) {
		olc_jv_free(&v->kids[i]);
		if (v->keys)
			free(v->keys[i]);
	}
	free(v->kids);
	free(v->keys);
	free(v->s);
	memset(v, 0, sizeof(*v));
}

static void olc_jp_ws(struct olc_jp *jp)
{
	while (*jp->p == ' ' || *jp->p == '\t' || *jp->p == '\n' || *jp->p == '\r')
		jp->p++;
}

static int olc_hex4(const char *p, unsigned int *cp)
{
	unsigned int i, v = 0;

	for (i = 0; i < 4; i++) {
		char c = p[i];

		v <<= 4;
		if (c >= '0' && c <= '9')
			v |= (unsigned int)(c - '0');
		else if (c >= 'a' && c <= 'f')
			v |= (unsigned int)(c - 'a' + 10);
		else if (c >= 'A' && c <= 'F')
			v |= (unsigned int)(c - 'A' + 10);
		else
			return -1;
	}
	*cp = v;
	return 0;
}

/* A string after its opening quote, into a malloc()ed copy */
static int olc_jp_str(struct olc_jp *jp, char **out)
{
	size_t len = 0, cap = 16;
	char *s = malloc(cap);

	if (!s)
		return -ENOMEM;
	for (;;) {
		unsigned char c = (unsigned char)*jp->p;
		unsigned int cp;
		char u[4];
		size_t k, nu = 1;

		if (!c || c < 0x20) {
			free(s);
			return olc_jp_fail(jp, c ? "a control character in a string" :
					   "a string that does not end");
		}
		jp->p++;
		if (c == '"')
			break;
		u[0] = (char)c;
		if (c == '\\') {
			c = (unsigned char)*jp->p++;
			switch (c) {
			case '"': case '\\': case '/':
				u[0] = (char)c;
				break;
			case 'b': u[0] = '\b'; break;
			case 'f': u[0] = '\f'; break;
			case 'n': u[0] = '\n'; break;
			case 'r': u[0] = '\r'; break;
			case 't': u[0] = '\t'; break;
			case 'u':
				/* the daemon escapes control characters only */
				if (olc_hex4(jp->p, &cp) || !cp || cp >= 0xd800) {
					free(s);
					return olc_jp_fail(jp, "a \\u escape not read here");
				}
				jp->p += 4;
				if (cp < 0x80) {
					u[0] = (char)cp;
				} else if (cp < 0x800) {
					u[0] = (char)(0xc0 | (cp >> 6));
					u[1] = (char)(0x80 | (cp & 0x3f));
					nu = 2;
				} else {
					u[0] = (char)(0xe0 | (cp >> 12));
					u[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
					u[2] = (char)(0x80 | (cp & 0x3f));
					nu = 3;
				}
				break;
			default:
				free(s);
				jp->p--;
				return olc_jp_fail(jp, "a bad escape");
			}
		}
		if (len + nu + 1 > cap) {
			char *ns = realloc(s, cap * 2);

			if (!ns) {
				free(s);
				return -ENOMEM;
			}
			s = ns;
			cap *= 2;
		}
		for (k = 0; k < nu; k++)
			s[len++] = u[k];
	}
	s[len] = '\0';
	*out = s;
	return 0;
}

static int olc_jp_value(struct olc_jp *jp, struct olc_jv *v, int depth);

/* Append an empty value to @v (an array or object); NULL: no memory */
static struct olc_jv *olc_jv_push(struct olc_jv *v, char *key)
{
	struct olc_jv *nk = realloc(v->kids, (v->n + 1) * sizeof(*nk));

	if (!nk)
		return NULL;
	v->kids = nk;
	if (v->t == OLC_J_OBJ) {
		char **kk = realloc(v->keys, (v->n + 1) * sizeof(*kk));

		if (!kk)
			return NULL;
		v->keys = kk;
		kk[v->n] = key;
	}
	memset(&nk[v->n], 0, sizeof(*nk));
	return &nk[v->n++];
}

static int olc_jp_container(struct olc_jp *jp, struct olc_jv *v, int depth)
{
	char close = *jp->p == '{' ? '}' : ']';
	int ret;

	v->t = close == '}' ? OLC_J_OBJ : OLC_J_ARR;
	jp->p++;
	olc_jp_ws(jp);
	if (*jp->p == close) {
		jp->p++;
		return 0;
	}
	for (;;) {
		struct olc_jv *kid;
		char *key = NULL;

		olc_jp_ws(jp);
		if (v->t == OLC_J_OBJ) {
			if (*jp->p != '"')
				return olc_jp_fail(jp, "a member name expected");
			jp->p++;
			ret = olc_jp_str(jp, &key);
			if (ret)
				return ret;
			olc_jp_ws(jp);
			if (*jp->p != ':') {
				free(key);
				return olc_jp_fail(jp, "':' expected");
			}
			jp->p++;
		}
		kid = olc_jv_push(v, key);
		if (!kid) {
			free(key);
			return -ENOMEM;
		}
		ret = olc_jp_value(jp, kid, depth + 1);
		if (ret)
			return ret;
		olc_jp_ws(jp);
		if (*jp->p == ',') {
			jp->p++;
			continue;
		}
		if (*jp->p == close) {
			jp->p++;
			return 0;
		}
		return olc_jp_fail(jp, "',' or '%c' expected", close);
	}
}

static int olc_jp_number(struct olc_jp *jp, struct olc_jv *v)
{
	const char *s = jp->p;
	int digits = 0, frac = 0;

	v->t = OLC_J_NUM;
	if (*jp->p == '-')
		jp->p++;
	if (*jp->p == '0') {
		jp->p++;
		digits = 1;
	} else {
		while (*jp->p >= '0' && *jp->p <= '9') {
			jp->p++;
			digits++;
		}
	}
	if (!digits)
		return olc_jp_fail(jp, "a value expected");
	if (*jp->p == '.') {
		jp->p++;
		frac = 1;
		if (*jp->p < '0' || *jp->p > '9')
			return olc_jp_fail(jp, "a digit expected");
		while (*jp->p >= '0' && *jp->p <= '9')
			jp->p++;
	}
	if (*jp->p == 'e' || *jp->p == 'E') {
		jp->p++;
		frac = 1;
		if (*jp->p == '+' || *jp->p == '-')
			jp->p++;
		if (*jp->p < '0' || *jp->p > '9')
			return olc_jp_fail(jp, "a digit expected");
		while (*jp->p >= '0' && *jp->p <= '9')
			jp->p++;
	}
	/* an integer of 0..2^64-1 read exactly; others are numbers, not u64 */
	if (!frac && *s != '-') {
		char buf[24];
		size_t len = (size_t)(jp->p - s);

		if (len < sizeof(buf)) {
			memcpy(buf, s, len);
			buf[len] = '\0';
			v->is_u = !olc_parse_u64(buf, &v->u);
		}
	}
	return 0;
}

static int olc_jp_value(struct olc_jp *jp, struct olc_jv *v, int depth)
{
	olc_jp_ws(jp);
	if (depth > OLC_J_DEPTH)
		return olc_jp_fail(jp, "nested too deep");
	switch (*jp->p) {
	case '{':
	case '[':
		return olc_jp_container(jp, v, depth);
	case '"':
		jp->p++;
		v->t = OLC_J_STR;
		return olc_jp_str(jp, &v->s);
	case 't':
	case 'f':
	case 'n': {
		static const char *const words[] = { "true", "false", "null" };
		size_t i;

		for (i = 0; i < 3; i++)
			if (!strncmp(jp->p, words[i], strlen(words[i]))) {
				jp->p += strlen(words[i]);
				v->t = i == 2 ? OLC_J_NULL : OLC_J_BOOL;
				v->u = i == 0;
				return 0;
			}
		return olc_jp_fail(jp, "a value expected");
	}
	default:
		return olc_jp_number(jp, v);
	}
}

static int olc_jv_parse(const char *text, struct olc_jv *v, char *err, size_t errlen)
{
	struct olc_jp jp = { .p = text, .start = text, .err = err, .errlen = errlen };
	int ret;

	memset(v, 0, sizeof(*v));
	ret = olc_jp_value(&jp, v, 0);
	if (!ret) {
		olc_jp_ws(&jp);
		if (*jp.p)
			ret = olc_jp_fail(&jp, "text after the value");
	}
	if (!ret && v->t != OLC_J_OBJ)
		ret = olc_jp_fail(&jp, "not an object");
	if (ret == -ENOMEM)
		snprintf(err, errlen, "out of memory");
	if (ret)
		olc_jv_free(v);
	return ret;
}

/* The member @key of object @o, or NULL */
static const struct olc_jv *olc_jv_get(const struct olc_jv *o, const char *key)
{
	size_t i;

	if (!o || o->t != OLC_J_OBJ)
		return NULL;
	for (i = 0; i < o->n; i++)
		if (!strcmp(o->keys[i], key))
			return &o->kids[i];
	return NULL;
}

/* The members read: a missing or wrong one makes the answer -EPROTO */
struct olc_jget {
	const struct olc_jv *o;
	char *err;
	size_t errlen;
	int bad;
};

static void olc_jget_bad(struct olc_jget *g, const char *key, const char *what)
{
	if (!g->bad)
		snprintf(g->err, g->errlen, "\"%s\": %s expected", key, what);
	g->bad = 1;
}

static uint64_t olc_jget_u64(struct olc_jget *g, const char *key, uint64_t max)
{
	const struct olc_jv *v = olc_jv_get(g->o, key);

	if (!v || v->t != OLC_J_NUM || !v->is_u || v->u > max) {
		olc_jget_bad(g, key, "an unsigned integer");
		return 0;
	}
	return v->u;
}

static int olc_jget_bool(struct olc_jget *g, const char *key)
{
	const struct olc_jv *v = olc_jv_get(g->o, key);

	if (!v || v->t != OLC_J_BOOL) {
		olc_jget_bad(g, key, "true or false");
		return 0;
	}
	return (int)v->u;
}

static void olc_jget_str(struct olc_jget *g, const char *key, char *buf, size_t len)
{
	const struct olc_jv *v = olc_jv_get(g->o, key);

	buf[0] = '\0';
	if (!v || v->t != OLC_J_STR || strlen(v->s) >= len) {
		olc_jget_bad(g, key, "a string");
		return;
	}
	memcpy(buf, v->s, strlen(v->s) + 1);
}

static const struct olc_jv *olc_jget_arr(struct olc_jget *g, const char *key)
{
	const struct olc_jv *v = olc_jv_get(g->o, key);

	if (!v || v->t != OLC_J_ARR) {
		olc_jget_bad(g, key, "an array");
		return NULL;
	}
	return v;
}

static size_t olc_jget_nodes(struct olc_jget *g, const char *key, uint32_t *out)
{
	const struct olc_jv *a = olc_jget_arr(g, key);
	size_t i, n = 0;

	for (i = 0; a && i < a->n && n < OLC_XD_NODES_MAX; i++) {
		if (a->kids[i].t != OLC_J_NUM || !a->kids[i].is_u || a->kids[i].u > UINT32_MAX) {
			olc_jget_bad(g, key, "node ids");
			return 0;
		}
		out[n++] = (uint32_t)a->kids[i].u;
	}
	return n;
}

/* The daemon's "RANK:ID" */
static int olc_xd_key(const char *s, uint32_t *rank, uint64_t *id)
{
	const char *colon = strchr(s, ':');
	char buf[16];

	if (!colon || colon == s || (size_t)(colon - s) >= sizeof(buf))
		return -1;
	memcpy(buf, s, (size_t)(colon - s));
	buf[colon - s] = '\0';
	return olc_parse_u32(buf, rank) || olc_parse_u64(colon + 1, id) ? -1 : 0;
}

/* An owner (the daemon's vertex): {"node", "owner_id", "pid", "comm", "key", "mode", "in_dlm", ...} */
static void olc_xd_owner_read(struct olc_jget *g, const struct olc_jv *v,
			      struct olc_xd_owner *o)
{
	struct olc_jget k = { .o = v, .err = g->err, .errlen = g->errlen, .bad = g->bad };
	char key[48];

	memset(o, 0, sizeof(*o));
	if (!v || v->t != OLC_J_OBJ) {
		olc_jget_bad(g, "owner", "an object");
		return;
	}
	o->node = (uint32_t)olc_jget_u64(&k, "node", UINT32_MAX);
	o->owner_id = olc_jget_u64(&k, "owner_id", UINT64_MAX);
	o->pid = (uint32_t)olc_jget_u64(&k, "pid", UINT32_MAX);
	olc_jget_str(&k, "comm", o->comm, sizeof(o->comm));
	olc_jget_str(&k, "key", key, sizeof(key));
	o->mode = (uint32_t)olc_jget_u64(&k, "mode", UINT32_MAX);
	o->in_dlm = olc_jget_bool(&k, "in_dlm");
	if (!k.bad && olc_xd_key(key, &o->rank, &o->id))
		olc_jget_bad(&k, "key", "RANK:ID");
	g->bad = k.bad;
}

/* {"error": "..."}: the daemon could not answer */
static int olc_xd_error(const struct olc_jv *root, char *err, size_t errlen)
{
	const struct olc_jv *e = olc_jv_get(root, "error");

	if (!e || e->t != OLC_J_STR)
		return 0;
	snprintf(err, errlen, "%s", e->s);
	return -EAGAIN;
}

/*
 * Parse @text, then @read its object into @out: 0, -EPROTO (what is wrong
 * in the jget's error), -ENOMEM, or -EAGAIN for the daemon's {"error"}
 */
static int olc_xd_parse(const char *text, void *out, char *err, size_t errlen,
			int (*read)(struct olc_jget *g, void *out))
{
	struct olc_jget g = { .err = err, .errlen = errlen };
	struct olc_jv root;
	int ret = olc_jv_parse(text, &root, err, errlen);

	if (ret)
		return ret;
	ret = olc_xd_error(&root, err, errlen);
	if (!ret) {
		g.o = &root;
		ret = read(&g, out);
		if (ret == -ENOMEM)
			snprintf(err, errlen, "out of memory");
		else if (!ret && g.bad)
			ret = -EPROTO;
	}
	olc_jv_free(&root);
	return ret;
}

/* "locks": {"node", "nodes", "missing", "complete", "locks": [...]} */
static int olc_xd_read_view(struct olc_jget *g, void *arg)
{
	struct olc_xd_view *out = arg;
	const struct olc_jv *locks;
	size_t i;

	out->node = (uint32_t)olc_jget_u64(g, "node", UINT32_MAX);
	out->nnodes = olc_jget_nodes(g, "nodes", out->nodes);
	out->nmissing = olc_jget_nodes(g, "missing", out->missing);
	out->complete = olc_jget_bool(g, "complete");
	locks = olc_jget_arr(g, "locks");
	if (g->bad)
		return 0;
	out->v = calloc(locks->n ? locks->n : 1, sizeof(*out->v));
	if (!out->v)
		return -ENOMEM;
	for (i = 0; i < locks->n && !g->bad; i++) {
		struct olc_xd_lock *l = &out->v[out->n++];
		const struct olc_jv *w;
		char role[16];

		g->o = &locks->kids[i];
		if (g->o->t != OLC_J_OBJ) {
			olc_jget_bad(g, "locks", "objects");
			break;
		}
		olc_jget_str(g, "domain", l->domain, sizeof(l->domain));
		olc_jget_str(g, "role", role, sizeof(role));
		l->role = !strcmp(role, "holder") ? ORDLOCK_ROLE_HOLDER :
			  !strcmp(role, "converter") ? ORDLOCK_ROLE_CONVERTER :
			  ORDLOCK_ROLE_WAITER;
		/* a daemon older than "position" and "waited_us": none */
		if (olc_jv_get(g->o, "position"))
			l->pos = (uint32_t)olc_jget_u64(g, "position", UINT32_MAX);
		w = olc_jv_get(g->o, "waited_us");
		if (w && w->t != OLC_J_NULL) {
			l->has_waited = 1;
			l->waited_us = olc_jget_u64(g, "waited_us", UINT64_MAX);
		}
		w = olc_jv_get(g->o, "owner");
		olc_xd_owner_read(g, w, &l->o);
		if (w && !g->bad) {
			g->o = w;
			l->start_ns = olc_jget_u64(g, "start_ns", UINT64_MAX);
		}
	}
	return 0;
}

int olc_xd_parse_view(const char *text, struct olc_xd_view *out, char *err,
		      size_t errlen)
{
	int ret;

	memset(out, 0, sizeof(*out));
	ret = olc_xd_parse(text, out, err, errlen, olc_xd_read_view);
	if (ret)
		olc_xd_view_free(out);
	return ret;
}

void olc_xd_view_free(struct olc_xd_view *v)
{
	free(v->v);
	memset(v, 0, sizeof(*v));
}

/* "state": {"node", "state", "members", "rounds": [...], ...} */
static int olc_xd_read_state(struct olc_jget *g, void *arg)
{
	struct olc_xd_state *out = arg;
	const struct olc_jv *rounds;
	size_t i, k;

	out->node = (uint32_t)olc_jget_u64(g, "node", UINT32_MAX);
	olc_jget_str(g, "state", out->state, sizeof(out->state));
	out->nmembers = olc_jget_nodes(g, "members", out->members);
	rounds = olc_jget_arr(g, "rounds");
	if (g->bad)
		return 0;
	out->r = calloc(rounds->n ? rounds->n : 1, sizeof(*out->r));
	if (!out->r)
		return -ENOMEM;
	for (i = 0; i < rounds->n && !g->bad; i++) {
		struct olc_xd_round *r = &out->r[out->n++];
		const struct olc_jv *cy, *victim;

		g->o = &rounds->kids[i];
		olc_jget_str(g, "round", r->round, sizeof(r->round));
		olc_jget_str(g, "domain", r->domain, sizeof(r->domain));
		olc_jget_str(g, "state", r->state, sizeof(r->state));
		r->opened_ns = olc_jget_u64(g, "opened_ns", UINT64_MAX);
		r->closed_ns = olc_jget_u64(g, "closed_ns", UINT64_MAX);
		r->failed_here = olc_jget_bool(g, "failed_here");
		cy = olc_jget_arr(g, "cycle");
		/* "victim": an index, -1 when none was chosen */
		victim = olc_jv_get(g->o, "victim");
		r->victim = -1;
		if (victim && victim->t == OLC_J_NUM && victim->is_u && cy && victim->u < cy->n)
			r->victim = (int)victim->u;
		if (g->bad)
			break;
		r->cycle = calloc(cy->n ? cy->n : 1, sizeof(*r->cycle));
		if (!r->cycle)
			return -ENOMEM;
		for (k = 0; k < cy->n && !g->bad; k++)
			olc_xd_owner_read(g, &cy->kids[k], &r->cycle[r->n++]);
	}
	return 0;
}

int olc_xd_parse_state(const char *text, struct olc_xd_state *out, char *err,
		       size_t errlen)
{
	int ret;

	memset(out, 0, sizeof(*out));
	ret = olc_xd_parse(text, out, err, errlen, olc_xd_read_state);
	if (ret)
		olc_xd_state_free(out);
	return ret;
}

void olc_xd_state_free(struct olc_xd_state *s)
{
	size_t i;

	for (i = 0; i < s->n; i++)
		free(s->r[i].cycle);
	free(s->r);
	memset(s, 0, sizeof(*s));
}

int olc_xd_parse_who(const char *s, uint32_t *node, uint32_t *pid)
{
	uint64_t p;

	*node = 0;
	if (!strchr(s, ':'))
		return olc_parse_u32(s, pid) || !*pid ? -1 : 0;
	/* NODE:PID reads as RANK:ID does */
	if (olc_xd_key(s, node, &p) || !*node || !p || p > UINT32_MAX)
		return -1;
	*pid = (uint32_t)p;
	return 0;
}

static int olc_xd_conflict(uint32_t a, uint32_t b)
{
	return !(a == ORDLOCK_MODE_SHARED && b == ORDLOCK_MODE_SHARED);
}

static int olc_xd_same_key(const struct olc_xd_lock *a, const struct olc_xd_lock *b)
{
	return a->o.rank == b->o.rank && a->o.id == b->o.id && !strcmp(a->domain, b->domain);
}

size_t olc_xd_blockers(const struct olc_xd_view *view, uint32_t node, uint32_t pid,
		       int (*want)(uint32_t want_pid, uint32_t pid),
		       struct olc_xd_block *out, size_t max)
{
	size_t i, k, n = 0;

	for (i = 0; i < view->n; i++) {
		const struct olc_xd_lock *w = &view->v[i];
		int waits = w->role != ORDLOCK_ROLE_HOLDER;

		if (w->o.node != node || !want(pid, w->o.pid) || (!waits && !w->o.in_dlm))
			continue;
		for (k = 0; k < view->n; k++) {
			const struct olc_xd_lock *b = &view->v[k];
			enum olc_xd_edge e = 0;

			if (k == i || !olc_xd_same_key(w, b) || !olc_xd_conflict(w->o.mode, b->o.mode) ||
			    (b->o.node == w->o.node && b->o.owner_id == w->o.owner_id))
				continue;
			if (waits && b->o.node == w->o.node) {
				/* on its node: a holder (or converter: it holds), or ahead in the queue */
				if (b->role != ORDLOCK_ROLE_WAITER)
					e = OLC_XD_HOLDS;
				else if (b->pos < w->pos)
					e = OLC_XD_QUEUED;
			} else if (!waits && b->o.node != w->o.node && b->role == ORDLOCK_ROLE_HOLDER) {
				/* in the DLM: granted elsewhere, or waiting there since before */
				if (!b->o.in_dlm)
					e = OLC_XD_DLM_HOLDS;
				else if (b->start_ns && w->start_ns && b->start_ns < w->start_ns)
					e = OLC_XD_DLM_QUEUED;
			}
			if (!e)
				continue;
			if (n < max) {
				out[n].waiter = i;
				out[n].blocker = k;
				out[n].edge = e;
			}
			n++;
		}
	}
	return n;
}
