// SPDX-License-Identifier: GPL-2.0
/*
 * ordlockctl: parsers of keys, names and the debugfs files (see parse.h).
 *
 * Every data line is split at single spaces into exactly the fields its
 * format has; each field is checked (numbers in range, modes and edge types
 * known, names well formed). The first bad line stops the parse with its
 * number and the reason.
 */
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "parse.h"

#define OLC_LINE_MAX	65536
#define OLC_FIELDS_MAX	128

static void *olc_grow(void *v, size_t *cap, size_t need, size_t size)
{
	size_t ncap = *cap ? *cap : 16;
	void *p;

	if (need <= *cap)
		return v;
	while (ncap < need) {
		if (ncap > ((size_t)-1 / 2) / size)
			return NULL;
		ncap *= 2;
	}
	p = realloc(v, ncap * size);
	if (!p)
		return NULL;
	memset((char *)p + *cap * size, 0, (ncap - *cap) * size);
	*cap = ncap;
	return p;
}

#define OLC_ADD(arr)							\
	({								\
		__typeof__((arr)->v) _p = olc_grow((arr)->v, &(arr)->cap, \
						   (arr)->n + 1,	\
						   sizeof(*(arr)->v));	\
		if (_p) {						\
			(arr)->v = _p;					\
			memset(&_p[(arr)->n], 0, sizeof(*_p));		\
			_p = &_p[(arr)->n++];				\
		}							\
		_p;							\
	})

struct olc_edge *olc_edges_add(struct olc_edges *e)
{
	return OLC_ADD(e);
}

struct olc_lock *olc_locks_add(struct olc_locks *l)
{
	return OLC_ADD(l);
}

struct olc_owner *olc_owners_add(struct olc_owners *o)
{
	return OLC_ADD(o);
}

struct olc_domain_stats *olc_stats_add(struct olc_stats *s)
{
	return OLC_ADD(s);
}

static struct olc_deadlock *olc_deadlocks_add(struct olc_deadlocks *d)
{
	return OLC_ADD(d);
}

void olc_edges_free(struct olc_edges *e)
{
	free(e->v);
	memset(e, 0, sizeof(*e));
}

void olc_locks_free(struct olc_locks *l)
{
	free(l->v);
	memset(l, 0, sizeof(*l));
}

void olc_owners_free(struct olc_owners *o)
{
	free(o->v);
	memset(o, 0, sizeof(*o));
}

void olc_deadlocks_free(struct olc_deadlocks *d)
{
	size_t i;

	for (i = 0; i < d->n; i++)
		free(d->v[i].steps);
	free(d->v);
	memset(d, 0, sizeof(*d));
}

void olc_stats_free(struct olc_stats *s)
{
	free(s->v);
	memset(s, 0, sizeof(*s));
}

/* Numbers and words */

int olc_parse_u64(const char *s, uint64_t *v)
{
	uint64_t x = 0;

	if (!*s)
		return -EINVAL;
	for (; *s; s++) {
		if (*s < '0' || *s > '9')
			return -EINVAL;
		if (x > (UINT64_MAX - (uint64_t)(*s - '0')) / 10)
			return -ERANGE;
		x = x * 10 + (uint64_t)(*s - '0');
	}
	*v = x;
	return 0;
}

int olc_parse_u32(const char *s, uint32_t *v)
{
	uint64_t x;
	int ret = olc_parse_u64(s, &x);

	if (ret)
		return ret;
	if (x > UINT32_MAX)
		return -ERANGE;
	*v = (uint32_t)x;
	return 0;
}

int olc_mode_parse(const char *s)
{
	if (!strcmp(s, "shared"))
		return ORDLOCK_MODE_SHARED;
	if (!strcmp(s, "exclusive"))
		return ORDLOCK_MODE_EXCLUSIVE;
	return -1;
}

const char *olc_mode_str(unsigned int mode)
{
	return mode == ORDLOCK_MODE_EXCLUSIVE ? "exclusive" :
	       mode == ORDLOCK_MODE_SHARED ? "shared" : "none";
}

const char *olc_edge_str(unsigned int type)
{
	return type == ORDLOCK_EDGE_SOFT ? "soft" :
	       type == ORDLOCK_EDGE_THREAD ? "thread" : "hard";
}

