/*
 * fastpath.pml -- a model of the fast-path word protocol (docs/fastpath.md),
 * checked by spin (tests/unit/t_model_spin.sh runs it).
 *
 * One key's word {gen, owner, W} (owner 0: free; K: the kernel's holders;
 * else a member's index; W: WAITERS), the kernel's FIFO queue of waiters
 * and its holder behind the bucket lock, per owner a page with the held
 * stack (here: the key and its generation) and the pending slot, and the
 * owner's revoked flag. NU owners take and let go of the key ROUNDS times
 * each: uncontended by a CAS in user space, else through the kernel. The
 * kernel's side follows kmod/fastpath.c function by function, with its
 * BOUNDED loops (TRIES compare-and-swap attempts, ORDLOCK_FAST_TRIES in
 * the kernel; the bound's value does not matter, a holder that cycles
 * more often defeats any):
 *
 *   claim()          ordlock_fast_claim(): a free word -> {g+1, K}
 *   settle()         ordlock_fast_settle(): after a change of holders or
 *                    waiters: K without a holder: grant or free; W with
 *                    an empty queue: cleared; a free word with a queue:
 *                    grant
 *   queued()         ordlock_fast_queued(): a waiter was queued: set W
 *   let_go()         ordlock_fast_let_go(): FAST_RELEASE, revocation,
 *                    death, RELEASE_ALL of a member's word: free it or
 *                    hand it to the kernel ({g+1, K}) and grant the head
 *   grant_waiters()  ordlock_res_grant_waiters(): the head, if it fits
 *   kacquire()       request.c: grant at once (empty queue, claim), or
 *                    queue + queued(), then sleep
 *
 * A lease timer revokes any owner at any time (flag, then the walk of the
 * words and the kernel's holds); a killer kills an owner at any statement
 * outside the kernel's critical sections (also between its CAS and its
 * push, and while it sleeps), and the file's release cleans up; a stale
 * copy of owner 1 (a fork child, or a thread with an old view) tries to
 * release a hold owner 1 has since let go of.
 *
 * A word is one atomic variable: every access to gen/owner/W is inside one
 * atomic block (a load, a compare-and-swap against what was loaded, or,
 * in the fixed queued(), a fetch-or). The kernel's critical sections take
 * the bucket lock (locked) and are otherwise ordinary steps, so that user
 * CASes interleave with every step of them.
 *
 * Properties: the monitor's invariants (checked whenever the bucket lock
 * is free), assertions at the points named below, and no invalid end
 * state: a waiter left sleeping for ever (the holders finished, the key
 * free, nobody to wake it) is one. A waiter that times out finds the word
 * held (never free: "no waiter waits past its timeout for a free key").
 * LIVENESS (cyclic runs, no deaths or timeouts): the ltl claim that a
 * waiter is eventually handed the key.
 *
 * THE STUCK WAITER (issue 40) and the rule the kernel needs. Today's
 * ordlock_fast_queued() tries TRIES CASes to set W while a member loops
 * acquire/release by CAS; when they all fail it gives up, and when it
 * sees the word free it calls ordlock_fast_settle(), which grants the
 * head through ordlock_fast_claim(), whose CAS loses to the member's next
 * acquire: either way the waiter stays queued with W clear, the member's
 * releases never enter the kernel, and the waiter sleeps until its
 * timeout with the key free. BUG_QUEUED_GIVES_UP is that code; the model
 * finds it (the monitor's invariant "a queue means W or K", and without
 * the monitor the waiter left asleep for ever once the holder stopped).
 * The default is the fixed rule (QUEUED_FETCH_OR below): queued() sets W
 * with ONE atomic fetch-or (a step no member can make fail) and acts on
 * the word it returns:
 *   - a member held it: done (W is set behind a member; its release CAS
 *     fails and it comes to FAST_RELEASE, which hands over);
 *   - it was free: the word is now {g, 0, W}, which no member's CAS takes
 *     or changes (an acquire expects W clear, a release expects its own
 *     index); the kernel, still under the bucket lock, CASes it to
 *     {g+1, K, 0} and grants the queue from its head (the CAS cannot
 *     lose to an honest member: bounded, and a failure means a member
 *     wrote the word by hand);
 *   - K (the kernel's holders): W is cleared again (CAS; no member
 *     changes a K word), then settle() as today.
 * settle()'s free-word-with-a-queue case reserves the word the same way
 * (fetch-or W, then {g, 0, W} -> {g+1, K, 0}) instead of claim()'s CAS
 * against a free word, which a looping member defeats.
 *
 * Other planted bugs (each must make the check fail): BUG_STORE_W (the
 * kernel sets WAITERS with a plain store: a lost wake-up), BUG_NO_PENDING
 * (the death clean-up walks the held stack only: a death between CAS and
 * push leaves the word naming the dead owner), BUG_OWNER_ONLY (a release
 * compares the owner, not the generation), BUG_RELEASE_IGNORES_W (the
 * user's release CAS ignores WAITERS), BUG_WAKE_RETRY (a release frees
 * the word and wakes the head to retry, instead of handing over:
 * barging), BUG_WALK_BEFORE_FLAG (the revocation walks the words, then
 * raises the flag) and BUG_FLAG_BEFORE_CAS (the library reads the flag
 * before its CAS, not after): either lets an acquire that races the
 * revocation take the key unseen by both, and its owner use it after the
 * revocation ended.
 *
 * PASSING (issue 40, the fairness rule of the UAPI header): a release of
 * the key with a queue whose head may be passed (it has been passed fewer
 * than MAXPASS times: ORDLOCK_MAX_PASSES, whose value does not matter;
 * the waiter's age is not modelled, an old waiter is one passed MAXPASS
 * times) does not hand it over: it wakes the head (woken) and leaves the
 * word free WITH W, {g, 0, W}: a member's release to FAST_RELEASE
 * (let_go()), the kernel's holder's (drop_hold() + settle()). Whoever
 * comes first takes it: a member's CAS, which takes a free word with or
 * without W and KEEPS W ({g+1, u, W}: its release comes to the kernel
 * again), or the woken head, which runs (take_woken(): claim() takes
 * {g, 0, W} to {g+1, K, 0}) and, having lost it, stays at the head and
 * counts a pass. A new kernel request queues behind (the model's
 * kacquire() grants at once only with an empty queue: passing by a kernel
 * request is resource.c's, not the word's). The checks: the monitor's
 * "a free word with a queue only for a woken head", a barger only of a
 * woken head that may be passed (the user CAS's assertion), and the bound
 * (a waiter is passed at most MAXPASS times). NOPASS turns it off
 * (handoff_us=0). Planted bugs: BUG_BARGER_CLEARS_W (the member's CAS on
 * {g, 0, W} drops W: its release stays in user space, and the head, once
 * passed, sleeps for ever with the key free), BUG_PASS_CLEARS_W (the
 * release that passes frees the word without W: the same) and
 * BUG_PASS_UNBOUNDED (the head is passed whatever its count).
 *
 * The revocation handshake (kmod/fast_owner.c, ordlock_fast_revoke(); the
 * library's acquire): the kernel raises the owner page's revoked flag,
 * then (a full barrier) walks the words and lets go of every word that
 * names the owner; the library's acquire does its CAS, then reads the
 * flag, and acknowledges (RELEASE_ALL) instead of using the key if it is
 * set. One of the two sees the other: the walk finds the word, or the
 * acquire finds the flag. The model checks it: once a revocation has
 * ended, its owner is in no critical section with a key the revocation
 * did not take, until it acknowledges.
 */

