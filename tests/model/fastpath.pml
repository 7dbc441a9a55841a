/*
 * fastpath.pml -- a model of the fast-path word protocol (docs/fastpath.md),
 * checked by spin (tests/unit/t_model_spin.sh runs it).
 *
 * One key's word {gen, owner, W} (owner 0: free; W: WAITERS), the kernel's
 * FIFO queue of waiters behind the bucket lock, per owner a page with the
 * held stack (here: the key and its generation) and the pending slot, and
 * the owner's revoked flag. NU owners take and let go of the key ROUNDS
 * times each: uncontended by a CAS in user space, else through the kernel
 * (set W, queue FIFO, sleep until the key is handed over by writing the
 * waiter into the word, or time out). A lease timer revokes any owner at
 * any time; a killer kills an owner at any statement outside the kernel's
 * critical sections (also between its CAS and its push, and while it
 * sleeps), and the file's release cleans up; a stale copy of owner 1 (a
 * fork child, or a thread with an old view) tries to release a hold owner
 * 1 has since let go of.
 *
 * A word is one atomic variable: every access to gen/owner/W is inside one
 * atomic block (a load, or a compare-and-swap against what was loaded).
 * The kernel's critical sections take the bucket lock (locked) and are
 * otherwise ordinary steps, so that user CASes interleave with them.
 *
 * Properties: the monitor's invariants (checked whenever the bucket lock
 * is free), assertions at the points named below, and no invalid end
 * state (a waiter left sleeping for ever is one). LIVENESS (cyclic runs,
 * no deaths or timeouts): the ltl claim that a waiter is eventually
 * handed the key.
 *
 * Planted bugs (each must make the check fail): BUG_STORE_W (the kernel
 * sets WAITERS with a plain store: a lost wake-up), BUG_NO_PENDING (the
 * death clean-up ignores the pending slot), BUG_OWNER_ONLY (a release
 * compares the owner, not the generation), BUG_RELEASE_IGNORES_W (the
 * user's release CAS ignores WAITERS), BUG_WAKE_RETRY (a release frees the
 * word and wakes the head to retry, instead of handing over: barging),
 * BUG_WALK_BEFORE_FLAG (the revocation walks the words, then raises the
 * flag) and BUG_FLAG_BEFORE_CAS (the library reads the flag before its
 * CAS, not after): either lets an acquire that races the revocation take
 * the key unseen by both, and its owner use it after the revocation ended.
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

#define NONE 0
#define WAITING 1
#define GRANTED 2
#define RETRY 3

/* the word of the key */
byte gen, owner;
bool W;

/* the kernel: the bucket lock and the FIFO queue behind it */
bool locked;
byte q[NU];
byte qlen;
byte wst[NU + 1];		/* per owner: NONE, WAITING, GRANTED, RETRY */

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
#define UNLOCK(u)	atomic { locked = false; inkernel[u] = false }

/* take @u out of the queue (lock held); the last waiter gone clears W */
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
		/* while W is set only the kernel (under the lock) changes the word */
		if
		:: qlen == 0 -> W = false
		:: else -> skip
		fi
	}
}

/*
 * The word names a holder that lets go (release, revocation, death): hand
 * it to the head of the queue by writing the head into the word with a new
 * generation (as FUTEX_UNLOCK_PI does), or free it. Lock held; in the same
 * atomic step as the check that the word is the holder's.
 */
#ifndef BUG_WAKE_RETRY
#define HANDOFF() \
	if \
	:: qlen > 0 -> \
		nx = q[0]; \
		i = 0; \
		do \
		:: i + 1 < qlen -> q[i] = q[i + 1]; i++ \
		:: else -> break \
		od; \
		qlen--; \
		q[qlen] = 0; \
		gen = NEXTGEN(gen); \
		owner = nx; \
		W = (qlen > 0); \
		wst[nx] = GRANTED; \
		held[nx] = true; \
		hg[nx] = gen; \
		rv[nx] = false \
	:: else -> \
		owner = 0; \
		W = false \
	fi
