// SPDX-License-Identifier: GPL-2.0
/*
 * Host-side unit tests of ordlock-xdetectd's protocol (tools/xdetectd/
 * proto.c, linked in by tests/Makefile): a simulated cluster of daemons
 * over a fake kernel per node (owners that hold keys and wait for keys)
 * and a fake CPG (one log that every node delivers in order, as the model
 * tests/model/xdetect.pml has it): a 2-node cycle, a 3-node ring and a
 * cycle with a local edge each get exactly one victim, the youngest; no
 * victim without a cycle, for a wait that ended (a new generation), for
 * a round whose node left; duplicate rounds fail one wait once; the
 * victim rule's order; the wire's layout and its rejections. Soft edges
 * across nodes: a fake DLM queue per key on its master node; a cycle
 * through a request queued ahead gets one victim, none when the master
 * does not show its queue, and none when the queue's order changed
 * before the master's ACK.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proto.h"
#include "tap.h"

#define NODES	4
#define OWNERS	8
#define LOGMAX	256

/* --- the fake kernels: owners on nodes, each holds one key, waits for one */
struct fowner {
	bool used;
	uint32_t node;
	uint64_t id;
	uint64_t holds;		/* key id held (0: none) */
	uint64_t hold_gen;
	uint64_t wants;		/* key id waited for (0: not waiting) */
	uint64_t gen;		/* the current wait's generation */
	uint64_t start_ns;
	bool failed;
	int nfail;		/* fail calls that failed it */
	uint32_t mode;		/* the mode it waits in (0: exclusive) */
	uint32_t hold_mode;	/* the mode it holds in (0: exclusive) */
};

/* --- the fake DLM: the queue of each key on its master (soft edges) */
#define QMAX	8
struct fqueue {
	uint32_t master;	/* 0: no queue shown (today's daemons) */
	unsigned int n;
	struct {
		struct fowner *o;
		uint64_t gen;	/* the wait whose request it is */
		uint64_t ts;
	} e[QMAX];
};

static struct fqueue queues[8];	/* by key id */
static uint64_t qts = 5000;
/* planted: on the first CONFIRM sent, the queue's first request of this
 * key re-enters it at its tail (the edge confirmed gone) */
static uint64_t requeue_on_confirm;

static struct fowner owners[OWNERS];
static uint64_t gens = 100;
static uint64_t now_rt = 1000;

/* --- the fake CPG */
struct logmsg {
	uint32_t from;
	size_t len;
	unsigned char buf[XD_MSG_MAX];
	bool confchg;
	uint32_t left;
};

static struct logmsg logm[LOGMAX];
static unsigned int nlog;

struct node {
	struct xd_state s;
	unsigned int rd;	/* the next message to deliver */
	bool dead;
	int fails, stale;
	int calls;		/* fail calls, any outcome */
};

static struct node nodes[NODES + 1];	/* 1..NODES */
static unsigned int nnodes;
static int walk_calls_failing;

static uint64_t fake_now(void)
{
	return now_rt;
}

static struct fowner *holder_of(uint64_t key)
{
	int i;

	for (i = 0; i < OWNERS; i++)
		if (owners[i].used && owners[i].holds == key)
			return &owners[i];
	return NULL;
}

static struct fowner *owner_by(uint32_t node, uint64_t id)
{
	int i;

	for (i = 0; i < OWNERS; i++)
		if (owners[i].used && owners[i].node == node && owners[i].id == id)
			return &owners[i];
	return NULL;
}

static void vertex_of(const struct fowner *o, struct xd_vertex *v)
{
	const struct fowner *h = holder_of(o->wants);

	memset(v, 0, sizeof(*v));
	v->owner = o->id;
	v->gen = o->gen;
	v->start_ns = o->start_ns;
	v->key_id = o->wants;
	v->key_rank = 1;
	v->mode = o->mode ? o->mode : 2;
	v->pid = 1000 + (uint32_t)o->id;
	snprintf(v->comm, sizeof(v->comm), "xfer%llu", (unsigned long long)o->id);
	if (h && h->node != o->node) {
		v->flags |= XD_V_CLUSTER_WAIT;
		v->lkid = 0x100 + (uint32_t)o->id;
	}
}

/* @h's hold blocks a request in mode @mode (0: exclusive) */
static bool conflicts(const struct fowner *h, uint32_t mode)
{
	return h->hold_mode != 1 || mode != 1;
}

/* From @o (waiting, on @node), through local edges to a wait in the DLM */
static int walk_from(uint32_t node, struct fowner *o, uint64_t hold_gen,
		     struct xd_paths *out)
{
	struct xd_path *p = &out->p[out->n];
	unsigned int i;

