/*
 * xdetect.pml -- a model of the detection of deadlocks across nodes
 * (docs/cluster.md, "Deadlocks across nodes"), checked by spin
 * (tests/unit/t_model_xdetect.sh runs it).
 *
 * Owners on NN nodes wait for each other in a ring: owner o holds key o
 * and waits for key o + 1 (mod NO), held by owner o + 1. The ring is a 2-
 * node cycle (NN 2), a 3-node ring (NN 3) or, with MIXED, two owners on
 * node 0 and one on node 1 (a cycle with a local edge). An owner's wait
 * starts with a new generation (unique: a wait ends, a new one of the same
 * owner is another wait), and ends by a grant (its key released: its
 * holder finished, or the holder's node died and the DLM recovered), by a
 * timeout (at most TIMEOUTS in a run; with ROUNDS 2 the owner then waits
 * again, a new generation), or by EDEADLK (the daemon's FAIL_WAIT, which
 * the kernel applies only to the wait of that generation). A victim or a
 * granted owner lets go of everything; so does one whose rounds are over.
 * (So an owner holds its key through all its waits: the wait's generation
 * stands for the hold's, which the real protocol checks too.)
 *
 * One daemon per node; CPG's agreed order is one log of messages that
 * every node delivers in the same order, each at its own pace (rd[n]; with
 * LOCKSTEP every live node delivers each message in the same step, which
 * keeps the 3-node ring's state space small).
 * - A wait may start a probe at any time while it lasts (once per
 *   generation; the real daemon: after the probe delay): its path is
 *   [(owner, generation)], followed through the node's local edges, and
 *   sent as a PROBE when it reaches a holder on another node.
 * - A PROBE delivered on the node of the holder of the key the path's last
 *   vertex waits for: if that holder is the path's first vertex, still
 *   waiting with that generation, the path is a cycle: CONFIRM it (the
 *   path; not when a round of the same cycle, the same vertices and
 *   generations, delivered here is pending or decided); if the holder is elsewhere in the path, drop it (another
 *   initiator owns that cycle); if the holder waits, extend the path with
 *   (holder, its generation) and follow local edges on this node, then
 *   send the PROBE on when the next holder is on another node; else drop.
 * - A CONFIRM delivered on a node with vertices in the path: ACK with live
 *   = each of its vertices still waits with its generation.
 * - An ACK or a CONFCHG (a node left: CPG's membership change, in the same
 *   order) delivered: the confirming round of a CONFIRM is decided live
 *   when every node with vertices in it has ACKed live, none ACKed dead and
 *   no such node left before; the round that becomes decided at this
 *   message is applied by every node alike: the victim is the youngest
 *   wait of the cycle (the highest generation; the real rule's wait start
 *   time, node, owner: the same on every node, carried in the path), and
 *   the victim's node fails it (FAIL_WAIT with its generation).
 * - A node dies (KILLS): its daemon and owners stop; later corosync
 *   notices (CONFCHG in the log) and the DLM's recovery frees its keys.
 *
 * Properties (assertions where a victim's wait is failed, and at the end):
 * - never false: the cycle existed when the CONFIRM was sent (every
 *   vertex waiting with its generation on a live node: a ghost snapshot;
 *   every probe step came before and every ACK after it, so the cycle
 *   stood at that instant);
 * - at most one victim per cycle: no other vertex of the same cycle (the
 *   same generations) was failed;
 * - a real cycle gets a victim: no invalid end state (an owner left
 *   waiting for ever), and with neither timeouts nor deaths exactly one
 *   victim in the run.
 *
 * Planted bugs (each must make the check fail): BUG_NO_CONFIRM (the
 * initiator decides when its probe comes back: a VERDICT, no confirming
 * round), BUG_NO_GEN (an ACK checks that the owner waits, not the
 * generation: a wait that ended and started again passes), BUG_NOT_ALIKE
 * (each node applies the rule to its own vertices: its youngest), and
 * BUG_IGNORE_DEATH (a node of the cycle that left is dropped from the
 * round instead of aborting it); and BUG_DLM_WAITS_ONLY (only a wait in
 * the DLM starts a probe, not a local wait: when the wait that closes a
 * cycle is a local one, as in MIXED, nobody probes after the cycle
 * closed, and the cycle is never found).
 *
 * SOFT: a soft edge across nodes (the issue's cycle A -soft-> B -hard->
 * C -hard-> A): owner 0 (A, node 0) holds key 0 and asks key 2 shared,
 * queued in the DLM behind owner 1's (B, node 1) exclusive request for
 * key 2, which owner 2 (C, node 2) holds shared and which B waits for;
 * C waits for key 0. Key 2's master is node 3, which has no owner: only
 * it sees the queue. A PROBE whose last vertex is A is extended by the
 * master alone: a QUEUED step while B's request is ahead of A's, which
 * node 1 turns into B's wait (walk as through a holder). The master is a
 * node of every round with the soft edge: its ACK is live while both
 * requests are still queued, B's ahead (the same requests: their waits'
 * generations). A death of the master (KILLS) makes the DLM rebuild the
 * queue on a new master, possibly in another order (the DLM's recovery
 * does not keep it): here A's request then goes ahead of B's, and A, whose
 * shared request is compatible with C's hold, is granted. The planted bug
 * BUG_SOFT_NO_MASTER: the soft edge is not confirmed by the master (it
 * is not a node of the round): the queue's order can change while every
 * wait stands, and a victim is chosen for a cycle that was gone. FLIPS
 * (cheaper than KILLS) changes the order at any time without a death (a
 * recovery that rebuilt the queue on the same master: the master's re-
 * read, not its membership, must catch it).
 */