#else
/* the flaw: free the word and wake the head to try again */
#define HANDOFF() \
	if \
	:: qlen > 0 -> \
		nx = q[0]; \
		i = 0; \
		do \
		:: i + 1 < qlen -> q[i] = q[i + 1]; i++ \
		:: else -> break \
		od; \
		qlen--; \
		q[qlen] = 0; \
		owner = 0; \
		W = false; \
		wst[nx] = RETRY \
	:: else -> \
		owner = 0; \
		W = false \
	fi
#endif

/* the word is @u's hold of generation @g (BUG_OWNER_ONLY: any of @u's) */
#ifdef BUG_OWNER_ONLY
#define MINE(u, g)	(owner == (u))
#else
#define MINE(u, g)	(owner == (u) && gen == (g))
#endif

/* the user's release CAS: {g, u, 0} -> {g, 0, 0} */
#ifdef BUG_RELEASE_IGNORES_W
#define RELEASE_OK(u, g)	MINE(u, g)
#else
#define RELEASE_OK(u, g)	(MINE(u, g) && !W)
#endif

/*
 * The kernel's slow acquire (ACQUIRE ioctl) for @u: take the word if it is
 * free, else set W, queue, sleep. got: the key is @u's; else it timed out.
 */
inline slow_acquire(u)
{
	LOCK(u);
retry:
	atomic { lg = gen; lo = owner; lw = W };
	if
	:: lo == 0 && !lw ->
		atomic {
			if
			:: gen == lg && owner == 0 && !W ->
				assert(qlen == 0);	/* no barging: nobody waits */
				gen = NEXTGEN(gen); owner = u;
				held[u] = true; hg[u] = gen; rv[u] = false;
				ok = true
			:: else -> ok = false
			fi
		};
		if
		:: ok -> UNLOCK(u); got = true; goto acquired
		:: else -> goto retry
		fi
	:: lo == 0 && lw -> assert(false)	/* W with no owner: a lost wake-up */
	:: lo != 0 ->
#ifdef BUG_STORE_W
		atomic { gen = lg; owner = lo; W = true; ok = true };
#else
		atomic {
			if
			:: gen == lg && owner == lo && W == lw -> W = true; ok = true
			:: else -> ok = false
			fi
		};
#endif
		if
		:: ok -> skip
		:: else -> goto retry
		fi;
		atomic { q[qlen] = u; qlen++; wst[u] = WAITING };
		UNLOCK(u)
	fi;
sleep:
	if
	:: wst[u] == GRANTED -> wst[u] = NONE; got = true
	:: wst[u] == RETRY -> wst[u] = NONE; LOCK(u); goto retry
#if !defined(LIVENESS) && !defined(NOTIMEOUT)
	:: wst[u] == WAITING ->	/* the timeout fires */
		LOCK(u);
		if
		:: wst[u] == GRANTED -> wst[u] = NONE; got = true	/* granted first */
		:: wst[u] == RETRY -> wst[u] = NONE; goto retry
		:: wst[u] == WAITING -> dequeue(u); got = false
		fi;
		UNLOCK(u)
#endif
	fi;
acquired:
	skip
}

/* RELEASE_ALL: acknowledges a revocation; lets go of what is still @u's */
inline release_all(u)
{
	LOCK(u);
	atomic {
		if
		:: stk[u] && MINE(u, stkgen[u]) -> held[u] = false; HANDOFF()
		:: else -> skip
		fi;
		held[u] = false;
		revoked[u] = false;
		revdone[u] = false
	};
	stk[u] = false;
	UNLOCK(u)
}