#ifndef NU
#define NU 3
#endif
#ifndef ROUNDS
#define ROUNDS 1
#endif
#ifndef KILLS
#define KILLS 1
#endif
#ifndef REVOKES
#define REVOKES 1
#endif
#ifndef TRIES
#define TRIES 2
#endif
#ifndef MAXPASS
#define MAXPASS 1
#endif
#ifndef BUG_QUEUED_GIVES_UP
#define QUEUED_FETCH_OR
#endif
#ifdef LIVENESS
#define GMAX 4
#define NEXTGEN(g) (((g) + 1) % GMAX)
#else
#define NEXTGEN(g) ((g) + 1)
#endif

#ifdef LIVENESS
#define LIVENESS_LOOP true
#else
#define LIVENESS_LOOP false
#endif

#define K 7			/* ORDLOCK_FAST_OWNER_KERNEL */

#define NONE 0
#define WAITING 1
#define GRANTED 2
#define RETRY 3

#define LG_OK 0
#define LG_ENOENT 1
#define LG_EIO 2

/* the word of the key */
byte gen, owner;
bool W;

/* the kernel: the bucket lock, the FIFO queue and the holder behind it */
bool locked;
byte q[NU];
byte qlen;
byte wst[NU + 1];		/* per owner: NONE, WAITING, GRANTED, RETRY */
byte kh;			/* the kernel's (exclusive) holder, 0: none */
bool woken[NU + 1];		/* the head was woken for the free key (passing) */
byte passed[NU + 1];		/* times it was woken and found the key taken */