	p->len = 0;
	for (;;) {
		struct fowner *h;

		if (!o->wants || o->failed)
			return 0;	/* ends at an owner that does not wait */
		for (i = 0; i < p->len; i++)
			if (p->v[i].owner == o->id)
				return 0;	/* closes within the node */
		vertex_of(o, &p->v[p->len]);
		p->v[p->len].hold_gen = hold_gen;
		p->len++;
		h = holder_of(o->wants);
		if (!h)
			return 0;
		if (h->node != node) {
			out->n++;
			return 0;
		}
		hold_gen = h->hold_gen;
		o = h;
	}
}

static int k_walk_owner(void *ctx, const char *domain, uint64_t owner,
			uint64_t gen, struct xd_paths *out)
{
	struct node *nd = ctx;
	struct fowner *o = owner_by(nd->s.node, owner);

	(void)domain;
	if (walk_calls_failing)
		return -EIO;
	if (!o || !o->wants || o->gen != gen || o->failed)
		return -ESTALE;
	out->n = 0;
	return walk_from(nd->s.node, o, 0, out);
}

static int k_walk_key(void *ctx, const char *domain, const struct xd_vertex *w,
		      struct xd_paths *out)
{
	struct node *nd = ctx;
	struct fowner *h = holder_of(w->key_id);

	(void)domain;
	out->n = 0;
	if (!h || h->node != nd->s.node || !conflicts(h, w->mode))
		return 0;
	return walk_from(nd->s.node, h, h->hold_gen, out);
}

static int k_check(void *ctx, const char *domain, const struct xd_check *c,
		   unsigned int n)
{
	struct node *nd = ctx;
	unsigned int i;

	(void)domain;
	for (i = 0; i < n; i++) {
		struct fowner *o = owner_by(nd->s.node, c[i].owner);

		if (!o || !o->wants || o->failed || o->gen != c[i].gen)
			return 0;
		/* a soft edge: queued ahead, checked by the key's master */
		if (!c[i].soft &&
		    (o->holds != c[i].key_id || o->hold_gen != c[i].hold_gen))
			return 0;
	}
	return 1;
}

static int k_fail(void *ctx, const char *domain, const struct xd_vertex *cycle,
		  unsigned int n)
{
	struct node *nd = ctx;
	struct fowner *o = owner_by(nd->s.node, cycle[0].owner);

	(void)domain;
	(void)n;
	nd->calls++;
	if (!o || !o->wants || o->failed || o->gen != cycle[0].gen) {
		nd->stale++;
		return -ESTALE;
	}
	o->failed = true;
	o->nfail++;
	nd->fails++;
	return 0;
}

static int k_dlm_queue(void *ctx, const char *domain, uint32_t rank, uint64_t id,
		       struct xd_qent *out, unsigned int max)
{
	struct node *nd = ctx;
	struct fqueue *q = id < 8 ? &queues[id] : NULL;
	unsigned int i, n = 0;

	(void)domain;
	(void)rank;
	if (!q || !q->master || q->master != nd->s.node)
		return -ENOENT;
	for (i = 0; i < q->n && n < max; i++) {
		const struct fowner *o = q->e[i].o;

		/* a request leaves the queue when its wait ends */
		if (o->failed || o->wants != id || o->gen != q->e[i].gen)
			continue;
		out[n].node = o->node;
		out[n].lkid = 0x100 + (uint32_t)o->id;
		out[n].mode = o->mode ? o->mode : 2;
		out[n].ts = q->e[i].ts;
		n++;
	}
	return (int)n;
}

/* the queue's first request of key @id leaves it and comes back last */
static void requeue_first(uint64_t id)
{
	struct fqueue *q = &queues[id];
	unsigned int i;

	if (q->n < 2)
		return;
	q->e[q->n] = q->e[0];
	q->e[q->n].ts = ++qts;
	for (i = 0; i < q->n; i++)
		q->e[i] = q->e[i + 1];
}

static int c_send(void *ctx, const void *buf, size_t len)
{
	struct node *nd = ctx;

	if (nd->dead)
		return -ENOTCONN;
	/* the kind, little-endian at byte 6 */
	if (requeue_on_confirm && ((const unsigned char *)buf)[6] == XD_MSG_CONFIRM) {
		requeue_first(requeue_on_confirm);
		requeue_on_confirm = 0;
	}
	if (nlog == LOGMAX)
		return -ENOBUFS;
	logm[nlog].from = nd->s.node;
	logm[nlog].len = len;
	logm[nlog].confchg = false;
	memcpy(logm[nlog].buf, buf, len);
	nlog++;
	return 0;
}

static const struct xd_ops ops = {
	.walk_owner = k_walk_owner,
	.walk_key = k_walk_key,
	.dlm_queue = k_dlm_queue,
	.check = k_check,
	.fail = k_fail,
	.send = c_send,
};