#ifdef SOFT
#undef NN
#define NN 4
#define MASTER 3
#ifndef MAXLOG
#define MAXLOG 40
#endif
#endif
#ifndef NN
#define NN 2
#endif
#ifdef SOFT
#define NO 3
#define ONODE(o) (o)
#elif defined(MIXED)
#define NO 3
#define ONODE(o) ((o) == 2 -> 1 : 0)
#else
#define NO NN
#define ONODE(o) (o)
#endif
#define WANT(o) (((o) + 1) % NO)
#ifndef ROUNDS
#define ROUNDS 1
#endif
#ifndef TIMEOUTS
#define TIMEOUTS 0
#endif
#ifndef KILLS
#define KILLS 0
#endif
#ifndef MAXLOG
#define MAXLOG 24
#endif
#define P 3			/* the longest path: NO vertices */

#define IDLE 0
#define WAITING 1
#define FAILED 2
#define DONE 3

#define PROBE 1
#define CONFIRM 2
#define ACK 3
#define CONFCHG 4
#define VERDICT 5
#define QUEUED 6		/* SOFT: the master's step, B's request ahead */

/* the agreed order: one log, delivered by every node in order */
byte nlog;
byte mk[MAXLOG];		/* kind */
byte mc[MAXLOG];		/* ACK: the CONFIRM's index (the round) */
byte mn[MAXLOG];		/* ACK, CONFCHG: the node */
bool ml[MAXLOG];		/* ACK: live */
byte mlen[MAXLOG];		/* PROBE, CONFIRM, VERDICT: the path */
byte mo[MAXLOG * P];
byte mg[MAXLOG * P];
bool cycok[MAXLOG];		/* ghost: the cycle stood at this CONFIRM's send */
byte rd[NN];			/* each node's next message */

/* the nodes' kernels */
bool dead[NN];
byte wst[NO];			/* IDLE, WAITING, FAILED, DONE */
byte wgen[NO];			/* the current (or last) wait's generation */
bool rel[NO];			/* key o released (its holder finished, or died) */
byte probed[NO];		/* the daemon probed the wait of this generation */
byte gc;			/* generations: unique, increasing (start order) */
byte ntimeouts;
bool flipped;			/* SOFT: the queue rebuilt with A's request ahead */

/* ghosts */
byte vict[NO];			/* the generation of the wait failed by EDEADLK */
byte nvict;

