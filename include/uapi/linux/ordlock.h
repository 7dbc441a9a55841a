/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * ordlock: ordered multi-resource locks for processes.
 *
 * The interface of /dev/ordlock (ioctls) and of the generic netlink family
 * "ordlock", in kernel-doc: scripts/kernel-doc -rst renders it.
 */

/**
 * DOC: Overview
 *
 * A process opens /dev/ordlock. Each open file description is one *owner*:
 * every lock it takes belongs to it and is released when the last reference
 * to the file description is dropped (close, exit, kill -9).
 *
 * Every owner lives in one *domain*, a named lock namespace ("default" unless
 * the owner picks another with %ORDLOCK_IOC_SET_DOMAIN while it holds
 * nothing). Keys of different domains never contend.
 *
 * A *key* is a pair (rank, id): a 32-bit rank (the kind of resource, or a
 * level of a lock hierarchy) and a 64-bit id. Keys are totally ordered by
 * rank first, then id.
 *
 * %ORDLOCK_IOC_ACQUIRE takes an array of keys, each in shared or exclusive
 * mode. The kernel copies it once, validates it, sorts it and merges
 * duplicates (the stronger mode wins). It then takes the keys in ascending
 * order, waiting on each in turn, and grants the whole set or nothing: when
 * the request fails for any reason, every key it took is released before
 * the ioctl returns. A successful acquire returns a *fencing token*, a
 * number that grows with every grant in the domain. Tokens never go
 * backwards: a domain that is freed with its last owner and created again
 * starts above every token it handed out before, and so does a domain
 * after the module is unloaded and loaded again (its first token is the
 * wall clock in microseconds, which a domain that averages fewer than one
 * grant a microsecond never overtakes; provided the clock did not step
 * back). Tokens stay below 2^53, exact in JSON.
 *
 * The order rule: in a domain with policy %ORDLOCK_POLICY_ENFORCE (the
 * default), an owner that holds keys may only acquire keys that sort above
 * every key it holds. Any other request fails at once with %EDEADLK and
 * reason %ORDLOCK_REASON_ORDER; the failure record names the held key and
 * the requested key in conflict. This rule makes a cycle of waits
 * impossible among the owners that obey it.
 *
 * Every wait is bounded: by the caller's timeout, or by the domain default
 * when the caller gives none, and never by more than the maximum (module
 * parameters default_timeout_ms and max_timeout_ms). The timeout covers the
 * whole request. %ORDLOCK_ACQUIRE_TRY never waits.
 *
 * Each resource grants in FIFO order: a request is granted at once only if
 * it is compatible with the current holders and nobody is queued ahead of
 * it; a release grants the head of the queue, and every following waiter
 * compatible with it. A queued exclusive request is therefore never
 * starved by a stream of shared ones.
 *
 * Fairness, the one exception to FIFO: a release that leaves a key free for
 * the head of its queue, while that waiter has waited less than the module
 * parameter handoff_us (default 1000 microseconds), wakes it instead of
 * granting it; until it runs and takes the key, a request that comes may
 * take the key first, as if nobody waited (a task that releases a key and
 * takes it again does not wait for a sleeping task to wake up: flock(2) and
 * the kernel's mutexes behave so). The promise to a waiter: once it has
 * waited handoff_us, it is passed only if it was passed before, and at most
 * 64 times in all (a waiter that runs while others wait on its CPU finds
 * the key taken again, and keeps its place for a while); then the next
 * release that leaves the key free for it hands it the key, and no later
 * request passes it. A waiter that has waited handoff_us without being
 * passed is handed the key at the next release. Only a waiter that holds
 * no key, sleeping in an ioctl, for an acquire (not a conversion) in a
 * local domain, is ever passed (whoever passes a waiter that holds keys,
 * granted by the kernel or taken by the fast path, might wait for one of
 * them next: a cycle the handoff would not have let form); a key pinned by
 * the fast path is passed the same way, by a request or by a member's CAS
 * (DOC: Fast path), its waiter's age judged at the release that woke it
 * (a CAS cannot read it), its count of passes as for any key;
 * handoff_us=0 turns passing off.
 * A waiter spins on its CPU for up to spin_us (default 50 microseconds)
 * before it sleeps, while the task that holds the key runs on a CPU (for
 * a key whose holder the kernel cannot name, only the first waiter, while
 * no other task is runnable on its CPU). When the first waiter sleeps and
 * may be passed, a release hands the key at once to a waiter among the
 * next four that spins, if every waiter ahead of it may be passed too:
 * each of those counts a pass, and the promise above holds for them as for
 * a pass by a new request.
 */

/**
 * DOC: ioctl structures
 *
 * Every ioctl argument but those of the compact ioctls (DOC: Compact
 * ioctls) starts with a __u32 @size: the caller sets it to
 * sizeof() the structure it was compiled with. The kernel accepts any size
 * from the first published size of that structure up to a page; bytes past
 * the end of the kernel's own structure must be zero (%E2BIG otherwise).
 * Output fields are written back only up to the caller's @size. Fields named
 * __reserved must be zero, and unknown flag bits are rejected with %EINVAL,
 * so every structure can grow.
 *
 * The ioctl numbers do not encode the size (as in iommufd): _IO(type, nr).
 */

/**
 * DOC: Errors
 *
 * Every ioctl returns 0 (%ORDLOCK_IOC_UNLOCK_ALL: the number of keys it
 * released) or -1 with errno set. On failure of
 * %ORDLOCK_IOC_ACQUIRE, %ORDLOCK_IOC_CONVERT and %ORDLOCK_IOC_RELEASE the
 * @failure field of the argument is filled in (when the caller's @size
 * covers it; %ORDLOCK_IOC_LOCK and %ORDLOCK_IOC_UNLOCK: where their
 * @failure points, if it is not 0), and the same record can be read later
 * with %ORDLOCK_IOC_LAST_FAILURE.
 *
 * ===========  ===============================================================
 * errno        meaning
 * ===========  ===============================================================
 * EINVAL       unknown flag, non-zero reserved field, invalid mode, zero keys,
 *              bad domain name, @size too small; a label with other
 *              characters than [A-Za-z0-9._-] or without its NUL
 *              (%ORDLOCK_IOC_SET_LABEL); an @edge_size too small
 *              (%ORDLOCK_IOC_GET_ORDER)
 *              %ORDLOCK_ACQUIRE_REORDER given to %ORDLOCK_IOC_CONVERT; a
 *              @strict or @cluster other than 0 or 1; the default domain
 *              made a cluster domain; @fastpath other than 0 or 1, an
 *              unmapped @fastpath_uid, the default domain given the fast
 *              path; %ORDLOCK_IOC_FAST_RELEASE of a slot not pinned;
 *              %ORDLOCK_IOC_FAST_LEARN of a slot not pinned or of a slot
 *              paired with itself; mmap() before %ORDLOCK_IOC_FAST_PIN,
 *              private, or at a wrong offset or size (DOC: The fast path)
 * E2BIG        more keys than max_keys_per_request (a release may name as
 *              many as the larger of max_keys_per_request and
 *              max_keys_per_owner); or @size larger than the
 *              kernel's structure with non-zero trailing bytes, or larger than
 *              a page
 * EFAULT       a user pointer (the argument, or the keys array) is not readable
 *              or writable; nothing was done (an argument that cannot be
 *              written is found before acting, or the grant is undone; only
 *              an argument made unwritable by another thread during the call
 *              can fail after %ORDLOCK_IOC_RELEASE, %ORDLOCK_IOC_CONVERT,
 *              %ORDLOCK_IOC_SET_DOMAIN or %ORDLOCK_IOC_DOMAIN_CONFIG acted)
 * ENOTTY       unknown ioctl
 * EDEADLK      order violation (%ORDLOCK_REASON_ORDER): a requested key sorts at
 *              or below a held key (without %ORDLOCK_ACQUIRE_REORDER), or
 *              is held already; in a domain with strict ranks, a requested
 *              key's rank is not above every held rank
 *              (%ORDLOCK_REASON_STRICT); or a deadlock was detected and this request
 *              was chosen as the victim (%ORDLOCK_REASON_DEADLOCK, in any
 *              policy but "timeout": in "enforce" through upgrades or one
 *              thread's several owners; %ORDLOCK_REASON_UPGRADE). A thread
 *              is followed from an owner it holds through to the owner it
 *              waits through in any domain: a cycle through owners of
 *              several domains (a thread holds in one and waits in another)
 *              is detected like one inside a domain, by the request whose
 *              wait closes it when that request's domain is not "timeout"
 *              (the steps name their domains); each domain's order rule
 *              rules out cycles inside that domain only. A cycle closed by
 *              a wait in a "timeout" domain is left to the timeouts
 * ETIMEDOUT    the wait timed out (%ORDLOCK_REASON_TIMEOUT); @failure names the
 *              key waited for and the pid of one holder
 * EAGAIN       %ORDLOCK_ACQUIRE_TRY and a key is not free
 *              (%ORDLOCK_REASON_BUSY); same details as ETIMEDOUT
 * EINTR        a signal whose handler has no SA_RESTART interrupted the wait
 *              (%ORDLOCK_REASON_SIGNAL); @timeout_ns then holds the time
 *              that was left. A signal that runs no handler (a stop and
 *              continue, ptrace) or one whose handler has SA_RESTART
 *              restarts the call, which keeps the first deadline (the time
 *              spent stopped counts, as for futex(2) and nanosleep(2)); the
 *              keys the request had taken are released in between and the
 *              request queues again. The kernel writes the time that was
 *              left into @timeout_ns (as select(2) does): the same thread
 *              issuing the same call again with that value also continues
 *              the wait to its first deadline. A %ORDLOCK_ACQUIRE_REORDER
 *              request that let held keys go is never restarted: it fails
 *              with EINTR and %ORDLOCK_RESULT_RELEASED
 * ENOSPC       the owner would hold more than max_keys_per_owner keys
 *              (%ORDLOCK_REASON_OWNER_LIMIT), or the system would track more
 *              than max_resources resources (%ORDLOCK_REASON_RESOURCE_LIMIT);
 *              %ORDLOCK_IOC_SET_DOMAIN and %ORDLOCK_IOC_DOMAIN_CONFIG: creating
 *              the domain would make more than max_domains domains (no
 *              failure record); %ORDLOCK_IOC_FAST_PIN: all
 *              %ORDLOCK_FAST_SLOTS slots of the domain are used
 * EDQUOT       a per-user limit (%ORDLOCK_REASON_USER_LIMIT): the owners of
 *              the caller's user would hold more than max_keys_per_user keys,
 *              or wait in more than max_waiters_per_user requests (a try-lock
 *              never waits, so never meets the latter); nothing was taken.
 *              %ORDLOCK_IOC_SET_DOMAIN to a domain that does not exist when
 *              the owner's user has max_domains_per_user domains already (the
 *              owner stays where it was; %ORDLOCK_IOC_LAST_FAILURE reads the
 *              record); %ORDLOCK_IOC_DOMAIN_CONFIG likewise (no failure
 *              record). Also open() of /dev/ordlock when the user has
 *              max_owners_per_user owners already (no failure record: there
 *              is no owner). Owners created with CAP_SYS_RESOURCE are exempt
 * ENOENT       release or convert of a key the owner does not hold
 *              (%ORDLOCK_REASON_NOT_HELD); %ORDLOCK_IOC_GET_ORDER of a
 *              domain that does not exist; %ORDLOCK_IOC_RENEW when the owner
 *              holds nothing; %ORDLOCK_IOC_FAST_RELEASE of a word that does
 *              not name the caller at that generation;
 *              %ORDLOCK_IOC_FAST_LEARN of a slot whose word does not name
 *              the caller
 * EBUSY        another request of the same owner (a dup()ed or inherited
 *              descriptor) is waiting: %ORDLOCK_IOC_ACQUIRE, %ORDLOCK_IOC_CONVERT,
 *              %ORDLOCK_IOC_RELEASE and %ORDLOCK_IOC_SET_DOMAIN fail at once
 *              (and %ORDLOCK_IOC_RENEW; %ORDLOCK_IOC_OWNER_INFO and
 *              %ORDLOCK_IOC_LAST_FAILURE answer);
 *              or %ORDLOCK_IOC_SET_DOMAIN to another domain while holding keys;
 *              %ORDLOCK_DOMAIN_SET_CLUSTER changing the setting of a domain
 *              that has owners (or while another such change runs);
 *              %ORDLOCK_DOMAIN_SET_FASTPATH likewise
 * EACCES       open() of /dev/ordlock without the permission its mode and
 *              group give (module parameter dev_mode, 0660, owner root; the
 *              udev rule gives it a group); a netlink lock request from a
 *              task that could not open it; %ORDLOCK_IOC_FAST_PIN by a
 *              caller whose effective uid is not the domain's
 *              @fastpath_uid
 * EPERM        %ORDLOCK_IOC_DOMAIN_CONFIG changes without CAP_SYS_ADMIN (an
 *              invalid argument is reported first, as EINVAL); netlink
 *              DOMAIN_SET without CAP_NET_ADMIN, and joining the "events"
 *              group without it where the kernel restricts it
 * ENOMEM       the kernel ran out of memory; nothing was taken
 * EKEYEXPIRED  the owner's lease expired and the kernel revoked what it held
 *              (%ORDLOCK_REASON_REVOKED; DOC: Leases): every request of the
 *              owner but %ORDLOCK_IOC_OWNER_INFO, %ORDLOCK_IOC_LAST_FAILURE,
 *              %ORDLOCK_IOC_TOKEN_CHECK and %ORDLOCK_IOC_RELEASE with
 *              %ORDLOCK_RELEASE_ALL (which acknowledges) fails with it, and
 *              does nothing, until the owner acknowledges; a request of the
 *              owner in progress at the deadline ends with it at the
 *              deadline (what it took is released; DOC: Leases);
 *              %ORDLOCK_IOC_FAST_RELEASE of a word the revocation let go;
 *              %ORDLOCK_IOC_FAST_LEARN until the owner acknowledges
 * ESTALE       %ORDLOCK_IOC_TOKEN_CHECK: the token is not a live grant of
 *              the key (the key is not held, or held under another token,
 *              or its holder's lease has reached its deadline)
 * EOPNOTSUPP   the fast path and the cluster setting
 *              together (DOC: The fast path); nothing changed;
 *              %ORDLOCK_IOC_FAST_PIN,
 *              %ORDLOCK_IOC_FAST_RELEASE or %ORDLOCK_IOC_FAST_LEARN
 *              in a domain without the fast path (or before a pin)
 * ENOTCONN     %ORDLOCK_DOMAIN_SET_CLUSTER on a host that is not a member of a
 *              quorate corosync/DLM cluster (no dlm_controld, or another
 *              cluster than ordlock_dlm's parameter cluster); nothing changed
 * ENOPKG       %ORDLOCK_DOMAIN_SET_CLUSTER without the cluster backend
 *              (ordlock_dlm.ko not installed, or the kernel has no DLM)
 * ETIMEDOUT    %ORDLOCK_DOMAIN_SET_CLUSTER 0 (also EINTR): the DLM did not
 *              let the lockspace go in time (this node lost the cluster):
 *              the domain is local all the same, the lockspace was left by
 *              force (the kernel log says what was abandoned)
 * EIO          %ORDLOCK_DOMAIN_SET_CLUSTER: joining the DLM lockspace failed
 *              (the kernel log says why); an acquire in a cluster domain:
 *              the DLM failed the lock of a key (%ORDLOCK_REASON_CLUSTER;
 *              its lockspace was shut down, this node left the cluster);
 *              what the request took was released; %ORDLOCK_IOC_FAST_RELEASE:
 *              the word kept changing under the kernel (a member writes it)
 * EXDEV        %ORDLOCK_IOC_FAST_PIN by an owner that used the fast path of
 *              another domain before it moved
 * ===========  ===============================================================
 */