proctype User(byte u)
{
	byte r, lg, lo, i, nx;
	bool lw, ok, got, sawrv;

	{
		r = 0;
		do
		:: r < ROUNDS || LIVENESS_LOOP ->
			/* uncontended acquire: pending, CAS {g, 0, 0} -> {g+1, u, 0}, push */
			pend[u] = true;
#ifdef BUG_FLAG_BEFORE_CAS
			sawrv = revoked[u];
#endif
			atomic { lg = gen; lo = owner; lw = W };
			atomic {
				if
				:: lo == 0 && !lw && gen == lg && owner == 0 && !W ->
					assert(qlen == 0);	/* no barging */
					gen = NEXTGEN(gen); owner = u;
					held[u] = true; hg[u] = gen; rv[u] = false;
					got = true
				:: else -> got = false
				fi
			};
			if
			:: got -> stkgen[u] = hg[u]; stk[u] = true; pend[u] = false
			:: else ->
				pend[u] = false;
				slow_acquire(u);
				if
				:: got -> stkgen[u] = hg[u]; stk[u] = true
				:: else -> skip
				fi
			fi;
			/* a revocation that came first: acknowledge, the acquire failed */
#ifndef BUG_FLAG_BEFORE_CAS
			sawrv = revoked[u];
#endif
			if
			:: got && sawrv -> release_all(u); got = false
			:: else -> skip
			fi;
			if
			:: got ->
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
					/* the kernel's release: hand over, or EKEYEXPIRED */
					LOCK(u);
					atomic {
						if
						:: MINE(u, stkgen[u]) ->
							held[u] = false; HANDOFF(); ok = true
						:: else ->
							/* not ours: only a revocation takes it */
							assert(revoked[u] && rv[u]);
							ok = false
						fi
					};
					UNLOCK(u);
					if
					:: ok -> stk[u] = false
					:: else -> release_all(u)	/* EKEYEXPIRED: acknowledge */
					fi
				fi
			:: else -> skip
			fi;
#ifndef LIVENESS
			r++
#endif
		:: else -> break
		od
	} unless { kill[u] };

	if
	:: kill[u] ->
		/* the file's release: leave the queue, then walk the owner page */
		LOCK(u);
		atomic {
			if
			:: wst[u] == WAITING -> dequeue(u)
			:: wst[u] == GRANTED || wst[u] == RETRY -> wst[u] = NONE
			:: else -> skip
			fi;
#ifdef BUG_NO_PENDING
			if
			:: (stk[u] || held[u] && !pend[u]) && owner == u -> HANDOFF()
			:: else -> skip
			fi;
#else
			/* stack, pending slot, and a grant the owner never saw */
			if
			:: owner == u -> HANDOFF()
			:: else -> skip
			fi;
#endif
			assert(owner != u);	/* death releases everything */
			held[u] = false
		};
		UNLOCK(u)
	:: else -> skip
	fi;
	atomic { fin[u] = true; nfin++ }
}

/* the lease timer: revokes an owner at any time */
proctype Revoker()
{
	byte x, i, nx;

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
		/* the walk: every word that names the owner (not its stack) */
		atomic {
			if
			:: owner == x ->
				rv[x] = true; held[x] = false;
#ifndef BUG_WAKE_RETRY
				if
				:: qlen == 0 -> gen = NEXTGEN(gen)	/* the holder's CAS must fail */
				:: else -> skip
				fi;
#endif
				HANDOFF()
			:: else -> skip
			fi
		};
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
	byte sg, i, nx;
	bool ok;

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
		atomic {
			if
			:: MINE(1, sg) -> HANDOFF()
			:: else -> skip	/* ENOENT */
			fi
		};
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
 *   generation (so at most one is); the word names only such an owner, or
 *   a dead one not yet cleaned up;
 * - no lost wake-up: W exactly when someone waits, and then the word has
 *   an owner (who will come to the kernel to let go).
 */
proctype Monitor()
{
	byte u;

	atomic {
		!locked ->
		for (u : 1 .. NU) {
			assert(!(held[u] && !rv[u] && !dead[u]) || (owner == u && gen == hg[u]))
		};
		assert(owner == 0 || dead[owner] || (held[owner] && !rv[owner] && hg[owner] == gen));
		assert(W == (qlen > 0));
		assert(qlen == 0 || owner != 0);
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
		run Monitor();
#endif
	}
#ifndef LIVENESS
	/* every owner finished: nothing is held, nobody waits */
	(nfin == NU);
	assert(owner == 0 && qlen == 0 && !W)
#endif
}