const char *olc_edge_shown(const struct olc_edge *e)
{
	/* a hard edge to a holder by the fast path, as debugfs "graph" says */
	return e->fast && e->type == ORDLOCK_EDGE_HARD ? "fast" : olc_edge_str(e->type);
}

static const char *const olc_policies[] = {
	[ORDLOCK_POLICY_ENFORCE] = "enforce",
	[ORDLOCK_POLICY_DETECT] = "detect",
	[ORDLOCK_POLICY_TIMEOUT] = "timeout",
};

int olc_policy_parse(const char *s)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(olc_policies); i++)
		if (!strcmp(s, olc_policies[i]))
			return (int)i;
	return -1;
}

const char *olc_policy_str(unsigned int policy)
{
	if (policy < ARRAY_SIZE(olc_policies))
		return olc_policies[policy];
	return "unknown";
}

const char *olc_role_str(unsigned int role)
{
	switch (role) {
	case ORDLOCK_ROLE_HOLDER:
		return "holder";
	case ORDLOCK_ROLE_WAITER:
		return "waiter";
	case ORDLOCK_ROLE_CONVERTER:
		return "converter";
	default:
		return "unknown";
	}
}

const char *olc_kind_str(unsigned int kind)
{
	switch (kind) {
	case ORDLOCK_KIND_DEVICE:
		return "device";
	case ORDLOCK_KIND_NETLINK:
		return "netlink";
	default:
		return "unknown";
	}
}

static int olc_name_char(char c)
{
	return isascii((unsigned char)c) &&
	       (isalnum((unsigned char)c) || c == '.' || c == '_' || c == '-');
}

int olc_domain_check(const char *s)
{
	size_t i, len = strlen(s);

	if (!len || len >= ORDLOCK_DOMAIN_NAME_MAX)
		return -EINVAL;
	for (i = 0; i < len; i++)
		if (!olc_name_char(s[i]))
			return -EINVAL;
	return 0;
}

int olc_rank_name_check(const char *s)
{
	size_t i, len = strlen(s);

	if (!len || len >= ORDLOCK_RANK_NAME_MAX ||
	    !isascii((unsigned char)s[0]) || !isalpha((unsigned char)s[0]))
		return -EINVAL;
	for (i = 0; i < len; i++)
		if (!olc_name_char(s[i]))
			return -EINVAL;
	return 0;
}

const char *olc_rank_name(const struct olc_rank_names *names, uint32_t rank)
{
	unsigned int i;

	if (!names)
		return NULL;
	for (i = 0; i < names->n && i < ORDLOCK_RANK_NAMES_MAX; i++)
		if (names->v[i].rank == rank)
			return names->v[i].name;
	return NULL;
}

int olc_key_uses_name(const char *s)
{
	return isascii((unsigned char)s[0]) && isalpha((unsigned char)s[0]);
}

int olc_key_parse(const char *s, const struct olc_rank_names *names,
		  uint32_t *rank, uint64_t *id, char *why, size_t whylen)
{
	const char *colon = strrchr(s, ':');
	char head[ORDLOCK_RANK_NAME_MAX + 1];
	size_t hlen;
	unsigned int i;
	int ret;

	if (!colon) {
		snprintf(why, whylen, "key \"%.40s\": write RANK:ID or NAME:ID", s);
		return -EINVAL;
	}
	hlen = (size_t)(colon - s);
	ret = olc_parse_u64(colon + 1, id);
	if (ret) {
		snprintf(why, whylen, "key \"%.40s\": the id %s", s,
			 ret == -ERANGE ? "does not fit in 64 bits" :
			 "is not a number");
		return -EINVAL;
	}
	if (!hlen || hlen >= sizeof(head)) {
		snprintf(why, whylen, "key \"%.40s\": bad rank", s);
		return -EINVAL;
	}
	memcpy(head, s, hlen);
	head[hlen] = '\0';
	if (!olc_key_uses_name(head)) {
		ret = olc_parse_u32(head, rank);
		if (ret) {
			snprintf(why, whylen, "key \"%.40s\": the rank %s", s,
				 ret == -ERANGE ? "does not fit in 32 bits" :
				 "is neither a number nor a rank name");
			return -EINVAL;
		}
		return 0;
	}
	for (i = 0; names && i < names->n && i < ORDLOCK_RANK_NAMES_MAX; i++) {
		if (!strcmp(names->v[i].name, head)) {
			*rank = names->v[i].rank;
			return 0;
		}
	}
	snprintf(why, whylen, "key \"%.40s\": \"%s\" is not a rank name of the domain",
		 s, head);
	return -EINVAL;
}