/**
 * DOC: Cluster domains
 *
 * A domain can be made a *cluster domain* (&struct ordlock_domain_config
 * @cluster with %ORDLOCK_DOMAIN_SET_CLUSTER, netlink %ORDLOCK_A_CLUSTER,
 * "ordlockctl domain NAME set cluster on"; an admin's change, like the
 * policy) on a host that is a member of a corosync/DLM cluster: its keys
 * are then also locks of the Linux DLM, in the lockspace "ordlock.NAME",
 * shared as PR and exclusive as EX, so that owners of the domain on every
 * node of the cluster exclude each other as owners of one host do. The DLM
 * is reached through the companion module ordlock_dlm.ko, which ordlock
 * loads on demand; ordlock.ko itself never needs dlm.ko. Turning the
 * setting on joins the lockspace (which may take seconds; no lock of
 * ordlock is held meanwhile), turning it off leaves it. Both are refused
 * with %EBUSY while any owner is in the domain (a holder, a waiter or an
 * idle one: close or move them first), and a cluster domain lives until
 * the module is unloaded. The default domain cannot be one (%EINVAL).
 *
 * What stays local: the sorting, the order rule and strict ranks, the
 * timeouts, leases, the local wait-for graph, owner lifetime and the
 * views. A key is first granted locally exactly as in any domain (FIFO
 * among this node's owners), then its DLM lock is taken with the request's
 * deadline before the request goes on to the next key, in ascending order;
 * a failure releases what the request took, locally and in the DLM, in
 * reverse order. A try-lock is a NOQUEUE request (%EAGAIN, reason
 * %ORDLOCK_REASON_BUSY, @pid 0 when the key is held on another node: the
 * DLM does not say where); it waits for the DLM's answer at least 5 s
 * even with a shorter timeout. The DLM itself has no timeout: a wait that
 * reaches its deadline is cancelled (%ETIMEDOUT), and a grant that wins the
 * race with the cancel is released; every wait, also one while the DLM
 * recovers from a node's death, ends by the deadline. Across nodes the
 * DLM's queue decides the order of grants: FIFO per resource as the DLM
 * grants. One exclusive request per node and key is in the DLM's queue at
 * a time (the node's other owners wait for the key on the node); each
 * shared holder on a node has a lock of its own in the DLM.
 *
 * Policies: a cluster domain takes every policy. %ORDLOCK_POLICY_ENFORCE:
 * the order rule holds on every node, so no cycle can form across nodes
 * either. %ORDLOCK_POLICY_DETECT: a cycle within the node is found as on
 * one host; one through owners of several nodes (the DLM sees none) is
 * found by ordlock-xdetectd, one daemon per node (DOC: Detection across
 * nodes), and while none is registered it ends by the requests' timeouts
 * (DOMAIN_GET and ordlockctl domain say which).
 *
 * Fencing tokens in a cluster domain, the rule (docs/cluster.md states it
 * in the same words):
 *
 * Token rule (cluster domains): a grant's token is one more than the
 * largest of this node's last token in the domain and, for each key of
 * the grant, the key's fencing value: the counter in the key's DLM value
 * block, which every exclusive release writes, or, when that value block
 * cannot be trusted, at least the wall clock in microseconds. A value
 * block cannot be trusted when the DLM flags it invalid (a node died
 * holding the key exclusively), when it reads zero (the key is new, every
 * node forgot it or left the domain, or its master node died and no lock
 * of a survivor carried it), when it reads below what this node last knew
 * of the key, or when a DLM recovery (a node joined, left or died)
 * happened while the request waited or since this node last read the
 * key. Promised: per key, cluster-wide, every grant's token is above the
 * token of every earlier exclusive grant of that key, and the tokens of
 * one domain on one node only go up. Where the value block was kept this
 * assumes nothing of clocks. Where it was lost (a key's master node died,
 * a node died holding the key, every node forgot the key or left the
 * domain) it assumes that the nodes' wall clocks never step back and
 * agree to within half the time between the last exclusive grant of the
 * key before the loss and the first grant after it (a death takes the
 * cluster seconds to notice, corosync's token timeout; a restart takes a
 * leave and a join), and that the domain makes fewer than one grant a
 * microsecond, on average, cluster-wide. Not promised: order when the
 * clocks disagree by more (keep them synchronized: NTP or PTP), or across
 * different keys.
 *
 * How the value block outlives a node (anchors, recovery):
 * docs/cluster.md, "Fencing tokens under failure".
 *
 * Conversions are DLM conversions: a downgrade converts in the DLM first,
 * an upgrade after the local grant, within the request's deadline; a
 * failed one leaves the key held in its old mode, locally and in the DLM
 * (an upgrade that timed out is cancelled, or converted back if the grant
 * won the race). Two nodes upgrading one key at once are a conversion
 * deadlock that the DLM breaks: one of them fails with %EDEADLK, reason
 * %ORDLOCK_REASON_UPGRADE (@pid 0: the other upgrader is on another node),
 * still holding the key shared, as two local upgraders do. An upgrade's
 * token comes from the key's value block like a grant's.
 *
 * Netlink ACQUIRE works in a cluster domain: after each key's local grant
 * the request waits for the DLM's grant without blocking the socket, so
 * its reply is %ORDLOCK_STATUS_QUEUED (unless refused at once), and its
 * one %ORDLOCK_CMD_RESULT comes after the cluster granted every key, or
 * says why not: TIMEOUT (the DLM request cancelled at the deadline),
 * CANCELLED (CANCEL or the socket closed: the pending DLM request is
 * cancelled, a grant that won the race released), or REFUSED (%EAGAIN of
 * a try-lock, %EIO, %ENOMEM); the keys taken before are released, locally
 * and in the DLM. Netlink CONVERT too: an upgrade is granted on the node,
 * then waits for the DLM's conversion without blocking the socket (reply
 * QUEUED, unless refused at once), and its RESULT says GRANTED (the token
 * as the ioctl's upgrade gives it), TIMEOUT (the DLM's conversion
 * cancelled at the deadline, or converted back if the grant won the race),
 * CANCELLED, or REFUSED (%EAGAIN of a try, %EDEADLK reason
 * %ORDLOCK_REASON_UPGRADE, %EIO); a failed one leaves the key held shared,
 * locally and in the DLM. A downgrade is GRANTED in its reply, as in a
 * local domain.
 *
 * Views: a request waiting for a key's DLM lock shows as a holder of the
 * key marked %ORDLOCK_E_CLUSTER_WAIT (docs/cluster.md, "Views"). A real
 * deployment needs real fencing (docs/cluster.md, "Fencing").
 */

/**
 * DOC: Leases
 *
 * A grant may come with a *lease*: %ORDLOCK_IOC_ACQUIRE's @lease_ms, capped
 * by the domain's @max_hold_ms (&struct ordlock_domain_config), which is
 * also the lease of a request that gives none; 0 and 0 mean no lease, the
 * default. An owner has one lease for everything it holds (the keys it
 * holds by the fast path included: DOC: The fast path): its deadline is
 * the earliest of its grants' (grant time + lease; for a key held by the
 * fast path, the time a request first queued behind it + @max_hold_ms), and %ORDLOCK_IOC_RENEW
 * moves it to now + the lease period (the shortest lease of the owner's
 * grants, or the one RENEW gives). Renewing costs about what a failed
 * try-lock does, and allocates nothing.
 *
 * When the deadline passes, the kernel *revokes* without waiting for the
 * holder to call (an hrtimer queues a work item, which takes the owner's
 * lock): every key the owner holds is released and granted to the waiters,
 * which receive new, higher fencing tokens. The owner is marked revoked
 * and told: poll() on its descriptor reports %POLLPRI, the signal set with
 * %ORDLOCK_RENEW_SET_SIGNAL is sent to the process that set it (as fcntl's
 * F_SETSIG does for a lease break), a netlink owner receives an
 * %ORDLOCK_CMD_REVOKED message, the "events" group an
 * %ORDLOCK_EVENT_REVOKED event, and the domain counts it (revocations).
 * Each later request of the owner fails with %EKEYEXPIRED and the failure
 * record of reason %ORDLOCK_REASON_REVOKED; %ORDLOCK_IOC_LAST_FAILURE
 * lists the revoked keys with their tokens. %ORDLOCK_IOC_RELEASE with
 * %ORDLOCK_RELEASE_ALL acknowledges: the owner is an ordinary one again.
 * A call made after the deadline but before the work item ran revokes at
 * once: an expired lease is never renewed.
 *
 * A holder that is itself waiting at the deadline (an %ORDLOCK_IOC_ACQUIRE
 * or %ORDLOCK_IOC_CONVERT sleeping for another key, or a queued netlink
 * ACQUIRE or CONVERT) is revoked all the same, at the deadline: the keys
 * it holds are released and its wait is woken. The waiting request fails
 * with %EKEYEXPIRED (a netlink RESULT: REFUSED, ORDLOCK_A_ERRNO
 * %EKEYEXPIRED), record %ORDLOCK_REASON_REVOKED, no token; all or nothing:
 * the keys it had been granted for itself are released, and a key it
 * was upgrading is released when it fails, at once. Even a grant that
 * comes at the same moment is not kept. The owner is then revoked like
 * any other. One exception: a wait for a key's lock in the cluster (the
 * DLM) is not woken; the other keys the owner holds are still revoked at
 * the deadline, and the request (with a key it was upgrading there) ends
 * with %EKEYEXPIRED when that wait ends (at its timeout at the latest).
 *
 * From the deadline on, %ORDLOCK_IOC_TOKEN_CHECK answers %ESTALE for every
 * grant of the owner, even before the work item has run.
 *
 * What a revoked holder must do: stop acting on what the keys protected,
 * acknowledge, acquire again and re-read what it read under the old keys.
 * What a waiter may assume: a holder that stops calling (stopped, hung,
 * paused, or itself waiting for another key) blocks it for at most the
 * lease (plus the timer's lateness: the hrtimer is armed with the holder's
 * timer slack); and every grant it gets carries a token higher than the
 * revoked holder's. What a lease does not protect: a holder that was
 * revoked while it was not running may write with its old token when it
 * resumes; only storage that checks the token
 * (%ORDLOCK_IOC_TOKEN_CHECK, or by comparing with the highest it has seen)
 * refuses that write. How this compares with Chubby's lock-delay, etcd's
 * lease revoke, NFSv4's courteous server and F_SETLEASE: docs/design.md,
 * "Leases and fencing".
 */
#ifndef _UAPI_LINUX_ORDLOCK_H
#define _UAPI_LINUX_ORDLOCK_H

#include <linux/types.h>
#include <linux/ioctl.h>

/** ORDLOCK_DEVICE - path of the character device */
#define ORDLOCK_DEVICE "/dev/ordlock"

/** ORDLOCK_DOMAIN_NAME_MAX - size of a domain name, NUL included */
#define ORDLOCK_DOMAIN_NAME_MAX 32

/** ORDLOCK_DEFAULT_DOMAIN - the domain of a new owner */
#define ORDLOCK_DEFAULT_DOMAIN "default"

/**
 * enum ordlock_mode - lock modes
 * @ORDLOCK_MODE_SHARED: compatible with other shared holders
 * @ORDLOCK_MODE_EXCLUSIVE: compatible with nothing
 *
 * Zero is not a mode: a key with mode 0 is rejected where a mode is
 * required, and means "any" where it is not (release).
 */
enum ordlock_mode {
	ORDLOCK_MODE_SHARED = 1,
	ORDLOCK_MODE_EXCLUSIVE = 2,
};

/**
 * struct ordlock_key - one key of a request
 * @id: the resource id within its rank
 * @rank: the kind of resource, or the level of a hierarchy; sorts first
 * @mode: an &enum ordlock_mode
 * @__reserved: must be zero
 *
 * Keys are ordered by (@rank, @id); @mode plays no part in the order.
 */
struct ordlock_key {
	__u64 id;
	__u32 rank;
	__u16 mode;
	__u16 __reserved;
};

/**
 * enum ordlock_reason - why a request failed
 * @ORDLOCK_REASON_NONE: no failure recorded
 * @ORDLOCK_REASON_INVALID: bad input (EINVAL, E2BIG, EFAULT)
 * @ORDLOCK_REASON_ORDER: order violation: @key sorts at or below the held
 *	key @held (EDEADLK)
 * @ORDLOCK_REASON_TIMEOUT: timed out waiting for @key held by @pid, or
 *	queued behind the request of @pid (@holder_mode 0) (ETIMEDOUT)
 * @ORDLOCK_REASON_BUSY: try-acquire found @key held by @pid, or a request
 *	of @pid queued for it (@holder_mode 0) (EAGAIN)
 * @ORDLOCK_REASON_SIGNAL: a signal interrupted the wait for @key (EINTR)
 * @ORDLOCK_REASON_DEADLOCK: waiting for @key would close a cycle of waits;
 *	this request was chosen as the victim (EDEADLK)
 * @ORDLOCK_REASON_UPGRADE: two shared holders of @key both asked to
 *	upgrade it; @pid is the other one (EDEADLK)
 * @ORDLOCK_REASON_OWNER_LIMIT: the owner would hold too many keys (ENOSPC)
 * @ORDLOCK_REASON_RESOURCE_LIMIT: too many resources in use (ENOSPC)
 * @ORDLOCK_REASON_NOT_HELD: @key is not held by the owner (ENOENT)
 * @ORDLOCK_REASON_NOMEM: out of kernel memory (ENOMEM)
 * @ORDLOCK_REASON_CANCELLED: a queued netlink request was cancelled
 *	(ECANCELED)
 * @ORDLOCK_REASON_USER_LIMIT: a per-user limit: the owners of the user
 *	would hold more than max_keys_per_user keys (@key is the first key
 *	of the request) or wait in more than max_waiters_per_user requests
 *	(@key is the key it would have waited for, @pid a holder), or the
 *	user would have more than max_domains_per_user domains
 *	(%ORDLOCK_IOC_SET_DOMAIN; @index is ~0U, no key) (EDQUOT)
 * @ORDLOCK_REASON_STRICT: strict ranks (&struct ordlock_domain_config
 *	@strict): the rank of @key is not above the rank of the held key
 *	@held, although @key may sort above it (a higher id of the same
 *	rank) (EDEADLK)
 * @ORDLOCK_REASON_REVOKED: the owner's lease expired and the kernel
 *	revoked its keys: @key is the first revoked key, @held the last,
 *	@cycle_len the number of revoked keys, @pid the owner's, @index ~0U;
 *	%ORDLOCK_IOC_LAST_FAILURE lists them with their tokens (EKEYEXPIRED)
 * @ORDLOCK_REASON_CLUSTER: in a cluster domain (&struct
 *	ordlock_domain_config @cluster), the cluster failed the lock of @key
 *	(the DLM returned an error: its lockspace was shut down, this node
 *	left the cluster); the keys taken before it were released (EIO)
 */
enum ordlock_reason {
	ORDLOCK_REASON_NONE = 0,
	ORDLOCK_REASON_INVALID,
	ORDLOCK_REASON_ORDER,
	ORDLOCK_REASON_TIMEOUT,
	ORDLOCK_REASON_BUSY,
	ORDLOCK_REASON_SIGNAL,
	ORDLOCK_REASON_DEADLOCK,
	ORDLOCK_REASON_UPGRADE,
	ORDLOCK_REASON_OWNER_LIMIT,
	ORDLOCK_REASON_RESOURCE_LIMIT,
	ORDLOCK_REASON_NOT_HELD,
	ORDLOCK_REASON_NOMEM,
	ORDLOCK_REASON_CANCELLED,
	ORDLOCK_REASON_USER_LIMIT,
	ORDLOCK_REASON_STRICT,
	ORDLOCK_REASON_REVOKED,
	ORDLOCK_REASON_CLUSTER,
};

/**
 * struct ordlock_failure - why the last request failed, and the culprit
 * @reason: an &enum ordlock_reason
 * @error: the positive errno the request returned
 * @pid: a holder of @key in a conflicting mode (TIMEOUT, BUSY, DEADLOCK:
 *	an owner the victim waited for) or, when no holder conflicts and only
 *	requests queued ahead block @key (FIFO: a queued exclusive request
 *	keeps later shared ones out), the first of those that conflicts; the
 *	other upgrader (UPGRADE); 0 when unknown
 * @index: position of @key in the caller's array, before sorting; ~0U when
 *	the failure concerns no single key of the array
 * @key: the requested key concerned; its @mode is the mode requested
 * @held: the held key in conflict (ORDER, STRICT), with the mode it is
 *	held in; after a %ORDLOCK_ACQUIRE_REORDER request that let held keys
 *	go and then failed (%ORDLOCK_RESULT_RELEASED), the lowest of the
 *	keys let go, in the mode it was held in
 * @holder_mode: the mode in which @pid holds @key (TIMEOUT, BUSY); 0 when
 *	@pid does not hold it but is queued for it ahead of the request
 * @cycle_len: number of steps of the detected cycle (DEADLOCK); read them
 *	with %ORDLOCK_IOC_LAST_FAILURE
 */
struct ordlock_failure {
	__u32 reason;
	__u32 error;
	__u32 pid;
	__u32 index;
	struct ordlock_key key;
	struct ordlock_key held;
	__u32 holder_mode;
	__u32 cycle_len;
};

/* Flags of struct ordlock_acquire */
/** ORDLOCK_ACQUIRE_TRY - never wait: fail with EAGAIN if a key is not free */
#define ORDLOCK_ACQUIRE_TRY		(1U << 0)
/**
 * ORDLOCK_ACQUIRE_REORDER - a late key that sorts below held keys: take it
 * without breaking the order (see &struct ordlock_acquire)
 */
#define ORDLOCK_ACQUIRE_REORDER		(1U << 1)
/** ORDLOCK_ACQUIRE_FLAGS - every flag of &struct ordlock_acquire */
#define ORDLOCK_ACQUIRE_FLAGS		(ORDLOCK_ACQUIRE_TRY | \
					 ORDLOCK_ACQUIRE_REORDER)

/* Flags of &struct ordlock_acquire @result_flags */
/**
 * ORDLOCK_RESULT_RELEASED - the request let held keys go in between: on
 * success they are held again (with the new token) and what was read under
 * them must be read again; on failure they are no longer held
 */
#define ORDLOCK_RESULT_RELEASED		(1U << 0)

/**
 * struct ordlock_acquire - argument of %ORDLOCK_IOC_ACQUIRE
 * @size: sizeof(struct ordlock_acquire)
 * @flags: %ORDLOCK_ACQUIRE_TRY, %ORDLOCK_ACQUIRE_REORDER, or 0
 * @nkeys: number of keys in @keys; 1 to max_keys_per_request
 * @lease_ms: the lease of the grant, in milliseconds (DOC: Leases); 0 for
 *	the domain's max_hold_ms (0 there too: no lease); capped by it
 * @keys: user pointer to an array of @nkeys &struct ordlock_key
 * @timeout_ns: the longest the whole request may wait, in nanoseconds;
 *	0 means the domain default; values above the maximum are capped
 * @token: out: the fencing token of the grant
 * @failure: out: the reason and culprit when the ioctl fails
 * @result_flags: out: %ORDLOCK_RESULT_RELEASED, or 0 (written on success
 *	and on failure)
 * @__reserved2: must be zero
 *
 * %ORDLOCK_ACQUIRE_REORDER (source 004's "a lock discovered late that
 * sorts before what is held: roll back and re-acquire in order"). In a
 * %ORDLOCK_POLICY_ENFORCE domain, a request whose keys do not all sort
 * above the held keys (in a domain with strict ranks: whose ranks are not
 * all above the held ranks) is not refused: the keys that break the order
 * are tried at once, in order, as with %ORDLOCK_ACQUIRE_TRY (a try never
 * waits, so it cannot close a cycle); the others may wait as usual. When
 * they are all free the request is granted in place: the held keys stay
 * held with their tokens and @result_flags is 0. When one of them would
 * have to wait, the kernel gives back what the try took, lets go of every
 * held key that the lowest requested key may not follow (those that sort
 * above it; with strict ranks, those of its rank and above), and takes the
 * union of those and the requested keys in order, waiting as any request
 * does, with the request's timeout: the owner never waits while holding a
 * key above one it waits for. @result_flags then says
 * %ORDLOCK_RESULT_RELEASED: on success every key of the union is held with
 * the new @token, and what was read under the keys let go must be read
 * again (another owner may have changed it in between).
 *
 * A request that fails before letting anything go changed nothing. One
 * that fails after (ETIMEDOUT, EDEADLK as a deadlock victim, EINTR,
 * ECANCELED for netlink) cannot give back what it let go, which other
 * owners may hold by now: it releases what it took, the owner keeps only
 * the held keys below the ones it let go, @result_flags says
 * %ORDLOCK_RESULT_RELEASED, and the failure record's @held names the lowest
 * key let go (all the owner held from that key up is gone). Such a wait is
 * not restarted after a signal (a stop, an %SA_RESTART handler): the call
 * fails with EINTR so that the caller learns of the loss. A grant whose
 * argument cannot be written back (EFAULT) is undone whole: the keys let
 * go are released too.
 *
 * A request may not ask for a key its owner holds (EDEADLK, reason
 * %ORDLOCK_REASON_ORDER, @held names it). With %ORDLOCK_ACQUIRE_TRY the
 * whole request is a try: the flag then only allows the order, nothing is
 * ever let go. In the other policies any order is allowed and the flag
 * changes nothing.
 */
