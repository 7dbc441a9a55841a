// SPDX-License-Identifier: GPL-2.0
/*
 * The DLM's debugfs file LS_all of a cluster domain's lockspace, read back
 * into ordlock's keys (dlmdebug.h says what it can tell).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/ordlock.h>

#include "dlmdebug.h"

/* the first line of LS_all on 6.12 (6.1's is "version rsb 1.1 lvb 1.1 lkb 1.1") */
#define OLC_DLM_RSB_HEADER \
	"rsb ptr nodeid first_lkid flags !root_list_empty !recover_list_empty recover_locks_count len"

/* the most tokens of a line looked at: lkb's rsb_lookup is its 13th */
#define OLC_DLM_TOKS	14

const char *olc_dlm_mode_str(int mode)
{
	static const char *const names[] = { "NL", "CR", "CW", "PR", "PW", "EX" };

	if (mode == OLC_DLM_IV)
		return "IV";
	if (mode < 0 || mode >= (int)(sizeof(names) / sizeof(names[0])))
		return "?";
	return names[mode];
}

static int olc_dlm_hex(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;	/* ordlock_dlm writes lowercase only */
}

int olc_dlm_res_name(const char *name, size_t len, uint32_t *rank, uint64_t *id)
{
	uint64_t r = 0, v = 0;
	size_t i;
	int h;

	if (len != ORDLOCK_DLM_RES_LEN || name[8] != ':')
		return -1;
	for (i = 0; i < 8; i++) {
		h = olc_dlm_hex(name[i]);
		if (h < 0)
			return -1;
		r = r << 4 | (unsigned int)h;
	}
	for (i = 9; i < ORDLOCK_DLM_RES_LEN; i++) {
		h = olc_dlm_hex(name[i]);
		if (h < 0)
			return -1;
		v = v << 4 | (unsigned int)h;
	}
	*rank = (uint32_t)r;
	*id = v;
	return 0;
}

void olc_dlm_free(struct olc_dlm_view *v)
{
	free(v->res);
	free(v->locks);
	memset(v, 0, sizeof(*v));
}

static int olc_dlm_grow(void **p, size_t *cap, size_t n, size_t size)
{
	void *q;
	size_t c;

	if (n < *cap)
		return 0;
	c = *cap ? *cap * 2 : 16;
	q = realloc(*p, c * size);
	if (!q)
		return -ENOMEM;
	*p = q;
	*cap = c;
	return 0;
}

/* Split @s (NUL-terminated, modified) at spaces into at most @max tokens */
static unsigned int olc_dlm_split(char *s, char **tok, unsigned int max)
{
	unsigned int n = 0;

	while (*s && n < max) {
		while (*s == ' ')
			s++;
		if (!*s)
			break;
		tok[n++] = s;
		while (*s && *s != ' ')
			s++;
		if (*s)
			*s++ = '\0';
	}
	return n;
}

/* A decimal int (sign allowed), the whole token */
static int olc_dlm_int(const char *s, int *v)
{
	char *end;
	long l;

	errno = 0;
	l = strtol(s, &end, 10);
	if (errno || end == s || *end || l < -2147483647L - 1 || l > 2147483647L)
		return -1;
	*v = (int)l;
	return 0;
}

struct olc_dlm_pstate {
	unsigned int line;
	char *msg;
	size_t msglen;
};