static void world(unsigned int n)
{
	uint32_t members[NODES];
	unsigned int i;

	memset(owners, 0, sizeof(owners));
	memset(queues, 0, sizeof(queues));
	requeue_on_confirm = 0;
	for (i = 1; i <= nnodes; i++)
		xd_free(&nodes[i].s);
	memset(nodes, 0, sizeof(nodes));
	nlog = 0;
	nnodes = n;
	walk_calls_failing = 0;
	for (i = 1; i <= n; i++) {
		if (xd_init(&nodes[i].s, i, 0xb000 + i, &ops, &nodes[i]))
			bail_out("xd_init");
		nodes[i].s.now_ns = fake_now;
		members[i - 1] = i;
	}
	for (i = 1; i <= n; i++)
		xd_confchg(&nodes[i].s, members, n, NULL, 0);
}

static struct fowner *owner(int idx, uint32_t node, uint64_t holds)
{
	struct fowner *o = &owners[idx];

	o->used = true;
	o->node = node;
	o->id = 10 + idx;
	o->holds = holds;
	o->hold_gen = ++gens;
	return o;
}

/* @o starts waiting for @key (a new generation); its daemon hears of it */
static void wait_for(struct fowner *o, uint64_t key)
{
	struct xd_vertex v;

	o->wants = key;
	o->gen = ++gens;
	o->start_ns = ++now_rt;
	vertex_of(o, &v);
	/* a wait in the DLM: its request joins the key's queue, last */
	if ((v.flags & XD_V_CLUSTER_WAIT) && key < 8 && queues[key].n < QMAX) {
		struct fqueue *q = &queues[key];

		q->e[q->n].o = o;
		q->e[q->n].gen = o->gen;
		q->e[q->n].ts = ++qts;
		q->n++;
	}
	/* the kernel's event may come before the request is made: no lkid */
	v.lkid = 0;
	xd_wait_start(&nodes[o->node].s, "wh", &v, 100, 0);
}

static void wait_end(struct fowner *o)
{
	xd_wait_end(&nodes[o->node].s, o->id, o->gen);
	o->wants = 0;
}

/* every live node delivers one message per step until none is left */
static void run(void)
{
	bool any;
	unsigned int i;

	do {
		any = false;
		for (i = 1; i <= nnodes; i++) {
			struct node *nd = &nodes[i];
			struct logmsg *m;

			if (nd->dead || nd->rd >= nlog)
				continue;
			m = &logm[nd->rd++];
			any = true;
			if (m->confchg) {
				uint32_t mem[NODES];
				unsigned int k, nm = 0;

				for (k = 1; k <= nnodes; k++)
					if (!nodes[k].dead)
						mem[nm++] = k;
				xd_confchg(&nd->s, mem, nm, &m->left, 1);
			} else if (xd_deliver(&nd->s, m->from, m->buf, m->len)) {
				bail_out("a message of the log did not parse");
			}
		}
	} while (any);
}

static void tick_all(uint64_t now_ms)
{
	unsigned int i;

	for (i = 1; i <= nnodes; i++)
		if (!nodes[i].dead)
			xd_tick(&nodes[i].s, now_ms);
}

static int total_fails(void)
{
	unsigned int i;
	int n = 0;

	for (i = 1; i <= nnodes; i++)
		n += nodes[i].fails;
	return n;
}

/* two nodes: A (node 1) holds 1 and waits for 2, then B (node 2) holds 2
 * and waits for 1: a cycle, B's wait the youngest */
static void two_cycle(struct fowner **a, struct fowner **b)
{
	world(2);
	*a = owner(0, 1, 1);
	*b = owner(1, 2, 2);
	wait_for(*a, 2);
	wait_for(*b, 1);
}

static void test_two_nodes(void)
{
	struct fowner *a, *b;

	two_cycle(&a, &b);	/* B closes the cycle: the youngest */
	is_int(xd_tick(&nodes[1].s, 50), 50, "a wait is probed after its delay, not before");
	is_int(nlog, 0, "nothing sent before the probe delay");
	tick_all(100);
	run();
	is_int(total_fails(), 1, "2-node cycle: exactly one victim");
	ok(b->failed && !a->failed, "2-node cycle: the victim is the youngest wait (node 2)");
	is_int(nodes[1].calls, 0, "only the victim's node asks its kernel to fail a wait");
	is_int(nodes[1].s.stats.decided, nodes[2].s.stats.decided,
	       "every node decided the same rounds");
	ok(nodes[1].s.stats.decided >= 1, "a round was decided");
	is_int(nodes[2].stale, (int)nodes[2].s.stats.decided - 1,
	       "rounds of the same cycle beyond the first find the wait gone (ESTALE)");
}