struct ordlock_acquire {
	__u32 size;
	__u32 flags;
	__u32 nkeys;
	__u32 lease_ms;
	__aligned_u64 keys;
	__aligned_u64 timeout_ns;
	__aligned_u64 token;
	struct ordlock_failure failure;
	__u32 result_flags;
	__u32 __reserved2;
};

/* Flags of struct ordlock_release */
/** ORDLOCK_RELEASE_ALL - release every key the owner holds; @nkeys must be 0 */
#define ORDLOCK_RELEASE_ALL		(1U << 0)
/** ORDLOCK_RELEASE_FLAGS - every flag of &struct ordlock_release */
#define ORDLOCK_RELEASE_FLAGS		ORDLOCK_RELEASE_ALL

/**
 * struct ordlock_release - argument of %ORDLOCK_IOC_RELEASE
 * @size: sizeof(struct ordlock_release)
 * @flags: %ORDLOCK_RELEASE_ALL, or 0 to release the keys in @keys
 * @nkeys: number of keys in @keys (0, and @keys 0, with %ORDLOCK_RELEASE_ALL)
 * @__reserved: must be zero
 * @keys: user pointer to an array of &struct ordlock_key; @mode is ignored
 *	but must be 0 or a valid mode. Either every key is held and all are
 *	released, or nothing is (ENOENT names the first key not held)
 * @released: out: how many keys were released
 * @__reserved2: must be zero
 * @failure: out: the reason and culprit when the ioctl fails
 */
struct ordlock_release {
	__u32 size;
	__u32 flags;
	__u32 nkeys;
	__u32 __reserved;
	__aligned_u64 keys;
	__u32 released;
	__u32 __reserved2;
	struct ordlock_failure failure;
};

/**
 * struct ordlock_set_domain - argument of %ORDLOCK_IOC_SET_DOMAIN
 * @size: sizeof(struct ordlock_set_domain)
 * @flags: must be 0
 * @name: NUL-terminated domain name of 1 to %ORDLOCK_DOMAIN_NAME_MAX - 1
 *	characters from [A-Za-z0-9._-]; the bytes after the NUL must be zero
 *
 * Moves the owner to the named domain, creating it when needed. Fails with
 * EBUSY while the owner holds or waits for keys, and for an owner that
 * pinned a key of its domain's fast path (%ORDLOCK_IOC_FAST_PIN): its
 * index in the domain's words and its mapping of them are that domain's.
 *
 * A domain that did not exist is created for the owner's user (the user
 * of the owner's creator) and counts against its max_domains_per_user
 * until the domain is freed (with its last owner), whoever is in it
 * meanwhile; joining an existing domain counts nothing. Past the limit the
 * move fails with EDQUOT, reason %ORDLOCK_REASON_USER_LIMIT in the owner's
 * failure record, unless the owner's creator had CAP_SYS_RESOURCE; past
 * max_domains (all users) with ENOSPC.
 */
struct ordlock_set_domain {
	__u32 size;
	__u32 flags;
	char name[ORDLOCK_DOMAIN_NAME_MAX];
};

/**
 * struct ordlock_owner_info - argument of %ORDLOCK_IOC_OWNER_INFO
 * @size: sizeof(struct ordlock_owner_info)
 * @flags: must be 0
 * @owner_id: out: the owner's id, unique while the module is loaded
 * @nheld: out: number of keys held
 * @policy: out: the domain's &enum ordlock_policy
 * @domain: out: the domain's name
 * @last_token: out: the fencing token of the owner's last grant (0: none)
 */
struct ordlock_owner_info {
	__u32 size;
	__u32 flags;
	__aligned_u64 owner_id;
	__u32 nheld;
	__u32 policy;
	char domain[ORDLOCK_DOMAIN_NAME_MAX];
	__aligned_u64 last_token;
};

/**
 * enum ordlock_policy - how a domain deals with cycles
 * @ORDLOCK_POLICY_ENFORCE: the order rule is enforced (default)
 * @ORDLOCK_POLICY_DETECT: any order; a wait that closes a cycle fails
 * @ORDLOCK_POLICY_TIMEOUT: any order; cycles are broken by timeouts only
 */
enum ordlock_policy {
	ORDLOCK_POLICY_ENFORCE = 0,
	ORDLOCK_POLICY_DETECT = 1,
	ORDLOCK_POLICY_TIMEOUT = 2,
};

/**
 * enum ordlock_edge - why a waiter waits for another owner
 * @ORDLOCK_EDGE_HARD: the other owner holds the key in a conflicting mode
 * @ORDLOCK_EDGE_SOFT: the other owner is queued ahead on the key with a
 *	conflicting request
 * @ORDLOCK_EDGE_THREAD: in the graph views only (debugfs "graph",
 *	%ORDLOCK_CMD_GET_GRAPH): an owner that holds keys and is not waiting,
 *	whose last request came from a thread now blocked in a wait through
 *	the other owner (in any domain): it cannot release before that wait
 *	ends. The key and domain of such an edge are the other owner's wait.
 */
enum ordlock_edge {
	ORDLOCK_EDGE_HARD = 1,
	ORDLOCK_EDGE_SOFT = 2,
	ORDLOCK_EDGE_THREAD = 3,
};

/** ORDLOCK_COMM_LEN - size of a command name, NUL included */
#define ORDLOCK_COMM_LEN 16

/**
 * struct ordlock_cycle_step - one step of a cycle of waits
 * @owner_id: the waiting owner
 * @pid: its process id (of the last task that made a request)
 * @edge: an &enum ordlock_edge: how the next step's owner blocks this one
 * @key: the key this owner waits for; @key.mode is the mode it asked for
 * @blocker_mode: the mode in which the next step's owner holds (HARD) or
 *	asks for (SOFT) @key
 * @flags: %ORDLOCK_STEP_OTHER_DOMAIN, or 0 (kernels before it wrote 0)
 * @comm: the command name of @pid
 *
 * Step i waits for the owner of step i + 1; the last step waits for the
 * owner of step 0. When a thread holds keys through one owner and waits
 * through another, the cycle passes through the thread: the step names the
 * owner it waits through, and the previous step's @blocker_mode is the mode
 * of the key held through the other. The two owners may be in different
 * domains: @key is a key of the step's own domain, which
 * %ORDLOCK_STEP_OTHER_DOMAIN tells apart from the victim's; the netlink
 * cycle (%ORDLOCK_E_DOMAIN in each step) and debugfs "deadlocks" name it.
 */
struct ordlock_cycle_step {
	__aligned_u64 owner_id;
	__u32 pid;
	__u32 edge;
	struct ordlock_key key;
	__u32 blocker_mode;
	__u32 flags;
	char comm[ORDLOCK_COMM_LEN];
};

/**
 * ORDLOCK_STEP_OTHER_DOMAIN - the step's owner (and @key) is in another
 * domain than the victim's (step 0)
 */
#define ORDLOCK_STEP_OTHER_DOMAIN	(1U << 0)

/**
 * ORDLOCK_STEP_OTHER_NODE - the step's owner is on another node of a
 * cluster domain (a cycle across nodes, failed by ordlock-xdetectd through
 * %ORDLOCK_CMD_XD_FAIL): @owner_id is an owner id of that node, @pid and
 * @comm the remote owner's; the node id is in &struct ordlock_last_failure
 * @nodes
 */
#define ORDLOCK_STEP_OTHER_NODE		(1U << 1)

/** ORDLOCK_CYCLE_MAX - most steps of a cycle the kernel records */
#define ORDLOCK_CYCLE_MAX 64

/**
 * struct ordlock_last_failure - argument of %ORDLOCK_IOC_LAST_FAILURE
 * @size: sizeof(struct ordlock_last_failure)
 * @flags: must be 0
 * @failure: out: the owner's last failure record (reason NONE if none)
 * @nsteps: in: room in @steps, in steps; out: steps written, at most
 *	@failure.cycle_len and at most %ORDLOCK_CYCLE_MAX
 * @__reserved: must be zero
 * @steps: user pointer to an array of &struct ordlock_cycle_step, or 0
 *	with @nsteps 0: the cycle of a DEADLOCK failure, victim first
 * @revoked: user pointer to an array of &struct ordlock_revoked_key, or 0
 *	with @nrevoked 0: the keys of a REVOKED failure, in key order
 * @nrevoked: in: room in @revoked; out: entries written, at most
 *	@failure.cycle_len
 * @__reserved2: must be zero
 * @nodes: user pointer to an array of __u32, @nsteps entries, or 0: for
 *	each step written to @steps, the corosync node id of its owner, 0 for
 *	this node (a cycle across nodes: %ORDLOCK_STEP_OTHER_NODE). A caller
 *	whose @size ends before @nodes is not given them
 */
struct ordlock_last_failure {
	__u32 size;
	__u32 flags;
	struct ordlock_failure failure;
	__u32 nsteps;
	__u32 __reserved;
	__aligned_u64 steps;
	__aligned_u64 revoked;
	__u32 nrevoked;
	__u32 __reserved2;
	__aligned_u64 nodes;
};

/**
 * struct ordlock_revoked_key - a key the kernel revoked, and its grant
 * @key: the key, with the mode it was held in
 * @token: the fencing token it was held under
 */
struct ordlock_revoked_key {
	struct ordlock_key key;
	__aligned_u64 token;
};

/* Flags of struct ordlock_renew */
/** ORDLOCK_RENEW_SET_SIGNAL - set the revocation signal to @signal */
#define ORDLOCK_RENEW_SET_SIGNAL	(1U << 0)
/** ORDLOCK_RENEW_FLAGS - every flag of &struct ordlock_renew */
#define ORDLOCK_RENEW_FLAGS		ORDLOCK_RENEW_SET_SIGNAL

/**
 * struct ordlock_renew - argument of %ORDLOCK_IOC_RENEW
 * @size: sizeof(struct ordlock_renew)
 * @flags: %ORDLOCK_RENEW_SET_SIGNAL, or 0
 * @lease_ms: the new lease period, capped by the domain's max_hold_ms; 0
 *	keeps the owner's period
 * @signal: with %ORDLOCK_RENEW_SET_SIGNAL: the signal (1 to 64) sent to
 *	the calling process when the owner's lease is revoked, 0 for none
 *	(the default). Setting it alone needs no key held
 * @left_ms: out: the time left of the lease after renewing; 0 when the
 *	owner's holds have no lease
 * @failure: out: the reason and culprit when the ioctl fails
 *
 * Moves the deadline of the owner's lease to now + the lease period.
 * Fails with ENOENT (%ORDLOCK_REASON_NOT_HELD) when the owner holds
 * nothing (and %ORDLOCK_RENEW_SET_SIGNAL is not given), with EKEYEXPIRED
 * when the lease expired (it then revokes, if the kernel had not yet),
 * with EINVAL for an unknown flag or a bad signal. Holds without a lease
 * get one when @lease_ms (or the domain's max_hold_ms) is not 0.
 */
struct ordlock_renew {
	__u32 size;
	__u32 flags;
	__u32 lease_ms;
	__u32 signal;
	__aligned_u64 left_ms;
	struct ordlock_failure failure;
};

/**
 * struct ordlock_token_check - argument of %ORDLOCK_IOC_TOKEN_CHECK
 * @size: sizeof(struct ordlock_token_check)
 * @flags: must be 0
 * @key: the key; @key.mode must be 0 or a valid mode and is ignored
 * @token: the fencing token to check
 * @domain: the key's domain, as for &struct ordlock_set_domain; all zero
 *	for the caller's own domain
 *
 * Answers whether @token is a live grant of @key: 0 when an owner holds
 * @key under @token, ESTALE otherwise (not held, held under another
 * token, a domain that does not exist, or held by an owner whose lease
 * has reached its deadline or was revoked: from the deadline on, even
 * before the kernel has released the key). Anyone may ask, about any owner:
 * the answer reveals no more than a try-lock would. The check does not
 * hold anything: the grant may end right after the answer; storage that
 * fences writes keeps the highest token it accepted as well.
 */
struct ordlock_token_check {
	__u32 size;
	__u32 flags;
	struct ordlock_key key;
	__aligned_u64 token;
	char domain[ORDLOCK_DOMAIN_NAME_MAX];
};

/**
 * struct ordlock_convert - argument of %ORDLOCK_IOC_CONVERT
 * @size: sizeof(struct ordlock_convert)
 * @flags: %ORDLOCK_ACQUIRE_TRY, or 0
 * @key: a held key and the mode it should be held in: exclusive upgrades
 *	a shared hold (and may wait), shared downgrades an exclusive one (and
 *	never waits); the mode it is already held in changes nothing
 * @timeout_ns: as for &struct ordlock_acquire
 * @token: out: the fencing token of the hold (a new one after an upgrade)
 * @failure: out: the reason and culprit when the ioctl fails
 *
 * An upgrade is granted when no other owner holds the key; it is queued
 * ahead of waiters that are not converting, behind earlier conversions.
 * When another shared holder already waits to upgrade the same key, the
 * two can never both succeed: the second fails at once with EDEADLK,
 * reason %ORDLOCK_REASON_UPGRADE, naming the first in @failure.pid.
 * A failed conversion leaves the key held in its old mode.
 */
struct ordlock_convert {
	__u32 size;
	__u32 flags;
	struct ordlock_key key;
	__aligned_u64 timeout_ns;
	__aligned_u64 token;
	struct ordlock_failure failure;
};

/* Flags of struct ordlock_domain_config */
/** ORDLOCK_DOMAIN_SET_POLICY - set @policy */
#define ORDLOCK_DOMAIN_SET_POLICY	(1U << 0)
/** ORDLOCK_DOMAIN_SET_DETECT_DELAY - set @detect_delay_ms */
#define ORDLOCK_DOMAIN_SET_DETECT_DELAY	(1U << 1)
/** ORDLOCK_DOMAIN_SET_MAX_HOLD - set @max_hold_ms */
#define ORDLOCK_DOMAIN_SET_MAX_HOLD	(1U << 2)
/** ORDLOCK_DOMAIN_SET_STRICT - set @strict */
#define ORDLOCK_DOMAIN_SET_STRICT	(1U << 3)
/**
 * ORDLOCK_DOMAIN_RESET_ORDER - forget the lock order learned in the domain
 * (its edges, potential deadlocks and dropped count; see
 * %ORDLOCK_IOC_GET_ORDER)
 */
#define ORDLOCK_DOMAIN_RESET_ORDER	(1U << 4)
/** ORDLOCK_DOMAIN_SET_CLUSTER - set @cluster (DOC: Cluster domains) */
#define ORDLOCK_DOMAIN_SET_CLUSTER	(1U << 5)
/**
 * ORDLOCK_DOMAIN_SET_FASTPATH - set @fastpath and @fastpath_uid (DOC: The
 * fast path)
 */
#define ORDLOCK_DOMAIN_SET_FASTPATH	(1U << 6)
/** ORDLOCK_DOMAIN_FLAGS - every flag of &struct ordlock_domain_config */
#define ORDLOCK_DOMAIN_FLAGS		(ORDLOCK_DOMAIN_SET_POLICY | \
					 ORDLOCK_DOMAIN_SET_DETECT_DELAY | \
					 ORDLOCK_DOMAIN_SET_MAX_HOLD | \
					 ORDLOCK_DOMAIN_SET_STRICT | \
					 ORDLOCK_DOMAIN_RESET_ORDER | \
					 ORDLOCK_DOMAIN_SET_CLUSTER | \
					 ORDLOCK_DOMAIN_SET_FASTPATH)