/* per owner page (module-owned, mapped into that owner) */
bool stk[NU + 1];		/* the held stack has the key */
byte stkgen[NU + 1];		/* ... at this generation */
bool pend[NU + 1];		/* the pending slot names the key */
bool revoked[NU + 1];		/* the owner's lease was revoked; not yet acknowledged */

/* ghosts: what the model checks against */
bool held[NU + 1];		/* the owner believes it holds the key ... */
byte hg[NU + 1];		/* ... granted at this generation */
bool rv[NU + 1];		/* that hold was revoked by the kernel */
bool dead[NU + 1], kill[NU + 1], inkernel[NU + 1], fin[NU + 1];
bool revdone[NU + 1];		/* a revocation of the owner ended, not acknowledged */
bool incs[NU + 1];		/* the owner is in its critical section */
byte nfin, nkilled, nrevoked;

#define LOCK(u)		atomic { !locked -> locked = true; inkernel[u] = true }
/* leaving the kernel: its temporaries are dead (fewer states) */
#define UNLOCK(u) \
	atomic { \
		locked = false; inkernel[u] = false; \
		lg = 0; lo = 0; lw = false; tc = 0; ts = 0; tq = 0; tl = 0; \
		nx = 0; i = 0 \
	}

/* the word is @u's hold of generation @g (BUG_OWNER_ONLY: any of @u's) */
#ifdef BUG_OWNER_ONLY
#define MINE(u, g)	(owner == (u))
#define GEN_DIFFERS(lg, g)	false
#else
#define MINE(u, g)	(owner == (u) && gen == (g))
#define GEN_DIFFERS(lg, g)	((lg) != (g))
#endif

/* the user's release CAS: {g, u, 0} -> {g, 0, 0} */
#ifdef BUG_RELEASE_IGNORES_W
#define RELEASE_OK(u, g)	MINE(u, g)
#else
#define RELEASE_OK(u, g)	(MINE(u, g) && !W)
#endif

/* load the word into lg, lo, lw */
#define LOAD()	atomic { lg = gen; lo = owner; lw = W }

/*
 * The kernel's compare-and-swap of {lg, lo, lw} -> {ng, nlo, nlw}: ok, or
 * the word as it is now in lg, lo, lw (as try_cmpxchg() does)
 */
#define KCAS(ng, nlo, nlw) \
	atomic { \
		if \
		:: gen == lg && owner == lo && W == lw -> \
			gen = ng; owner = nlo; W = nlw; ok = true \
		:: else -> lg = gen; lo = owner; lw = W; ok = false \
		fi \
	}

/* ordlock_res_may_pass() of the head (the model's head is never a conversion) */
#ifdef NOPASS
#define MAYPASS(v)	false
#elif defined(BUG_PASS_UNBOUNDED)
#define MAYPASS(v)	true
#else
#define MAYPASS(v)	(passed[v] < MAXPASS)
#endif
/* ordlock_res_passable(): the head was woken and may still be passed */
#define PASSABLE	(qlen > 0 && woken[q[0]] && MAYPASS(q[0]))