/* a vertex of a cycle stands: it waits with that generation, its node alive */
#define VLIVE(o, g)	(wst[o] == WAITING && wgen[o] == (g) && !dead[ONODE(o)])
#ifdef SOFT
/* owner o is granted: A once B's request is no longer ahead of its own */
#define GRANT(o)	(rel[WANT(o)] || ((o) == 0 && flipped))
/* the master's queue: B's request of generation g1 ahead of A's of g0 */
#define AHEAD(g0, g1)	(!flipped && wst[0] == WAITING && wgen[0] == (g0) && \
			 wst[1] == WAITING && wgen[1] == (g1))
/* the node that extends a PROBE whose last vertex is o */
#define PNODE(o)	((o) == 0 -> MASTER : ONODE(WANT(o)))
#else
#define GRANT(o)	rel[WANT(o)]
#define PNODE(o)	ONODE(WANT(o))
#endif

/* append a message with the path po[0..pl-1] */
inline send(kind, c, nd, lv)
{
	assert(nlog < MAXLOG);
	mk[nlog] = kind;
	mc[nlog] = c;
	mn[nlog] = nd;
	ml[nlog] = lv;
	mlen[nlog] = pl;
	j = 0;
	do
	:: j < pl -> mo[nlog * P + j] = po[j]; mg[nlog * P + j] = pg[j]; j++
	:: else -> break
	od;
	nlog++
}

/* the round of the CONFIRM at c, as delivered up to message u: st 0
 * pending, 1 decided live, 2 aborted */
inline status(c, u)
{
	ex = 0;
	j = 0;
	do
	:: j < mlen[c] -> ex = ex | (1 << ONODE(mo[c * P + j])); j++
	:: else -> break
	od;
#if defined(SOFT) && !defined(BUG_SOFT_NO_MASTER)
	/* every cycle of SOFT has the soft edge: its master is a node of it */
	ex = ex | (1 << MASTER);
#endif
	ak = 0;
	st = 0;
	j = c + 1;
	do
	:: j <= u ->
		if
		:: mk[j] == ACK && mc[j] == c && ml[j] -> ak = ak | (1 << mn[j])
		:: mk[j] == ACK && mc[j] == c && !ml[j] -> st = 2
		:: mk[j] == CONFCHG && (ex & (1 << mn[j])) != 0 ->
#ifdef BUG_IGNORE_DEATH
			ex = ex & ~(1 << mn[j])
#else
			st = 2
#endif
		:: else -> skip
		fi;
		j++
	:: else -> break
	od;
	if
	:: st == 0 && (ak & ex) == ex -> st = 1
	:: else -> skip
	fi
}

/* the victim of the cycle of message c for node n (v, generation vg;
 * v 255: none) */
inline victim(c)
{
	v = 255;
	vg = 0;
	j = 0;
	do
	:: j < mlen[c] ->
#ifdef BUG_NOT_ALIKE
		if
		:: ONODE(mo[c * P + j]) == n && mg[c * P + j] > vg -> v = mo[c * P + j]; vg = mg[c * P + j]
		:: else -> skip
		fi;
#else
		if
		:: mg[c * P + j] > vg -> v = mo[c * P + j]; vg = mg[c * P + j]
		:: else -> skip
		fi;
#endif
		j++
	:: else -> break
	od
}

/* the decision on the cycle of message c, on node n: the victim's node
 * fails its wait (the kernel: only that generation's) */
inline decide(c)
{
	victim(c);
	if
	:: v != 255 && ONODE(v) == n && wst[v] == WAITING && wgen[v] == vg ->
		/* never false: the cycle stood at the decision's snapshot */
		assert(cycok[c]);
		/* at most one victim per cycle */
		j = 0;
		do
		:: j < mlen[c] ->
			assert(mo[c * P + j] == v || vict[mo[c * P + j]] != mg[c * P + j]);
			j++
		:: else -> break
		od;
		vict[v] = vg;
		wst[v] = FAILED;
		nvict++
	:: else -> skip
	fi
}