static int olc_dlm_bad(struct olc_dlm_pstate *ps, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static int olc_dlm_bad(struct olc_dlm_pstate *ps, const char *fmt, ...)
{
	va_list ap;

	if (ps->msg && ps->msglen) {
		va_start(ap, fmt);
		vsnprintf(ps->msg, ps->msglen, fmt, ap);
		va_end(ap);
	}
	return -EPROTO;
}

/*
 * "rsb PTR NODEID FIRST_LKID FLAGS ROOT RECOVER COUNT LEN str NAME" or
 * "... LEN hex XX XX ..." (NAME the LEN raw bytes). Returns 1 with the key
 * in @key for an ordlock name, 0 for another name, -EPROTO.
 */
static int olc_dlm_rsb(struct olc_dlm_pstate *ps, const char *s,
		       struct olc_dlm_res *key)
{
	char name[64], buf[16];
	const char *p = s;
	unsigned int i;
	int master, len, f, hi, lo;

	/* the 8 fields after "rsb ", then the name's form */
	for (f = 0; f < 8; f++) {
		while (*p == ' ')
			p++;
		i = 0;
		while (*p && *p != ' ') {
			if (i + 1 < sizeof(buf))
				buf[i] = *p;
			i++;
			p++;
		}
		buf[i < sizeof(buf) ? i : sizeof(buf) - 1] = '\0';
		if (!i)
			return olc_dlm_bad(ps, "rsb line: %d fields before the name, 8 expected", f);
		/* the numbers read: one cut short could read as another */
		if ((f == 1 || f == 7) && i >= sizeof(buf))
			return olc_dlm_bad(ps, "rsb line: field %d (%s) is longer than %zu characters",
					   f + 2, f == 1 ? "node" : "name length", sizeof(buf) - 1);
		if (f == 1 && olc_dlm_int(buf, &master))
			return olc_dlm_bad(ps, "rsb line: node \"%s\" is not a number", buf);
		if (f == 7 && (olc_dlm_int(buf, &len) || len < 1 || len > 64))
			return olc_dlm_bad(ps, "rsb line: name length \"%s\" is not 1-64", buf);
	}
	if (*p != ' ')
		return olc_dlm_bad(ps, "rsb line: no name");
	p++;
	if (!strncmp(p, "str ", 4)) {
		p += 4;
		if (strlen(p) != (size_t)len)
			return olc_dlm_bad(ps, "rsb line: the name is not %d bytes", len);
		memcpy(name, p, (size_t)len);
	} else if (!strncmp(p, "hex", 3)) {
		p += 3;
		/* " XX" per byte, two lowercase hex digits (the DLM's %02x) */
		for (i = 0; i < (unsigned int)len; i++) {
			if (p[0] != ' ' || !p[1])
				return olc_dlm_bad(ps, "rsb line: hex name shorter than %d bytes", len);
			hi = olc_dlm_hex(p[1]);
			lo = olc_dlm_hex(p[2]);
			if (hi < 0 || lo < 0 || (p[3] && p[3] != ' '))
				return olc_dlm_bad(ps, "rsb line: byte %u of the hex name is not two hex digits",
						   i + 1);
			name[i] = (char)(hi << 4 | lo);
			p += 3;
		}
		if (*p)
			return olc_dlm_bad(ps, "rsb line: hex name longer than %d bytes", len);
	} else {
		return olc_dlm_bad(ps, "rsb line: the name is neither \"str\" nor \"hex\"");
	}
	if (olc_dlm_res_name(name, (size_t)len, &key->rank, &key->id))
		return 0;
	key->master = master;
	key->local = 0;
	key->remote = 0;
	return 1;
}

/* Another node's lock on a key mastered here: into @v->locks (NL left out) */
static int olc_dlm_remote(struct olc_dlm_view *v, const struct olc_dlm_res *r,
			  int node, int sts, int grmode, int rqmode, unsigned int pos)
{
	struct olc_dlm_lock *l;
	unsigned int role;
	int mode;

	switch (sts) {
	case OLC_DLM_GRANTED:
		role = ORDLOCK_ROLE_HOLDER;
		mode = grmode;
		break;
	case OLC_DLM_CONVERT:
		/* from the NL anchor up: ordlock_dlm's acquire, a waiter */
		role = grmode == OLC_DLM_NL ? ORDLOCK_ROLE_WAITER : ORDLOCK_ROLE_CONVERTER;
		mode = rqmode;
		break;
	case OLC_DLM_WAITING:
		role = ORDLOCK_ROLE_WAITER;
		mode = rqmode;
		break;
	default:
		return 0;
	}
	/* NL holds nothing; ordlock_dlm takes no other mode than PR and EX */
	if (mode != OLC_DLM_PR && mode != OLC_DLM_EX)
		return 0;
	if (olc_dlm_grow((void **)&v->locks, &v->lockcap, v->nlocks, sizeof(*l)))
		return -ENOMEM;
	l = &v->locks[v->nlocks++];
	l->rank = r->rank;
	l->id = r->id;
	l->node = node;
	l->role = role;
	l->mode = mode == OLC_DLM_EX ? ORDLOCK_MODE_EXCLUSIVE : ORDLOCK_MODE_SHARED;
	l->grmode = grmode;
	l->rqmode = rqmode;
	l->pos = role == ORDLOCK_ROLE_HOLDER ? 0 : pos;
	return 0;
}

int olc_dlm_parse(const char *buf, size_t len, struct olc_dlm_view *out,
		  unsigned int *lineno, char *msg, size_t msglen)
{
	struct olc_dlm_pstate ps = { 0, msg, msglen };
	struct olc_dlm_res *cur = NULL;
	char *tok[OLC_DLM_TOKS], *line;
	unsigned int ntok, queued = 0;
	size_t at = 0, n;
	int ret = 0, seen_version = 0, seen_rsb = 0;
	int node, sts, grmode, rqmode, lookup;

	memset(out, 0, sizeof(*out));
	if (msg && msglen)
		msg[0] = '\0';
	line = malloc(len + 1);
	if (!line)
		return -ENOMEM;
	while (at < len && !ret) {
		const char *nl = memchr(buf + at, '\n', len - at);

		n = nl ? (size_t)(nl - (buf + at)) : len - at;
		memcpy(line, buf + at, n);
		line[n] = '\0';
		at += n + 1;
		ps.line++;
		if (memchr(line, '\0', n)) {
			ret = olc_dlm_bad(&ps, "a NUL byte");
			break;
		}
		if (!n)
			continue;
		if (!seen_version) {
			/* 6.1: "version rsb 1.1 lvb 1.1 lkb 1.1"; 6.12: the
			 * names of the rsb fields, the lines the same */
			if (strncmp(line, "version rsb 1.", 14) &&
			    strcmp(line, OLC_DLM_RSB_HEADER)) {
				ret = olc_dlm_bad(&ps, "not the DLM's format of LS_all (its first line)");
				break;
			}
			seen_version = 1;
			continue;
		}
		if (!strncmp(line, "rsb ", 4)) {
			struct olc_dlm_res key;

			ret = olc_dlm_rsb(&ps, line + 4, &key);
			if (ret < 0)
				break;
			queued = 0;
			cur = NULL;
			seen_rsb = 1;
			if (!ret) {
				out->ignored++;
				continue;
			}
			ret = olc_dlm_grow((void **)&out->res, &out->rescap, out->nres,
					   sizeof(*out->res));
			if (ret)
				break;
			cur = &out->res[out->nres++];
			*cur = key;
			continue;
		}
		if (!strncmp(line, "lvb ", 4))
			continue;
		if (strncmp(line, "lkb ", 4)) {
			ret = olc_dlm_bad(&ps, "a line that is neither rsb, lvb nor lkb");
			break;
		}
		/* lkb ID NODEID REMID PID XID EXFLAGS FLAGS STS GRMODE RQMODE
		 * LAST_BAST RSB_LOOKUP WAIT_TYPE LVBSEQ TIMESTAMP BAST_TIME */
		ntok = olc_dlm_split(line, tok, OLC_DLM_TOKS);
		if (ntok < 13 || olc_dlm_int(tok[2], &node) || olc_dlm_int(tok[8], &sts) ||
		    olc_dlm_int(tok[9], &grmode) || olc_dlm_int(tok[10], &rqmode) ||
		    olc_dlm_int(tok[12], &lookup)) {
			ret = olc_dlm_bad(&ps, "lkb line: not the fields of the DLM's format");
			break;
		}
		if (!seen_rsb) {
			ret = olc_dlm_bad(&ps, "an lkb line before any rsb line");
			break;
		}
		if (!cur)
			continue;	/* a lock of a resource that is not ordlock's */
		if (lookup) {
			cur->local++;	/* this node's, waiting for the master's lookup */
			continue;
		}
		if (sts == OLC_DLM_CONVERT || sts == OLC_DLM_WAITING)
			queued++;
		/* master here: node 0 is this node; elsewhere every lock is ours */
		if (cur->master != 0 || node == 0) {
			cur->local++;
			continue;
		}
		if (node < 0)
			continue;	/* no node (-1: being recovered): nobody's to name */
		cur->remote++;
		ret = olc_dlm_remote(out, cur, node, sts, grmode, rqmode, queued);
	}
	free(line);
	if (!ret && !seen_version && len)
		ret = olc_dlm_bad(&ps, "no first line of the DLM's format");
	if (lineno)
		*lineno = ps.line;
	if (ret)
		olc_dlm_free(out);
	return ret;
}

/* A hex token, the whole of it, as a u32 (the DLM's %x) */
static int olc_dlm_x32(const char *s, uint32_t *v)
{
	unsigned long l;
	char *end;

	errno = 0;
	l = strtoul(s, &end, 16);
	if (errno || end == s || *end || l > 0xffffffffUL)
		return -1;
	*v = (uint32_t)l;
	return 0;
}

int olc_dlm_queue(const char *buf, size_t len, uint32_t rank, uint64_t id,
		  struct olc_dlm_qent *out, unsigned int max)
{
	struct olc_dlm_pstate ps = { 0, NULL, 0 };
	char *tok[17], *line;
	unsigned int ntok, n = 0;
	int in = 0, seen = 0, ret = 0;
	size_t at = 0, l;

	line = malloc(len + 1);
	if (!line)
		return -ENOMEM;
	while (at < len && !ret) {
		const char *nl = memchr(buf + at, '\n', len - at);
		struct olc_dlm_res key;
		struct olc_dlm_qent e;
		uint32_t remid;

		l = nl ? (size_t)(nl - (buf + at)) : len - at;
		memcpy(line, buf + at, l);
		line[l] = '\0';
		at += l + 1;
		if (!strncmp(line, "rsb ", 4)) {
			if (seen)
				break;	/* the key's lines are over */
			in = olc_dlm_rsb(&ps, line + 4, &key) == 1 && key.rank == rank &&
			     key.id == id;
			if (in && key.master != 0) {
				ret = -ENOENT;	/* mastered elsewhere */
				break;
			}
			seen = in;
			continue;
		}
		if (!in || strncmp(line, "lkb ", 4))
			continue;
		/* lkb ID NODEID REMID PID XID EXFLAGS FLAGS STS GRMODE RQMODE
		 * LAST_BAST RSB_LOOKUP WAIT_TYPE LVBSEQ TIMESTAMP BAST_TIME */
		ntok = olc_dlm_split(line, tok, 17);
		if (ntok < 16 || olc_dlm_x32(tok[1], &e.lkid) || olc_dlm_int(tok[2], &e.node) ||
		    olc_dlm_x32(tok[3], &remid) || olc_dlm_int(tok[8], &e.sts) ||
		    olc_dlm_int(tok[9], &e.grmode) || olc_dlm_int(tok[10], &e.rqmode)) {
			ret = -EPROTO;
			break;
		}
		errno = 0;
		e.ts_ns = strtoull(tok[15], NULL, 10);
		if (errno)
			ret = -EPROTO;
		if (ret || (e.sts != OLC_DLM_CONVERT && e.sts != OLC_DLM_WAITING) || e.node < 0)
			continue;
		if (e.node)
			e.lkid = remid;	/* another node's: its own id there */
		if (n < max)
			out[n] = e;
		n++;
	}
	free(line);
	if (ret)
		return ret;
	if (!seen)
		return -ENOENT;
	return (int)(n < max ? n : max);
}