int olc_key_syntax(const char *s, char *why, size_t whylen)
{
	const char *colon = strrchr(s, ':');
	char head[ORDLOCK_RANK_NAME_MAX + 1];
	uint32_t rank;
	uint64_t id;
	size_t hlen;

	if (!olc_key_uses_name(s) || !colon)
		return olc_key_parse(s, NULL, &rank, &id, why, whylen);
	hlen = (size_t)(colon - s);
	if (olc_parse_u64(colon + 1, &id))
		return olc_key_parse(s, NULL, &rank, &id, why, whylen);
	if (hlen < sizeof(head)) {
		memcpy(head, s, hlen);
		head[hlen] = '\0';
		if (!olc_rank_name_check(head))
			return 0;
	}
	snprintf(why, whylen, "key \"%.40s\": the rank is neither a number nor a rank name"
		 " (a letter, then letters, digits, '.', '_' or '-', at most %d)",
		 s, ORDLOCK_RANK_NAME_MAX - 1);
	return -EINVAL;
}

char *olc_key_str(char *buf, size_t len, const struct olc_rank_names *names,
		  uint32_t rank, uint64_t id)
{
	const char *name = olc_rank_name(names, rank);

	if (name)
		snprintf(buf, len, "%s:%llu", name, (unsigned long long)id);
	else
		snprintf(buf, len, "%u:%llu", rank, (unsigned long long)id);
	return buf;
}

/* The line reader */

struct olc_reader {
	const char *buf;
	size_t len;
	size_t pos;
	unsigned int line;
	char *copy;
	size_t cap;
	struct olc_perr *err;
	/* the fields of the current line */
	unsigned int nf;
	char *f[OLC_FIELDS_MAX];
};