/**
 * struct ordlock_domain_config - argument of %ORDLOCK_IOC_DOMAIN_CONFIG
 * @size: sizeof(struct ordlock_domain_config)
 * @flags: which settings to change: ORDLOCK_DOMAIN_SET_*; 0 only reads.
 *	Changing needs CAP_SYS_ADMIN (EPERM otherwise)
 * @name: the domain, as for &struct ordlock_set_domain; created if needed,
 *	for the owner's user as by %ORDLOCK_IOC_SET_DOMAIN (EDQUOT, ENOSPC).
 *	A domain that was configured lives until the module is unloaded
 * @policy: in/out: an &enum ordlock_policy
 * @detect_delay_ms: in/out: in a %ORDLOCK_POLICY_DETECT domain, how long a
 *	waiter waits before it looks for a cycle (PostgreSQL's
 *	deadlock_timeout); 0 looks at once. Each waiter looks once, when its
 *	own delay ends: the victim of a cycle is the first of its waiters
 *	whose delay ends while it stands (as in PostgreSQL), not always the
 *	one whose wait closed it. A waiter whose domain was
 *	switched to %ORDLOCK_POLICY_TIMEOUT during the delay does not look
 * @nowners: out: owners in the domain
 * @max_hold_ms: in/out: the longest lease of a grant in the domain, and
 *	the lease of a request that asks for none (DOC: Leases); 0, the
 *	default, is no limit. It applies to grants made after the change
 * @strict: in/out: 1 for strict ranks, 0 (the default) for the plain order
 *	rule; with %ORDLOCK_DOMAIN_SET_STRICT other values are refused
 *	(EINVAL); without it the field is only written
 * @cluster: in/out: 1 for a cluster domain, whose keys are also locks of
 *	the Linux DLM across the nodes of a corosync cluster (DOC: Cluster
 *	domains); 0 (the default) for a domain of this host only; with
 *	%ORDLOCK_DOMAIN_SET_CLUSTER other values are refused (EINVAL);
 *	without it the field is only written
 * @fastpath: in/out: 1 gives the domain the fast path (DOC: The fast
 *	path), 0 (the default) takes it away; with %ORDLOCK_DOMAIN_SET_FASTPATH
 *	other values are refused (EINVAL), and so is the change of a domain
 *	that has owners (EBUSY) or is a cluster domain (EOPNOTSUPP); without it
 *	the field is only written
 * @fastpath_uid: in/out: the only user (effective uid, in the caller's
 *	user namespace) whose owners may use the fast path of the domain:
 *	members that can write the shared words must trust each other
 *	(docs/security.md); an uid that does not map is refused (EINVAL)
 *
 * Strict ranks (source 000's lock hierarchy with levels): in a
 * %ORDLOCK_POLICY_ENFORCE domain with @strict 1, an owner that holds keys
 * may only acquire keys whose rank is above the rank of every key it holds;
 * a request with a key of a held rank, even one of a higher id, fails with
 * EDEADLK and reason %ORDLOCK_REASON_STRICT, naming the held key. One
 * request may still take several keys of one rank together (they are
 * sorted and taken in order). The setting is read when a request starts:
 * keys held before it changed stay held. In the other policies it has no
 * effect.
 */
struct ordlock_domain_config {
	__u32 size;
	__u32 flags;
	char name[ORDLOCK_DOMAIN_NAME_MAX];
	__u32 policy;
	__u32 detect_delay_ms;
	__u32 nowners;
	__u32 max_hold_ms;
	__u32 strict;
	__u32 cluster;
	__u32 fastpath;
	__u32 fastpath_uid;
};

/** ORDLOCK_LABEL_MAX - size of an owner's label, NUL included */
#define ORDLOCK_LABEL_MAX 32

/**
 * struct ordlock_set_label - argument of %ORDLOCK_IOC_SET_LABEL
 * @size: sizeof(struct ordlock_set_label)
 * @flags: must be 0
 * @label: NUL-terminated, at most %ORDLOCK_LABEL_MAX - 1 characters of
 *	[A-Za-z0-9._-] naming the owner's code path ("api", "batch"); the
 *	empty string removes the label. Shown wherever the owner is: the
 *	debugfs files, the netlink dumps and events, the failure reports and
 *	the first observations of the learned lock order
 */
struct ordlock_set_label {
	__u32 size;
	__u32 flags;
	char label[ORDLOCK_LABEL_MAX];
};

/**
 * enum ordlock_order_kind - what an edge of the learned order says
 * @ORDLOCK_ORDER_RANKS: a key of rank @to_rank was taken while one of
 *	@from_rank was held (the two ranks differ)
 * @ORDLOCK_ORDER_ASCENDING: a key of the rank was taken while a key of the
 *	same rank with a lower id was held (@from_rank == @to_rank)
 * @ORDLOCK_ORDER_DESCENDING: likewise, with a higher id held
 */
enum ordlock_order_kind {
	ORDLOCK_ORDER_RANKS = 1,
	ORDLOCK_ORDER_ASCENDING,
	ORDLOCK_ORDER_DESCENDING,
};

/**
 * ORDLOCK_ORDER_EDGE_INVERTED - the edge closed a cycle of the learned
 * order (or made a rank's ids go both ways) and was reported as a
 * potential deadlock; it is kept out of the order
 */
#define ORDLOCK_ORDER_EDGE_INVERTED	(1U << 0)
/** ORDLOCK_ORDER_EDGE_REPORTED - the edge is part of a reported potential deadlock */
#define ORDLOCK_ORDER_EDGE_REPORTED	(1U << 1)

/**
 * struct ordlock_order_edge - one edge of the learned lock order of a
 * domain, with its first observation
 * @from_rank: the rank held
 * @to_rank: the rank taken next, in a later request
 * @kind: an &enum ordlock_order_kind
 * @flags: ORDLOCK_ORDER_EDGE_*
 * @count: how many grants made the edge (counted from the first one; at
 *	least 1). An owner adds the grants of an edge it knows in batches of
 *	up to 64, so the count may lag by that much per owner
 * @held: the first observation: the key held (its mode: the strongest
 *	mode of the rank's held keys)
 * @taken: the first observation: the key taken (likewise)
 * @owner_id: the first observation: the owner
 * @time_ns: the first observation: when (CLOCK_REALTIME, ns)
 * @pid: the first observation: the owner's process (0 when the caller may
 *	not see it: an owner of another user, without CAP_SYS_ADMIN)
 * @uid: the first observation: the owner's user (effective uid)
 * @comm: the first observation: the command (empty when hidden)
 * @label: the first observation: the owner's label (empty when none or
 *	hidden)
 */
struct ordlock_order_edge {
	__u32 from_rank;
	__u32 to_rank;
	__u32 kind;
	__u32 flags;
	__aligned_u64 count;
	struct ordlock_key held;
	struct ordlock_key taken;
	__aligned_u64 owner_id;
	__aligned_u64 time_ns;
	__u32 pid;
	__u32 uid;
	char comm[16];
	char label[ORDLOCK_LABEL_MAX];
};

/**
 * enum ordlock_potential_kind - a potential deadlock of the learned order
 * @ORDLOCK_POTENTIAL_CYCLE: the ranks form a cycle that the modes allow
 *	to deadlock
 * @ORDLOCK_POTENTIAL_IDS: a rank was taken by ascending and by descending
 *	ids, in modes that conflict
 */
enum ordlock_potential_kind {
	ORDLOCK_POTENTIAL_CYCLE = 1,
	ORDLOCK_POTENTIAL_IDS,
};

/**
 * struct ordlock_order_get - argument of %ORDLOCK_IOC_GET_ORDER
 * @size: sizeof(struct ordlock_order_get)
 * @flags: must be 0
 * @domain: the domain (it is not created: ENOENT when it does not exist)
 * @edge_size: sizeof(struct ordlock_order_edge) as the caller knows it (at
 *	least up to @label); the kernel writes that much of each edge
 * @nedges: in: room in @edges; out: edges the domain has (when more than
 *	the room, only the room was written)
 * @edges: user pointer to @nedges struct ordlock_order_edge, in the order
 *	they were learned, or 0
 * @npotential_words: in: room in @potentials (u32 words); out: words the
 *	potential deadlocks need
 * @potentials: user pointer to u32 words, or 0: each kept potential
 *	deadlock as [&enum ordlock_potential_kind, n, n edge indexes into
 *	@edges], in the order they were reported; the edges of a cycle follow
 *	it: the last one is the edge that closed it
 * @npotential: out: potential deadlocks reported since the domain was
 *	created or reset (also those not kept)
 * @dropped: out: observations of new edges, and potential deadlocks, that
 *	were not kept because the domain's learned order was full (module
 *	parameter order_max_edges), or because the user of the owner that
 *	made the observation had taught order_max_edges_per_user edges (all
 *	domains; its owners with CAP_SYS_RESOURCE are not limited)
 * @nranks: out: ranks in the learned order
 * @max_edges: out: the bound (order_max_edges) now
 * @learning: out: 1 when the domain learns (policy detect or timeout and
 *	module parameter order_learn set), else 0
 * @__reserved: must be zero
 * @__reserved2: must be zero
 */
struct ordlock_order_get {
	__u32 size;
	__u32 flags;
	char domain[ORDLOCK_DOMAIN_NAME_MAX];
	__u32 edge_size;
	__u32 nedges;
	__aligned_u64 edges;
	__u32 npotential_words;
	__u32 __reserved;
	__aligned_u64 potentials;
	__aligned_u64 npotential;
	__aligned_u64 dropped;
	__u32 nranks;
	__u32 max_edges;
	__u32 learning;
	__u32 __reserved2;
};

/** ORDLOCK_IOC_TYPE - the type (magic number) of ordlock's ioctls */
#define ORDLOCK_IOC_TYPE	0xB7

/**
 * ORDLOCK_IOC_ACQUIRE - acquire a set of keys, all or nothing
 *
 * Argument: &struct ordlock_acquire. The rules are those of the DOC
 * section "Overview", the errors those of "Errors".
 */
#define ORDLOCK_IOC_ACQUIRE		_IO(ORDLOCK_IOC_TYPE, 0x01)

/**
 * ORDLOCK_IOC_RELEASE - release all keys, or the given held keys
 *
 * Argument: &struct ordlock_release. Releasing wakes the waiters that can
 * now be granted, in FIFO order.
 */
#define ORDLOCK_IOC_RELEASE		_IO(ORDLOCK_IOC_TYPE, 0x02)

/**
 * ORDLOCK_IOC_SET_DOMAIN - move the owner to a named domain
 *
 * Argument: &struct ordlock_set_domain.
 */
#define ORDLOCK_IOC_SET_DOMAIN		_IO(ORDLOCK_IOC_TYPE, 0x03)

/**
 * ORDLOCK_IOC_OWNER_INFO - describe the calling owner
 *
 * Argument: &struct ordlock_owner_info.
 */
#define ORDLOCK_IOC_OWNER_INFO		_IO(ORDLOCK_IOC_TYPE, 0x04)

/**
 * ORDLOCK_IOC_LAST_FAILURE - read the owner's last failure record
 *
 * Argument: &struct ordlock_last_failure. The record is kept until the
 * next request of the owner fails.
 */
#define ORDLOCK_IOC_LAST_FAILURE	_IO(ORDLOCK_IOC_TYPE, 0x05)

/**
 * ORDLOCK_IOC_CONVERT - upgrade or downgrade a held key
 *
 * Argument: &struct ordlock_convert.
 */
#define ORDLOCK_IOC_CONVERT		_IO(ORDLOCK_IOC_TYPE, 0x06)

/**
 * ORDLOCK_IOC_DOMAIN_CONFIG - read or change a domain's policy
 *
 * Argument: &struct ordlock_domain_config. Changing needs CAP_SYS_ADMIN.
 */
#define ORDLOCK_IOC_DOMAIN_CONFIG	_IO(ORDLOCK_IOC_TYPE, 0x07)
/**
 * ORDLOCK_IOC_SET_LABEL - name the owner's code path
 *
 * Argument: &struct ordlock_set_label. EINVAL for a label with other
 * characters, too long or without its NUL.
 */
#define ORDLOCK_IOC_SET_LABEL		_IO(ORDLOCK_IOC_TYPE, 0x0A)
/**
 * ORDLOCK_IOC_GET_ORDER - read the lock order a domain learned
 *
 * Argument: &struct ordlock_order_get. In a %ORDLOCK_POLICY_DETECT or
 * %ORDLOCK_POLICY_TIMEOUT domain, each grant to an owner that already
 * held keys records an edge from every rank held to every rank taken (and,
 * within one rank, whether the ids went up or down), with its first
 * observation. An edge that closes a cycle of ranks in which every rank is
 * held and waited for in conflicting modes (shared and shared never
 * conflict), or a rank taken both by ascending and by descending ids in
 * conflicting modes, is a potential deadlock: it is reported once, at
 * once, in the kernel log, as %ORDLOCK_EVENT_POTENTIAL_DEADLOCK and in
 * debugfs "order". The keys of one request are sorted by the kernel and
 * make no edge among themselves. Anyone may read any domain; the pid,
 * command and label of observations of another user's owners read as 0
 * and empty unless the caller has CAP_SYS_ADMIN. ENOENT: no such domain.
 * EFAULT: @edges or @potentials not writable.
 */
#define ORDLOCK_IOC_GET_ORDER		_IO(ORDLOCK_IOC_TYPE, 0x0B)

/**
 * ORDLOCK_IOC_RENEW - extend the lease of what the owner holds
 *
 * Argument: &struct ordlock_renew. DOC: Leases.
 */
#define ORDLOCK_IOC_RENEW		_IO(ORDLOCK_IOC_TYPE, 0x08)

/**
 * ORDLOCK_IOC_TOKEN_CHECK - is a token still the live grant of a key?
 *
 * Argument: &struct ordlock_token_check. 0 or ESTALE.
 */
#define ORDLOCK_IOC_TOKEN_CHECK		_IO(ORDLOCK_IOC_TYPE, 0x09)

/**
 * DOC: Compact ioctls
 *
 * The hot calls have a compact form besides the full one: the same
 * request, done by the same code, with an argument that carries exactly
 * what the call needs and no @size in front. The full form's argument is
 * copied in and out whole; the compact form reads a small fixed structure
 * and writes back only what changed (the token; the time left after a
 * signal; the failure record, only on failure and only where the caller
 * asks for it), or takes no structure at all. Everything else is as in the
 * full form: the rules (DOC: Overview), the errors (DOC: Errors), the
 * record %ORDLOCK_IOC_LAST_FAILURE reads, the restart after a signal, and a
 * call that fails changes nothing.
 *
 * A compact structure never grows: what a later version needs goes into a
 * new ioctl number, or the caller uses the full form. Its fields named
 * __reserved must be zero and its unknown flags are rejected (EINVAL), as
 * in every structure; what the compact form does not carry (a lease) is
 * the full form's.
 *
 * - %ORDLOCK_IOC_LOCK (&struct ordlock_lock): %ORDLOCK_IOC_ACQUIRE with
 *   @lease_ms 0;
 * - %ORDLOCK_IOC_UNLOCK (&struct ordlock_unlock): %ORDLOCK_IOC_RELEASE of
 *   the given keys;
 * - %ORDLOCK_IOC_UNLOCK_ALL (no structure: the argument is 0):
 *   %ORDLOCK_IOC_RELEASE with %ORDLOCK_RELEASE_ALL.
 *
 * A module that predates them answers ENOTTY: libordlock then uses the
 * full forms.
 */

/**
 * struct ordlock_lock - argument of %ORDLOCK_IOC_LOCK
 * @keys: user pointer to an array of @nkeys &struct ordlock_key
 * @nkeys: number of keys in @keys; 1 to max_keys_per_request
 * @flags: %ORDLOCK_ACQUIRE_TRY, %ORDLOCK_ACQUIRE_REORDER, or 0
 * @timeout_ns: the longest the whole request may wait, in nanoseconds;
 *	0 means the domain default; values above the maximum are capped. In
 *	and out: after a wait a signal interrupted, the time that was left
 *	(as &struct ordlock_acquire @timeout_ns); written back only then
 * @failure: user pointer to a &struct ordlock_failure, or 0: on failure
 *	the kernel writes the failure record there (not on success; a record
 *	that cannot be written makes the call fail with EFAULT). With 0 the
 *	record is read with %ORDLOCK_IOC_LAST_FAILURE
 * @token: out: the fencing token of the grant; written only on success
 * @result_flags: out: %ORDLOCK_RESULT_RELEASED, or 0 (written on success
 *	and on failure)
 * @__reserved: must be zero
 *
 * The request of %ORDLOCK_IOC_ACQUIRE with @lease_ms 0 (the domain's
 * max_hold_ms applies as there): the same flags, the same
 * %ORDLOCK_ACQUIRE_REORDER. A grant whose @token cannot be written is
 * undone, and the call fails with EFAULT.
 */
struct ordlock_lock {
	__aligned_u64 keys;
	__u32 nkeys;
	__u32 flags;
	__aligned_u64 timeout_ns;
	__aligned_u64 failure;
	__aligned_u64 token;
	__u32 result_flags;
	__u32 __reserved;
};

/**
 * struct ordlock_unlock - argument of %ORDLOCK_IOC_UNLOCK
 * @keys: user pointer to an array of @nkeys &struct ordlock_key; @mode is
 *	ignored but must be 0 or a valid mode
 * @nkeys: number of keys in @keys; at least 1
 * @__reserved: must be zero (no flags yet)
 * @failure: user pointer to a &struct ordlock_failure, or 0: as in
 *	&struct ordlock_lock
 *
 * The request of %ORDLOCK_IOC_RELEASE without %ORDLOCK_RELEASE_ALL: either
 * every key is held and all are released, or nothing is (ENOENT names the
 * first key not held).
 */
struct ordlock_unlock {
	__aligned_u64 keys;
	__u32 nkeys;
	__u32 __reserved;
	__aligned_u64 failure;
};

/**
 * ORDLOCK_IOC_LOCK - compact %ORDLOCK_IOC_ACQUIRE
 *
 * Argument: &struct ordlock_lock (DOC: Compact ioctls).
 */
#define ORDLOCK_IOC_LOCK		_IO(ORDLOCK_IOC_TYPE, 0x10)

/**
 * ORDLOCK_IOC_UNLOCK - compact %ORDLOCK_IOC_RELEASE of the given keys
 *
 * Argument: &struct ordlock_unlock (DOC: Compact ioctls).
 */
#define ORDLOCK_IOC_UNLOCK		_IO(ORDLOCK_IOC_TYPE, 0x11)

/**
 * ORDLOCK_IOC_UNLOCK_ALL - compact %ORDLOCK_IOC_RELEASE with
 * %ORDLOCK_RELEASE_ALL
 *
 * Argument: none, the value 0 (EINVAL otherwise). Returns the number of
 * keys released (0 or more) instead of 0; acknowledges a revocation as the
 * full form does.
 */
#define ORDLOCK_IOC_UNLOCK_ALL		_IO(ORDLOCK_IOC_TYPE, 0x12)

