/*
 * fastslots.pml -- a model of slot recycling in the fast path (issue 40,
 * item 2; kmod/fast_dev.c "Slot recycling", docs/fastpath.md), checked by
 * spin (tests/unit/t_model_spin.sh runs it).
 *
 * One slot, NKEYS keys that compete for it, NM members; member m wants key
 * (m - 1) % NKEYS + 1, ROUNDS times. The slot's word is {owner, inc} (the
 * generation does not matter here: fastpath.pml checks it); the kernel
 * keeps the slot's key, its own copy of the incarnation, each member's pin
 * reference and the members whose pin a recycling took (stale: they may
 * cache an old incarnation), all under its lock.
 *
 * A member pins its key (FAST_PIN: the slot and its incarnation, cached
 * until a CAS says it is stale), then takes the key by a CAS that expects
 * {0, inc}, and lets go by a CAS that expects {me, inc}. A word of another
 * incarnation makes it pin again; a key without a slot, or a word held,
 * sends it to the kernel, which grants a key without a slot by its own
 * holders alone, and a key with a slot by claiming the free word (as
 * ordlock_fast_claim(), which ignores the incarnation: the kernel knows
 * the slot's key). A pin of a key that has no slot recycles the slot when
 * nobody holds or waits for its key: the word free as the kernel left it
 * ({0, inc}), no holder in the kernel, and the incarnation after the move
 * not one a stale member may cache; the word moves to {0, inc + 1} by a
 * CAS, the stale members are noted.
 *
 * Properties (assertions): a member whose CAS took the word holds the
 * slot's key (never another key through a stale cache), and no key has
 * two holders (member or kernel).
 *
 * Planted bugs (each must be found): BUG_NO_INC (a recycled slot keeps
 * its incarnation: a stale cache takes the new key), BUG_RECYCLE_HELD (a
 * slot is recycled while a member holds its word: the key is then granted
 * again by the kernel), BUG_NO_GUARD (the incarnation wraps onto one a
 * stale member caches: INCN 2, three keys).
 */

#ifndef NM
#define NM 2
#endif
#ifndef NKEYS
#define NKEYS 2
#endif
#ifndef ROUNDS
#define ROUNDS 2
#endif
#ifndef INCN
#define INCN 4
#endif
#define KERNEL 9
#define KEY(m) (((m) - 1) % NKEYS + 1)

byte slot_key = 0;		/* the slot's key; 0: never used */
byte w_owner = 0;		/* the word: 0 free, a member, KERNEL */
byte w_inc = 0;			/* the word's incarnation */
byte kinc = 0;			/* the kernel's copy */
byte kheld[NKEYS + 1];		/* the kernel's holders of each key */
byte held[NKEYS + 1];		/* everyone who holds each key */
bool kpin[NM + 1];		/* each member's pin reference */
bool kstale[NM + 1];		/* a recycling took its pin */
byte nstale = 0;
byte stale_base = 0;		/* the oldest incarnation a stale one caches */
bool locked = 0;		/* the kernel's lock (ordlock_fast_lock) */

/* FAST_PIN of member m's key: ok and its incarnation, or no slot */
inline pin(m, ok, inc)
{
	atomic { !locked -> locked = 1 };
	if
	:: slot_key == KEY(m) ->
		ok = 1;
		inc = kinc
	:: slot_key == 0 ->
		/* a slot never used: the word is free, incarnation 0 */
		slot_key = KEY(m);
		if
		:: kheld[KEY(m)] -> w_owner = KERNEL
		:: else -> skip
		fi;
		ok = 1;
		inc = kinc
	:: else ->
		atomic {
			if
			:: kheld[slot_key] == 0 &&
#ifndef BUG_RECYCLE_HELD
			   w_owner == 0 && w_inc == kinc &&
#endif
#ifndef BUG_NO_GUARD
			   !(nstale > 0 && (kinc + 1) % INCN == stale_base) &&
#endif
			   true ->
				/* the CAS {0, inc} -> {0, inc + 1}, then the pins taken */
				j = 1;
				do
				:: j <= NM ->
					if
					:: kpin[j] ->
						kpin[j] = 0;
						if
						:: !kstale[j] ->
							kstale[j] = 1;
							if
							:: nstale == 0 -> stale_base = kinc
							:: else -> skip
							fi;
							nstale++
						:: else -> skip
						fi
					:: else -> skip
					fi;
					j++
				:: else -> break
				od;
#ifndef BUG_NO_INC
				kinc = (kinc + 1) % INCN;
#endif
				w_inc = kinc;
				w_owner = 0;
				slot_key = KEY(m);
				if
				:: kheld[KEY(m)] -> w_owner = KERNEL
				:: else -> skip
				fi;
				ok = 1;
				inc = kinc
			:: else ->
				ok = 0
			fi
		}
	fi;
	if
	:: ok -> kpin[m] = 1
	:: else -> skip
	fi;
	locked = 0
}

/* An acquire in the kernel: waits until it can grant */
inline kacquire(m)
{
	atomic {
		!locked && kheld[KEY(m)] == 0 &&
		(slot_key != KEY(m) || w_owner == 0) ->
		if
		:: slot_key == KEY(m) -> w_owner = KERNEL
		:: else -> skip
		fi;
		kheld[KEY(m)] = 1;
		assert(held[KEY(m)] == 0);
		held[KEY(m)]++
	}
}

inline krelease(m)
{
	atomic {
		!locked ->
		if
		:: slot_key == KEY(m) && w_owner == KERNEL -> w_owner = 0
		:: else -> skip
		fi;
		kheld[KEY(m)] = 0;
		held[KEY(m)]--
	}
}

proctype member(byte m)
{
	byte r = 0, inc = 0, j;
	bool cached = 0, ok, took, stale;

	do
	:: r < ROUNDS ->
		stale = 0;
again:
		if
		:: !cached ->
			pin(m, ok, inc);
			cached = ok
		:: else -> skip
		fi;
		took = 0;
		if
		:: cached ->
			atomic {
				if
				:: w_owner == 0 && w_inc == inc ->
					w_owner = m;
					took = 1;
					/* the word taken is its key's */
					assert(slot_key == KEY(m));
					assert(held[KEY(m)] == 0);
					held[KEY(m)]++
				:: w_inc != inc ->
					/* another incarnation: pin again */
					cached = 0;
					stale = 1
				:: else -> skip
				fi
			}
		:: else -> skip
		fi;
		if
		:: !took && stale && !cached ->
			stale = 0;
			goto again
		:: else -> skip
		fi;
		if
		:: took ->
			/* the release CAS {me, inc} -> {0, inc}; else FAST_RELEASE */
			atomic {
				if
				:: w_owner == m && w_inc == inc -> w_owner = 0
				:: else -> skip
				fi;
				held[KEY(m)]--
			}
		:: else ->
			kacquire(m);
			krelease(m)
		fi;
		r++
	:: else -> break
	od
}

init
{
	byte i;

	atomic {
		i = 1;
		do
		:: i <= NM -> run member(i); i++
		:: else -> break
		od
	}
}