/* the ghost snapshot of the path po/pg: every vertex stands */
inline snapshot()
{
	ok = true;
	j = 0;
	do
	:: j < pl -> ok = ok && VLIVE(po[j], pg[j]); j++
	:: else -> break
	od;
#ifdef SOFT
	/* and the soft edge A -> B: B's request still ahead of A's */
	ok = ok && !flipped
#else
	skip
#endif
}

/* message i does something on node n (else delivering it is a no-op: the
 * model skips it in the same step, which saves states, not behaviour) */
inline relevant(i)
{
	if
	:: mk[i] == PROBE -> rv = (PNODE(mo[i * P + mlen[i] - 1]) == n)
	:: mk[i] == QUEUED -> rv = (ONODE(1) == n)
	:: mk[i] == CONFIRM ->
#if defined(SOFT) && !defined(BUG_SOFT_NO_MASTER)
		rv = (n == MASTER);
#else
		rv = false;
#endif
		j = 0;
		do
		:: j < mlen[i] -> rv = rv || ONODE(mo[i * P + j]) == n; j++
		:: else -> break
		od
	:: mk[i] == ACK -> victim(mc[i]); rv = (v != 255 && ONODE(v) == n)
	:: mk[i] == VERDICT -> victim(i); rv = (v != 255 && ONODE(v) == n)
	:: mk[i] == CONFCHG -> rv = true
	fi
}

/* inp: a CONFIRM before message u has the path po/pg (in any rotation)
 * and its round is not aborted by message u */
inline same(u)
{
	inp = false;
	c = 0;
	do
	:: c < u && !inp ->
		if
		:: mk[c] == CONFIRM && mlen[c] == pl ->
			ok = true;
			j = 0;
			do
			:: j < pl ->
				h = 0;
				lv = false;
				do
				:: h < pl -> lv = lv || (mo[c * P + h] == po[j] && mg[c * P + h] == pg[j]); h++
				:: else -> break
				od;
				ok = ok && lv;
				j++
			:: else -> break
			od;
			if
			:: ok -> status(c, u); inp = (st != 2)
			:: else -> skip
			fi
		:: else -> skip
		fi;
		c++
	:: else -> break
	od;
	h = po[0]
}

/* node n follows the path po/pg from the holder h of the key its last
 * vertex waits for, through this node's local edges: closes it (CONFIRM)
 * when h is its first vertex, drops it when h is elsewhere in it or does
 * not wait, sends it on (PROBE) when the next holder is on another node */
inline walk()
{
	do
	:: ONODE(h) != n -> break
	:: else ->
		inp = false;
		j = 1;
		do
		:: j < pl -> inp = inp || po[j] == h; j++
		:: else -> break
		od;
		if
		:: h == po[0] ->
			/* the cycle closes at its initiator */
			if
			:: wst[h] == WAITING && wgen[h] == pg[0] ->
				/* a round of the same cycle (the same
				 * vertices and generations) delivered here
				 * and not aborted: it decides for this one */
				same(rd[n] - 1);
				if
				:: inp -> break
				:: else -> skip
				fi;
				snapshot();
				cycok[nlog] = ok;
#ifdef BUG_NO_CONFIRM
				send(VERDICT, 0, n, 0)
#else
				send(CONFIRM, 0, n, 0)
#endif
			:: else -> skip
			fi;
			break
		:: h != po[0] && inp -> break
		:: h != po[0] && !inp && wst[h] != WAITING -> break
		:: h != po[0] && !inp && wst[h] == WAITING ->
			po[pl] = h;
			pg[pl] = wgen[h];
			pl++;
			h = WANT(h);
			if
			:: ONODE(h) != n -> send(PROBE, 0, n, 0); break
			:: else -> skip	/* a local edge: follow it here */
			fi
		fi
	od
}

/* node n delivers the next message of the log (the no-ops first) */
inline deliver()
{
	do
	:: rd[n] < nlog ->
		relevant(rd[n]);
		if
		:: rv -> break
		:: else -> rd[n]++
		fi
	:: else -> break
	od;
	i = rd[n];
	if
	:: i < nlog -> rd[n]++; handle()
	:: else -> skip
	fi
}