/* ordlock_fast_claim(): ok when the word is (now) the kernel's */
inline claim()
{
	LOAD();
	tc = 0;
	do
	:: tc == TRIES -> ok = false; break
	:: tc < TRIES && lo == K -> ok = true; break
	:: tc < TRIES && lo != K && lo != 0 -> ok = false; break
	:: tc < TRIES && lo == 0 ->
		/* free, with W or not: the caller decided who may take it */
		KCAS(NEXTGEN(lg), K, false);
		if
		:: ok -> break
		:: else -> tc++
		fi
	od
}

/* the kernel grants the key to @v (its word is K) */
#define KGRANT(v) \
	kh = v; held[v] = true; hg[v] = gen; rv[v] = false

/* ordlock_res_grant_waiters(): the head, if it fits (exclusive only) */
inline grant_waiters()
{
	if
	:: qlen > 0 && kh == 0 ->
		claim();
		if
		:: ok ->
			atomic {
				nx = q[0];
				i = 0;
				do
				:: i + 1 < qlen -> q[i] = q[i + 1]; i++
				:: else -> break
				od;
				qlen--;
				q[qlen] = 0;
				KGRANT(nx);
				wst[nx] = GRANTED;
				woken[nx] = false
			}
		:: else -> skip
		fi
	:: else -> skip
	fi
}

/*
 * The fixed rule's reservation of a word the kernel must act on: fetch-or
 * W (one step: no member can make it fail). A word that was free is now
 * {g, 0, W}, which no member's CAS takes or changes, and goes to the
 * kernel ({g+1, K, 0}); a K word loses W again (K words carry none). act:
 * 1 when the word is the kernel's (grant the queue), else 0 (a member
 * held it: W is set behind it, its release comes to the kernel).
 */
inline reserve()
{
#ifdef BUG_STORE_W
	/* the flaw: a load, then a plain store of what was loaded, with W */
	LOAD();
	atomic { gen = lg; owner = lo; W = true };
#else
	atomic { lg = gen; lo = owner; lw = W; W = true };
#endif
	if
	:: lo == 0 && PASSABLE ->
		/* left free, with W, for the woken head or whoever comes first */
		act = 0
	:: lo == 0 && !PASSABLE ->
		lw = true;
		KCAS(NEXTGEN(lg), K, false);
		/* a member's CAS may take {g, 0, W} (passing): then it is behind it */
		act = ok
	:: lo == K && !lw -> lw = true; KCAS(lg, K, false); assert(ok); act = 1
	:: lo == K && lw -> act = 1
	:: else -> act = 0
	fi
}

/*
 * ordlock_fast_settle(). The kernel's "ordlock_res_grant_waiters(); then
 * ordlock_fast_settle()" (a release, a handoff, a waiter that leaves) is
 * modelled as settle() alone: it grants the head in the same cases (the
 * word K without a holder), and the word is looked at as the code does.
 */
inline settle()
{
	LOAD();
	ts = 0;
	act = 0;
	do
	:: ts == TRIES -> break
	:: ts < TRIES && lo == K && kh != 0 -> break
	:: ts < TRIES && lo == K && kh == 0 && qlen > 0 && !PASSABLE -> act = 1; break
	:: ts < TRIES && lo == K && kh == 0 && PASSABLE ->
		/* left free for the woken head, W kept */
		KCAS(lg, 0, true);
		if
		:: ok -> break
		:: else -> ts++
		fi
	:: ts < TRIES && lo == K && kh == 0 && qlen == 0 ->
		KCAS(lg, 0, false);
		if
		:: ok -> break
		:: else -> ts++
		fi
	:: ts < TRIES && lo != K && lo != 0 && (!lw || qlen > 0) -> break
	:: ts < TRIES && lo != K && lo != 0 && lw && qlen == 0 ->
		KCAS(lg, lo, false);
		if
		:: ok -> break
		:: else -> ts++
		fi
	:: ts < TRIES && lo == 0 && qlen == 0 && !lw -> break
	:: ts < TRIES && lo == 0 && qlen == 0 && lw ->
		/* free for a head that left: W cleared */
		KCAS(lg, 0, false);
		if
		:: ok -> break
		:: else -> ts++
		fi
	:: ts < TRIES && lo == 0 && qlen > 0 ->
		/* a free word and a queue */
#ifdef QUEUED_FETCH_OR
		reserve();
#else
		act = !lw;	/* today: grant, by claim()'s CAS against a free word */
#endif
		break
	od;
	if
	:: act == 1 -> grant_waiters()
	:: else -> skip
	fi;
	act = 0
}