/* three nodes, owner i on node i + 1 holds key i + 1 */
static void three(struct fowner **o)
{
	int i;

	world(3);
	for (i = 0; i < 3; i++)
		o[i] = owner(i, i + 1, i + 1);
}

static void test_ring(void)
{
	struct fowner *o[3];

	three(o);
	wait_for(o[1], 3);
	wait_for(o[0], 2);
	wait_for(o[2], 1);	/* youngest */
	tick_all(100);
	run();
	is_int(total_fails(), 1, "3-node ring: exactly one victim");
	ok(o[2]->failed, "3-node ring: the youngest (node 3) is the victim");
	ok(!nodes[1].calls && !nodes[2].calls, "3-node ring: the other nodes fail nothing");
	ok(nodes[1].s.stats.probes_sent > 0 && nodes[2].s.stats.probes_sent > 0 &&
	   nodes[3].s.stats.probes_sent > 0, "the probe crossed every node");
}

static void test_mixed(void)
{
	struct fowner *a, *b, *c;
	const struct xd_round *h[4];
	unsigned int n;

	/* node 1: A holds 1 and waits for 2 (held by B, node 1: a local edge);
	 * B waits for 3 in the DLM, held by C on node 2; C waits for 1 */
	world(2);
	a = owner(0, 1, 1);
	b = owner(1, 1, 2);
	c = owner(2, 2, 3);
	wait_for(b, 3);
	wait_for(c, 1);
	wait_for(a, 2);		/* a local wait closes the cycle */
	tick_all(100);
	run();
	is_int(total_fails(), 1, "two owners on one node, one on another: one victim");
	ok(a->failed, "the local wait that closed it is the victim");
	n = xd_history(&nodes[2].s, h, 4);
	ok(n >= 1 && h[0]->state == XD_ROUND_DECIDED && h[0]->path.len == 3,
	   "the history has the decided round of 3 vertices");
	ok(n >= 1 && h[0]->path.v[h[0]->victim].owner == a->id &&
	   h[0]->path.v[h[0]->victim].node == 1, "the history names the victim by node and owner");
}

static void test_no_cycle(void)
{
	struct fowner *o[3];

	/* ascending order: 1 waits for 2's key, 2 for 3's, 3 waits for none */
	three(o);
	wait_for(o[0], 2);
	wait_for(o[1], 3);
	tick_all(100);
	run();
	is_int(total_fails(), 0, "a chain without a cycle: no victim");
	is_int(nodes[1].s.stats.rounds, 0, "a chain without a cycle: no round");
	ok(nodes[1].s.stats.probes_sent >= 1, "the chain was probed");
}

static void test_stale_generation(void)
{
	struct fowner *a, *b;
	unsigned int i, upto;

	two_cycle(&a, &b);
	tick_all(100);
	/* deliver up to the first CONFIRM, then A's wait times out and A
	 * waits again (a new generation) before node 1 checks */
	for (;;) {
		bool confirm = false;

		for (i = 0; i < nlog; i++)
			confirm = confirm || logm[i].buf[6] == XD_MSG_CONFIRM;
		if (confirm)
			break;
		upto = nlog;
		for (i = 1; i <= nnodes; i++) {
			while (nodes[i].rd < upto) {
				struct logmsg *m = &logm[nodes[i].rd++];

				xd_deliver(&nodes[i].s, m->from, m->buf, m->len);
			}
		}
		if (nlog == upto)
			bail_out("no CONFIRM");
	}
	wait_end(a);
	wait_for(a, 2);
	run();
	is_int(total_fails(), 0, "a wait that ended before its ACK: no victim");
	ok(nodes[1].s.stats.acks_dead >= 1 && nodes[1].s.stats.aborted >= 1,
	   "its node ACKed dead and the round was aborted");
	/* the new wait is a new cycle: found when probed */
	tick_all(1000);
	run();
	is_int(total_fails(), 1, "the cycle of the new generation gets its victim");
	ok(a->failed, "the new wait, now the youngest, is the victim");
}