/* node n handles message i */
inline handle()
{
	if
	:: mk[i] == PROBE || mk[i] == QUEUED ->
		pl = mlen[i];
		j = 0;
		do
		:: j < pl -> po[j] = mo[i * P + j]; pg[j] = mg[i * P + j]; j++
		:: else -> break
		od;
		h = WANT(po[pl - 1]);
#ifdef SOFT
		if
		:: mk[i] == PROBE && po[pl - 1] == 0 ->
			/* the master: B's request queued ahead of A's (both
			 * present: B's with its wait's generation) */
			if
			:: n == MASTER && AHEAD(pg[pl - 1], wgen[1]) -> send(QUEUED, 0, n, 0)
			:: else -> skip
			fi
		:: else -> walk()	/* QUEUED on node 1: B's wait */
		fi
#else
		walk()
#endif
	:: mk[i] == CONFIRM ->
		mine = false;
		lv = true;
		j = 0;
		do
		:: j < mlen[i] ->
			h = mo[i * P + j];
			if
			:: ONODE(h) == n ->
				mine = true;
#ifdef BUG_NO_GEN
				lv = lv && wst[h] == WAITING
#else
				lv = lv && wst[h] == WAITING && wgen[h] == mg[i * P + j]
#endif
			:: else -> skip
			fi;
			j++
		:: else -> break
		od;
#if defined(SOFT) && !defined(BUG_SOFT_NO_MASTER)
		/* the master reads the queue again: the same requests, B's
		 * still ahead of A's */
		if
		:: n == MASTER ->
			mine = true;
			j = 0;
			do
			:: j < mlen[i] ->
				if
				:: mo[i * P + j] == 0 -> c = mg[i * P + j]
				:: mo[i * P + j] == 1 -> v = mg[i * P + j]
				:: else -> skip
				fi;
				j++
			:: else -> break
			od;
			lv = AHEAD(c, v)
		:: else -> skip
		fi;
#endif
		if
		:: mine -> pl = 0; send(ACK, i, n, lv)
		:: else -> skip
		fi
	:: mk[i] == ACK ->
		c = mc[i];
		status(c, i - 1);
		if
		:: st == 0 ->
			status(c, i);
			if
			:: st == 1 -> decide(c)
			:: else -> skip
			fi
		:: else -> skip
		fi
	:: mk[i] == CONFCHG ->
		/* every round still pending: a node of it left */
		c = 0;
		do
		:: c < i ->
			if
			:: mk[c] == CONFIRM ->
				status(c, i - 1);
				if
				:: st == 0 ->
					status(c, i);
					if
					:: st == 1 -> decide(c)
					:: else -> skip
					fi
				:: else -> skip
				fi
			:: else -> skip
			fi;
			c++
		:: else -> break
		od
	:: mk[i] == VERDICT -> decide(i)
	fi
}

/* a wait of owner o (on node n) may be probed: through local edges first */
#ifdef BUG_DLM_WAITS_ONLY
/* the flaw: only a wait for a key held on another node probes */
#define CAN_PROBE(o) \
	(ONODE(o) == n && ONODE(WANT(o)) != n && wst[o] == WAITING && probed[o] != wgen[o])
#else
#define CAN_PROBE(o) \
	(ONODE(o) == n && wst[o] == WAITING && probed[o] != wgen[o])
#endif
inline probe(o)
{
	probed[o] = wgen[o];
	po[0] = o;
	pg[0] = wgen[o];
	pl = 1;
	h = WANT(o);
	if
	:: PNODE(o) != n -> send(PROBE, 0, n, 0)
	:: else -> walk()
	fi
}

#define DAEMON_LOCALS \
	byte i, j, h, c, v, vg, ex, ak, st, pl; \
	byte po[P], pg[P]; \
	bool inp, ok, lv, mine, rv