/**
 * DOC: Generic netlink family "ordlock"
 *
 * Family %ORDLOCK_GENL_NAME, version %ORDLOCK_GENL_VERSION, one multicast
 * group %ORDLOCK_GENL_MCGRP_EVENTS. Only the initial network namespace
 * serves it: requests from any other namespace fail with EOPNOTSUPP and an
 * extack message saying so. The policies are strict: unknown attributes,
 * attributes a command does not take and unknown flags are rejected with
 * an extack message naming the attribute, and nothing changes.
 *
 * Locks: the owner is the netlink socket, not its port id (a socket bound
 * to the port id of one that is closing gets an owner of its own).
 * Everything it holds or waits for is released when the socket closes or
 * its process dies. One request of a socket is in progress at a time (EBUSY
 * otherwise). The owner is created by the socket's first lock request
 * (ACQUIRE, CONVERT or RELEASE), which fails with the netlink error EACCES
 * unless the sending task may open /dev/ordlock for reading and writing
 * (the node it sees, checked like open(2) would: the device's mode and
 * group decide who may lock, through either interface). The owner counts
 * against the user of that task (its effective uid); when that user has
 * max_owners_per_user owners already, the request fails with EDQUOT. A
 * request only ever concerns the sending socket's own owner: its keys, its
 * queued request, its cookie. A socket's owner keeps the module in use, as
 * an open /dev/ordlock does: rmmod is refused until the socket closes, so
 * no held key vanishes and every queued request gets its RESULT (while
 * the module is being unloaded, a socket's first lock request fails with
 * ENODEV).
 *
 * %ORDLOCK_CMD_ACQUIRE
 *   [%ORDLOCK_A_DOMAIN], %ORDLOCK_A_KEYS, [%ORDLOCK_A_TIMEOUT_NS],
 *   [%ORDLOCK_A_FLAGS: %ORDLOCK_ACQUIRE_TRY, %ORDLOCK_ACQUIRE_REORDER],
 *   [%ORDLOCK_A_COOKIE], [%ORDLOCK_A_LEASE_MS]. The same rules as
 *   %ORDLOCK_IOC_ACQUIRE, through the same code. The reply (same command)
 *   carries %ORDLOCK_A_COOKIE and %ORDLOCK_A_STATUS:
 *   %ORDLOCK_STATUS_GRANTED with %ORDLOCK_A_TOKEN,
 *   %ORDLOCK_STATUS_REFUSED with %ORDLOCK_A_ERRNO and %ORDLOCK_A_FAILURE,
 *   or %ORDLOCK_STATUS_QUEUED. A queued request ends later with exactly one
 *   %ORDLOCK_CMD_RESULT message to the requesting port: GRANTED (token),
 *   TIMEOUT or DEADLOCK (failure, and for DEADLOCK %ORDLOCK_A_CYCLE),
 *   CANCELLED, or in a cluster domain REFUSED (DOC: Cluster domains).
 *   Every reply and RESULT of an ACQUIRE carries
 *   %ORDLOCK_A_RESULT_FLAGS (as &struct ordlock_acquire @result_flags; a
 *   %ORDLOCK_ACQUIRE_REORDER request that let held keys go is QUEUED while
 *   it waits for the union, and says %ORDLOCK_RESULT_RELEASED from that
 *   reply on). Malformed requests fail with a netlink error and an extack
 *   message naming the attribute; nothing changes.
 *
 *   %ORDLOCK_A_DOMAIN moves the socket's owner to that domain, which it
 *   may only do while it holds nothing (EBUSY). Creating the domain counts
 *   against the owner's user as %ORDLOCK_IOC_SET_DOMAIN does: past
 *   max_domains_per_user the request fails with the netlink error EDQUOT
 *   and an extack naming the limit (nothing else is done), past
 *   max_domains with ENOSPC.
 * %ORDLOCK_CMD_RELEASE
 *   %ORDLOCK_A_FLAGS (%ORDLOCK_RELEASE_ALL) or %ORDLOCK_A_KEYS; all of
 *   them or none (ENOENT). Reply: STATUS GRANTED or REFUSED, as above.
 * %ORDLOCK_CMD_CONVERT
 *   %ORDLOCK_A_KEYS holding exactly one key with its new mode,
 *   [%ORDLOCK_A_TIMEOUT_NS], [%ORDLOCK_A_FLAGS], [%ORDLOCK_A_COOKIE].
 *   Replies as ACQUIRE.
 * %ORDLOCK_CMD_CANCEL
 *   %ORDLOCK_A_COOKIE: withdraw the queued request of this socket with
 *   that cookie (ENOENT when it has none, whatever other sockets queued).
 *   Exactly one of the two happens: the cancel wins (its reply has STATUS
 *   CANCELLED and no RESULT follows; what the request took is released),
 *   or the request had ended first (the cancel fails with ENOENT and the
 *   RESULT message was or will be sent).
 * %ORDLOCK_CMD_RESULT
 *   Notification only, see ACQUIRE.
 * %ORDLOCK_CMD_SET_LABEL
 *   %ORDLOCK_A_LABEL: the label of the socket's owner (created if need
 *   be, as by a lock request), as %ORDLOCK_IOC_SET_LABEL; an empty string
 *   removes it. EINVAL with an extack for a bad label.
 * %ORDLOCK_CMD_RENEW
 *   [%ORDLOCK_A_LEASE_MS]: as %ORDLOCK_IOC_RENEW. Reply: STATUS GRANTED
 *   with %ORDLOCK_A_LEFT_MS, or REFUSED (ENOENT, EKEYEXPIRED).
 * %ORDLOCK_CMD_TOKEN_CHECK
 *   [%ORDLOCK_A_DOMAIN] (default "default"), %ORDLOCK_A_KEY with
 *   %ORDLOCK_K_RANK, %ORDLOCK_K_ID and %ORDLOCK_K_TOKEN. Anyone may ask;
 *   no owner is created. The answer is the netlink error: 0 when the token
 *   is the live grant of the key, ESTALE (extack "stale token") otherwise.
 * %ORDLOCK_CMD_REVOKED
 *   Notification to the port of a socket whose owner's lease was revoked
 *   (DOC: Leases): %ORDLOCK_A_FAILURE (reason %ORDLOCK_REASON_REVOKED) and
 *   %ORDLOCK_A_KEYS, each key with %ORDLOCK_K_MODE and %ORDLOCK_K_TOKEN.
 *   Every lock request of the socket is then REFUSED with %ORDLOCK_A_ERRNO
 *   EKEYEXPIRED until a RELEASE with %ORDLOCK_RELEASE_ALL acknowledges.
 *   A request that was queued when the lease expired ends with a RESULT
 *   of status REFUSED, errno EKEYEXPIRED.
 *
 * A grant is only kept if the socket can be told of it. When the reply to
 * ACQUIRE or CONVERT, or the RESULT of a queued one, cannot be queued on
 * the socket (its receive buffer is full), the grant is undone before
 * anything else happens: an acquire releases what it took, an upgrade goes
 * back to the mode the key had. The socket's next read then fails with
 * ENOBUFS (unless it set NETLINK_NO_ENOBUFS); a client that sees ENOBUFS
 * does not know how its requests in flight ended and asks GET_LOCKS, or
 * RELEASEs with %ORDLOCK_RELEASE_ALL.
 *
 * Queries (anyone). The dumps show every owner to a sender with
 * CAP_NET_ADMIN (both the task and the socket's opener, as for DOMAIN_SET);
 * to anyone else, only the entries of owners of the sender's own user
 * (effective uid): its holds and waits (GET_LOCKS), its owners
 * (GET_OWNERS), the edges its waiters start (GET_GRAPH; the blocker is
 * named, as in a failure record).
 *
 * %ORDLOCK_CMD_GET_LOCKS
 *   Dump: one message per holder or waiter, with %ORDLOCK_A_ENTRY
 *   (%ORDLOCK_E_DOMAIN, %ORDLOCK_E_KEY, %ORDLOCK_E_ROLE,
 *   %ORDLOCK_E_POSITION, owner fields, %ORDLOCK_E_MODE, %ORDLOCK_E_TOKEN
 *   or %ORDLOCK_E_WAITED_US; a holder with a lease has
 *   %ORDLOCK_E_LEASE_LEFT_MS; a holder of a cluster domain's key granted
 *   on this node that waits for the key's lock in the cluster has
 *   %ORDLOCK_E_CLUSTER_WAIT and %ORDLOCK_E_WAITED_US, no token yet: an
 *   upgrade's entry shows the mode asked for, and the token of its shared
 *   grant, still valid, is not shown until the upgrade's grant replaces it;
 *   a key of a fast-path domain held by a member through the fast path
 *   has one holder entry, with %ORDLOCK_E_FAST, read from the key's word).
 * %ORDLOCK_CMD_GET_OWNERS
 *   Dump: %ORDLOCK_A_ENTRY with owner fields, %ORDLOCK_E_DOMAIN,
 *   %ORDLOCK_E_KIND, %ORDLOCK_E_HELD, %ORDLOCK_E_UID and, when waiting,
 *   %ORDLOCK_E_KEY and %ORDLOCK_E_WAITED_US.
 * %ORDLOCK_CMD_GET_GRAPH
 *   Dump: one %ORDLOCK_A_ENTRY per edge: the waiter's owner fields,
 *   %ORDLOCK_E_DOMAIN, %ORDLOCK_E_KEY (the mode it asks for),
 *   %ORDLOCK_E_BLOCKER (nested owner fields and %ORDLOCK_E_MODE, and
 *   %ORDLOCK_E_FAST when the blocker holds the key by the fast path: a
 *   %ORDLOCK_EDGE_HARD edge), %ORDLOCK_E_EDGE, %ORDLOCK_E_WAITED_US. After the edges of the
 *   waiters, the %ORDLOCK_EDGE_THREAD edges: the owner that holds, the
 *   domain and key of its thread's wait, the owner waited through as
 *   blocker (with the mode it asks for), how long it has waited. Together
 *   they show every cycle the kernel detects, across domains too.
 * %ORDLOCK_CMD_GET_STATS
 *   Do, with %ORDLOCK_A_DOMAIN: %ORDLOCK_A_STATS, a nest of the counters
 *   of &enum ordlock_stats_attr.
 * %ORDLOCK_CMD_DOMAIN_GET
 *   Do, %ORDLOCK_A_DOMAIN: %ORDLOCK_A_POLICY, %ORDLOCK_A_DETECT_DELAY_MS,
 *   %ORDLOCK_A_STRICT, %ORDLOCK_A_MAX_HOLD_MS, %ORDLOCK_A_RANK_NAMES,
 *   %ORDLOCK_A_CLUSTER, %ORDLOCK_A_FASTPATH, and %ORDLOCK_A_FASTPATH_UID
 *   when the domain has the fast path (the uid as the sender's user
 *   namespace sees it, the overflow uid if it does not map there).
 * %ORDLOCK_CMD_DOMAIN_SET
 *   Do, needs CAP_NET_ADMIN: %ORDLOCK_A_DOMAIN and any of
 *   %ORDLOCK_A_POLICY, %ORDLOCK_A_DETECT_DELAY_MS, %ORDLOCK_A_STRICT (0 or
 *   1, as &struct ordlock_domain_config @strict), %ORDLOCK_A_MAX_HOLD_MS,
 *   %ORDLOCK_A_RANK_NAMES (replaces the names), %ORDLOCK_A_CLUSTER (0 or
 *   1: DOC: Cluster domains), %ORDLOCK_A_FASTPATH (0 or 1: DOC: The fast
 *   path; 1 needs %ORDLOCK_A_FASTPATH_UID, which is taken only with it and
 *   ignored with 0; refused, changing nothing, for the default domain
 *   (EINVAL), in a cluster domain or with %ORDLOCK_A_CLUSTER 1 (EOPNOTSUPP),
 *   and, when it changes the setting or its uid, for a domain that has
 *   owners (EBUSY); an uid that does not map is EINVAL), %ORDLOCK_A_FLAGS
 *   (%ORDLOCK_DOMAIN_RESET_ORDER alone, the only flag it takes: forget the
 *   learned lock order, as the ioctl's flag; another bit is EINVAL and
 *   changes nothing). A domain it creates counts
 *   against the sender's user (its effective uid; EDQUOT past
 *   max_domains_per_user, unless the sender has CAP_SYS_RESOURCE) until the
 *   module is unloaded. The reply is
 *   that of DOMAIN_GET, built after the change: an ENOMEM may then come
 *   after the whole change was made (never half of it), and repeating the
 *   request is harmless.
 *
 * Events (multicast group "events", rate-limited to 100 a second; joining
 * it needs CAP_NET_ADMIN where the kernel supports GENL_MCAST_CAP_NET_ADMIN,
 * 6.7 and the stable kernels it was backported to, such as Debian 12's
 * 6.1): %ORDLOCK_CMD_EVENT with %ORDLOCK_A_EVENT and %ORDLOCK_A_DOMAIN:
 *
 * - %ORDLOCK_EVENT_DEADLOCK: the victim's %ORDLOCK_A_FAILURE and
 *   %ORDLOCK_A_CYCLE;
 * - %ORDLOCK_EVENT_TIMEOUT, %ORDLOCK_EVENT_ORDER and %ORDLOCK_EVENT_LIMIT:
 *   %ORDLOCK_A_FAILURE, with the owner in %ORDLOCK_A_ENTRY;
 * - %ORDLOCK_EVENT_OWNER_DIED (the last process of an owner that held
 *   keys was killed by a signal; a close or a normal exit that leaves keys
 *   behind is not a death and has no event):
 *   %ORDLOCK_A_ENTRY with %ORDLOCK_E_HELD;
 * - %ORDLOCK_EVENT_REVOKED: the owner in %ORDLOCK_A_ENTRY and its
 *   %ORDLOCK_A_FAILURE (reason %ORDLOCK_REASON_REVOKED);
 * - %ORDLOCK_EVENT_POTENTIAL_DEADLOCK (see %ORDLOCK_IOC_GET_ORDER): the
 *   owner whose grant closed it in %ORDLOCK_A_ENTRY,
 *   %ORDLOCK_A_POTENTIAL_KIND, %ORDLOCK_A_ORDER_DROPPED, and
 *   %ORDLOCK_A_CYCLE with one %ORDLOCK_A_ENTRY per edge, the closing one
 *   last: the first observation's owner fields, %ORDLOCK_E_UID,
 *   %ORDLOCK_E_LABEL, %ORDLOCK_E_ORDER_KIND, %ORDLOCK_E_KEY (held),
 *   %ORDLOCK_E_TAKEN, %ORDLOCK_E_TIME_NS and %ORDLOCK_E_COUNT.
 *
 * Every owner entry (dumps, events) carries %ORDLOCK_E_LABEL when the
 * owner has a label.
 *
 * The owner's entry has %ORDLOCK_E_UID. An owner refused by
 * max_owners_per_user is reported as %ORDLOCK_EVENT_LIMIT in the default
 * domain with owner id 0, the refused task's pid and command, and a
 * failure of reason %ORDLOCK_REASON_USER_LIMIT, errno EDQUOT. An owner
 * refused a new domain by max_domains_per_user is reported as
 * %ORDLOCK_EVENT_LIMIT in the domain it asked for (which does not exist),
 * with the owner and its failure record (reason
 * %ORDLOCK_REASON_USER_LIMIT, errno EDQUOT, no key).
 */

/**
 * DOC: Netlink errors
 *
 * The netlink errors (the error of the NLMSG_ERROR message, with an extack
 * message naming the reason and, where there is one, the attribute). A
 * lock request that the kernel answers (STATUS REFUSED) carries its errno
 * in %ORDLOCK_A_ERRNO instead: the errnos of the ioctl table above.
 *
 * ==========  ===============================================================
 * errno       meaning
 * ==========  ===============================================================
 * EINVAL      a malformed request: a missing or unknown attribute, an
 *             attribute the command does not take, a bad key, mode, flag or
 *             domain name, an unknown policy; DOMAIN_SET with a flag other
 *             than %ORDLOCK_DOMAIN_RESET_ORDER; %ORDLOCK_A_CLUSTER 1 for
 *             the default domain; %ORDLOCK_A_FASTPATH for the default
 *             domain, %ORDLOCK_A_FASTPATH 1 without %ORDLOCK_A_FASTPATH_UID
 *             or with one that does not map, %ORDLOCK_A_FASTPATH_UID
 *             without %ORDLOCK_A_FASTPATH
 * ERANGE      an attribute's value is out of its range (the policy)
 * E2BIG       more keys than max_keys_per_request (or, for RELEASE, than
 *             max_keys_per_release); more rank names than a domain takes
 * EMSGSIZE    an attribute longer than its type allows; a reply that does
 *             not fit
 * EOPNOTSUPP  the request came from a network namespace other than the
 *             initial one; XD_CHECK or XD_FAIL of a domain that is not a
 *             cluster domain, XD_FAIL of an asynchronous (netlink)
 *             upgrade's wait in the DLM;
 *             %ORDLOCK_A_FASTPATH 1 in a cluster domain
 *             (or with %ORDLOCK_A_CLUSTER 1), %ORDLOCK_A_CLUSTER 1 in a
 *             domain with the fast path
 * ENOENT      CANCEL of a cookie the socket has no request with; GET_STATS
 *             or DOMAIN_GET of a domain that does not exist
 * EBUSY       XD_HELLO while another socket is registered;
 *             another request of the socket is in progress; ACQUIRE with
 *             %ORDLOCK_A_DOMAIN while the socket's owner holds keys;
 *             DOMAIN_SET changing %ORDLOCK_A_CLUSTER, %ORDLOCK_A_FASTPATH or
 *             its uid of a domain that has owners
 * EPERM       DOMAIN_SET and the XD commands without CAP_NET_ADMIN; XD_FAIL
 *             from a socket that is not the registered ordlock-xdetectd
 * EACCES      the first lock request of a socket whose task may not open
 *             /dev/ordlock for reading and writing
 * ENOSPC      a new domain would make more than max_domains domains
 * EDQUOT      a per-user limit: max_owners_per_user owners, or
 *             max_domains_per_user domains
 * EEXIST      DOMAIN_SET with %ORDLOCK_A_RANK_NAMES naming a rank, or a name,
 *             twice (nothing is changed)
 * ENOMEM      out of memory (nothing is changed, see DOMAIN_SET)
 * ENOBUFS     the socket's receive buffer overflowed (see above)
 * ESTALE      TOKEN_CHECK: the token is not the live grant of the key;
 *             XD_FAIL: the owner's current wait has another generation (or
 *             was chosen already, or granted): nothing changed
 * ENOTCONN    DOMAIN_SET %ORDLOCK_A_CLUSTER 1: this host is not in a quorate
 *             cluster (nothing is changed)
 * ENOPKG      DOMAIN_SET %ORDLOCK_A_CLUSTER 1: no cluster backend
 *             (ordlock_dlm.ko)
 * EIO         DOMAIN_SET %ORDLOCK_A_CLUSTER 1: joining the DLM lockspace
 *             failed
 * ETIMEDOUT   DOMAIN_SET %ORDLOCK_A_CLUSTER 0: the DLM did not let the
 *             lockspace go in time (EINTR: a fatal signal came first); the
 *             domain is local all the same, the lockspace was left by force
 *             (the one DOMAIN_SET failure that changes something)
 * ENODEV      the module is being unloaded
 * ==========  ===============================================================
 */