static void test_node_left(void)
{
	struct fowner *a, *b, *c;
	unsigned int i;
	bool confirm = false;

	/* 3-node ring, node 3 dies once the CONFIRM is in the log: its
	 * leave comes before its ACK, on every node */
	world(3);
	a = owner(0, 1, 1);
	b = owner(1, 2, 2);
	c = owner(2, 3, 3);
	wait_for(a, 2);
	wait_for(b, 3);
	wait_for(c, 1);
	tick_all(100);
	while (!confirm) {
		unsigned int upto = nlog;

		for (i = 1; i <= nnodes; i++) {
			while (nodes[i].rd < upto && !confirm) {
				struct logmsg *m = &logm[nodes[i].rd];

				if (m->buf[6] == XD_MSG_CONFIRM) {
					confirm = true;
					break;
				}
				nodes[i].rd++;
				xd_deliver(&nodes[i].s, m->from, m->buf, m->len);
			}
		}
		if (!confirm && nlog == upto)
			bail_out("no CONFIRM");
	}
	nodes[3].dead = true;
	/* nodes 1 and 2 deliver the CONFIRM (ACKs go into the log after it),
	 * the confchg comes in between: put it right after the CONFIRM */
	for (i = nlog; i > nodes[1].rd + 1; i--)
		logm[i] = logm[i - 1];
	memset(&logm[nodes[1].rd + 1], 0, sizeof(logm[0]));
	logm[nodes[1].rd + 1].confchg = true;
	logm[nodes[1].rd + 1].left = 3;
	nlog++;
	run();
	is_int(total_fails(), 0, "a node that left during the round: no victim from its stale edges");
	ok(nodes[1].s.stats.aborted >= 1 && nodes[2].s.stats.aborted >= 1,
	   "the round was aborted on every live node");
	{
		const struct xd_round *h[16];
		unsigned int k, nh, pending = 0;

		for (i = 1; i <= 2; i++) {
			nh = xd_history(&nodes[i].s, h, 16);
			for (k = 0; k < nh; k++)
				pending += h[k]->state == XD_ROUND_PENDING;
		}
		is_int(pending, 0, "no round is left pending on a live node");
	}
	/* its keys are freed by the DLM's recovery: the others go on */
	c->used = false;
	is_int(total_fails(), 0, "still no victim after the recovery");
	(void)a;
	(void)b;
	/* the re-probe after the confchg finds no cycle any more */
	tick_all(1000);
	run();
	is_int(total_fails(), 0, "the re-probes after the membership change find no cycle");
}

static void test_duplicate_rounds(void)
{
	struct xd_msg m;
	unsigned char buf[XD_MSG_MAX];
	struct fowner *a, *b;
	size_t len;
	int i;

	two_cycle(&a, &b);
	memset(&m, 0, sizeof(m));
	m.kind = XD_MSG_CONFIRM;
	strcpy(m.domain, "wh");
	m.path.len = 2;
	vertex_of(a, &m.path.v[0]);
	vertex_of(b, &m.path.v[1]);
	m.path.v[0].node = 1;
	m.path.v[0].boot = 0xb001;
	m.path.v[0].hold_gen = a->hold_gen;
	m.path.v[1].node = 2;
	m.path.v[1].boot = 0xb002;
	m.path.v[1].hold_gen = b->hold_gen;
	/* two initiators (two rounds of one cycle), and one CONFIRM twice */
	for (i = 0; i < 3; i++) {
		m.sender = m.round_node = i == 2 ? 2 : 1;
		m.round_seq = 7;
		len = xd_encode(&m, buf);
		c_send(&nodes[m.sender], buf, len);
	}
	run();
	is_int(nodes[1].s.stats.rounds, 2, "a CONFIRM delivered twice is one round; two initiators two");
	is_int(nodes[1].s.stats.decided, 2, "both rounds of the cycle are decided");
	is_int(total_fails(), 1, "both choose the same victim, failed once");
	is_int(nodes[2].stale, 1, "the second round's fail finds the wait gone (ESTALE)");
	ok(b->failed && b->nfail == 1, "the victim is the youngest, failed once");
	/* an initiator does not confirm a cycle it saw decided */
	b->failed = false;
	nodes[2].fails = 0;
	{
		struct xd_msg p = m;
		uint64_t before = nodes[1].s.stats.rounds;

		p.kind = XD_MSG_PROBE;
		p.sender = 1;
		p.path.len = 1;
		p.path.v[0] = m.path.v[1];	/* B's probe, coming back to B on node 2 */
		p.path.v[0].hold_gen = 0;
		/* B's wait on node 2 is [B]; node 1 extends it with A; node 2 closes */
		p.sender = 2;
		len = xd_encode(&p, buf);
		c_send(&nodes[2], buf, len);
		run();
		is_int(nodes[1].s.stats.rounds - before, 0,
		       "the same cycle, already decided here: no new round");
	}
}