#ifdef LOCKSTEP
/* LOCKSTEP: every live node delivers each message in the same step (the
 * 3-node ring's state space; the 2-node configurations check each node
 * at its own pace) */
proctype Bus()
{
	byte n;
	DAEMON_LOCALS;

end:
	do
	:: d_step {
		rd[0] < nlog ->
		i = rd[0];
		n = 0;
		do
		:: n < NN ->
			rd[n] = i + 1;
			if
			:: !dead[n] -> handle()
			:: else -> skip
			fi;
			n++
		:: else -> break
		od;
		n = 0
	}
	od
}
#endif

proctype Daemon(byte n)
{
	DAEMON_LOCALS;

end:
	do
#ifndef LOCKSTEP
	:: d_step { !dead[n] && rd[n] < nlog -> deliver() }
#endif
	:: d_step { !dead[n] && CAN_PROBE(0) -> probe(0) }
	:: d_step { !dead[n] && CAN_PROBE(1) -> probe(1) }
#if NO > 2
	:: d_step { !dead[n] && CAN_PROBE(2) -> probe(2) }
#endif
	:: dead[n] -> break
	od
}

proctype Owner(byte o)
{
	byte r;
	bool got, failed;

	{
		r = 0;
		do
		:: r < ROUNDS ->
			r++;
			atomic {
				if
				:: GRANT(o) -> got = true
				:: else -> gc++; wgen[o] = gc; wst[o] = WAITING
				fi
			};
			if
			:: got -> break
			:: else -> skip
			fi;
			if
			:: atomic { wst[o] == WAITING && GRANT(o) -> wst[o] = IDLE; got = true }
			:: atomic { wst[o] == FAILED -> wst[o] = IDLE; failed = true }
			:: atomic { wst[o] == WAITING && ntimeouts < TIMEOUTS -> ntimeouts++; wst[o] = IDLE }
			fi;
			if
			:: got || failed -> break
			:: else -> skip
			fi
		:: else -> break
		od;
		/* let go of everything */
		atomic { rel[o] = true; wst[o] = DONE }
	} unless { dead[ONODE(o)] }
}

/* kills a node at any time; corosync notices later (CONFCHG, in the
 * agreed order), and the DLM's recovery frees the dead node's keys */
proctype Killer()
{
	byte k, j, pl;
	byte po[P], pg[P];

	if
#ifdef SOFT
	/* the master of key 2: the DLM rebuilds its queue elsewhere, A's
	 * request ahead of B's */
	:: true -> k = MASTER
#else
	:: true -> k = 0
	:: true -> k = 1
#if NN > 2
	:: true -> k = 2
#endif
#endif
	:: true -> goto out
	fi;
	dead[k] = true;
#ifdef SOFT
	flipped = true;
#endif
	atomic {
		pl = 0;
		send(CONFCHG, 0, k, 0);
		j = 0;
		do
		:: j < NO -> if :: ONODE(j) == k -> rel[j] = true :: else -> skip fi; j++
		:: else -> break
		od
	};
out:
	skip
}

#if defined(SOFT) && defined(FLIPS)
/* the queue rebuilt in another order at any time, every node alive */
proctype Flipper()
{
	if
	:: true -> flipped = true
	:: true -> skip
	fi
}
#endif

init
{
	byte o;

	atomic {
		o = 0;
		do
		:: o < NO -> run Owner(o); o++
		:: else -> break
		od;
		o = 0;
		do
		:: o < NN -> run Daemon(o); o++
		:: else -> break
		od;
#ifdef LOCKSTEP
		run Bus();
#endif
#if KILLS > 0
		run Killer();
#endif
#if defined(SOFT) && defined(FLIPS)
		run Flipper();
#endif
		skip
	}
	/* every owner finished (or its node died) */
	o = 0;
	do
	:: o < NO -> (wst[o] == DONE || dead[ONODE(o)]); o++
	:: else -> break
	od;
#if TIMEOUTS == 0 && KILLS == 0 && !defined(FLIPS)
	/* the one cycle got exactly one victim */
	assert(nvict == 1)
#else
	skip
#endif
}