static int olc_fail(struct olc_reader *r, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static int olc_fail(struct olc_reader *r, const char *fmt, ...)
{
	va_list ap;

	if (r->err) {
		r->err->line = r->line;
		va_start(ap, fmt);
		vsnprintf(r->err->msg, sizeof(r->err->msg), fmt, ap);
		va_end(ap);
	}
	return -EPROTO;
}

/* A field fit for an error message: printable, at most 24 characters */
static const char *olc_show(const char *s)
{
	static char buf[32];
	size_t i;

	for (i = 0; s[i] && i < 24; i++)
		buf[i] = (s[i] >= ' ' && s[i] <= '~') ? s[i] : '?';
	if (s[i]) {
		buf[i++] = '.';
		buf[i++] = '.';
	}
	buf[i] = '\0';
	return buf;
}

/*
 * Read the next line into r->copy and split it into r->f. Returns 1 for a
 * line, 0 at the end, -EPROTO or -ENOMEM.
 */
static int olc_next_line(struct olc_reader *r)
{
	size_t start = r->pos, end, n;
	const char *nl;
	char *p;

	if (r->pos >= r->len)
		return 0;
	r->line++;
	nl = memchr(r->buf + start, '\n', r->len - start);
	end = nl ? (size_t)(nl - r->buf) : r->len;
	r->pos = nl ? end + 1 : r->len;
	n = end - start;
	if (n > OLC_LINE_MAX)
		return olc_fail(r, "line longer than %d bytes", OLC_LINE_MAX);
	if (memchr(r->buf + start, '\0', n))
		return olc_fail(r, "NUL byte in the line");
	if (n + 1 > r->cap) {
		p = realloc(r->copy, n + 1);
		if (!p)
			return -ENOMEM;
		r->copy = p;
		r->cap = n + 1;
	}
	memcpy(r->copy, r->buf + start, n);
	r->copy[n] = '\0';
	return 1;
}

/* Split r->copy at single spaces; every field non-empty */
static int olc_split(struct olc_reader *r)
{
	char *p = r->copy, *sp;

	r->nf = 0;
	for (;;) {
		if (r->nf == OLC_FIELDS_MAX)
			return olc_fail(r, "more than %d fields", OLC_FIELDS_MAX);
		sp = strchr(p, ' ');
		if (sp)
			*sp = '\0';
		if (!*p)
			return olc_fail(r, "empty field %u (fields are separated by one space)",
					r->nf + 1);
		r->f[r->nf++] = p;
		if (!sp)
			return 0;
		p = sp + 1;
	}
}

/*
 * The version line "# ordlock NAME v1", then comment lines; leaves the
 * reader before the first data line. 0 or -EPROTO.
 */
static int olc_header(struct olc_reader *r, const char *name)
{
	char want[64];
	int ret;

	ret = olc_next_line(r);
	if (ret < 0)
		return ret;
	if (!ret) {
		r->line = 1;
		return olc_fail(r, "empty input: no version line \"# ordlock %s v1\"",
				name);
	}
	snprintf(want, sizeof(want), "# ordlock %s v", name);
	if (strncmp(r->copy, want, strlen(want)))
		return olc_fail(r, "not an ordlock %s file: the first line must be \"# ordlock %s v1\"",
				name, name);
	if (strcmp(r->copy + strlen(want), "1"))
		return olc_fail(r, "unsupported format version \"v%s\" (this ordlockctl reads v1)",
				olc_show(r->copy + strlen(want)));
	return 0;
}

/*
 * The next data line, split: comment lines ("#...") and empty lines are
 * skipped. 1, 0 at the end, or -errno.
 */
static int olc_data_line(struct olc_reader *r)
{
	int ret;

	for (;;) {
		ret = olc_next_line(r);
		if (ret <= 0)
			return ret;
		if (r->copy[0] == '#' || !r->copy[0])
			continue;
		ret = olc_split(r);
		return ret ? ret : 1;
	}
}

static int olc_want_fields(struct olc_reader *r, unsigned int n, const char *what)
{
	if (r->nf != n)
		return olc_fail(r, "%u fields, a %s line has %u", r->nf, what, n);
	return 0;
}

static int olc_field_u64(struct olc_reader *r, unsigned int i, const char *name,
			 uint64_t *v)
{
	int ret = olc_parse_u64(r->f[i], v);

	if (ret)
		return olc_fail(r, "field %u (%s): \"%s\" is not %s", i + 1, name,
				olc_show(r->f[i]),
				ret == -ERANGE ? "a 64-bit number" : "a number");
	return 0;
}

static int olc_field_u32(struct olc_reader *r, unsigned int i, const char *name,
			 uint32_t *v)
{
	int ret = olc_parse_u32(r->f[i], v);

	if (ret)
		return olc_fail(r, "field %u (%s): \"%s\" is not %s", i + 1, name,
				olc_show(r->f[i]),
				ret == -ERANGE ? "a 32-bit number" : "a number");
	return 0;
}

static int olc_field_mode(struct olc_reader *r, unsigned int i, const char *name,
			  unsigned int *mode)
{
	int m = olc_mode_parse(r->f[i]);

	if (m < 0)
		return olc_fail(r, "field %u (%s): \"%s\" is not shared or exclusive",
				i + 1, name, olc_show(r->f[i]));
	*mode = (unsigned int)m;
	return 0;
}

static int olc_field_key(struct olc_reader *r, unsigned int i, uint32_t *rank,
			 uint64_t *id)
{
	char *s = r->f[i], *colon = strchr(s, ':');
	int ret;

	if (!colon)
		return olc_fail(r, "field %u (rank:id): \"%s\" has no ':'", i + 1,
				olc_show(s));
	*colon = '\0';
	ret = olc_parse_u32(s, rank) || olc_parse_u64(colon + 1, id);
	*colon = ':';
	if (ret)
		return olc_fail(r, "field %u (rank:id): \"%s\" is not RANK:ID", i + 1,
				olc_show(s));
	return 0;
}

static int olc_field_comm(struct olc_reader *r, unsigned int i, char *comm)
{
	const char *s = r->f[i];
	size_t j, len = strlen(s);

	if (len >= ORDLOCK_COMM_LEN)
		return olc_fail(r, "field %u (comm): longer than %d characters", i + 1,
				ORDLOCK_COMM_LEN - 1);
	for (j = 0; j < len; j++)
		if (s[j] <= ' ' || s[j] > '~')
			return olc_fail(r, "field %u (comm): a character outside printable ASCII",
					i + 1);
	memcpy(comm, s, len + 1);
	return 0;
}

static int olc_field_domain(struct olc_reader *r, unsigned int i, char *domain)
{
	if (olc_domain_check(r->f[i]))
		return olc_fail(r, "field %u (domain): \"%s\" is not a domain name",
				i + 1, olc_show(r->f[i]));
	strcpy(domain, r->f[i]);
	return 0;
}

/* owner_id pid comm at fields @i.. */
static int olc_field_who(struct olc_reader *r, unsigned int i, struct olc_who *w)
{
	return olc_field_u64(r, i, "owner id", &w->id) ?:
	       olc_field_u32(r, i + 1, "pid", &w->pid) ?:
	       olc_field_comm(r, i + 2, w->comm);
}

static void olc_reader_init(struct olc_reader *r, const char *buf, size_t len,
			    struct olc_perr *err)
{
	memset(r, 0, sizeof(*r));
	r->buf = buf;
	r->len = len;
	r->err = err;
	if (err)
		memset(err, 0, sizeof(*err));
}

/*
 * graph: WAITER_ID WAITER_PID WAITER_COMM DOMAIN RANK:ID MODE BLOCKER_ID
 * BLOCKER_PID BLOCKER_COMM BLOCKER_MODE hard|soft|thread|fast WAITED_US
 */
static int olc_graph_line(struct olc_reader *r, struct olc_edge *e)
{
	int ret;

	ret = olc_want_fields(r, 12, "graph") ?:
	      olc_field_who(r, 0, &e->waiter) ?:
	      olc_field_domain(r, 3, e->domain) ?:
	      olc_field_key(r, 4, &e->rank, &e->id) ?:
	      olc_field_mode(r, 5, "mode", &e->mode) ?:
	      olc_field_who(r, 6, &e->blocker) ?:
	      olc_field_mode(r, 9, "blocker mode", &e->blocker_mode) ?:
	      olc_field_u64(r, 11, "waited_us", &e->waited_us);
	if (ret)
		return ret;
	if (!strcmp(r->f[10], "hard"))
		e->type = ORDLOCK_EDGE_HARD;
	else if (!strcmp(r->f[10], "soft"))
		e->type = ORDLOCK_EDGE_SOFT;
	else if (!strcmp(r->f[10], "thread"))
		e->type = ORDLOCK_EDGE_THREAD;
	else if (!strcmp(r->f[10], "fast")) {
		/* a hard edge to the holder the key's word names */
		e->type = ORDLOCK_EDGE_HARD;
		e->fast = 1;
	} else
		return olc_fail(r, "field 11 (edge): \"%s\" is not hard, soft, thread or fast",
				olc_show(r->f[10]));
	if (e->waiter.id == e->blocker.id)
		return olc_fail(r, "owner %llu waits for itself",
				(unsigned long long)e->waiter.id);
	e->line = r->line;
	return 0;
}

int olc_parse_graph(const char *buf, size_t len, struct olc_edges *out,
		    struct olc_perr *err)
{
	struct olc_reader r;
	struct olc_edge e, *p;
	int ret;

	olc_reader_init(&r, buf, len, err);
	ret = olc_header(&r, "graph");
	while (!ret && (ret = olc_data_line(&r)) > 0) {
		memset(&e, 0, sizeof(e));
		ret = olc_graph_line(&r, &e);
		if (ret)
			break;
		p = olc_edges_add(out);
		if (!p) {
			ret = -ENOMEM;
			break;
		}
		*p = e;
	}
	free(r.copy);
	return ret;
}

/*
 * locks: DOMAIN RANK:ID holder POS OWNER_ID PID COMM MODE TOKEN LEASE, or
 * DOMAIN RANK:ID waiter|converter POS OWNER_ID PID COMM MODE WAITED_US -;
 * LEASE is the lease's milliseconds left, or "-". A kernel without leases
 * writes no tenth field. A holder of a cluster domain's key granted here
 * that waits for the cluster has "cluster:WAITED_US" for its TOKEN; a
 * member that holds a fast-path key by the fast path "fast:INDEX".
 */
static int olc_locks_line(struct olc_reader *r, struct olc_lock *l)
{
	static const char cl[] = "cluster:", fa[] = "fast:";
	int ret;

	if (r->nf == 10) {
		if (strcmp(r->f[9], "-")) {
			ret = olc_field_u64(r, 9, "lease_left_ms", &l->lease_left_ms);
			if (ret)
				return ret;
			l->has_lease = 1;
		}
		r->nf = 9;
	}
	ret = olc_want_fields(r, 9, "locks") ?:
	      olc_field_domain(r, 0, l->domain) ?:
	      olc_field_key(r, 1, &l->rank, &l->id) ?:
	      olc_field_u32(r, 3, "position", &l->pos) ?:
	      olc_field_who(r, 4, &l->owner) ?:
	      olc_field_mode(r, 7, "mode", &l->mode);
	if (ret)
		return ret;
	if (!strcmp(r->f[2], "holder") && !strncmp(r->f[8], cl, sizeof(cl) - 1)) {
		l->cluster_wait = 1;
		r->f[8] += sizeof(cl) - 1;
	} else if (!strcmp(r->f[2], "holder") && !strncmp(r->f[8], fa, sizeof(fa) - 1)) {
		l->fast = 1;
		r->f[8] += sizeof(fa) - 1;
	}
	ret = olc_field_u64(r, 8, l->cluster_wait ? "cluster:waited_us" :
			    l->fast ? "fast:index" : "token or waited_us", &l->value);
	if (ret)
		return ret;
	if (!strcmp(r->f[2], "holder"))
		l->role = ORDLOCK_ROLE_HOLDER;
	else if (!strcmp(r->f[2], "waiter"))
		l->role = ORDLOCK_ROLE_WAITER;
	else if (!strcmp(r->f[2], "converter"))
		l->role = ORDLOCK_ROLE_CONVERTER;
	else
		return olc_fail(r, "field 3 (role): \"%s\" is not holder, waiter or converter",
				olc_show(r->f[2]));
	return 0;
}

int olc_parse_locks(const char *buf, size_t len, struct olc_locks *out,
		    struct olc_perr *err)
{
	struct olc_reader r;
	struct olc_lock l, *p;
	int ret;

	olc_reader_init(&r, buf, len, err);
	ret = olc_header(&r, "locks");
	while (!ret && (ret = olc_data_line(&r)) > 0) {
		memset(&l, 0, sizeof(l));
		ret = olc_locks_line(&r, &l);
		if (ret)
			break;
		p = olc_locks_add(out);
		if (!p) {
			ret = -ENOMEM;
			break;
		}
		*p = l;
	}
	free(r.copy);
	return ret;
}

/* owners: ID PID COMM DOMAIN KIND HELD WAITING_MODE WAITING_KEY WAITED_US */
static int olc_owners_line(struct olc_reader *r, struct olc_owner *o)
{
	int ret;

	ret = olc_want_fields(r, 9, "owners") ?:
	      olc_field_who(r, 0, &o->who) ?:
	      olc_field_domain(r, 3, o->domain) ?:
	      olc_field_u32(r, 5, "held", &o->held) ?:
	      olc_field_u64(r, 8, "waited_us", &o->waited_us);
	if (ret)
		return ret;
	if (!strcmp(r->f[4], "device"))
		o->kind = ORDLOCK_KIND_DEVICE;
	else if (!strcmp(r->f[4], "netlink"))
		o->kind = ORDLOCK_KIND_NETLINK;
	else
		return olc_fail(r, "field 5 (kind): \"%s\" is not device or netlink",
				olc_show(r->f[4]));
	if (!strcmp(r->f[6], "-")) {
		if (strcmp(r->f[7], "-"))
			return olc_fail(r, "field 8 (waiting key): \"%s\" without a waiting mode",
					olc_show(r->f[7]));
		o->wmode = 0;
		return 0;
	}
	return olc_field_mode(r, 6, "waiting mode", &o->wmode) ?:
	       olc_field_key(r, 7, &o->wrank, &o->wid);
}

int olc_parse_owners(const char *buf, size_t len, struct olc_owners *out,
		     struct olc_perr *err)
{
	struct olc_reader r;
	struct olc_owner o, *p;
	int ret;

	olc_reader_init(&r, buf, len, err);
	ret = olc_header(&r, "owners");
	while (!ret && (ret = olc_data_line(&r)) > 0) {
		memset(&o, 0, sizeof(o));
		ret = olc_owners_line(&r, &o);
		if (ret)
			break;
		p = olc_owners_add(out);
		if (!p) {
			ret = -ENOMEM;
			break;
		}
		*p = o;
	}
	free(r.copy);
	return ret;
}

/*
 * deadlocks: "deadlock SEQ TIME_NS DOMAIN LENGTH", then
 * "step SEQ INDEX OWNER_ID PID COMM MODE RANK:ID hard|soft BLOCKER_MODE
 * [DOMAIN]" (the step's domain; modules before it wrote none: the
 * deadlock's)
 */
static int olc_deadlock_step(struct olc_reader *r, struct olc_deadlock *d)
{
	struct olc_dstep s, *p;
	uint64_t seq;
	int ret;

	memset(&s, 0, sizeof(s));
	ret = olc_want_fields(r, r->nf == 11 ? 11 : 10, "step") ?:
	      olc_field_u64(r, 1, "seq", &seq) ?:
	      olc_field_u32(r, 2, "index", &s.index) ?:
	      olc_field_who(r, 3, &s.who) ?:
	      olc_field_mode(r, 6, "mode", &s.mode) ?:
	      olc_field_key(r, 7, &s.rank, &s.id) ?:
	      olc_field_mode(r, 9, "blocker mode", &s.blocker_mode);
	if (ret)
		return ret;
	if (!strcmp(r->f[8], "hard"))
		s.edge = ORDLOCK_EDGE_HARD;
	else if (!strcmp(r->f[8], "soft"))
		s.edge = ORDLOCK_EDGE_SOFT;
	else
		return olc_fail(r, "field 9 (edge): \"%s\" is not hard or soft",
				olc_show(r->f[8]));
	if (!d)
		return olc_fail(r, "a step before any deadlock line");
	if (r->nf == 11 && strlen(r->f[10]) >= sizeof(s.domain))
		return olc_fail(r, "field 11 (domain): too long");
	snprintf(s.domain, sizeof(s.domain), "%s", r->nf == 11 ? r->f[10] : d->domain);
	if (seq != d->seq)
		return olc_fail(r, "step of deadlock %llu inside deadlock %llu",
				(unsigned long long)seq, (unsigned long long)d->seq);
	if (s.index != d->nsteps)
		return olc_fail(r, "step %u where step %u was expected", s.index,
				d->nsteps);
	if (d->nsteps >= d->len)
		return olc_fail(r, "more steps than the deadlock's length %u", d->len);
	p = realloc(d->steps, (d->nsteps + 1) * sizeof(*p));
	if (!p)
		return -ENOMEM;
	d->steps = p;
	d->steps[d->nsteps++] = s;
	return 0;
}

int olc_parse_deadlocks(const char *buf, size_t len, struct olc_deadlocks *out,
			struct olc_perr *err)
{
	struct olc_deadlock *d = NULL, nd;
	struct olc_reader r;
	int ret;

	olc_reader_init(&r, buf, len, err);
	ret = olc_header(&r, "deadlocks");
	while (!ret && (ret = olc_data_line(&r)) > 0) {
		if (!strcmp(r.f[0], "step")) {
			ret = olc_deadlock_step(&r, d);
			continue;
		}
		if (strcmp(r.f[0], "deadlock")) {
			ret = olc_fail(&r, "\"%s\": neither a deadlock nor a step line",
				       olc_show(r.f[0]));
			break;
		}
		memset(&nd, 0, sizeof(nd));
		ret = olc_want_fields(&r, 5, "deadlock") ?:
		      olc_field_u64(&r, 1, "seq", &nd.seq) ?:
		      olc_field_u64(&r, 2, "time_ns", &nd.time_ns) ?:
		      olc_field_domain(&r, 3, nd.domain) ?:
		      olc_field_u32(&r, 4, "length", &nd.len);
		if (ret)
			break;
		if (!nd.len) {
			ret = olc_fail(&r, "a deadlock of length 0");
			break;
		}
		d = olc_deadlocks_add(out);
		if (!d) {
			ret = -ENOMEM;
			break;
		}
		*d = nd;
	}
	free(r.copy);
	return ret;
}

/* "NAME VALUE" pairs from field @i on into @v (at most OLC_STATS_MAX) */
static int olc_stat_pairs(struct olc_reader *r, unsigned int i,
			  struct olc_stat *v, unsigned int *n)
{
	uint64_t x;

	if ((r->nf - i) % 2)
		return olc_fail(r, "\"%s\" has no value", olc_show(r->f[r->nf - 1]));
	for (; i < r->nf; i += 2) {
		if (*n == OLC_STATS_MAX)
			return olc_fail(r, "more than %d counters", OLC_STATS_MAX);
		if (strlen(r->f[i]) >= OLC_NAME_LEN || olc_rank_name_check(r->f[i]))
			return olc_fail(r, "field %u: \"%s\" is not a counter name",
					i + 1, olc_show(r->f[i]));
		if (olc_field_u64(r, i + 1, r->f[i], &x))
			return -EPROTO;
		strcpy(v[*n].name, r->f[i]);
		v[*n].value = x;
		(*n)++;
	}
	return 0;
}

static struct olc_domain_stats *olc_stats_find(struct olc_stats *s,
					       const char *name)
{
	size_t i;

	for (i = 0; i < s->n; i++)
		if (!strcmp(s->v[i].name, name))
			return &s->v[i];
	return NULL;
}

static int olc_stats_line(struct olc_reader *r, struct olc_stats *out)
{
	struct olc_domain_stats *d;
	uint32_t delay;
	int ret;

	if (!strcmp(r->f[0], "global")) {
		if (r->nf != 5 || strcmp(r->f[1], "owners") ||
		    strcmp(r->f[3], "resources"))
			return olc_fail(r, "a global line is \"global owners N resources N\"");
		out->have_global = 1;
		return olc_field_u64(r, 2, "owners", &out->owners) ?:
		       olc_field_u64(r, 4, "resources", &out->resources);
	}
	if (!strcmp(r->f[0], "domain")) {
		if (r->nf < 6 || strcmp(r->f[2], "policy") ||
		    strcmp(r->f[4], "detect_delay_ms"))
			return olc_fail(r, "a domain line starts \"domain NAME policy P detect_delay_ms N\"");
		if (olc_domain_check(r->f[1]))
			return olc_fail(r, "field 2 (domain): \"%s\" is not a domain name",
					olc_show(r->f[1]));
		if (olc_stats_find(out, r->f[1]))
			return olc_fail(r, "domain %s appears twice", r->f[1]);
		if (olc_policy_parse(r->f[3]) < 0)
			return olc_fail(r, "field 4 (policy): \"%s\" is not a policy",
					olc_show(r->f[3]));
		ret = olc_field_u32(r, 5, "detect_delay_ms", &delay);
		if (ret)
			return ret;
		d = olc_stats_add(out);
		if (!d)
			return -ENOMEM;
		strcpy(d->name, r->f[1]);
		strcpy(d->policy, r->f[3]);
		d->have_delay = 1;
		d->detect_delay_ms = delay;
		return olc_stat_pairs(r, 6, d->v, &d->n);
	}
	if (!strcmp(r->f[0], "wait_us")) {
		if (r->nf < 2)
			return olc_fail(r, "a wait_us line without a domain");
		d = olc_stats_find(out, r->f[1]);
		if (!d)
			return olc_fail(r, "wait_us of domain \"%s\" before its domain line",
					olc_show(r->f[1]));
		if (d->have_hist)
			return olc_fail(r, "a second wait_us line for domain %s", d->name);
		d->have_hist = 1;
		return olc_stat_pairs(r, 2, d->hist, &d->nhist);
	}
	return olc_fail(r, "\"%s\": not a global, domain or wait_us line",
			olc_show(r->f[0]));
}

int olc_parse_stats(const char *buf, size_t len, struct olc_stats *out,
		    struct olc_perr *err)
{
	struct olc_reader r;
	int ret;

	olc_reader_init(&r, buf, len, err);
	ret = olc_header(&r, "stats");
	while (!ret && (ret = olc_data_line(&r)) > 0)
		ret = olc_stats_line(&r, out);
	free(r.copy);
	return ret;
}