static void test_stale_probe(void)
{
	unsigned char buf[XD_MSG_MAX];
	struct fowner *a, *b;
	struct xd_msg m;
	size_t len;

	/* a probe of A's last wait comes back after A waits again: no round */
	two_cycle(&a, &b);
	memset(&m, 0, sizeof(m));
	m.kind = XD_MSG_PROBE;
	m.sender = 1;
	strcpy(m.domain, "wh");
	m.path.len = 1;
	vertex_of(a, &m.path.v[0]);
	m.path.v[0].node = 1;
	m.path.v[0].boot = 0xb001;
	m.path.v[0].gen = a->gen - 5;	/* an earlier wait of A */
	len = xd_encode(&m, buf);
	c_send(&nodes[1], buf, len);
	run();
	is_int(nodes[1].s.stats.rounds, 0, "a probe of a wait that ended closes no round");
	ok(nodes[1].s.stats.probes_dropped >= 1, "... it is dropped where it comes back");

	/* a CONFIRM with a vertex of node 1's module before a reload (another
	 * boot id, the same owner id and generation): node 1 ACKs dead */
	m.kind = XD_MSG_CONFIRM;
	m.sender = m.round_node = 2;
	m.round_seq = 1;
	m.path.len = 2;
	m.path.v[0].gen = a->gen;
	m.path.v[0].boot = 0xdead;
	m.path.v[0].hold_gen = a->hold_gen;
	vertex_of(b, &m.path.v[1]);
	m.path.v[1].node = 2;
	m.path.v[1].boot = 0xb002;
	m.path.v[1].hold_gen = b->hold_gen;
	len = xd_encode(&m, buf);
	c_send(&nodes[2], buf, len);
	run();
	ok(nodes[1].s.stats.acks_dead == 1 && total_fails() == 0,
	   "a vertex of another boot of the module is dead: no victim");
}

static void test_victim_rule(void)
{
	struct xd_path p;

	memset(&p, 0, sizeof(p));
	p.len = 3;
	p.v[0].start_ns = 5; p.v[0].node = 1; p.v[0].owner = 9;
	p.v[1].start_ns = 7; p.v[1].node = 1; p.v[1].owner = 1;
	p.v[2].start_ns = 6; p.v[2].node = 3; p.v[2].owner = 1;
	is_int(xd_victim(&p), 1, "victim: the latest start");
	p.v[2].start_ns = 7;
	is_int(xd_victim(&p), 2, "victim: equal starts, the greater node id");
	p.v[2].node = 1;
	p.v[2].owner = 2;
	is_int(xd_victim(&p), 2, "victim: equal starts and nodes, the greater owner id");
	p.v[2].owner = 0;
	is_int(xd_victim(&p), 1, "victim: ... and not a smaller one");
}

static void test_wire(void)
{
	static struct xd_msg m, d;
	static unsigned char buf[XD_MSG_MAX + 8];
	size_t len;

	memset(&m, 0, sizeof(m));
	m.kind = XD_MSG_PROBE;
	m.sender = 3;
	strcpy(m.domain, "warehouse");
	m.path.len = 2;
	m.path.v[0].node = 3;
	m.path.v[0].boot = 0x1122334455667788ULL;
	m.path.v[0].owner = 42;
	m.path.v[0].gen = 7;
	m.path.v[0].start_ns = 123456789012345ULL;
	m.path.v[0].key_id = 0xfeedULL;
	m.path.v[0].key_rank = 4;
	m.path.v[0].pid = 812;
	m.path.v[0].flags = XD_V_CLUSTER_WAIT | XD_V_SOFT;
	m.path.v[0].lkid = 0x1000a;
	m.path.v[0].q_master = 2;
	m.path.v[0].q_ts = 987654321ULL;
	m.path.v[0].q_prev_ts = 987654000ULL;
	strcpy(m.path.v[0].comm, "transfer");
	m.path.v[1].node = 1;
	len = xd_encode(&m, buf);
	is_int(len, XD_HDR_SIZE + 2 * XD_VERTEX_SIZE, "a probe of 2 vertices is 64 + 2 * 128 bytes");
	ok(buf[0] == 'O' && buf[1] == 'L' && buf[2] == 'X' && buf[3] == 'D' && buf[4] == 2,
	   "the header starts with the magic and the version, little-endian");
	is_int(xd_decode(&d, buf, len), 0, "it decodes");
	ok(d.kind == m.kind && d.sender == 3 && !strcmp(d.domain, "warehouse") &&
	   d.path.len == 2 && !memcmp(&d.path.v[0], &m.path.v[0], sizeof(d.path.v[0])),
	   "every field comes back");
	is_int(xd_decode(&d, buf, len - 1), -EPROTO, "a short message: EPROTO");
	is_int(xd_decode(&d, buf, len + 8), -EPROTO, "a long message: EPROTO");
	buf[4] = 1;
	is_int(xd_decode(&d, buf, len), -EPROTO, "another version (1, no soft edges): EPROTO");
	buf[4] = 1;
	buf[6] = 9;
	is_int(xd_decode(&d, buf, len), -EPROTO, "an unknown kind: EPROTO");
	buf[6] = XD_MSG_ACK;
	is_int(xd_decode(&d, buf, len), -EPROTO, "an ACK with a path: EPROTO");
	buf[6] = XD_MSG_PROBE;
	memset(buf + 32, 'x', 32);
	is_int(xd_decode(&d, buf, len), -EPROTO, "a domain without its NUL: EPROTO");
	m.path.v[1].node = 0;
	len = xd_encode(&m, buf);
	is_int(xd_decode(&d, buf, len), -EPROTO, "a vertex without a node: EPROTO");
	/* a message that claims another sender than CPG's is not delivered */
	world(2);
	m.path.v[1].node = 1;
	len = xd_encode(&m, buf);
	is_int(xd_deliver(&nodes[1].s, 2, buf, len), -EPROTO,
	       "a sender other than CPG's: EPROTO");
}

