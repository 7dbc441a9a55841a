# SPDX-License-Identifier: GPL-2.0
#
# fault_check.awk -- the checker of make check-faults (c_faults, issue 27):
# reads the history the clients, the storage and the host recorded during a
# run and prints every violation it finds ("violation: ..."), then one line
# of figures ("checked: ..."); exits 1 when it found a violation.
#
#   awk -v lease_ms=L -v wait_bound_ms=W -v gone_bound_ms=G -v kill_bound_ms=K \
#       [-v clock_skew_ms=S] -f fault_check.awk FILE...
#
# Every line: TIME_MS NODE OP EVENT [NAME=VALUE]...  (NODE 0: the host).
# The lines of one file are in the order they were written; a key's grants
# are in a file of their own (written under the key: the file's order is
# the order of the grants, but for holders revoked before they wrote; see
# (a)), the storage's in one file (written under the storage's own
# mutex).  Events:
#   invoke keys=K1,K2 timeout=MS   a client asks for the keys (exclusive)
#   ok token=T                     granted (recorded by the command, under them)
#   grant key=K token=T prev=OP|-  the key's grant log; prev: the op whose
#                                  holder marker was still there (its
#                                  command had not ended), - if none
#   write result=accepted|fenced|refused
#                                  the holder's write: accepted or fenced
#                                  by the storage, refused by the holder
#                                  itself (check-token said stale)
#   store result=registered|accepted|fenced|read-fenced token=T keys=K1,K2
#                                  the storage's own log (a read registers
#                                  its token; only writes are "accepted")
#   end stale=0|1|N                the command ends (markers removed first,
#                                  then check-token: 1 when the grant was
#                                  revoked by then; taken as a revocation
#                                  only when plausible: (e) below)
#   exit rc=N [reason=R]           ordlockctl exec returned N (after the
#                                  release); an op without "ok" failed,
#                                  R: why (timeout, deadlock, other)
#   kill node=N                    the host killed node N (SIGKILL, qemu):
#                                  the n-th kill of N ends the life n of
#                                  its ops (NODE.LIFE.CLIENT.SEQ)
#   fault kind=K ...               a fault of the schedule: counted by kind
#   gstop node=N ms=D, part node=N ms=D, and any other host event: counted
#
# What is checked (the bounds are the -v values, milliseconds):
# (a) each key's tokens rise at every grant, in grant order, and no two
#     grants of a key share a token.  Grant order: the key log's order
#     between grants held to their end (check-token said so after the line
#     was written); a holder stopped after its grant and revoked may write
#     its line after the next holder's (seed 5 of the 200-fault run), so
#     its grant is ordered by evidence alone: a grant that found its marker
#     (prev) while itself held to its end, or was logged after it while
#     held to its end, came after it; a
#     grant acknowledged (ok) more than clock_skew_ms (1000) before it was
#     asked for (invoke) came before it.  The storage
#     accepted each key's writes in rising token order, and no write of an
#     op that read the key through the storage (registered) after another
#     op's write was accepted on the key since that read (a lost update);
#     no two holders
#     overlap: a grant that found an earlier holder's marker is a violation
#     unless that holder's grant was revoked (its end says stale) or its
#     node was killed while it held, or the finder's own grant was revoked
#     (stopped after its grant, it may read the marker of the holder that
#     rightly came after it);
# (b) no wait lasted past its timeout plus wait_bound_ms (invoke to ok, or
#     to the exit of a request that was not granted);
# (c) no key stays held after its owner is gone: when a holder is gone
#     (its lease deadline, ok + lease_ms, if it ended stale; the kill of its
#     node, if it held then), a waiter for the key that asked before and was
#     still waiting gone_bound_ms later (kill_bound_ms for a kill), while no
#     live holder had its other key, means a violation unless the key was
#     granted to someone within that bound; a cluster fault (a kill, a
#     stopped guest or a partition) in that window gives the kill bound,
#     because the DLM grants nothing while it recovers (seed 2: a node
#     killed 0.5 s after a holder's lease ended, no grant anywhere for the
#     next 17.5 s);
# (d) nothing lost: every granted op ended (exit), unless its node was
#     killed; every exclusive grant of the key log is an op that was granted.
# (e) a stale end is ordlock's own answer (check-token), not proof: it is
#     taken as a revocation (the grant left out of the key log's order,
#     its marker no overlap, its holder gone at its lease) only when it is
#     plausible: the op held its grant at least lease_ms less clock_skew_ms
#     (ok to end, on its node's clock), or a fault touched its node
#     meanwhile (a kill, a stopped guest or a partition of the node, a
#     fault of the schedule aimed at it or at every node).  Any other
#     stale end is taken as held to its end, so that a wrong "stale"
#     cannot hide a backwards token (issue 41: a planted one ending
#     stale=1 after 3.2 s of a 10 s lease was not caught).
# (f) no false victim: every op takes its keys in one request, sorted by
#     the kernel (the order rule), so no cycle of waits can exist and an
#     op that failed as a deadlock victim (exit reason=deadlock: EDEADLK
#     of the detect policy, issue 41) is a violation, named with the op.
function split_keys(s, arr) { return split(s, arr, ",") }
function field(name,    i) {
	for (i = 5; i <= NF; i++)
		if (index($i, name "=") == 1)
			return substr($i, length(name) + 2)
	return ""
}
function violation(msg) { print "violation: " msg; nviol++ }
BEGIN {
	if (lease_ms == "") lease_ms = 0
	if (wait_bound_ms == "") wait_bound_ms = 5000
	if (gone_bound_ms == "") gone_bound_ms = 10000
	if (kill_bound_ms == "") kill_bound_ms = 30000
	if (clock_skew_ms == "") clock_skew_ms = 1000
}
NF >= 4 {
	t = $1 + 0; nd = $2; op = $3; ev = $4
	if (nd == 0) {
		if (ev == "fault") { faults[field("kind")]++; nfaults++ }
		else hostev[ev]++
		# what touched a node, and when (e): the host's kill, stop and
		# partition of the node until their end (a kill: the kill
		# bound), a fault of the schedule from its start for its ms, if
		# any, or its node's clock skew (restart and lru: every node)
		if (ev == "kill" || ev == "gstop" || ev == "part" || ev == "fault") {
			ntouch++; tchnode[ntouch] = field("node"); tcha[ntouch] = t
			tchb[ntouch] = t + (ev == "kill" ? kill_bound_ms : field("ms") + clock_skew_ms)
			if (ev == "fault" && (field("kind") == "restart" || field("kind") == "lru")) tchnode[ntouch] = "*"
			if (ev == "gstop" || ev == "part") touchof[ev, field("node")] = ntouch
		}
		if ((ev == "gstop-end" || ev == "part-end") && ((substr(ev, 1, length(ev) - 4), field("node")) in touchof))
			tchb[touchof[substr(ev, 1, length(ev) - 4), field("node")]] = t
		# the n-th kill of node N ends its life n (op ids NODE.LIFE.C.SEQ)
		if (ev == "kill") { kn = field("node"); nkill[kn]++; killedat[kn, nkill[kn]] = t }
		# the cluster faults that stall the DLM: a kill (until recovery),
		# a stopped guest or a partition (until its end)
		if (ev == "kill") { nstall++; stalla[nstall] = t; stallb[nstall] = t + kill_bound_ms }
		if (ev == "gstop" || ev == "part") {
			nstall++; stalla[nstall] = t; stallb[nstall] = t + field("ms")
			stallof[ev, field("node")] = nstall
		}
		if ((ev == "gstop-end" || ev == "part-end") && ((substr(ev, 1, length(ev) - 4), field("node")) in stallof))
			stallb[stallof[substr(ev, 1, length(ev) - 4), field("node")]] = t
		next
	}
	opnode[op] = nd
	if (ev == "invoke") {
		nops++
		inv[op] = t; keys[op] = field("keys"); tmo[op] = field("timeout") + 0
	} else if (ev == "ok") {
		okt[op] = t; tok[op] = field("token"); ngranted++
	} else if (ev == "grant") {
		k = field("key"); tk = field("token") + 0; pv = field("prev")
		ngrants++
		kgrants[k]++
		kgop[k, kgrants[k]] = op
		# the token as written (a subscript made of the number would
		# be rounded to 6 digits)
		kgtok[k, kgrants[k]] = field("token")
		if (pv != "-" && pv != "") { nover++; overk[nover] = k; overop[nover] = op; overprev[nover] = pv; overtok[nover] = tk }
	} else if (ev == "write") {
		wres[op] = field("result"); writes[field("result")]++
	} else if (ev == "store") {
		n = split_keys(field("keys"), ks); tk = field("token") + 0
		if (field("result") == "registered") {
			# a read: another op's write accepted on the key before
			# this op's own write makes that write a lost update
			nregistered++
			for (i = 1; i <= n; i++) { readat[op, ks[i]] = 1; pending[ks[i]] = pending[ks[i]] " " op }
			next
		}
		if (field("result") != "accepted") { nfenced++; next }
		naccepted++
		for (i = 1; i <= n; i++) {
			if ((ks[i] in slast) && tk <= slast[ks[i]])
				violation("storage: key " ks[i] " accepted token " tk " (op " op ") after token " slast[ks[i]])
			slast[ks[i]] = tk
			if ((op, ks[i]) in overwritten)
				violation("storage: key " ks[i] ": op " op "'s write accepted, but op " overwritten[op, ks[i]] "'s was accepted after op " op " read it (a lost update)")
			np = split(pending[ks[i]], pl, " ")
			for (j = 1; j <= np; j++)
				if (pl[j] != op && !((pl[j], ks[i]) in overwritten))
					overwritten[pl[j], ks[i]] = op
			pending[ks[i]] = ""
		}
	} else if (ev == "end") {
		endt[op] = t; stale[op] = (field("stale") == "1")
		if (stale[op]) nstale++
		if (field("stale") != "0" && field("stale") != "1") nendbad++
	} else if (ev == "exit") {
		exitt[op] = t; rc[op] = field("rc")
		if (field("reason") != "") whyfail[field("reason")]++
		if (field("reason") == "deadlock")
			violation("false victim: op " op " (node " nd ", keys " keys[op] ") failed with EDEADLK (reason deadlock, exit " field("rc") "), but every op takes its keys in ascending order: no cycle can exist")
	}
}
# the time op's node was killed in op's life (op: NODE.LIFE.CLIENT.SEQ; a
# shorter op id is of life 1), or -1
function killtime(op,    p, n) {
	n = split(op, p, ".")
	return ((opnode[op], (n >= 4 ? p[2] : 1)) in killedat) ? killedat[opnode[op], (n >= 4 ? p[2] : 1)] : -1
}
# the time the holder of op was gone, or -1 (it released)
function gone(op,    kt) {
	if (!(op in okt)) return -1
	if (stale[op]) return okt[op] + lease_ms
	kt = killtime(op)
	if (!(op in exitt) && kt >= okt[op]) return kt
	return -1
}
# op holds key k (a live holder: not gone) at some moment of [a, b]
function holds(op, k, a, b,    e, ks, n, i, found) {
	if (!(op in okt) || okt[op] > b) return 0
	n = split_keys(keys[op], ks); found = 0
	for (i = 1; i <= n; i++) if (ks[i] == k) found = 1
	if (!found) return 0
	e = (op in exitt) ? exitt[op] : ((op in endt) ? endt[op] : b)
	if (gone(op) >= 0 && gone(op) < e) e = gone(op)
	return e > a
}
# op held its grant until its end: check-token said so after the key's log
# line was written, so the line was written while it held the key
function held_to_end(op) { return (op in endt) && !stale[op] }
# a cluster fault (a kill, a stopped guest, a partition) stalled the DLM at
# some moment of [a, b]
# a fault touched node nd at some moment of [a, b] (e)
function touched(nd, a, b,    i) {
	for (i = 1; i <= ntouch; i++)
		if ((tchnode[i] == nd || tchnode[i] == "*") && tcha[i] <= b && tchb[i] >= a) return 1
	return 0
}
function stalled(a, b,    i) {
	for (i = 1; i <= nstall; i++)
		if (stalla[i] <= b && stallb[i] >= a) return 1
	return 0
}
END {
	# (e) a stale end not plausible is taken as held to its end
	for (op in stale) {
		if (!stale[op]) continue
		if ((op in okt) && endt[op] - okt[op] >= lease_ms - clock_skew_ms) { nstale_lease++; continue }
		if ((op in okt) && touched(opnode[op], okt[op], endt[op])) { nstale_fault++; continue }
		stale[op] = 0; nstale_bad++
	}
	# (a) tokens: a key's log is in grant order between the grants held to
	# their end; a holder revoked first (paused past its lease) may have
	# written its line after the next holder's, so its grant is ordered by
	# the marker the next holder found (prev), which it wrote after its
	# grant.  No two grants of a key share a token.
	for (k in kgrants) {
		lastc = ""
		for (x = 1; x <= kgrants[k]; x++) {
			g = kgop[k, x]; tk = kgtok[k, x]
			if ((k, tk) in tokop)
				violation("key " k ": grant " x " (op " g ") has the token " tk " of op " tokop[k, tk] "'s grant")
			tokop[k, tk] = g
			if (!held_to_end(g)) { nlate++; continue }
			if (lastc != "" && tk + 0 <= lastt + 0)
				violation("key " k ": grant " x " (op " g ", token " tk ") not above grant of op " lastc " (token " lastt ")")
			lastc = g; lastt = tk
		}
	}
	for (k in kgrants) for (x = 1; x <= kgrants[k]; x++) tokof[k, kgop[k, x]] = kgtok[k, x]
	# a grant held to its end logged after any grant was granted after it
	# (it held the key when it wrote its line, and the other one had
	# written its own line after its grant); a grant that was acknowledged
	# (ok, after the grant) before another op asked (invoke, before its
	# grant), with clock_skew_ms between two guests' clocks, came first
	for (k in kgrants)
		for (x = 1; x <= kgrants[k]; x++) {
			g = kgop[k, x]
			for (y = 1; y <= kgrants[k]; y++) {
				h = kgop[k, y]
				if (y == x || !(h in okt) || !(g in inv)) continue
				if (y > x + 1 && !held_to_end(g) && held_to_end(h) && kgtok[k, y] + 0 <= kgtok[k, x] + 0)
					violation("key " k ": grant " y " (op " h ", token " kgtok[k, y] ") not above grant of op " g " (token " kgtok[k, x] "), logged before it")
				if (okt[h] + clock_skew_ms < inv[g] && kgtok[k, x] + 0 <= kgtok[k, y] + 0)
					violation("key " k ": grant of op " g " (token " kgtok[k, x] ") not above grant of op " h " (token " kgtok[k, y] "), granted before op " g " asked")
			}
		}
	# (a marker found by a holder revoked before it read it, stopped
	# after its grant, says nothing of the order: seed 5's replay)
	for (i = 1; i <= nover; i++)
		if (held_to_end(overop[i]) && ((overk[i], overprev[i]) in tokof) &&
		    overtok[i] <= tokof[overk[i], overprev[i]] + 0)
			violation("key " overk[i] ": grant of op " overop[i] " (token " overtok[i] ") not above grant of op " overprev[i] " (token " tokof[overk[i], overprev[i]] "), whose marker it found")
	# (a) overlaps
	for (i = 1; i <= nover; i++) {
		p = overprev[i]
		if (stale[p]) { nover_ok++; continue }
		# the finder itself was revoked: it may have read the marker
		# after its lease ended, while p held the key rightly
		if (stale[overop[i]]) { nover_ok++; continue }
		if (killtime(p) >= 0 && !(p in exitt)) { nover_ok++; continue }
		violation("key " overk[i] ": op " overop[i] " was granted while op " p " still held it (not revoked, its node not killed)")
	}
	# (b) waits
	for (op in inv) {
		if (op in okt) w = okt[op] - inv[op]
		else if (op in exitt) w = exitt[op] - inv[op]
		else continue
		if (w > maxwait) maxwait = w
		if (w > tmo[op] + wait_bound_ms)
			violation("op " op " (node " opnode[op] ", keys " keys[op] ") waited " w " ms, timeout " tmo[op] " ms")
		if (!(op in okt)) ntimeout++
	}
	# (c) held after the owner is gone
	for (g in okt) {
		gt = gone(g)
		if (gt < 0) continue
		b = (stale[g] ? gone_bound_ms : kill_bound_ms)
		# the DLM grants nothing while it recovers from a cluster fault
		if (b < kill_bound_ms && stalled(gt, gt + b)) { b = kill_bound_ms; install = 1 } else install = 0
		ng = split_keys(keys[g], gk)
		for (j = 1; j <= ng; j++) {
			k = gk[j]
			ngone++; nstalled += install
			# the next grant of k after g
			granted_at = -1
			for (x = 1; x <= kgrants[k]; x++) {
				if (kgop[k, x] != g) continue
				if (x < kgrants[k] && (kgop[k, x + 1] in okt)) granted_at = okt[kgop[k, x + 1]]
				break
			}
			if (granted_at >= 0 && granted_at - gt > maxgone) maxgone = granted_at - gt
			if (granted_at >= 0 && granted_at <= gt + b) continue
			for (w in inv) {
				if (w == g || inv[w] > gt) continue
				endw = (w in okt) ? okt[w] : ((w in exitt) ? exitt[w] : -1)
				if (endw < 0) { if (killtime(w) >= 0) endw = killtime(w); else continue }
				if (endw < gt + b) continue
				nw = split_keys(keys[w], wk); wants = 0; busy = 0
				for (y = 1; y <= nw; y++) if (wk[y] == k) wants = 1
				if (!wants) continue
				for (y = 1; y <= nw; y++) {
					if (wk[y] == k) continue
					for (h in okt) if (h != w && h != g && holds(h, wk[y], gt, gt + b)) { busy = 1; break }
				}
				if (busy) continue
				violation("key " k ": op " g " (node " opnode[g] ") gone at " gt ", op " w " still waited " b " ms later and no one got the key")
				break
			}
		}
	}
	# (d) nothing lost
	for (op in okt) {
		if (op in exitt) continue
		if (killtime(op) >= okt[op]) { nlostnode++; continue }
		violation("op " op " (node " opnode[op] ") was granted " keys[op] " (token " tok[op] ") and never ended")
	}
	for (k in kgrants)
		for (x = 1; x <= kgrants[k]; x++)
			if (!(kgop[k, x] in okt))
				violation("key " k ": grant " x " by op " kgop[k, x] ", which has no ok")
	hs = ""
	for (e in faults) hs = hs " " e " " faults[e]
	hs = hs ";"
	for (e in hostev) hs = hs " " e " " hostev[e]
	printf "checked: %d ops, %d granted, %d timed out or refused, %d key grants, %d overlaps of revoked or dead holders, %d stale ends (%d unknown; %d after the lease, %d in a fault, %d not plausible: taken as held), writes accepted %d fenced %d refused %d, storage registered %d accepted %d fenced %d, %d keys of gone holders (%d in a cluster fault), %d grants ordered by the marker alone, longest wait %d ms, longest gone-to-next-grant %d ms, not granted by reason: timeout %d deadlock %d other %d, %d faults:%s; %d violations\n",
		nops, ngranted, ntimeout, ngrants, nover_ok, nstale, nendbad, nstale_lease, nstale_fault, nstale_bad, writes["accepted"], writes["fenced"], writes["refused"],
		nregistered, naccepted, nfenced, ngone, nstalled, nlate, maxwait, maxgone, whyfail["timeout"], whyfail["deadlock"], whyfail["other"], nfaults, hs, nviol
	exit (nviol > 0)
}