/* ordlock_fast_queued(): a waiter was just queued */
inline queued()
{
#ifdef QUEUED_FETCH_OR
	reserve();
	act = 0;
	settle()
#else
	/* today's kmod/fastpath.c: TRIES CASes, then the waiter is left */
	LOAD();
	tq = 0;
	do
	:: tq == TRIES -> break	/* "a member that keeps rewriting the word: left busy" */
	:: tq < TRIES && (lo == K || lo == 0) -> act = 1; break
	:: tq < TRIES && lo != K && lo != 0 && lw -> break
	:: tq < TRIES && lo != K && lo != 0 && !lw ->
		KCAS(lg, lo, true);
		if
		:: ok -> break
		:: else -> tq++
		fi
	od;
	if
	:: act == 1 -> act = 0; settle()
	:: else -> skip
	fi
#endif
}

/*
 * ordlock_fast_let_go(): the word of member @u (at generation @g unless
 * @anygen) is freed, or handed to the kernel and granted to the head.
 * lres: LG_OK, LG_ENOENT (not @u's), LG_EIO (it kept changing).
 * @revoking: a revocation takes it (the ghosts say so in the same step).
 */
inline let_go(u, g, anygen, revoking)
{
	LOAD();
	tl = 0;
	lres = LG_EIO;
	do
	:: tl == TRIES -> break
	:: tl < TRIES && (lo != u || (!anygen && GEN_DIFFERS(lg, g))) -> lres = LG_ENOENT; break
	:: tl < TRIES && lo == u && (anygen || !GEN_DIFFERS(lg, g)) ->
		atomic {
			if
			:: gen == lg && owner == lo && W == lw ->
#ifndef BUG_WAKE_RETRY
				if
				:: qlen == 0 -> owner = 0; W = false
				:: qlen > 0 && MAYPASS(q[0]) ->
					/* passing: wake the head, free the word, W kept */
					owner = 0;
#ifdef BUG_PASS_CLEARS_W
					W = false;
#endif
					woken[q[0]] = true
				:: qlen > 0 && !MAYPASS(q[0]) ->
					gen = NEXTGEN(gen); owner = K; W = false
				fi;
#else
				/* the flaw: free the word, wake the head to try again */
				owner = 0; W = false;
				if
				:: qlen > 0 ->
					nx = q[0];
					i = 0;
					do
					:: i + 1 < qlen -> q[i] = q[i + 1]; i++
					:: else -> break
					od;
					qlen--;
					q[qlen] = 0;
					wst[nx] = RETRY
				:: else -> skip
				fi;
#endif
				held[u] = false;
				if
				:: revoking -> rv[u] = true
				:: else -> skip
				fi;
				ok = true
			:: else -> lg = gen; lo = owner; lw = W; ok = false
			fi
		};
		if
		:: ok ->
			lres = LG_OK;
#ifndef BUG_WAKE_RETRY
			if
			:: qlen > 0 && !PASSABLE -> settle()
			:: else -> skip
			fi;
#endif
			break
		:: else -> tl++
		fi
	od
}

/* __ordlock_res_drop_hold() of @u's kernel hold */
inline drop_hold(u)
{
	kh = 0;
	/* ordlock_res_release_waiters(): a head that may be passed is woken */
	if
	:: qlen > 0 && MAYPASS(q[0]) -> woken[q[0]] = true
	:: else -> skip
	fi;
	settle()
}

/*
 * ordlock_res_take_woken(): the woken head @u runs: it takes the key
 * (claim() of the free word), or counts that it was passed and sleeps on
 */