static void test_out_of_group(void)
{
	struct fowner *a, *b;
	uint32_t mem[1] = { 2 };

	two_cycle(&a, &b);
	/* node 1 is not in the group: it sends nothing, probes later */
	xd_confchg(&nodes[1].s, mem, 1, NULL, 0);
	xd_tick(&nodes[1].s, 100);
	is_int(nodes[1].s.stats.probes_started, 0, "out of the group: no probe");
	walk_calls_failing = 1;
	xd_tick(&nodes[2].s, 100);
	is_int(nlog, 0, "a failing kernel walk sends nothing");
	walk_calls_failing = 0;
	{
		uint32_t all[2] = { 1, 2 };

		xd_confchg(&nodes[1].s, all, 2, NULL, 0);
		xd_confchg(&nodes[2].s, all, 2, NULL, 0);
	}
	tick_all(200);
	run();
	is_int(total_fails(), 1, "back in the group, every wait is probed again: one victim");
}

/*
 * A daemon that registers after the waits began hears them from the
 * kernel's replay (XD_HELLO): late, maybe twice, maybe after their end.
 * The generation decides, and the probe delay runs from the wait's start.
 */
static void test_replay(void)
{
	struct fowner *a, *b;
	struct xd_vertex v;
	uint64_t gen_old;

	/* the cycle's waits began 5 s before the daemons heard of them */
	world(2);
	a = owner(0, 1, 1);
	b = owner(1, 2, 2);
	a->wants = 2;
	a->gen = ++gens;
	b->wants = 1;
	b->gen = ++gens;
	now_rt = 10000000000ULL;
	a->start_ns = now_rt - 5000000000ULL;
	b->start_ns = now_rt - 4000000000ULL;
	vertex_of(a, &v);
	xd_wait_start(&nodes[1].s, "wh", &v, 100, 20000);
	vertex_of(b, &v);
	xd_wait_start(&nodes[2].s, "wh", &v, 100, 20000);
	is_int(xd_tick(&nodes[1].s, 20000), UINT32_MAX,
	       "a replayed wait older than its delay is probed at once");
	ok(nodes[1].s.stats.probes_started == 1, "replayed wait: probed");
	/* the same wait again (its event and the replay both): no new probe */
	vertex_of(a, &v);
	xd_wait_start(&nodes[1].s, "wh", &v, 100, 20000);
	xd_tick(&nodes[1].s, 20000);
	is_int(nodes[1].s.stats.probes_started, 1, "a wait heard twice is probed once");
	xd_tick(&nodes[2].s, 20000);
	run();
	is_int(total_fails(), 1, "waits heard only from the replay: one victim");
	ok(b->failed && !a->failed, "replay: the victim is the youngest wait");

	/* a replayed WAIT after the wait's WAIT_END: nothing followed */
	world(2);
	a = owner(0, 1, 1);
	b = owner(1, 2, 2);
	a->wants = 2;
	a->gen = ++gens;
	a->start_ns = ++now_rt;
	vertex_of(a, &v);
	xd_wait_end(&nodes[1].s, a->id, a->gen);
	xd_wait_start(&nodes[1].s, "wh", &v, 100, 0);
	is_int(nodes[1].s.nwaits, 0, "a WAIT after its own WAIT_END is not followed");
	/* an older wait replayed after the owner's newer one: the newer stays */
	gen_old = a->gen;
	a->gen = ++gens;
	vertex_of(a, &v);
	xd_wait_start(&nodes[1].s, "wh", &v, 100, 0);
	v.gen = gen_old - 1;
	xd_wait_start(&nodes[1].s, "wh", &v, 100, 0);
	ok(nodes[1].s.nwaits == 1 && nodes[1].s.waits[0].v.gen == a->gen,
	   "an older generation replayed late does not replace the newer wait");
	/* a wait whose end was lost: the kernel's walk says ESTALE, it is dropped */
	a->gen = ++gens;
	xd_tick(&nodes[1].s, 1000);
	is_int(nodes[1].s.nwaits, 0, "a wait the kernel calls stale is dropped");
	is_int(nlog, 0, "a stale wait sends no probe");
}