/**
 * DOC: Detection across nodes
 *
 * Policy detect in a cluster domain (docs/cluster.md, "Deadlocks across
 * nodes"): cycles within the node are found at the wait that closes them,
 * as on one host; cycles through owners of several nodes are found by
 * ordlock-xdetectd, one daemon per node on corosync's CPG, through the
 * commands below. While no daemon is registered, cycles across nodes end
 * by the requests' timeouts (DOMAIN_GET says so).
 *
 * Every wait (an owner starts waiting for one key; a multi-key request's
 * wait for its next key is a new wait, and so is a wait that moves from
 * the node's queue into the DLM) and every hold takes the next value of
 * one 64-bit counter per load of the module, the *generation*; the
 * module's *boot id* (%ORDLOCK_A_XD_BOOT, random at load) goes with it.
 *
 * All the commands need CAP_NET_ADMIN (EPERM), from the initial network
 * namespace (EOPNOTSUPP); their policies are strict (EINVAL, ERANGE with an
 * extack message naming the attribute; nothing changes).
 *
 * %ORDLOCK_CMD_XD_HELLO
 *   Do: %ORDLOCK_A_XD_NODE, %ORDLOCK_A_XD_STATE, %ORDLOCK_A_XD_MEMBERS.
 *   The first registers the sending socket as the node's daemon (EBUSY
 *   while another socket is registered); later ones from it update the
 *   state. Reply: %ORDLOCK_A_XD_BOOT. The socket's close unregisters it.
 *   After the reply to a registration (not to an update), the kernel
 *   replays the waits already going on: one %ORDLOCK_CMD_XD_EVENT
 *   %ORDLOCK_XD_WAIT per current wait of a cluster domain with policy
 *   detect, from one snapshot, each with its generation and its start
 *   (%ORDLOCK_E_TIME_NS), so that a daemon that starts or restarts after
 *   waits began probes them too (the probe delay runs from that start).
 *   The replay has every current wait, announced (below) or not yet. A
 *   wait may come twice (the replay and its announcement), one that ends
 *   meanwhile may have its %ORDLOCK_XD_WAIT_END before its replayed WAIT,
 *   and one replayed before its announcement that ends before it has no
 *   WAIT_END: the generation decides (it never repeats; XD_WALK of a wait
 *   that ended is ESTALE).
 *   DOMAIN_GET of a cluster domain adds %ORDLOCK_A_XD_STATE (%ORDLOCK_XD_OFF
 *   while no daemon is registered), %ORDLOCK_A_XD_MEMBERS, and
 *   %ORDLOCK_A_XD_PID and %ORDLOCK_A_XD_NODE while one is.
 * %ORDLOCK_CMD_XD_EVENT
 *   Multicast to group %ORDLOCK_GENL_MCGRP_XDETECT, only while a daemon is
 *   registered and only for waits of cluster domains with policy detect:
 *   %ORDLOCK_A_XD_KIND, %ORDLOCK_A_DOMAIN, %ORDLOCK_A_XD_BOOT and one
 *   %ORDLOCK_A_ENTRY (owner fields, %ORDLOCK_E_KEY with the mode asked,
 *   %ORDLOCK_E_XD_GEN, %ORDLOCK_E_TIME_NS, and %ORDLOCK_E_CLUSTER_WAIT
 *   for a wait in the DLM, with %ORDLOCK_E_XD_LKID when its request is
 *   made already: usually not yet, %ORDLOCK_CMD_XD_WALK has it);
 *   %ORDLOCK_XD_WAIT_END adds %ORDLOCK_A_XD_END. A wait is announced
 *   (%ORDLOCK_XD_WAIT) only once it has lasted the probe delay: the
 *   domain's detect_delay_ms, at least 50 ms (%ORDLOCK_E_TIME_NS is still
 *   its start, so the daemon may probe it at once); a wait that ends
 *   before sends nothing, and %ORDLOCK_XD_WAIT_END comes only for a wait
 *   so announced. Exception: an upgrade's wait in the DLM made by the
 *   ioctls is announced at its start.
 * %ORDLOCK_CMD_XD_WALK
 *   Dump: %ORDLOCK_A_DOMAIN and either %ORDLOCK_A_KEY (with
 *   %ORDLOCK_K_MODE: a remote waiter's key and mode; the walk starts at
 *   the owners of this node that hold the key in a conflicting mode) or
 *   %ORDLOCK_A_XD_OWNER and %ORDLOCK_A_XD_GEN (that owner's wait; ESTALE
 *   when its current wait has another generation). One message per path,
 *   at most %ORDLOCK_XD_PATHS_MAX, each an %ORDLOCK_A_XD_PATH of vertex
 *   entries (owner fields, %ORDLOCK_E_DOMAIN, %ORDLOCK_E_KEY with the mode
 *   asked, %ORDLOCK_E_EDGE and %ORDLOCK_E_MODE of the next vertex's block,
 *   %ORDLOCK_E_XD_GEN, %ORDLOCK_E_XD_HOLD_GEN, %ORDLOCK_E_TIME_NS,
 *   %ORDLOCK_E_CLUSTER_WAIT and %ORDLOCK_E_XD_LKID), the last vertex an
 *   owner that waits in the DLM; paths that end at an owner that does not
 *   wait, or close within the node, are left out. One snapshot of the
 *   graph for the whole dump.
 * %ORDLOCK_CMD_XD_CHECK
 *   Do: %ORDLOCK_A_DOMAIN, %ORDLOCK_A_XD_PATH with this node's vertices
 *   (%ORDLOCK_E_OWNER_ID, %ORDLOCK_E_XD_GEN, and for a hard incoming edge
 *   %ORDLOCK_E_KEY and %ORDLOCK_E_XD_HOLD_GEN). Reply %ORDLOCK_A_XD_LIVE:
 *   1 when every vertex's owner's current wait has that generation and
 *   it still holds that key with that hold's generation, else 0.
 * %ORDLOCK_CMD_XD_FAIL
 *   Do, from the registered daemon's socket only (EPERM): %ORDLOCK_A_DOMAIN,
 *   %ORDLOCK_A_XD_OWNER, %ORDLOCK_A_XD_GEN and %ORDLOCK_A_CYCLE (every
 *   vertex, victim first, each with %ORDLOCK_E_XD_NODE). If the owner's
 *   current wait has that generation it fails with EDEADLK, reason
 *   %ORDLOCK_REASON_DEADLOCK, as a victim on one host (the cycle's steps
 *   of other nodes have %ORDLOCK_STEP_OTHER_NODE); else ESTALE and nothing
 *   changes.
 */

/** ORDLOCK_XD_PATHS_MAX - most paths one %ORDLOCK_CMD_XD_WALK returns */
#define ORDLOCK_XD_PATHS_MAX	64

/**
 * enum ordlock_xd_state - detection across nodes on this node
 * @ORDLOCK_XD_OFF: no daemon registered (or it says it is not in its
 *	group): cycles across nodes end by the timeouts
 * @ORDLOCK_XD_JOINING: the daemon is registered, not yet in the CPG group
 *	with every member
 * @ORDLOCK_XD_ON: the daemon is in the group with every member
 */
enum ordlock_xd_state {
	ORDLOCK_XD_OFF = 0,
	ORDLOCK_XD_JOINING = 1,
	ORDLOCK_XD_ON = 2,
};

/**
 * enum ordlock_xd_kind - what an %ORDLOCK_CMD_XD_EVENT says
 * @ORDLOCK_XD_WAIT: a wait has lasted its probe delay (or, after a
 *	registration, goes on: %ORDLOCK_CMD_XD_HELLO's replay)
 * @ORDLOCK_XD_WAIT_END: a wait ended (%ORDLOCK_A_XD_END says how)
 */
enum ordlock_xd_kind {
	ORDLOCK_XD_WAIT = 1,
	ORDLOCK_XD_WAIT_END = 2,
};

/**
 * enum ordlock_xd_end - how a wait ended
 * @ORDLOCK_XD_END_GRANTED: the key was granted
 * @ORDLOCK_XD_END_TIMEOUT: the request timed out
 * @ORDLOCK_XD_END_SIGNAL: a signal interrupted it
 * @ORDLOCK_XD_END_CANCELLED: it was cancelled (netlink CANCEL)
 * @ORDLOCK_XD_END_REVOKED: the owner's lease expired
 * @ORDLOCK_XD_END_DEADLOCK: it was a deadlock's victim
 * @ORDLOCK_XD_END_OTHER: any other failure, the owner's death
 */
enum ordlock_xd_end {
	ORDLOCK_XD_END_GRANTED = 1,
	ORDLOCK_XD_END_TIMEOUT,
	ORDLOCK_XD_END_SIGNAL,
	ORDLOCK_XD_END_CANCELLED,
	ORDLOCK_XD_END_REVOKED,
	ORDLOCK_XD_END_DEADLOCK,
	ORDLOCK_XD_END_OTHER,
};

/** ORDLOCK_GENL_NAME - the name of the generic netlink family */
#define ORDLOCK_GENL_NAME		"ordlock"
/** ORDLOCK_GENL_VERSION - the version of the family's protocol */
#define ORDLOCK_GENL_VERSION		1
/** ORDLOCK_GENL_MCGRP_EVENTS - the multicast group of the events */
#define ORDLOCK_GENL_MCGRP_EVENTS	"events"
/**
 * ORDLOCK_GENL_MCGRP_XDETECT - the multicast group of %ORDLOCK_CMD_XD_EVENT,
 *	for ordlock-xdetectd (joining needs CAP_NET_ADMIN; not rate-limited)
 */
#define ORDLOCK_GENL_MCGRP_XDETECT	"xdetect"

/**
 * enum ordlock_cmd - generic netlink commands
 * @ORDLOCK_CMD_UNSPEC: unused
 * @ORDLOCK_CMD_ACQUIRE: take a set of keys, all or nothing
 * @ORDLOCK_CMD_RELEASE: release every key, or the given held keys
 * @ORDLOCK_CMD_CONVERT: upgrade or downgrade one held key
 * @ORDLOCK_CMD_CANCEL: withdraw a queued request, by its cookie
 * @ORDLOCK_CMD_RESULT: notification: how a queued request ended
 * @ORDLOCK_CMD_GET_LOCKS: dump the holders and waiters
 * @ORDLOCK_CMD_GET_OWNERS: dump the owners
 * @ORDLOCK_CMD_GET_GRAPH: dump the edges of the wait-for graph
 * @ORDLOCK_CMD_GET_STATS: the counters of a domain
 * @ORDLOCK_CMD_DOMAIN_GET: the settings of a domain
 * @ORDLOCK_CMD_DOMAIN_SET: change the settings of a domain
 * @ORDLOCK_CMD_EVENT: notification to the "events" group
 * @ORDLOCK_CMD_SET_LABEL: set the label of the socket's owner
 * @ORDLOCK_CMD_RENEW: extend the lease of what the socket's owner holds
 * @ORDLOCK_CMD_TOKEN_CHECK: is a token the live grant of a key?
 * @ORDLOCK_CMD_REVOKED: notification: the owner's lease was revoked
 * @ORDLOCK_CMD_XD_HELLO: register (or update) this node's ordlock-xdetectd
 * @ORDLOCK_CMD_XD_EVENT: notification to the "xdetect" group: a wait of a
 *	cluster domain with policy detect started or ended
 * @ORDLOCK_CMD_XD_WALK: dump this node's paths of waits from an owner or
 *	from the holders of a key
 * @ORDLOCK_CMD_XD_CHECK: are this node's vertices of a cycle still live?
 * @ORDLOCK_CMD_XD_FAIL: fail a wait as the victim of a cycle across nodes
 * @__ORDLOCK_CMD_MAX: one past the last command
 *
 * The attributes each takes and answers with: DOC: Generic netlink family
 * "ordlock".
 */
enum ordlock_cmd {
	ORDLOCK_CMD_UNSPEC,
	ORDLOCK_CMD_ACQUIRE,
	ORDLOCK_CMD_RELEASE,
	ORDLOCK_CMD_CONVERT,
	ORDLOCK_CMD_CANCEL,
	ORDLOCK_CMD_RESULT,
	ORDLOCK_CMD_GET_LOCKS,
	ORDLOCK_CMD_GET_OWNERS,
	ORDLOCK_CMD_GET_GRAPH,
	ORDLOCK_CMD_GET_STATS,
	ORDLOCK_CMD_DOMAIN_GET,
	ORDLOCK_CMD_DOMAIN_SET,
	ORDLOCK_CMD_EVENT,
	ORDLOCK_CMD_SET_LABEL,
	ORDLOCK_CMD_RENEW,
	ORDLOCK_CMD_TOKEN_CHECK,
	ORDLOCK_CMD_REVOKED,
	ORDLOCK_CMD_XD_HELLO,
	ORDLOCK_CMD_XD_EVENT,
	ORDLOCK_CMD_XD_WALK,
	ORDLOCK_CMD_XD_CHECK,
	ORDLOCK_CMD_XD_FAIL,
	__ORDLOCK_CMD_MAX,
};

/** ORDLOCK_CMD_MAX - the last command */
#define ORDLOCK_CMD_MAX (__ORDLOCK_CMD_MAX - 1)

/**
 * enum ordlock_attr - top-level attributes
 * @ORDLOCK_A_UNSPEC: unused
 * @ORDLOCK_A_PAD: padding for 64-bit attributes
 * @ORDLOCK_A_DOMAIN: string, a domain name
 * @ORDLOCK_A_KEYS: nest of %ORDLOCK_A_KEY, 1 to max_keys_per_request
 * @ORDLOCK_A_KEY: nest of &enum ordlock_key_attr
 * @ORDLOCK_A_FLAGS: u32, ORDLOCK_ACQUIRE_* or ORDLOCK_RELEASE_* flags;
 *	for DOMAIN_SET, %ORDLOCK_DOMAIN_RESET_ORDER
 * @ORDLOCK_A_TIMEOUT_NS: u64, as &struct ordlock_acquire.timeout_ns
 * @ORDLOCK_A_COOKIE: u64, chosen by the requester, echoed back
 * @ORDLOCK_A_STATUS: u32, &enum ordlock_status
 * @ORDLOCK_A_TOKEN: u64, a fencing token
 * @ORDLOCK_A_ERRNO: u32, the positive errno of a refusal
 * @ORDLOCK_A_FAILURE: nest of &enum ordlock_failure_attr
 * @ORDLOCK_A_CYCLE: nest of %ORDLOCK_A_ENTRY, one per step, victim first:
 *	owner fields, %ORDLOCK_E_DOMAIN (the step's domain), %ORDLOCK_E_KEY,
 *	%ORDLOCK_E_EDGE, %ORDLOCK_E_MODE (as &struct ordlock_cycle_step)
 * @ORDLOCK_A_ENTRY: nest of &enum ordlock_entry_attr
 * @ORDLOCK_A_EVENT: u32, &enum ordlock_event
 * @ORDLOCK_A_POLICY: u32, &enum ordlock_policy
 * @ORDLOCK_A_DETECT_DELAY_MS: u32
 * @ORDLOCK_A_RANK_NAMES: nest of %ORDLOCK_A_ENTRY with %ORDLOCK_E_RANK
 *	and %ORDLOCK_E_NAME, at most %ORDLOCK_RANK_NAMES_MAX
 * @ORDLOCK_A_STATS: nest of &enum ordlock_stats_attr
 * @ORDLOCK_A_LABEL: string, an owner's label (see &struct
 *	ordlock_set_label)
 * @ORDLOCK_A_POTENTIAL_KIND: u32, &enum ordlock_potential_kind
 * @ORDLOCK_A_ORDER_DROPPED: u64, as &struct ordlock_order_get.dropped
 * @ORDLOCK_A_RESULT_FLAGS: u32, as &struct ordlock_acquire.result_flags
 * @ORDLOCK_A_STRICT: u32, 0 or 1: strict ranks (see &struct
 *	ordlock_domain_config)
 * @ORDLOCK_A_LEASE_MS: u32, as &struct ordlock_acquire.lease_ms (ACQUIRE)
 *	or &struct ordlock_renew.lease_ms (RENEW)
 * @ORDLOCK_A_MAX_HOLD_MS: u32, as &struct ordlock_domain_config.max_hold_ms
 * @ORDLOCK_A_LEFT_MS: u64, as &struct ordlock_renew.left_ms
 * @ORDLOCK_A_CLUSTER: u32, 0 or 1: a cluster domain (see &struct
 *	ordlock_domain_config @cluster; DOC: Cluster domains)
 * @ORDLOCK_A_FASTPATH: u32, 0 or 1: the domain has the fast path (see
 *	&struct ordlock_domain_config @fastpath; DOC: The fast path)
 * @ORDLOCK_A_FASTPATH_UID: u32, the only user (effective uid, in the
 *	sender's user namespace) whose owners may use the fast path (&struct
 *	ordlock_domain_config @fastpath_uid)
 * @ORDLOCK_A_XD_NODE: u32, a corosync node id (XD_HELLO: this node's)
 * @ORDLOCK_A_XD_STATE: u32, &enum ordlock_xd_state
 * @ORDLOCK_A_XD_MEMBERS: u32, members of the daemon's CPG group
 * @ORDLOCK_A_XD_BOOT: u64, the module's boot id (random at load)
 * @ORDLOCK_A_XD_KIND: u32, &enum ordlock_xd_kind
 * @ORDLOCK_A_XD_END: u32, &enum ordlock_xd_end
 * @ORDLOCK_A_XD_OWNER: u64, an owner id of this node
 * @ORDLOCK_A_XD_GEN: u64, a wait generation
 * @ORDLOCK_A_XD_PATH: nest of %ORDLOCK_A_ENTRY, one per vertex, in order
 * @ORDLOCK_A_XD_LIVE: u32, 0 or 1
 * @ORDLOCK_A_XD_PID: u32, the pid of the registered ordlock-xdetectd
 *	(DOMAIN_GET, while one is registered)
 * @__ORDLOCK_A_MAX: one past the last attribute
 */