inline take_woken(u)
{
	assert(qlen > 0 && q[0] == u);
	woken[u] = false;
	grant_waiters();
	if
	:: wst[u] != GRANTED ->
		passed[u]++;
		assert(passed[u] <= MAXPASS)	/* the bound */
	:: else -> skip
	fi
}

/* a waiter leaves the queue (timeout, death): ordlock_res_dequeue() */
inline dequeue(u)
{
	atomic {
		i = 0;
		do
		:: i < qlen && q[i] != u -> i++
		:: i < qlen && q[i] == u -> break
		:: i >= qlen -> break
		od;
		assert(i < qlen);
		do
		:: i + 1 < qlen -> q[i] = q[i + 1]; i++
		:: else -> break
		od;
		qlen--;
		q[qlen] = 0;
		wst[u] = NONE;
		woken[u] = false
	};
	settle()
}

/*
 * The kernel's acquire (ACQUIRE ioctl) for @u: granted at once when
 * nobody waits and the word can be claimed, else queued (queued()) to
 * sleep until granted or the timeout. got: the key is @u's (kgot: in the
 * kernel's holders); else it timed out.
 */
inline kacquire(u)
{
	LOCK(u);
retry:
	if
	:: qlen == 0 && kh == 0 -> claim()
	:: else -> ok = false
	fi;
	if
	:: ok ->
		atomic { KGRANT(u) };
		UNLOCK(u);
		got = true;
		goto acquired
	:: else ->
		atomic { q[qlen] = u; qlen++; wst[u] = WAITING };
		queued();
		UNLOCK(u)
	fi;
	do
	:: wst[u] == GRANTED -> wst[u] = NONE; got = true; break
	:: wst[u] == RETRY -> wst[u] = NONE; LOCK(u); goto retry
	:: wst[u] == WAITING && woken[u] ->
		/* woken for the free key: take it, or be passed */
		LOCK(u);
		if
		:: woken[u] -> take_woken(u)
		:: else -> skip
		fi;
		UNLOCK(u)
#if !defined(LIVENESS) && !defined(NOTIMEOUT)
	:: wst[u] == WAITING ->	/* the timeout fires */
		LOCK(u);
		if
		:: wst[u] == WAITING && woken[u] -> take_woken(u)	/* woken first */
		:: else -> skip
		fi;
		if
		:: wst[u] == GRANTED -> wst[u] = NONE; got = true	/* granted first */
		:: wst[u] == RETRY -> wst[u] = NONE; goto retry
		:: wst[u] == WAITING ->
			/* never a timeout on a free key (but one left for a woken head) */
			assert(owner != 0 || (q[0] != u && woken[q[0]]));
			dequeue(u);
			got = false
		fi;
		UNLOCK(u);
		break
#endif
	od;
acquired:
	skip
}

/* RELEASE_ALL: acknowledges a revocation; lets go of what is still @u's */
inline release_all(u)
{
	LOCK(u);
	if
	:: kh == u -> held[u] = false; drop_hold(u)
	:: else -> skip
	fi;
	if
	:: owner == u -> let_go(u, 0, true, false)
	:: else -> skip
	fi;
	atomic {
		held[u] = false;
		revoked[u] = false;
		revdone[u] = false
	};
	stk[u] = false;
	UNLOCK(u)
}