/*
 * The soft cycle on 4 nodes, key 3's master node 4: C (node 2)
 * holds 3 shared; B (node 3) asks 3 exclusive (waits in the DLM, behind
 * C's hold: hard); A (node 1) holds 1 and asks 3 shared (compatible with
 * C's hold, queued behind B's request: soft); C asks 1 (hard): A -soft->
 * B -hard-> C -hard-> A
 */
static void soft_cycle(struct fowner **a, struct fowner **b, struct fowner **c,
		       bool queue_shown)
{
	world(4);
	*a = owner(0, 1, 1);
	*b = owner(1, 3, 0);
	*c = owner(2, 2, 3);
	(*c)->hold_mode = 1;
	(*a)->mode = 1;
	queues[3].master = queue_shown ? 4 : 0;
	wait_for(*b, 3);
	wait_for(*a, 3);
	wait_for(*c, 1);	/* closes it: the youngest */
}

static void test_soft(void)
{
	struct fowner *a, *b, *c;
	const struct xd_round *h[8];
	unsigned int n, i, soft = 0;

	soft_cycle(&a, &b, &c, true);
	tick_all(100);
	run();
	is_int(total_fails(), 1, "soft edge across nodes: exactly one victim");
	ok(c->failed && !a->failed && !b->failed, "soft edge: the youngest (C, node 2) is the victim");
	ok(nodes[4].s.stats.soft_steps > 0, "the key's master made the queued-ahead step");
	n = xd_history(&nodes[4].s, h, 8);
	for (i = 0; n && i < h[n - 1]->path.len; i++)
		soft += h[n - 1]->path.v[i].q_master == 4 &&
			(h[n - 1]->path.v[i].flags & XD_V_SOFT) &&
			h[n - 1]->path.v[i].owner == b->id;
	ok(n >= 1 && h[0]->state == XD_ROUND_DECIDED && soft == 1,
	   "the round's soft vertex is B's wait, confirmed by the master (node 4)");
	is_int(nodes[4].s.stats.decided, nodes[1].s.stats.decided,
	       "the master, with no vertex, decided the same rounds");

	/* the key's master is a node of the cycle (C's, node 2): its one
	 * ACK checks C's wait and the queue */
	soft_cycle(&a, &b, &c, true);
	queues[3].master = 2;
	tick_all(100);
	run();
	is_int(total_fails(), 1, "the master one of the cycle's nodes: exactly one victim");
	ok(nodes[2].s.stats.soft_steps > 0 && nodes[4].s.stats.soft_steps == 0,
	   "... the queued-ahead step made on node 2 only");

	/* today's daemons (no queue shown): the cycle is not found */
	soft_cycle(&a, &b, &c, false);
	tick_all(100);
	run();
	is_int(total_fails(), 0, "without the master's queue: no victim (ends by timeouts)");

	/* the order changed after the step, before the master's ACK: B's
	 * request left and came back behind A's (the same waits: only the
	 * master's re-read sees it) */
	soft_cycle(&a, &b, &c, true);
	requeue_on_confirm = 3;
	tick_all(100);
	run();
	is_int(total_fails(), 0, "queue order changed before the ACK: no victim");
	ok(nodes[1].s.stats.aborted >= 1 && nodes[1].s.stats.decided == 0,
	   "the round was aborted on the master's dead ACK");

	/* a request queued ahead in a compatible mode is no edge */
	world(4);
	a = owner(0, 1, 1);
	b = owner(1, 3, 0);
	c = owner(2, 2, 3);
	c->hold_mode = 1;
	a->mode = 1;
	b->mode = 1;
	queues[3].master = 4;
	/* B shared behind D's exclusive hold of 3 on node 2 would be granted
	 * with A: no soft edge A -> B whatever the order */
	wait_for(b, 3);
	wait_for(a, 3);
	wait_for(c, 1);
	tick_all(100);
	run();
	is_int(nodes[4].s.stats.soft_steps, 0, "a compatible request ahead: no queued-ahead step");
	is_int(total_fails(), 0, "... and no victim");
}

int main(void)
{
	test_victim_rule();
	test_wire();
	test_two_nodes();
	test_ring();
	test_mixed();
	test_no_cycle();
	test_stale_generation();
	test_node_left();
	test_duplicate_rounds();
	test_stale_probe();
	test_out_of_group();
	test_replay();
	test_soft();
	world(0);
	return tap_done();
}