enum ordlock_attr {
	ORDLOCK_A_UNSPEC,
	ORDLOCK_A_PAD,
	ORDLOCK_A_DOMAIN,
	ORDLOCK_A_KEYS,
	ORDLOCK_A_KEY,
	ORDLOCK_A_FLAGS,
	ORDLOCK_A_TIMEOUT_NS,
	ORDLOCK_A_COOKIE,
	ORDLOCK_A_STATUS,
	ORDLOCK_A_TOKEN,
	ORDLOCK_A_ERRNO,
	ORDLOCK_A_FAILURE,
	ORDLOCK_A_CYCLE,
	ORDLOCK_A_ENTRY,
	ORDLOCK_A_EVENT,
	ORDLOCK_A_POLICY,
	ORDLOCK_A_DETECT_DELAY_MS,
	ORDLOCK_A_RANK_NAMES,
	ORDLOCK_A_STATS,
	ORDLOCK_A_LABEL,
	ORDLOCK_A_POTENTIAL_KIND,
	ORDLOCK_A_ORDER_DROPPED,
	ORDLOCK_A_RESULT_FLAGS,
	ORDLOCK_A_STRICT,
	ORDLOCK_A_LEASE_MS,
	ORDLOCK_A_MAX_HOLD_MS,
	ORDLOCK_A_LEFT_MS,
	ORDLOCK_A_CLUSTER,
	ORDLOCK_A_FASTPATH,
	ORDLOCK_A_FASTPATH_UID,
	ORDLOCK_A_XD_NODE,
	ORDLOCK_A_XD_STATE,
	ORDLOCK_A_XD_MEMBERS,
	ORDLOCK_A_XD_BOOT,
	ORDLOCK_A_XD_KIND,
	ORDLOCK_A_XD_END,
	ORDLOCK_A_XD_OWNER,
	ORDLOCK_A_XD_GEN,
	ORDLOCK_A_XD_PATH,
	ORDLOCK_A_XD_LIVE,
	ORDLOCK_A_XD_PID,
	__ORDLOCK_A_MAX,
};

/** ORDLOCK_A_MAX - the last top-level attribute */
#define ORDLOCK_A_MAX (__ORDLOCK_A_MAX - 1)

/**
 * enum ordlock_key_attr - attributes of a key
 * @ORDLOCK_K_UNSPEC: unused
 * @ORDLOCK_K_PAD: padding
 * @ORDLOCK_K_RANK: u32
 * @ORDLOCK_K_ID: u64
 * @ORDLOCK_K_MODE: u32, &enum ordlock_mode (required when acquiring)
 * @ORDLOCK_K_TOKEN: u64, the token of a revoked key (REVOKED); in
 *	requests only TOKEN_CHECK takes it
 * @__ORDLOCK_K_MAX: one past the last key attribute
 */
enum ordlock_key_attr {
	ORDLOCK_K_UNSPEC,
	ORDLOCK_K_PAD,
	ORDLOCK_K_RANK,
	ORDLOCK_K_ID,
	ORDLOCK_K_MODE,
	ORDLOCK_K_TOKEN,
	__ORDLOCK_K_MAX,
};

/** ORDLOCK_K_MAX - the last key attribute */
#define ORDLOCK_K_MAX (__ORDLOCK_K_MAX - 1)

/**
 * enum ordlock_failure_attr - the fields of &struct ordlock_failure
 * @ORDLOCK_F_UNSPEC: unused
 * @ORDLOCK_F_REASON: u32, &enum ordlock_reason
 * @ORDLOCK_F_ERRNO: u32
 * @ORDLOCK_F_PID: u32
 * @ORDLOCK_F_INDEX: u32
 * @ORDLOCK_F_KEY: nest of &enum ordlock_key_attr
 * @ORDLOCK_F_HELD: nest of &enum ordlock_key_attr
 * @ORDLOCK_F_HOLDER_MODE: u32
 * @ORDLOCK_F_CYCLE_LEN: u32
 * @__ORDLOCK_F_MAX: one past the last failure attribute
 */
enum ordlock_failure_attr {
	ORDLOCK_F_UNSPEC,
	ORDLOCK_F_REASON,
	ORDLOCK_F_ERRNO,
	ORDLOCK_F_PID,
	ORDLOCK_F_INDEX,
	ORDLOCK_F_KEY,
	ORDLOCK_F_HELD,
	ORDLOCK_F_HOLDER_MODE,
	ORDLOCK_F_CYCLE_LEN,
	__ORDLOCK_F_MAX,
};

/** ORDLOCK_F_MAX - the last failure attribute */
#define ORDLOCK_F_MAX (__ORDLOCK_F_MAX - 1)

/**
 * enum ordlock_entry_attr - fields of dump entries, cycle steps and events
 * @ORDLOCK_E_UNSPEC: unused
 * @ORDLOCK_E_PAD: padding
 * @ORDLOCK_E_OWNER_ID: u64
 * @ORDLOCK_E_PID: u32
 * @ORDLOCK_E_COMM: string
 * @ORDLOCK_E_DOMAIN: string
 * @ORDLOCK_E_KIND: u32, &enum ordlock_owner_kind
 * @ORDLOCK_E_HELD: u32, number of keys held (in the kernel, and by the
 *	fast path: the domain's words that name the owner's index)
 * @ORDLOCK_E_KEY: nest of &enum ordlock_key_attr
 * @ORDLOCK_E_ROLE: u32, &enum ordlock_role
 * @ORDLOCK_E_POSITION: u32, position among holders or in the queue
 * @ORDLOCK_E_MODE: u32, &enum ordlock_mode
 * @ORDLOCK_E_TOKEN: u64
 * @ORDLOCK_E_WAITED_US: u64
 * @ORDLOCK_E_BLOCKER: nest of &enum ordlock_entry_attr: the owner waited for
 * @ORDLOCK_E_EDGE: u32, &enum ordlock_edge
 * @ORDLOCK_E_RANK: u32
 * @ORDLOCK_E_NAME: string, a rank name
 * @ORDLOCK_E_UID: u32, the user an owner counts against: the effective uid
 *	of its creator, in the initial user namespace
 * @ORDLOCK_E_LABEL: string, the owner's label (absent when it has none)
 * @ORDLOCK_E_TAKEN: nest of &enum ordlock_key_attr: the key taken after
 *	%ORDLOCK_E_KEY (an edge of the learned order)
 * @ORDLOCK_E_TIME_NS: u64, CLOCK_REALTIME ns of an observation
 * @ORDLOCK_E_ORDER_KIND: u32, &enum ordlock_order_kind
 * @ORDLOCK_E_COUNT: u64, how many times an edge was seen
 * @ORDLOCK_E_LEASE_LEFT_MS: u64, a holder's lease: the milliseconds left
 *	until it is revoked (absent when the hold has no lease; 0 when it is
 *	due)
 * @ORDLOCK_E_CLUSTER_WAIT: flag (no payload), on a holder of GET_LOCKS: the
 *	key of a cluster domain is granted on this node and the owner waits
 *	for its lock (or an upgrade's conversion) in the cluster, since
 *	%ORDLOCK_E_WAITED_US; the entry has no %ORDLOCK_E_TOKEN
 * @ORDLOCK_E_FAST: u32, on a holder of GET_LOCKS and on the
 *	%ORDLOCK_E_BLOCKER of a GET_GRAPH edge: the owner holds the key by the
 *	fast path (docs/fastpath.md), exclusively; the value is the owner
 *	index the key's word named when it was read. The owner fields are
 *	those of the owner of that index in the domain, or owner id 0, pid 0
 *	and comm "?" when the index names no owner (a corrupt word; such a
 *	holder is shown only to an admin, and gives no graph edge). Such a
 *	holder entry has position 0 and no %ORDLOCK_E_TOKEN; the
 *	%ORDLOCK_E_HELD of its owner (GET_OWNERS) counts it
 * @ORDLOCK_E_XD_GEN: u64, the generation of the entry's wait
 * @ORDLOCK_E_XD_HOLD_GEN: u64, the generation of the hold through which
 *	the previous vertex of a path waits for this owner (hard edges)
 * @ORDLOCK_E_XD_NODE: u32, the owner's corosync node id (absent or 0: this
 *	node)
 * @ORDLOCK_E_XD_BOOT: u64, the boot id of the owner's node's module
 * @ORDLOCK_E_XD_LKID: u32, the DLM lock id (on the owner's node) of the
 *	request of a wait in the DLM, for the soft edges across nodes (the
 *	daemon finds it in the key's queue on its master); absent while not
 *	known (the request not made yet, the wait ending) and for a wait
 *	XD_FAIL cannot end (an asynchronous upgrade's conversion, a policy
 *	other than detect)
 * @__ORDLOCK_E_MAX: one past the last entry attribute
 */
enum ordlock_entry_attr {
	ORDLOCK_E_UNSPEC,
	ORDLOCK_E_PAD,
	ORDLOCK_E_OWNER_ID,
	ORDLOCK_E_PID,
	ORDLOCK_E_COMM,
	ORDLOCK_E_DOMAIN,
	ORDLOCK_E_KIND,
	ORDLOCK_E_HELD,
	ORDLOCK_E_KEY,
	ORDLOCK_E_ROLE,
	ORDLOCK_E_POSITION,
	ORDLOCK_E_MODE,
	ORDLOCK_E_TOKEN,
	ORDLOCK_E_WAITED_US,
	ORDLOCK_E_BLOCKER,
	ORDLOCK_E_EDGE,
	ORDLOCK_E_RANK,
	ORDLOCK_E_NAME,
	ORDLOCK_E_UID,
	ORDLOCK_E_LABEL,
	ORDLOCK_E_TAKEN,
	ORDLOCK_E_TIME_NS,
	ORDLOCK_E_ORDER_KIND,
	ORDLOCK_E_COUNT,
	ORDLOCK_E_LEASE_LEFT_MS,
	ORDLOCK_E_CLUSTER_WAIT,
	ORDLOCK_E_FAST,
	ORDLOCK_E_XD_GEN,
	ORDLOCK_E_XD_HOLD_GEN,
	ORDLOCK_E_XD_NODE,
	ORDLOCK_E_XD_BOOT,
	ORDLOCK_E_XD_LKID,
	__ORDLOCK_E_MAX,
};

/** ORDLOCK_E_MAX - the last entry attribute */
#define ORDLOCK_E_MAX (__ORDLOCK_E_MAX - 1)

/**
 * enum ordlock_stats_attr - counters of a domain (all u64)
 * @ORDLOCK_S_UNSPEC: unused
 * @ORDLOCK_S_PAD: padding
 * @ORDLOCK_S_ACQUIRES: successful acquires
 * @ORDLOCK_S_CONTENDED: acquires that waited
 * @ORDLOCK_S_TIMEOUTS: timeouts
 * @ORDLOCK_S_TRY_FAILURES: failed try-acquires
 * @ORDLOCK_S_ORDER_VIOLATIONS: order violations
 * @ORDLOCK_S_DEADLOCKS: deadlocks detected
 * @ORDLOCK_S_UPGRADE_DEADLOCKS: upgrade deadlocks refused
 * @ORDLOCK_S_CONVERSIONS: conversions
 * @ORDLOCK_S_SIGNALS: waits interrupted by signals
 * @ORDLOCK_S_LIMITS: requests refused by limits
 * @ORDLOCK_S_RELEASES: keys released
 * @ORDLOCK_S_OWNERS: owners now
 * @ORDLOCK_S_PEAK_OWNERS: most owners at once
 * @ORDLOCK_S_RESOURCES: resources now
 * @ORDLOCK_S_PEAK_RESOURCES: most resources at once
 * @ORDLOCK_S_WAITERS: waiters now
 * @ORDLOCK_S_PEAK_WAITERS: most waiters at once
 * @ORDLOCK_S_REVOCATIONS: leases that expired and were revoked
 * @ORDLOCK_S_XD_ROUNDS: %ORDLOCK_CMD_XD_CHECK queries answered (confirming
 *	rounds of cycles across nodes with vertices in this domain)
 * @ORDLOCK_S_XD_VICTIMS: waits failed by %ORDLOCK_CMD_XD_FAIL
 * @ORDLOCK_S_XD_STALE: %ORDLOCK_CMD_XD_CHECK answers of 0 and
 *	%ORDLOCK_CMD_XD_FAIL refused with ESTALE
 * @__ORDLOCK_S_MAX: one past the last counter
 */
enum ordlock_stats_attr {
	ORDLOCK_S_UNSPEC,
	ORDLOCK_S_PAD,
	ORDLOCK_S_ACQUIRES,
	ORDLOCK_S_CONTENDED,
	ORDLOCK_S_TIMEOUTS,
	ORDLOCK_S_TRY_FAILURES,
	ORDLOCK_S_ORDER_VIOLATIONS,
	ORDLOCK_S_DEADLOCKS,
	ORDLOCK_S_UPGRADE_DEADLOCKS,
	ORDLOCK_S_CONVERSIONS,
	ORDLOCK_S_SIGNALS,
	ORDLOCK_S_LIMITS,
	ORDLOCK_S_RELEASES,
	ORDLOCK_S_OWNERS,
	ORDLOCK_S_PEAK_OWNERS,
	ORDLOCK_S_RESOURCES,
	ORDLOCK_S_PEAK_RESOURCES,
	ORDLOCK_S_WAITERS,
	ORDLOCK_S_PEAK_WAITERS,
	ORDLOCK_S_REVOCATIONS,
	ORDLOCK_S_XD_ROUNDS,
	ORDLOCK_S_XD_VICTIMS,
	ORDLOCK_S_XD_STALE,
	__ORDLOCK_S_MAX,
};

/** ORDLOCK_S_MAX - the last counter */
#define ORDLOCK_S_MAX (__ORDLOCK_S_MAX - 1)

/**
 * enum ordlock_status - outcome of a netlink lock request
 * @ORDLOCK_STATUS_GRANTED: granted; %ORDLOCK_A_TOKEN follows
 * @ORDLOCK_STATUS_QUEUED: waiting; a %ORDLOCK_CMD_RESULT will follow
 * @ORDLOCK_STATUS_REFUSED: refused at once; %ORDLOCK_A_ERRNO and
 *	%ORDLOCK_A_FAILURE follow
 * @ORDLOCK_STATUS_TIMEOUT: the queued request timed out
 * @ORDLOCK_STATUS_DEADLOCK: the queued request was a deadlock victim
 * @ORDLOCK_STATUS_CANCELLED: the queued request was cancelled
 */
enum ordlock_status {
	ORDLOCK_STATUS_GRANTED = 1,
	ORDLOCK_STATUS_QUEUED,
	ORDLOCK_STATUS_REFUSED,
	ORDLOCK_STATUS_TIMEOUT,
	ORDLOCK_STATUS_DEADLOCK,
	ORDLOCK_STATUS_CANCELLED,
};

/**
 * enum ordlock_event - multicast events
 * @ORDLOCK_EVENT_DEADLOCK: a deadlock was detected and broken
 * @ORDLOCK_EVENT_TIMEOUT: a wait timed out
 * @ORDLOCK_EVENT_ORDER: a request was refused by the order rule
 * @ORDLOCK_EVENT_LIMIT: a request was refused by a limit
 * @ORDLOCK_EVENT_OWNER_DIED: an owner's last process was killed by a
 *	signal while it held keys
 * @ORDLOCK_EVENT_POTENTIAL_DEADLOCK: the learned lock order of a domain
 *	found a cycle (or a rank taken by ids both ways) that can deadlock;
 *	none happened
 * @ORDLOCK_EVENT_REVOKED: an owner's lease expired and its keys were
 *	revoked
 */
enum ordlock_event {
	ORDLOCK_EVENT_DEADLOCK = 1,
	ORDLOCK_EVENT_TIMEOUT,
	ORDLOCK_EVENT_ORDER,
	ORDLOCK_EVENT_LIMIT,
	ORDLOCK_EVENT_OWNER_DIED,
	ORDLOCK_EVENT_POTENTIAL_DEADLOCK,
	ORDLOCK_EVENT_REVOKED,
};

/**
 * enum ordlock_owner_kind - what an owner is
 * @ORDLOCK_KIND_DEVICE: an open file description of /dev/ordlock
 * @ORDLOCK_KIND_NETLINK: a generic netlink socket
 */
enum ordlock_owner_kind {
	ORDLOCK_KIND_DEVICE = 1,
	ORDLOCK_KIND_NETLINK,
};