proctype User(byte u)
{
	byte r, lg, lo, i, nx, tc, ts, tq, tl, lres, act;
	bool lw, ok, got, sawrv, kgot, ack;

	{
		r = 0;
		do
		:: r < ROUNDS || LIVENESS_LOOP ->
			/* uncontended acquire: pending, CAS {g, 0, 0} -> {g+1, u, 0}, push */
			pend[u] = true;
			kgot = false;
#ifdef BUG_FLAG_BEFORE_CAS
			sawrv = revoked[u];
#endif
			LOAD();
			atomic {
				if
				:: lo == 0 && gen == lg && owner == 0 && W == lw ->
					/* barging only past a woken head that may be passed */
					assert(qlen == 0 || locked || (W && woken[q[0]]));
					gen = NEXTGEN(gen); owner = u;
#ifdef BUG_BARGER_CLEARS_W
					W = false;
#endif
					held[u] = true; hg[u] = gen; rv[u] = false;
					got = true
				:: else -> got = false
				fi;
				lg = 0; lo = 0; lw = false
			};
			if
			:: got -> stkgen[u] = hg[u]; stk[u] = true; pend[u] = false
			:: else ->
				pend[u] = false;
				kacquire(u);
				kgot = got
			fi;
			/* a revocation that came first: acknowledge, the acquire failed */
#ifndef BUG_FLAG_BEFORE_CAS
			sawrv = revoked[u];
#endif
			if
			:: got && sawrv -> ack = true; got = false
			:: else -> skip
			fi;
			if
			:: got && kgot ->
				incs[u] = true;
				/* the critical section (the monitor checks it) */
				incs[u] = false;
				/* the kernel's RELEASE of its hold */
				LOCK(u);
				if
				:: kh == u -> held[u] = false; drop_hold(u); ok = true
				:: else ->
					assert(revoked[u] && rv[u]);	/* only a revocation takes it */
					ok = false
				fi;
				UNLOCK(u);
				ack = !ok	/* EKEYEXPIRED: acknowledge */
			:: got && !kgot ->
				incs[u] = true;
				/* the critical section (the monitor checks it) */
				/* release: CAS {g, u, 0} -> {g, 0, 0}, then pop */
				incs[u] = false;
				atomic {
					if
					:: RELEASE_OK(u, stkgen[u]) ->
						assert(!rv[u]);	/* a revoked hold's release fails */
						owner = 0; held[u] = false; ok = true
					:: else -> ok = false
					fi
				};
				if
				:: ok -> stk[u] = false
				:: else ->
					/* FAST_RELEASE: hand over, or EKEYEXPIRED */
					LOCK(u);
					let_go(u, stkgen[u], false, false);
					assert(lres != LG_EIO);
					assert(lres == LG_OK || (revoked[u] && rv[u]));
					UNLOCK(u);
					if
					:: lres == LG_OK -> stk[u] = false
					:: else -> ack = true	/* EKEYEXPIRED: acknowledge */
					fi
				fi
			:: else -> skip
			fi;
			/* RELEASE_ALL, the acknowledgment of a revocation */
			if
			:: ack -> release_all(u)
			:: else -> skip
			fi;
			atomic { ok = false; got = false; kgot = false; sawrv = false; lres = 0; ack = false };
#ifndef LIVENESS
			r++
#endif
		:: else -> break
		od
	} unless { kill[u] };

	if
	:: kill[u] ->
		/* the file's release: leave the queue, the kernel's holds, the words */
		LOCK(u);
		if
		:: wst[u] == WAITING -> dequeue(u)
		:: wst[u] == GRANTED || wst[u] == RETRY -> wst[u] = NONE
		:: else -> skip
		fi;
		if
		:: kh == u -> held[u] = false; drop_hold(u)
		:: else -> skip
		fi;
#ifdef BUG_NO_PENDING
		/* the flaw: the held stack only, not the words */
		if
		:: stk[u] && owner == u -> let_go(u, 0, true, false)
		:: else -> skip
		fi;
#else
		if
		:: owner == u -> let_go(u, 0, true, false)
		:: else -> skip
		fi;
#endif
		assert(owner != u && kh != u);	/* death releases everything */
		held[u] = false;
		UNLOCK(u)
	:: else -> skip
	fi;
	atomic { fin[u] = true; nfin++ }
}

/* the lease timer: revokes an owner at any time */
proctype Revoker()
{
	byte x, lg, lo, i, nx, tc, ts, tq, tl, lres, act;
	bool lw, ok;

	do
	:: nrevoked < REVOKES ->
		if
		:: x = 1
		:: x = 2
		fi;
		LOCK(0);
#ifndef BUG_WALK_BEFORE_FLAG
		revoked[x] = true;	/* the flag first, then the words */
#endif
		/* the kernel's holds of the owner */
		if
		:: kh == x -> atomic { rv[x] = true; held[x] = false }; drop_hold(x)
		:: else -> skip
		fi;
		/* the walk: every word that names the owner (not its stack) */
		if
		:: owner == x -> let_go(x, 0, true, true)
		:: else -> skip
		fi;
#ifdef BUG_WALK_BEFORE_FLAG
		revoked[x] = true;
#endif
		/* a holder the walk missed is mid-acquire and reads the flag next */
		atomic { UNLOCK(0); revdone[x] = true };
		nrevoked++
	:: nrevoked >= REVOKES -> break
	od
}

