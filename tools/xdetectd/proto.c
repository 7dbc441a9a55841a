// SPDX-License-Identifier: GPL-2.0
/* The protocol of ordlock-xdetectd: see proto.h. */
#include <endian.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "proto.h"

#define XD_ROUNDS_CAP	(XD_ROUNDS_KEPT + XD_ROUNDS_PENDING + 1)

static uint64_t xd_realtime_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static void xd_log(struct xd_state *s, int level, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void xd_log(struct xd_state *s, int level, const char *fmt, ...)
{
	char line[512];
	va_list ap;

	if (!s->ops->log)
		return;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	s->ops->log(s->ctx, level, line);
}

int xd_init(struct xd_state *s, uint32_t node, uint64_t boot,
	    const struct xd_ops *ops, void *ctx)
{
	memset(s, 0, sizeof(*s));
	s->node = node;
	s->boot = boot;
	s->ops = ops;
	s->ctx = ctx;
	s->now_ns = xd_realtime_ns;
	s->seq = 1;
	s->waits = calloc(XD_WAITS_MAX, sizeof(*s->waits));
	s->rounds = calloc(XD_ROUNDS_CAP, sizeof(*s->rounds));
	s->scratch = malloc(sizeof(*s->scratch));
	if (!s->waits || !s->rounds || !s->scratch) {
		xd_free(s);
		return -ENOMEM;
	}
	return 0;
}

void xd_free(struct xd_state *s)
{
	free(s->waits);
	free(s->rounds);
	free(s->scratch);
	s->waits = NULL;
	s->rounds = NULL;
	s->scratch = NULL;
}

/* --- paths ----------------------------------------------------------------- */

/* The same owner (one boot of one node's module), whatever the wait */
static bool xd_same_owner(const struct xd_vertex *a, const struct xd_vertex *b)
{
	return a->node == b->node && a->boot == b->boot && a->owner == b->owner;
}

static bool xd_same_wait(const struct xd_vertex *a, const struct xd_vertex *b)
{
	return xd_same_owner(a, b) && a->gen == b->gen;
}

unsigned int xd_victim(const struct xd_path *p)
{
	unsigned int i, best = 0;

	for (i = 1; i < p->len; i++) {
		const struct xd_vertex *a = &p->v[i], *b = &p->v[best];

		if (a->start_ns != b->start_ns ? a->start_ns > b->start_ns :
		    a->node != b->node ? a->node > b->node :
		    a->owner > b->owner)
			best = i;
	}
	return best;
}

bool xd_same_cycle(const struct xd_path *a, const struct xd_path *b)
{
	unsigned int i, j;

	if (a->len != b->len)
		return false;
	/* the vertices of a path are distinct owners: compare as sets */
	for (i = 0; i < a->len; i++) {
		for (j = 0; j < b->len; j++)
			if (xd_same_wait(&a->v[i], &b->v[j]))
				break;
		if (j == b->len)
			return false;
	}
	return true;
}

/* The kernel leaves a vertex's node out when it is this node's */
static void xd_localize(struct xd_state *s, struct xd_path *p)
{
	unsigned int i;

	for (i = 0; i < p->len; i++) {
		if (!p->v[i].node) {
			p->v[i].node = s->node;
			p->v[i].boot = s->boot;
		}
	}
}

/* --- sending --------------------------------------------------------------- */

static int xd_send(struct xd_state *s, const struct xd_msg *m)
{
	static unsigned char buf[XD_MSG_MAX];
	size_t len = xd_encode(m, buf);
	int ret;

	ret = s->ops->send(s->ctx, buf, len);
	if (ret < 0) {
		s->stats.send_errors++;
		xd_log(s, 1, "send of a kind %u message failed: %s", m->kind,
		       strerror(-ret));
	}
	return ret;
}

static int xd_send_path(struct xd_state *s, uint32_t kind, const char *domain,
			const struct xd_path *p, uint64_t seq)
{
	static struct xd_msg m;

	xd_msg_init(&m, kind, s->node, kind == XD_MSG_CONFIRM ? s->node : 0,
		    kind == XD_MSG_CONFIRM ? seq : 0);
	snprintf(m.domain, sizeof(m.domain), "%s", domain);
	m.path.len = p->len;
	memcpy(m.path.v, p->v, p->len * sizeof(p->v[0]));
	return xd_send(s, &m);
}

/* --- rounds ---------------------------------------------------------------- */

static struct xd_round *xd_round_find(struct xd_state *s, uint32_t node, uint64_t seq)
{
	unsigned int i;

	for (i = 0; i < s->nrounds; i++)
		if (s->rounds[i].id_node == node && s->rounds[i].id_seq == seq)
			return &s->rounds[i];
	return NULL;
}

/* A round of the same cycle delivered here, pending or decided */
static bool xd_round_same(struct xd_state *s, const struct xd_path *p)
{
	unsigned int i;

	for (i = 0; i < s->nrounds; i++)
		if (s->rounds[i].state != XD_ROUND_ABORTED &&
		    xd_same_cycle(&s->rounds[i].path, p))
			return true;
	return false;
}

static bool xd_member(const struct xd_state *s, uint32_t node)
{
	unsigned int i;

	for (i = 0; i < s->nmembers; i++)
		if (s->members[i] == node)
			return true;
	return false;
}

static void xd_round_abort(struct xd_state *s, struct xd_round *r, int why)
{
	r->state = XD_ROUND_ABORTED;
	r->why = why;
	r->closed_ns = s->now_ns();
	s->stats.aborted++;
	xd_log(s, 1, "round %u:%llu aborted (%s)", r->id_node,
	       (unsigned long long)r->id_seq,
	       why == XD_ABORT_DEAD ? "a wait of it ended" :
	       why == XD_ABORT_LEFT ? "a node of it left" : "too many pending");
}

/* Room for one more round: drop the oldest kept one, or abort the oldest
 * pending one when too many are */
static struct xd_round *xd_round_new(struct xd_state *s)
{
	struct xd_round *old_kept = NULL, *old_pend = NULL;
	unsigned int i, kept = 0, pend = 0;

	for (i = 0; i < s->nrounds; i++) {
		struct xd_round *r = &s->rounds[i];

		if (r->state == XD_ROUND_PENDING) {
			pend++;
			if (!old_pend || r->order < old_pend->order)
				old_pend = r;
		} else {
			kept++;
			if (!old_kept || r->order < old_kept->order)
				old_kept = r;
		}
	}
	if (pend >= XD_ROUNDS_PENDING) {
		xd_round_abort(s, old_pend, XD_ABORT_EVICTED);
		kept++;
		if (!old_kept || old_pend->order < old_kept->order)
			old_kept = old_pend;
	}
	if (kept >= XD_ROUNDS_KEPT) {
		*old_kept = s->rounds[--s->nrounds];
	}
	memset(&s->rounds[s->nrounds], 0, sizeof(s->rounds[0]));
	return &s->rounds[s->nrounds++];
}

static void xd_decide(struct xd_state *s, struct xd_round *r)
{
	static struct xd_vertex cycle[XD_PATH_MAX];
	const struct xd_vertex *v;
	unsigned int i;

	r->state = XD_ROUND_DECIDED;
	r->victim = (int)xd_victim(&r->path);
	r->closed_ns = s->now_ns();
	s->stats.decided++;
	v = &r->path.v[r->victim];
	xd_log(s, 1, "round %u:%llu decided: victim node %u owner %llu pid %u (%s)",
	       r->id_node, (unsigned long long)r->id_seq, v->node,
	       (unsigned long long)v->owner, v->pid, v->comm);
	/* only the victim's node acts */
	if (v->node != s->node || v->boot != s->boot)
		return;
	for (i = 0; i < r->path.len; i++)
		cycle[i] = r->path.v[(r->victim + i) % r->path.len];
	r->failed = true;
	r->fail_ret = s->ops->fail(s->ctx, r->domain, cycle, r->path.len);
	if (r->fail_ret == 0)
		s->stats.victims++;
	else if (r->fail_ret == -ESTALE)
		s->stats.stale++;
	else
		xd_log(s, 1, "failing owner %llu: %s", (unsigned long long)v->owner,
		       strerror(-r->fail_ret));
}

static bool xd_soft_stands(struct xd_state *s, const char *domain,
			   const struct xd_vertex *prev, const struct xd_vertex *v);

/* This node's vertices of @r: does each still stand? */
static bool xd_round_live_here(struct xd_state *s, const struct xd_round *r)
{
	struct xd_check c[XD_PATH_MAX];
	unsigned int i, n = 0;
	int ret;

	for (i = 0; i < r->path.len; i++) {
		const struct xd_vertex *v = &r->path.v[i];
		const struct xd_vertex *prev = &r->path.v[(i + r->path.len - 1) % r->path.len];

		if (v->node != s->node)
			continue;
		/* a vertex of this node's module before a reload */
		if (v->boot != s->boot)
			return false;
		c[n].owner = v->owner;
		c[n].gen = v->gen;
		c[n].hold_gen = v->hold_gen;
		c[n].key_id = prev->key_id;
		c[n].key_rank = prev->key_rank;
		c[n].soft = v->flags & XD_V_SOFT;
		n++;
	}
	/* the soft edges this node masters: still queued, one ahead */
	for (i = 0; i < r->path.len; i++) {
		const struct xd_vertex *v = &r->path.v[i];

		if (v->q_master == s->node &&
		    !xd_soft_stands(s, r->domain,
				    &r->path.v[(i + r->path.len - 1) % r->path.len], v))
			return false;
	}
	if (!n)
		return true;
	ret = s->ops->check(s->ctx, r->domain, c, n);
	if (ret < 0)
		xd_log(s, 1, "check of round %u:%llu failed: %s (dead)", r->id_node,
		       (unsigned long long)r->id_seq, strerror(-ret));
	return ret == 1;
}

static void xd_on_confirm(struct xd_state *s, const struct xd_msg *m)
{
	struct xd_round *r;
	bool mine = false;
	unsigned int i, j;
	struct xd_msg ack;

	if (xd_round_find(s, m->round_node, m->round_seq))
		return;
	r = xd_round_new(s);
	r->id_node = m->round_node;
	r->id_seq = m->round_seq;
	memcpy(r->domain, m->domain, sizeof(r->domain));
	r->path.len = m->path.len;
	memcpy(r->path.v, m->path.v, m->path.len * sizeof(m->path.v[0]));
	r->state = XD_ROUND_PENDING;
	r->victim = -1;
	r->opened_ns = s->now_ns();
	r->order = s->order++;
	s->stats.rounds++;
	for (i = 0; i < 2 * r->path.len; i++) {
		/* each vertex's node, then each soft edge's master */
		uint32_t node = i < r->path.len ? r->path.v[i].node :
				r->path.v[i - r->path.len].q_master;

		if (!node)
			continue;
		for (j = 0; j < r->nnodes && r->nodes[j] != node; j++)
			;
		if (j == r->nnodes && r->nnodes < XD_PATH_MAX)
			r->nodes[r->nnodes++] = node;
		if (node == s->node)
			mine = true;
	}
	/* a node of it left before: it can never ACK */
	for (j = 0; j < r->nnodes; j++) {
		if (!xd_member(s, r->nodes[j])) {
			xd_round_abort(s, r, XD_ABORT_LEFT);
			return;
		}
	}
	if (!mine)
		return;
	xd_msg_init(&ack, XD_MSG_ACK, s->node, r->id_node, r->id_seq);
	ack.live = xd_round_live_here(s, r);
	xd_send(s, &ack);
}

static void xd_on_ack(struct xd_state *s, const struct xd_msg *m)
{
	struct xd_round *r = xd_round_find(s, m->round_node, m->round_seq);
	unsigned int j;

	if (!r || r->state != XD_ROUND_PENDING)
		return;
	for (j = 0; j < r->nnodes && r->nodes[j] != m->sender; j++)
		;
	if (j == r->nnodes)
		return;		/* not a node of the round */
	if (!m->live) {
		s->stats.acks_dead++;
		xd_round_abort(s, r, XD_ABORT_DEAD);
		return;
	}
	r->acked |= 1ULL << j;
	if (r->acked == (r->nnodes == 64 ? ~0ULL : (1ULL << r->nnodes) - 1))
		xd_decide(s, r);
}

/* --- probes ---------------------------------------------------------------- */

/*
 * Follow the probe @in (its last vertex waits in the DLM) through the
 * local path @p that starts at a holder here of the key it waits for.
 */
static void xd_extend(struct xd_state *s, const char *domain,
		      const struct xd_path *in, const struct xd_path *p)
{
	static struct xd_path ext;
	unsigned int k, j;

	ext.len = in->len;
	memcpy(ext.v, in->v, ext.len * sizeof(ext.v[0]));
	for (k = 0; k < p->len; k++) {
		const struct xd_vertex *h = &p->v[k];

		if (xd_same_owner(h, &ext.v[0])) {
			bool local = true;

			/* the cycle closes at its first vertex */
			if (h->gen != ext.v[0].gen) {
				s->stats.probes_dropped++;
				return;
			}
			/* its incoming edge is the holder's (or queued step's) */
			ext.v[0].hold_gen = h->hold_gen;
			ext.v[0].flags = (ext.v[0].flags & ~XD_V_SOFT) |
					 (h->flags & XD_V_SOFT);
			ext.v[0].q_master = h->q_master;
			ext.v[0].q_ts = h->q_ts;
			ext.v[0].q_prev_ts = h->q_prev_ts;
			/* an edge of the DLM's queue: not in the kernel's graph */
			for (j = 0; j < ext.len; j++)
				local = local && ext.v[j].node == s->node &&
					!ext.v[j].q_master;
			/* a cycle within this node is the kernel's own */
			if (local || xd_round_same(s, &ext)) {
				s->stats.probes_dropped++;
				return;
			}
			xd_log(s, 2, "cycle of %u waits closed: confirming (round %u:%llu)",
			       ext.len, s->node, (unsigned long long)s->seq);
			xd_send_path(s, XD_MSG_CONFIRM, domain, &ext, s->seq++);
			return;
		}
		for (j = 1; j < ext.len; j++) {
			if (xd_same_owner(h, &ext.v[j])) {
				/* that vertex's own probe finds that cycle */
				s->stats.probes_dropped++;
				return;
			}
		}
		if (ext.len == XD_PATH_MAX) {
			s->stats.probes_dropped++;
			return;
		}
		ext.v[ext.len++] = *h;
	}
	if (!(ext.v[ext.len - 1].flags & XD_V_CLUSTER_WAIT)) {
		s->stats.probes_dropped++;
		return;
	}
	s->stats.probes_sent++;
	xd_send_path(s, XD_MSG_PROBE, domain, &ext, 0);
}

/* --- soft edges across nodes ----------------------------------------------- */

static bool xd_mode_conflict(uint32_t a, uint32_t b)
{
	return a == XD_MODE_EXCLUSIVE || b == XD_MODE_EXCLUSIVE;
}

/* The DLM's queue of the key @w waits for, when this node masters it */
static int xd_queue(struct xd_state *s, const char *domain,
		    const struct xd_vertex *w, struct xd_qent *q)
{
	if (!s->ops->dlm_queue || !w->lkid || !(w->flags & XD_V_CLUSTER_WAIT))
		return -ENOENT;
	return s->ops->dlm_queue(s->ctx, domain, w->key_rank, w->key_id, q,
				 XD_QUEUE_MAX);
}

static int xd_qfind(const struct xd_qent *q, int n, uint32_t node, uint32_t lkid)
{
	int i;

	for (i = 0; i < n; i++)
		if (q[i].node == node && q[i].lkid == lkid)
			return i;
	return -1;
}

/*
 * The soft edge @prev -> @v of a round, on the master of their key: both
 * requests still queued as the step saw them (the same entries: the
 * DLM's times of their entering the queue, which a request leaving and
 * coming back changes), @v's ahead, in conflicting modes. The DLM keeps
 * each queue in order (convert queue, then wait queue; a request is
 * appended and leaves only granted or cancelled), so the edge stood all
 * along between the step and this check.
 */
static bool xd_soft_stands(struct xd_state *s, const char *domain,
			   const struct xd_vertex *prev, const struct xd_vertex *v)
{
	static struct xd_qent q[XD_QUEUE_MAX];
	int n, a, b;

	if (v->key_id != prev->key_id || v->key_rank != prev->key_rank)
		return false;
	n = xd_queue(s, domain, prev, q);
	if (n < 0)
		return false;
	a = xd_qfind(q, n, v->node, v->lkid);
	b = xd_qfind(q, n, prev->node, prev->lkid);
	return a >= 0 && b > a && q[a].ts == v->q_ts && q[b].ts == v->q_prev_ts &&
	       xd_mode_conflict(q[a].mode, q[b].mode);
}

/*
 * This node's wait in the DLM whose request is @qv's (the same key, lock
 * id @qv->lkid); a wait whose lock id the events did not carry (the
 * request was not made yet when it started) asks the kernel's walk
 */
static struct xd_wait *xd_wait_of_lkid(struct xd_state *s, const char *domain,
				       const struct xd_vertex *qv)
{
	unsigned int i;

	for (i = 0; i < s->nwaits; i++) {
		struct xd_wait *w = &s->waits[i];

		if (!(w->v.flags & XD_V_CLUSTER_WAIT) || w->v.key_id != qv->key_id ||
		    w->v.key_rank != qv->key_rank || strcmp(w->domain, domain))
			continue;
		if (!w->v.lkid) {
			s->scratch->n = 0;
			if (s->ops->walk_owner(s->ctx, domain, w->v.owner, w->v.gen,
					       s->scratch) < 0 || !s->scratch->n ||
			    !s->scratch->p[0].len)
				continue;
			w->v.lkid = s->scratch->p[0].v[0].lkid;
		}
		if (w->v.lkid == qv->lkid)
			return w;
	}
	return NULL;
}

/*
 * The "queued ahead" step @qv (of this node) that ends the path @in turns
 * into the wait of its request's owner, entered through a soft edge
 */
static void xd_soft_resolve(struct xd_state *s, const char *domain,
			    const struct xd_path *in, const struct xd_vertex *qv)
{
	static struct xd_path one;
	struct xd_wait *w = xd_wait_of_lkid(s, domain, qv);

	if (!w) {
		/* not a wait followed here (or it ended): no edge */
		s->stats.soft_dropped++;
		return;
	}
	one.len = 1;
	one.v[0] = w->v;
	one.v[0].hold_gen = 0;
	one.v[0].flags = XD_V_CLUSTER_WAIT | XD_V_SOFT;
	one.v[0].q_master = qv->q_master;
	one.v[0].q_ts = qv->q_ts;
	one.v[0].q_prev_ts = qv->q_prev_ts;
	xd_extend(s, domain, in, &one);
}

/*
 * On the master of the key the path's last vertex waits for in the DLM:
 * a "queued ahead" step for each request ahead of its own in a
 * conflicting mode (FIFO: it is granted after them), which the node of
 * that request turns into its owner's wait (at once when it is this one)
 */
static void xd_soft_steps(struct xd_state *s, const struct xd_msg *m)
{
	static struct xd_qent q[XD_QUEUE_MAX];
	static struct xd_path ext;
	const struct xd_vertex *last = &m->path.v[m->path.len - 1];
	int n, b, i;

	n = xd_queue(s, m->domain, last, q);
	if (n <= 0 || m->path.len == XD_PATH_MAX)
		return;
	b = xd_qfind(q, n, last->node, last->lkid);
	for (i = 0; i < b; i++) {
		struct xd_vertex *qv;

		if (!xd_mode_conflict(q[i].mode, last->mode))
			continue;
		ext.len = m->path.len;
		memcpy(ext.v, m->path.v, ext.len * sizeof(ext.v[0]));
		qv = &ext.v[ext.len];
		memset(qv, 0, sizeof(*qv));
		qv->node = q[i].node;
		qv->lkid = q[i].lkid;
		qv->key_id = last->key_id;
		qv->key_rank = last->key_rank;
		qv->mode = q[i].mode;
		qv->flags = XD_V_QUEUED | XD_V_SOFT | XD_V_CLUSTER_WAIT;
		qv->q_master = s->node;
		qv->q_ts = q[i].ts;
		qv->q_prev_ts = q[b].ts;
		s->stats.soft_steps++;
		xd_log(s, 2, "soft edge: owner %llu's request on key %u:%llu is queued behind node %u's (lock %x)",
		       (unsigned long long)last->owner, last->key_rank,
		       (unsigned long long)last->key_id, qv->node, qv->lkid);
		if (qv->node == s->node) {
			xd_soft_resolve(s, m->domain, &m->path, qv);
			continue;
		}
		ext.len++;
		s->stats.probes_sent++;
		xd_send_path(s, XD_MSG_PROBE, m->domain, &ext, 0);
	}
}

static void xd_on_probe(struct xd_state *s, const struct xd_msg *m)
{
	const struct xd_vertex *last = &m->path.v[m->path.len - 1];
	static struct xd_path in;
	unsigned int i;
	int ret;

	/* a "queued ahead" step: only its node knows the request's owner */
	if (last->flags & XD_V_QUEUED) {
		if (last->node != s->node)
			return;
		in.len = m->path.len - 1;
		memcpy(in.v, m->path.v, in.len * sizeof(in.v[0]));
		xd_soft_resolve(s, m->domain, &in, last);
		return;
	}
	s->scratch->n = 0;
	ret = s->ops->walk_key(s->ctx, m->domain, last, s->scratch);
	if (ret < 0) {
		s->stats.walk_errors++;
	} else {
		for (i = 0; i < s->scratch->n && i < XD_PATHS_MAX; i++) {
			xd_localize(s, &s->scratch->p[i]);
			if (s->scratch->p[i].len)
				xd_extend(s, m->domain, &m->path, &s->scratch->p[i]);
		}
	}
	/* the requests queued ahead of it, when this node masters the key */
	xd_soft_steps(s, m);
}

int xd_deliver(struct xd_state *s, uint32_t from, const void *buf, size_t len)
{
	static struct xd_msg m;
	int ret = xd_decode(&m, buf, len);

	if (ret < 0)
		return ret;
	/* CPG names the sender; a message that claims another is not ours */
	if (m.sender != from)
		return -EPROTO;
	switch (m.kind) {
	case XD_MSG_PROBE:
		xd_on_probe(s, &m);
		break;
	case XD_MSG_CONFIRM:
		if (m.round_node != from)
			return -EPROTO;
		xd_on_confirm(s, &m);
		break;
	case XD_MSG_ACK:
		xd_on_ack(s, &m);
		break;
	default:
		/* the cluster's view: not the protocol's */
		break;
	}
	return 0;
}

void xd_confchg(struct xd_state *s, const uint32_t *members, unsigned int n,
		const uint32_t *left, unsigned int nleft)
{
	unsigned int i, j, k;

	if (n > XD_MEMBERS_MAX)
		n = XD_MEMBERS_MAX;
	if (n)
		memcpy(s->members, members, n * sizeof(*members));
	s->nmembers = n;
	s->in_group = xd_member(s, s->node);
	for (i = 0; i < s->nrounds; i++) {
		struct xd_round *r = &s->rounds[i];

		if (r->state != XD_ROUND_PENDING)
			continue;
		for (j = 0; j < r->nnodes; j++) {
			bool gone = !xd_member(s, r->nodes[j]);

			for (k = 0; k < nleft && !gone; k++)
				gone = left[k] == r->nodes[j];
			if (gone) {
				xd_round_abort(s, r, XD_ABORT_LEFT);
				break;
			}
		}
	}
	/* a round aborted, or a member new: probe every wait again */
	for (i = 0; i < s->nwaits; i++)
		s->waits[i].probed = false;
}

/* --- this node's waits ----------------------------------------------------- */

/* Whether the wait @gen of @owner ended before it was heard of */
static bool xd_ended(const struct xd_state *s, uint64_t owner, uint64_t gen)
{
	unsigned int i, n = s->nended < XD_ENDED_KEPT ? s->nended : XD_ENDED_KEPT;

	for (i = 0; i < n; i++)
		if (s->ended[i].owner == owner && s->ended[i].gen == gen)
			return true;
	return false;
}

int xd_wait_start(struct xd_state *s, const char *domain,
		  const struct xd_vertex *v, uint32_t delay_ms, uint64_t now_ms)
{
	uint64_t rt = s->now_ns(), age_ms = 0;
	struct xd_wait *w;
	unsigned int i;

	if (xd_ended(s, v->owner, v->gen))
		return 0;
	/* a new wait of the owner replaces its last one, not an older one */
	for (i = 0; i < s->nwaits; i++)
		if (s->waits[i].v.owner == v->owner)
			break;
	if (i < s->nwaits && s->waits[i].v.gen >= v->gen)
		return 0;
	if (i == s->nwaits) {
		if (s->nwaits == XD_WAITS_MAX)
			return -ENOSPC;
		s->nwaits++;
	}
	w = &s->waits[i];
	memset(w, 0, sizeof(*w));
	w->v = *v;
	w->v.node = s->node;
	w->v.boot = s->boot;
	snprintf(w->domain, sizeof(w->domain), "%s", domain);
	/* the probe delay runs from the wait's start, not from its news */
	if (v->start_ns && v->start_ns < rt)
		age_ms = (rt - v->start_ns) / 1000000;
	w->since_ms = age_ms < now_ms ? now_ms - age_ms : 0;
	w->delay_ms = delay_ms < XD_PROBE_DELAY_MIN_MS ? XD_PROBE_DELAY_MIN_MS : delay_ms;
	return 0;
}

void xd_wait_end(struct xd_state *s, uint64_t owner, uint64_t gen)
{
	unsigned int i;

	for (i = 0; i < s->nwaits; i++) {
		if (s->waits[i].v.owner == owner && s->waits[i].v.gen == gen) {
			s->waits[i] = s->waits[--s->nwaits];
			return;
		}
	}
	/* not heard of yet: the registration's replay may still bring it */
	i = s->nended++ % XD_ENDED_KEPT;
	s->ended[i].owner = owner;
	s->ended[i].gen = gen;
}

/* Probe from @w; -ESTALE: the kernel says that wait is over */
static int xd_probe(struct xd_state *s, struct xd_wait *w)
{
	unsigned int i;
	int ret;

	s->scratch->n = 0;
	ret = s->ops->walk_owner(s->ctx, w->domain, w->v.owner, w->v.gen, s->scratch);
	if (ret < 0) {
		if (ret != -ESTALE && !s->stats.walk_errors++)
			xd_log(s, 0, "the kernel's walk from a wait failed: %s (no probe)",
			       strerror(-ret));
		return ret;
	}
	s->stats.probes_started++;
	for (i = 0; i < s->scratch->n && i < XD_PATHS_MAX; i++) {
		struct xd_path *p = &s->scratch->p[i];

		xd_localize(s, p);
		if (!p->len || !xd_same_wait(&p->v[0], &w->v) ||
		    !(p->v[p->len - 1].flags & XD_V_CLUSTER_WAIT))
			continue;
		s->stats.probes_sent++;
		xd_send_path(s, XD_MSG_PROBE, w->domain, p, 0);
	}
	return 0;
}

uint32_t xd_tick(struct xd_state *s, uint64_t now_ms)
{
	uint64_t next = UINT32_MAX;
	unsigned int i;

	for (i = 0; i < s->nwaits; i++) {
		struct xd_wait *w = &s->waits[i];
		uint64_t due = w->since_ms + w->delay_ms;

		if (w->probed)
			continue;
		if (due > now_ms) {
			if (due - now_ms < next)
				next = due - now_ms;
			continue;
		}
		/* out of the group nothing can be sent: a confchg will ask */
		if (!s->in_group)
			continue;
		w->probed = true;
		/* a wait whose end was never heard of (replayed after it) */
		if (xd_probe(s, w) == -ESTALE)
			s->waits[i--] = s->waits[--s->nwaits];
	}
	return (uint32_t)next;
}

static int xd_order_cmp(const void *a, const void *b)
{
	const struct xd_round *x = *(const struct xd_round *const *)a;
	const struct xd_round *y = *(const struct xd_round *const *)b;

	return x->order < y->order ? -1 : x->order > y->order;
}

unsigned int xd_history(const struct xd_state *s, const struct xd_round **out,
			unsigned int max)
{
	static const struct xd_round *all[XD_ROUNDS_CAP];
	unsigned int i, skip;

	for (i = 0; i < s->nrounds; i++)
		all[i] = &s->rounds[i];
	qsort(all, s->nrounds, sizeof(all[0]), xd_order_cmp);
	/* the latest @max, oldest first */
	skip = s->nrounds > max ? s->nrounds - max : 0;
	for (i = skip; i < s->nrounds; i++)
		out[i - skip] = all[i];
	return s->nrounds - skip;
}

/* --- the wire ---------------------------------------------------------------- */

static void put16(unsigned char *p, uint16_t v)
{
	v = htole16(v);
	memcpy(p, &v, 2);
}

static void put32(unsigned char *p, uint32_t v)
{
	v = htole32(v);
	memcpy(p, &v, 4);
}

static void put64(unsigned char *p, uint64_t v)
{
	v = htole64(v);
	memcpy(p, &v, 8);
}

static uint16_t get16(const unsigned char *p)
{
	uint16_t v;

	memcpy(&v, p, 2);
	return le16toh(v);
}

static uint32_t get32(const unsigned char *p)
{
	uint32_t v;

	memcpy(&v, p, 4);
	return le32toh(v);
}

static uint64_t get64(const unsigned char *p)
{
	uint64_t v;

	memcpy(&v, p, 8);
	return le64toh(v);
}

void xd_msg_init(struct xd_msg *m, uint32_t kind, uint32_t sender,
		 uint32_t round_node, uint64_t round_seq)
{
	memset(m, 0, offsetof(struct xd_msg, path));
	m->kind = kind;
	m->sender = sender;
	m->round_node = round_node;
	m->round_seq = round_seq;
	m->path.len = 0;
}

size_t xd_encode(const struct xd_msg *m, void *buf)
{
	unsigned char *b = buf;
	unsigned int i, n = m->kind == XD_MSG_ACK || m->kind == XD_MSG_VIEW_REQ ? 0 :
			    m->path.len;

	memset(b, 0, XD_HDR_SIZE + n * XD_VERTEX_SIZE);
	put32(b + 0, XD_MAGIC);
	put16(b + 4, XD_VERSION);
	put16(b + 6, (uint16_t)m->kind);
	put32(b + 8, m->sender);
	put32(b + 12, n);
	put64(b + 16, m->round_seq);
	put32(b + 24, m->round_node);
	put32(b + 28, m->live);
	memcpy(b + 32, m->domain, strnlen(m->domain, XD_NAME_LEN - 1));
	for (i = 0; i < n; i++) {
		const struct xd_vertex *v = &m->path.v[i];
		unsigned char *p = b + XD_HDR_SIZE + i * XD_VERTEX_SIZE;

		put64(p + 0, v->boot);
		put64(p + 8, v->owner);
		put64(p + 16, v->gen);
		put64(p + 24, v->hold_gen);
		put64(p + 32, v->start_ns);
		put64(p + 40, v->key_id);
		put32(p + 48, v->key_rank);
		put32(p + 52, v->mode);
		put32(p + 56, v->node);
		put32(p + 60, v->pid);
		put32(p + 64, v->lkid);
		put32(p + 68, v->flags);
		put32(p + 72, v->q_master);
		/* 76..79 reserved, zero */
		memcpy(p + 80, v->comm, strnlen(v->comm, XD_COMM_LEN - 1));
		put64(p + 96, v->q_ts);
		put64(p + 104, v->q_prev_ts);
		/* 112..127 reserved, zero */
	}
	return XD_HDR_SIZE + n * XD_VERTEX_SIZE;
}

int xd_decode(struct xd_msg *m, const void *buf, size_t len)
{
	const unsigned char *b = buf;
	unsigned int i, n;

	if (len < XD_HDR_SIZE || get32(b) != XD_MAGIC || get16(b + 4) != XD_VERSION)
		return -EPROTO;
	memset(m, 0, offsetof(struct xd_msg, path));
	m->kind = get16(b + 6);
	m->sender = get32(b + 8);
	n = get32(b + 12);
	m->round_seq = get64(b + 16);
	m->round_node = get32(b + 24);
	m->live = get32(b + 28);
	if (m->kind < XD_MSG_PROBE || m->kind >= __XD_MSG_MAX || !m->sender ||
	    n > XD_PATH_MAX || len != XD_HDR_SIZE + (size_t)n * XD_VERTEX_SIZE ||
	    ((m->kind == XD_MSG_PROBE || m->kind == XD_MSG_CONFIRM) && !n) ||
	    ((m->kind == XD_MSG_ACK || m->kind == XD_MSG_VIEW_REQ) && n) || m->live > 1 ||
	    memchr(b + 32, 0, XD_NAME_LEN) == NULL)
		return -EPROTO;
	memcpy(m->domain, b + 32, XD_NAME_LEN);
	m->path.len = n;
	for (i = 0; i < n; i++) {
		struct xd_vertex *v = &m->path.v[i];
		const unsigned char *p = b + XD_HDR_SIZE + i * XD_VERTEX_SIZE;

		v->boot = get64(p + 0);
		v->owner = get64(p + 8);
		v->gen = get64(p + 16);
		v->hold_gen = get64(p + 24);
		v->start_ns = get64(p + 32);
		v->key_id = get64(p + 40);
		v->key_rank = get32(p + 48);
		v->mode = get32(p + 52);
		v->node = get32(p + 56);
		v->pid = get32(p + 60);
		v->lkid = get32(p + 64);
		v->flags = get32(p + 68);
		v->q_master = get32(p + 72);
		memcpy(v->comm, p + 80, XD_COMM_LEN);
		v->q_ts = get64(p + 96);
		v->q_prev_ts = get64(p + 104);
		v->comm[XD_COMM_LEN - 1] = 0;
		if (!v->node)
			return -EPROTO;
	}
	return 0;
}