/**
 * enum ordlock_role - the part an owner plays on a resource
 * @ORDLOCK_ROLE_HOLDER: holds it
 * @ORDLOCK_ROLE_WAITER: queued to acquire it
 * @ORDLOCK_ROLE_CONVERTER: holds it and is queued to convert it
 */
enum ordlock_role {
	ORDLOCK_ROLE_HOLDER = 1,
	ORDLOCK_ROLE_WAITER,
	ORDLOCK_ROLE_CONVERTER,
};

/** ORDLOCK_RANK_NAMES_MAX - rank names a domain may have */
#define ORDLOCK_RANK_NAMES_MAX 64
/** ORDLOCK_RANK_NAME_MAX - size of a rank name, NUL included */
#define ORDLOCK_RANK_NAME_MAX 32

/**
 * ORDLOCK_DLM_LS_PREFIX - the start of the DLM lockspace of a cluster
 *	domain: the lockspace of domain NAME is "ordlock.NAME" (ordlock_dlm,
 *	docs/cluster.md); its locks are in the DLM's debugfs files
 *	/sys/kernel/debug/dlm/ordlock.NAME_all (and _locks, ...)
 */
#define ORDLOCK_DLM_LS_PREFIX "ordlock."
/**
 * ORDLOCK_DLM_RES_FMT - printf format of the DLM resource name of a key of
 *	a cluster domain, from its rank (u32) and id (u64, as unsigned long
 *	long): 8 and 16 lowercase hex digits, "0000002a:00000000000003e8" for
 *	(42, 1000); not NUL-terminated in the DLM
 */
#define ORDLOCK_DLM_RES_FMT "%08x:%016llx"
/** ORDLOCK_DLM_RES_LEN - length of that resource name: 8 + 1 + 16 bytes */
#define ORDLOCK_DLM_RES_LEN 25

/**
 * DOC: The fast path
 *
 * A domain given the fast path (%ORDLOCK_DOMAIN_SET_FASTPATH, by an admin,
 * for the owners of one user only) lets its members take and let go of an
 * exclusive key with a compare-and-swap in user space, the kernel entered
 * only to referee (docs/fastpath.md is the protocol):
 *
 * - %ORDLOCK_IOC_FAST_PIN gives a key its *slot* and its incarnation
 *   @inc, and takes a reference of the owner on it; the key's resource
 *   counts as in use while it has a slot. A domain has
 *   %ORDLOCK_FAST_SLOTS slots: once all were used, a pin of a new key
 *   *recycles* the slot of a key that nobody holds or waits for (its word
 *   free, {g, 0, 0, inc}, and no holder or waiter in the kernel), first
 *   one no live owner pinned (pinned by owners gone), else one whose pins
 *   it takes from live owners; ENOSPC only when every slot's key is held
 *   or waited for. The recycled slot's incarnation moves on (the word goes
 *   {g, 0, 0, inc} to {g, 0, 0, inc + 1} under the kernel's lock, its
 *   generation goes on) and the slot's learned pairs are forgotten: a
 *   library that still caches the old key's slot fails its CAS (every
 *   member CAS expects the incarnation its pin returned) and pins the key
 *   again. The incarnation has 7 bits: a slot is never recycled onto one
 *   that an owner whose pin was taken may still cache. A key that lost its
 *   slot is the kernel's alone until pinned again.
 * - mmap() of the /dev/ordlock descriptor, MAP_SHARED, at offset 0 maps
 *   the domain's words (up to %ORDLOCK_FAST_WORDS_SIZE bytes, read-write):
 *   the word of slot s is the 64-bit word s. At offset
 *   %ORDLOCK_FAST_OWNER_OFFSET, one page: the owner's &struct
 *   ordlock_fast_page. Neither mapping is inherited by fork(); a child
 *   maps its own (it shares its parent's owner when it shares the file).
 * - A word is (%ORDLOCK_FAST_GEN, %ORDLOCK_FAST_OWNER, %ORDLOCK_FAST_WAITERS,
 *   %ORDLOCK_FAST_INC): owner 0 is free, %ORDLOCK_FAST_OWNER_KERNEL the
 *   kernel's own holders
 *   (any mode, granted by %ORDLOCK_IOC_ACQUIRE), any other value the index
 *   of an owner of the domain that holds the key exclusively by the fast
 *   path. A user CAS takes only a free word of its pin's incarnation inc,
 *   {g, 0, 0, inc} (to {g + 1, me, 0, inc}) or {g, 0, WAITERS, inc} (to
 *   {g + 1, me, WAITERS, inc}: WAITERS is kept), and gives back only
 *   {g, me, 0, inc} (to {g, 0, 0, inc}); nobody else changes inc.
 *   %ORDLOCK_FAST_WAITERS set
 *   means the kernel has waiters, and the holder lets go with
 *   %ORDLOCK_IOC_FAST_RELEASE, which hands the key to the first waiter or,
 *   when that waiter may be passed (DOC: Fairness's rule, the same as for
 *   a key of the kernel), wakes it and frees the word with WAITERS kept,
 *   {g, 0, WAITERS}: a CAS or a request that comes before the waiter runs
 *   may take it, and the waiter, having lost it, stays first.
 * - The kernel reads the words and owner pages as hostile input: it only
 *   loads and compare-and-swaps them; a member that writes garbage breaks
 *   its own domain's keys (waiters then wait until their timeout, and the
 *   fast ioctls fail with EIO), never the kernel or another domain.
 * - When the owner's file is released (close, exit, kill), every word its
 *   owner page's held stack and pending slot name, and that names the
 *   owner, is let go as %ORDLOCK_IOC_FAST_RELEASE would.
 * - Leases (DOC: Leases): a fast-path grant has no token, and no lease
 *   while nobody waits for it: an uncontended fast-path hold is never
 *   revoked. A domain may have both the fast path and a @max_hold_ms:
 *   when a request in the kernel first queues behind a key held by the
 *   fast path (the kernel sets %ORDLOCK_FAST_WAITERS), the holder's owner
 *   gets a lease from that moment: its deadline becomes the earlier of its
 *   deadline (if any) and now + @max_hold_ms, with @max_hold_ms as its
 *   period; from then on it is the owner's one lease (RENEW moves it, it
 *   ends when the owner holds nothing). A request with a lease or that
 *   wants a token is the kernel's. When an owner's lease expires, the keys it holds by the fast
 *   path are revoked with the others: the kernel sets the owner page's
 *   @revoked, then lets each word that names the owner go (handed to the
 *   first waiter, or freed); the holder's release then fails with
 *   EKEYEXPIRED (%ORDLOCK_IOC_FAST_RELEASE of a word let go), the revoked
 *   keys list them with token 0, and %ORDLOCK_RELEASE_ALL acknowledges
 *   (it lets go of a word an acquire racing the revocation took, and
 *   clears @revoked). An acquire reads @revoked after its CAS and gives
 *   the key back when it is set.
 * - The views (debugfs, the netlink dumps, ordlockctl) and cycle
 *   detection see a fast-path holder through the word that names it.
 * - The order rule binds both kinds of holds: a request in the kernel is
 *   checked against the keys its owner holds by the fast path (the words
 *   that name it) as against the kernel's (EDEADLK naming the fast-held
 *   key, or learned as an edge from it), and while the kernel holds keys
 *   for the owner or a request of it is there, the owner page's @revoked
 *   has %ORDLOCK_FAST_PAGE_KERNEL, so that an acquire by CAS (of another
 *   process on the same owner) goes to the kernel instead.
 * - The learned order (policies detect and timeout): at
 *   %ORDLOCK_FAST_EDGES_OFFSET, read-only (a writable mapping is refused,
 *   EACCES), the domain's &struct ordlock_fast_edges: whether the domain
 *   learns, and the pairs of slots (held -> taken) whose edge the kernel
 *   has learned (ordlock_fast_edge_known()). A member that took a key by the
 *   fast path while holding another whose pair is not known tells the
 *   kernel with %ORDLOCK_IOC_FAST_LEARN, which learns and reports the edge
 *   as a grant through the kernel does, and marks the pair known; a
 *   known pair costs no system call. A reset of the learned order or a
 *   change of the policy forgets every pair.
 *
 * Not (yet) done for keys held by the fast path: the per-acquire
 * statistics.
 */

/** ORDLOCK_FAST_SLOTS - slots (pinned keys) of a fast-path domain */
#define ORDLOCK_FAST_SLOTS		1024
/** ORDLOCK_FAST_WORDS_SIZE - bytes of the words mapping */
#define ORDLOCK_FAST_WORDS_SIZE		(ORDLOCK_FAST_SLOTS * 8)
/** ORDLOCK_FAST_OWNER_OFFSET - mmap() offset of the owner page */
#define ORDLOCK_FAST_OWNER_OFFSET	(1U << 20)
/** ORDLOCK_FAST_WAITERS - the word's WAITERS bit */
#define ORDLOCK_FAST_WAITERS		(1ULL << 7)
/** ORDLOCK_FAST_INC_MASK - the word's incarnation bits (the low 7) */
#define ORDLOCK_FAST_INC_MASK		0x7fULL
/** ORDLOCK_FAST_INC - the incarnation of word @w (of its slot's key) */
#define ORDLOCK_FAST_INC(w)		((__u32)((w) & ORDLOCK_FAST_INC_MASK))
/** ORDLOCK_FAST_OWNER_KERNEL - owner field of a key the kernel granted */
#define ORDLOCK_FAST_OWNER_KERNEL	0xffffffU
/** ORDLOCK_FAST_GEN - the generation of word @w */
#define ORDLOCK_FAST_GEN(w)		((__u32)((w) >> 32))
/** ORDLOCK_FAST_OWNER - the owner index of word @w */
#define ORDLOCK_FAST_OWNER(w)		((__u32)((w) >> 8) & 0xffffffU)
/** ORDLOCK_FAST_WORD - the word of generation @g, owner @o, no waiters */
#define ORDLOCK_FAST_WORD(g, o)		(((__u64)(g) << 32) | \
					 ((__u64)((o) & 0xffffffU) << 8))
/** ORDLOCK_FAST_EDGES_OFFSET - mmap() offset of the learned pairs */
#define ORDLOCK_FAST_EDGES_OFFSET	(2U << 20)
/**
 * ORDLOCK_FAST_EDGES_SIZE - bytes of the mapping of &struct
 * ordlock_fast_edges: one page of header, then a bit per pair of slots
 */
#define ORDLOCK_FAST_EDGES_SIZE		(4096 + ORDLOCK_FAST_SLOTS * \
					 ORDLOCK_FAST_SLOTS / 8)
/** ORDLOCK_FAST_STACK - entries of an owner page's held stack */
#define ORDLOCK_FAST_STACK		64

/**
 * struct ordlock_fast_held - an entry of the held stack
 * @slot: the slot
 * @gen: the generation of the grant
 */
struct ordlock_fast_held {
	__u32 slot;
	__u32 gen;
};

/** ORDLOCK_FAST_PAGE_REVOKED - &struct ordlock_fast_page @revoked: the lease */
#define ORDLOCK_FAST_PAGE_REVOKED	(1U << 0)
/** ORDLOCK_FAST_PAGE_KERNEL - @revoked: the kernel holds the owner's keys */
#define ORDLOCK_FAST_PAGE_KERNEL	(1U << 1)

/**
 * struct ordlock_fast_page - the owner page (written by the owner's library)
 * @revoked: written by the kernel only; while it is not 0, an acquire that
 *	took words by CAS gives them back and asks the kernel (the library
 *	reads it after its CASes). %ORDLOCK_FAST_PAGE_REVOKED: set when the
 *	owner's lease is revoked, before the kernel lets go of the owner's
 *	words; cleared when %ORDLOCK_RELEASE_ALL acknowledges (DOC: The fast
 *	path). %ORDLOCK_FAST_PAGE_KERNEL: set while the kernel holds keys for
 *	the owner or a request of it is in the kernel (another process on the
 *	same owner: a fork child, a nested script), before that request's
 *	order checks read the words, so that a key taken by CAS is judged
 *	against the kernel's holds too; cleared when the owner's requests and
 *	releases leave it holding nothing in the kernel.
 * @index: the owner's index in the words, written by the kernel (a copy:
 *	the kernel keeps its own)
 * @pending: slot + 1 of an acquire between its CAS and its push, else 0
 * @nheld: entries in @held
 * @held: the keys held by the fast path, in the order taken
 */
struct ordlock_fast_page {
	__u32 revoked;
	__u32 index;
	__u32 pending;
	__u32 nheld;
	struct ordlock_fast_held held[ORDLOCK_FAST_STACK];
};

/**
 * struct ordlock_fast_edges - the learned pairs of a fast-path domain
 *	(read-only, written by the kernel)
 * @learning: 1 when the domain learns its lock order (policy detect or
 *	timeout): a fast acquire while holding a key then needs its pair
 *	known; 0 (policy enforce): no pair is needed
 * @__pad: the rest of the header page
 * @bits: bit (a * %ORDLOCK_FAST_SLOTS + b) is set when the kernel learned
 *	the edge of holding the key of slot a and taking the key of slot b
 *	(exclusive both), byte by byte (ordlock_fast_edge_known())
 */
struct ordlock_fast_edges {
	__u32 learning;
	__u8 __pad[4096 - 4];
	__u8 bits[ORDLOCK_FAST_SLOTS * ORDLOCK_FAST_SLOTS / 8];
};

/**
 * ordlock_fast_edge_known() - whether the pair held slot @a -> taken slot
 *	@b (both below %ORDLOCK_FAST_SLOTS) is known in @e
 * @e: the mapping of &struct ordlock_fast_edges
 * @a: the held key's slot
 * @b: the taken key's slot
 *
 * Return: 1 or 0.
 */
static __inline__ int ordlock_fast_edge_known(const struct ordlock_fast_edges *e,
					      __u32 a, __u32 b)
{
	__u32 i = a * ORDLOCK_FAST_SLOTS + b;

	return (e->bits[i >> 3] >> (i & 7)) & 1;
}

/**
 * struct ordlock_fast_learn - argument of %ORDLOCK_IOC_FAST_LEARN
 * @size: sizeof(struct ordlock_fast_learn)
 * @flags: must be 0
 * @from: the slot of a key the caller holds by the fast path
 * @to: the slot of a key it took after it by the fast path (and holds)
 * @known: out: 1 when the pair is now known (marked in &struct
 *	ordlock_fast_edges), 0 when the domain does not learn (policy
 *	enforce, learning off by the module parameter, or no memory for its
 *	order); its value on input is ignored
 * @__reserved: must be 0
 */
struct ordlock_fast_learn {
	__u32 size;
	__u32 flags;
	__u32 from;
	__u32 to;
	__u32 known;
	__u32 __reserved;
};

/**
 * struct ordlock_fast_pin - argument of %ORDLOCK_IOC_FAST_PIN
 * @size: sizeof(struct ordlock_fast_pin)
 * @flags: must be 0
 * @rank: the key's rank
 * @slot: out: its slot
 * @id: the key's id
 * @index: out: the owner's index (the owner field of its words)
 * @inc: in: must be 0; out: the slot's incarnation (%ORDLOCK_FAST_INC),
 *	which every CAS of the caller on the slot's word expects: a slot
 *	recycled since has another, and the CAS fails (DOC: The fast path)
 */
struct ordlock_fast_pin {
	__u32 size;
	__u32 flags;
	__u32 rank;
	__u32 slot;
	__aligned_u64 id;
	__u32 index;
	__u32 inc;
};

/**
 * struct ordlock_fast_release - argument of %ORDLOCK_IOC_FAST_RELEASE
 * @size: sizeof(struct ordlock_fast_release)
 * @slot: the slot
 * @gen: the generation of the hold
 * @__reserved: must be 0
 */
struct ordlock_fast_release {
	__u32 size;
	__u32 slot;
	__u32 gen;
	__u32 __reserved;
};

/**
 * ORDLOCK_IOC_FAST_PIN - the slot of a key (and the owner's index) in a
 * fast-path domain. Errors: EOPNOTSUPP (the domain has no fast path),
 * EACCES (the caller's effective uid is not the domain's fastpath_uid),
 * ENOSPC (all slots used, or max_resources), ENOMEM, EINVAL
 */
#define ORDLOCK_IOC_FAST_PIN		_IO(ORDLOCK_IOC_TYPE, 0x30)
/**
 * ORDLOCK_IOC_FAST_RELEASE - let go of a key held by the fast path whose
 * word has %ORDLOCK_FAST_WAITERS (or any word of the caller): hand it to
 * the first waiter, or free it for that waiter with WAITERS kept when it
 * may be passed (DOC: Fairness). Errors: ENOENT (the word is not the caller's at @gen),
 * EIO (the word is corrupt), EINVAL, EOPNOTSUPP, EACCES
 */
#define ORDLOCK_IOC_FAST_RELEASE	_IO(ORDLOCK_IOC_TYPE, 0x31)
/**
 * ORDLOCK_IOC_FAST_LEARN - learn the edge of a fast-path grant: the caller
 * holds the keys of slots @from and @to by the fast path (their words name
 * it) and took @to after @from; in a domain that learns, the edge is
 * learned and reported (%ORDLOCK_EVENT_POTENTIAL_DEADLOCK, the order's
 * counts) as for a grant through the kernel, and the pair marked known.
 * In a domain that does not learn, nothing changes and @known is 0.
 * Errors: ENOENT (a word does not name the caller: not held, or let go
 * by a revocation), EINVAL (@flags or @__reserved not 0, a slot not
 * pinned, @from equal to @to, @size too small), E2BIG, EFAULT,
 * EOPNOTSUPP (the handle has not used the fast path), EKEYEXPIRED (the
 * owner's lease expired: nothing learned until it acknowledges), EINTR
 */
#define ORDLOCK_IOC_FAST_LEARN		_IO(ORDLOCK_IOC_TYPE, 0x38)

#endif /* _UAPI_LINUX_ORDLOCK_H */