/* a stale copy of owner 1: releases a hold owner 1 has let go of since */
proctype Stale()
{
	byte sg, lg, lo, i, nx, tc, ts, tq, tl, lres, act;
	bool lw, ok;

	if
	:: atomic { held[1] && !rv[1] && !dead[1] && stk[1] -> sg = stkgen[1] }
	:: skip -> goto out
	fi;
	(!held[1] || hg[1] != sg || fin[1]);
	atomic {
		if
		:: RELEASE_OK(1, sg) -> owner = 0; ok = true
		:: else -> ok = false
		fi
	};
	if
	:: !ok ->
		LOCK(0);
		let_go(1, sg, false, false);	/* ENOENT, unless it is that hold */
		UNLOCK(0)
	:: else -> skip
	fi;
out:
	skip
}

/* kills one owner at any statement outside the kernel's critical sections */
proctype Killer()
{
	do
	:: atomic { nkilled < KILLS && !inkernel[1] && !fin[1] && !kill[1] ->
		kill[1] = true; dead[1] = true; nkilled++ }
	:: atomic { nkilled < KILLS && !inkernel[2] && !fin[2] && !kill[2] ->
		kill[2] = true; dead[2] = true; nkilled++ }
#if NU > 2
	:: atomic { nkilled < KILLS && !inkernel[3] && !fin[3] && !kill[3] ->
		kill[3] = true; dead[3] = true; nkilled++ }
#endif
	:: break
	od
}

/*
 * The invariants, whenever the bucket lock is free:
 * - mutual exclusion and the word is the truth: an owner that believes it
 *   holds the key, unrevoked and alive, is named by the word at its
 *   generation, or is the kernel's holder with the word K (so at most one
 *   holds it); the word names only such an owner, or a dead one not yet
 *   cleaned up; K exactly when the kernel has a holder;
 * - no lost wake-up, no stuck waiter: W only behind a member; a queue
 *   means W behind a member (whose release comes to the kernel) or the
 *   kernel's holder (whose release is in the kernel); never a free word
 *   with a queue.
 */
proctype Monitor()
{
	byte u;

	atomic {
		!locked ->
		for (u : 1 .. NU) {
			assert(!(held[u] && !rv[u] && !dead[u]) ||
			       (owner == u && gen == hg[u]) || (owner == K && kh == u))
		};
		assert(owner == 0 || owner == K || dead[owner] ||
		       (held[owner] && !rv[owner] && hg[owner] == gen));
		assert((owner == K) == (kh != 0));
		assert(!W || owner != K);
		assert(W == (qlen > 0 && owner != K));
		/* a free word with a queue: left for its woken head (passing) */
		assert(qlen == 0 || owner != 0 || woken[q[0]]);
		/* a revocation that ended took every key its owner uses */
		for (u : 1 .. NU) {
			assert(!(revdone[u] && incs[u] && !rv[u] && !dead[u]))
		}
	}
}

#ifdef LIVENESS
ltl handed { [] ((wst[1] == WAITING) -> <> (wst[1] == GRANTED)) }
#endif

init
{
	atomic {
		run User(1);
		run User(2);
#if NU > 2
		run User(3);
#endif
		run Revoker();
#ifndef LIVENESS
#ifndef NOSTALE
		run Stale();
#endif
		run Killer();
#ifndef NOMONITOR
		run Monitor();
#endif
#endif
	}
#ifndef LIVENESS
	/* every owner finished: nothing is held, nobody waits */
	(nfin == NU);
	assert(owner == 0 && qlen == 0 && !W && kh == 0)
#endif
}
