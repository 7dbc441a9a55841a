// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * ordlock.node: the native half of the Node.js binding (index.js is the
 * other half). A Node-API addon over libordlock, linked in statically.
 *
 * Everything here is thin: the calls of libordlock on a handle (an
 * external wrapping one struct ordlock), and the conversion of their
 * results and failure records into plain objects that index.js turns into
 * Held objects and Error subclasses.
 *
 * Waiting without blocking the event loop: an asynchronous acquire (or
 * convert) runs the blocking ioctl on the owner's own thread (started by
 * its first asynchronous request, ended by close() or the garbage
 * collector), and hands the result back through a thread-safe function
 * (the event loop stays free; the libuv thread pool is not used, so that
 * waits never starve fs or dns work). Cancelling it (an AbortSignal, the
 * owner's close(), a Worker's end) sets a flag and sends that thread the
 * cancel signal (SIGRTMIN + 6 unless $ORDLOCK_NODE_SIGNAL names another),
 * whose handler does nothing and has no SA_RESTART: the ioctl fails with
 * EINTR, reason "signal", and the kernel has withdrawn the request. The
 * signal is sent again every 2 ms until the thread has left the ioctl
 * (it may have been about to enter it when the first one came). A grant
 * that wins the race with the cancel is released again by the thread, so
 * a cancelled request never leaves keys held.
 *
 * One handle serves one request at a time (as libordlock's handles do):
 * a call on a handle with a request in flight fails with EBUSY.
 *
 * Context-aware: the list of requests in flight is per environment
 * (instance data), so the addon loads in any number of worker_threads.
 */
#define NAPI_VERSION 8
#include <node_api.h>
#include <uv.h>

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "libordlock.h"

#define REVOKED_MAX 256
/*
 * A flag of index.js's acquire, never the kernel's (stripped here): ask
 * libordlock for no fencing token (opts.token === false), so that the fast
 * path may take the keys (docs/fastpath.md)
 */
#define NO_TOKEN 0x80000000U
#define MSG_LEN 4096

/* one owner: what index.js holds as Owner._h */
struct handle {
	struct ordlock *ol;
	struct req *busy;	/* the request in flight, or NULL */
	/* the thread that waits, started by the first asynchronous request */
	pthread_t thr;
	int has_thr;
	pthread_mutex_t mu;	/* protects todo and quit */
	pthread_cond_t cv;
	struct req *todo;	/* handed to thr */
	int quit;		/* thr ends */
};

/* the outcome of one call, converted into a JS object by result_js() */
struct result {
	int ret;			/* 0 or -errno */
	uint64_t token;
	uint64_t left_ms;		/* renew */
	unsigned int rflags;
	int cancelled;			/* the request was cancelled */
	int plain;			/* no failure record of libordlock */
	struct ordlock_failure f;
	int ncycle;
	struct ordlock_cycle_step cycle[ORDLOCK_CYCLE_MAX];
	int nrevoked;
	struct ordlock_revoked_key revoked[REVOKED_MAX];
	char msg[MSG_LEN];
};

enum op { OP_ACQUIRE, OP_CONVERT };

/* an asynchronous acquire or convert in flight */
struct req {
	struct inst *inst;
	struct handle *h;
	enum op op;
	struct ordlock_key *keys;
	unsigned int n, timeout_ms, flags, lease_ms;
	struct result res;
	atomic_int done;
	atomic_int cancel;
	uv_timer_t *kick;
	napi_threadsafe_function tsfn;
	napi_ref href;		/* keeps the handle's external alive */
	struct req *next;	/* in inst->reqs */
};

/* per environment (the main thread, each Worker) */
struct inst {
	struct req *reqs;
	uv_loop_t *loop;
};

static int cancel_sig;

static void cancel_handler(int sig)
{
	(void)sig;	/* only there to interrupt the ioctl */
}

static void install_handler(void)
{
	struct sigaction sa;
	const char *env = getenv("ORDLOCK_NODE_SIGNAL");

	cancel_sig = SIGRTMIN + 6;
	if (env && atoi(env) > 0 && atoi(env) < NSIG)
		cancel_sig = atoi(env);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = cancel_handler;
	sigemptyset(&sa.sa_mask);
	sa.sa_flags = 0;	/* no SA_RESTART: the wait fails with EINTR */
	sigaction(cancel_sig, &sa, NULL);
}

static pthread_once_t handler_once = PTHREAD_ONCE_INIT;

/* ---- helpers --------------------------------------------------------- */

#define CHECK(call)                                                   \
	do {                                                          \
		if ((call) != napi_ok)                                \
			return throw_last(env);                       \
	} while (0)

static napi_value throw_last(napi_env env)
{
	const napi_extended_error_info *info = NULL;
	bool pending = false;

	napi_is_exception_pending(env, &pending);
	if (!pending) {
		napi_get_last_error_info(env, &info);
		napi_throw_error(env, NULL, info && info->error_message ?
				 info->error_message : "ordlock: N-API call failed");
	}
	return NULL;
}

static napi_value throw_errno(napi_env env, int err, const char *what)
{
	char msg[256];
	char code[16];
	napi_value e, v;

	snprintf(msg, sizeof(msg), "%s: %s", what, strerror(err));
	snprintf(code, sizeof(code), "%d", err);
	napi_create_string_utf8(env, msg, NAPI_AUTO_LENGTH, &v);
	napi_create_error(env, NULL, v, &e);
	napi_create_int32(env, err, &v);
	napi_set_named_property(env, e, "errno_", v);
	napi_throw(env, e);
	return NULL;
}

static void set_u32(napi_env env, napi_value o, const char *name, uint32_t x)
{
	napi_value v;

	napi_create_uint32(env, x, &v);
	napi_set_named_property(env, o, name, v);
}

static void set_i32(napi_env env, napi_value o, const char *name, int32_t x)
{
	napi_value v;

	napi_create_int32(env, x, &v);
	napi_set_named_property(env, o, name, v);
}

/* a 64-bit number: a Number when exact (below 2^53), else a BigInt */
static napi_value u64_js(napi_env env, uint64_t x)
{
	napi_value v;

	if (x <= 9007199254740991ULL)
		napi_create_double(env, (double)x, &v);
	else
		napi_create_bigint_uint64(env, x, &v);
	return v;
}

static void set_u64(napi_env env, napi_value o, const char *name, uint64_t x)
{
	napi_set_named_property(env, o, name, u64_js(env, x));
}

static void set_str(napi_env env, napi_value o, const char *name,
		    const char *s, size_t max)
{
	napi_value v;

	napi_create_string_utf8(env, s, strnlen(s, max), &v);
	napi_set_named_property(env, o, name, v);
}

/* a NUL-terminated string of the library */
static void set_cstr(napi_env env, napi_value o, const char *name, const char *s)
{
	napi_value v;

	napi_create_string_utf8(env, s ? s : "", NAPI_AUTO_LENGTH, &v);
	napi_set_named_property(env, o, name, v);
}

static napi_value key_js(napi_env env, const struct ordlock_key *k)
{
	napi_value o;

	napi_create_object(env, &o);
	set_u32(env, o, "rank", k->rank);
	set_u64(env, o, "id", k->id);
	set_u32(env, o, "mode", k->mode);
	return o;
}

static napi_value get_args(napi_env env, napi_callback_info info,
			   size_t want, napi_value *argv)
{
	size_t argc = want;
	napi_value u;

	if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok)
		return NULL;
	napi_get_undefined(env, &u);
	for (; argc < want; argc++)
		argv[argc] = u;
	return u;
}

static bool get_handle(napi_env env, napi_value v, struct handle **h,
		       bool may_be_busy)
{
	void *p = NULL;

	if (napi_get_value_external(env, v, &p) != napi_ok || !p) {
		napi_throw_type_error(env, NULL, "ordlock: not an owner handle");
		return false;
	}
	*h = p;
	if (!(*h)->ol) {
		throw_errno(env, EBADF, "ordlock: the owner is closed");
		return false;
	}
	if ((*h)->busy && !may_be_busy) {
		throw_errno(env, EBUSY,
			    "ordlock: the owner has a request in progress (one at a time; use one Owner per concurrent task)");
		return false;
	}
	return true;
}

static bool get_u32(napi_env env, napi_value v, uint32_t *x)
{
	napi_valuetype t;

	napi_typeof(env, v, &t);
	if (t == napi_undefined || t == napi_null) {
		*x = 0;
		return true;
	}
	if (napi_get_value_uint32(env, v, x) != napi_ok) {
		napi_throw_type_error(env, NULL, "ordlock: expected a number");
		return false;
	}
	return true;
}

static bool get_u64(napi_env env, napi_value v, uint64_t *x)
{
	napi_valuetype t;
	bool lossless;
	double d;

	napi_typeof(env, v, &t);
	if (t == napi_bigint)
		return napi_get_value_bigint_uint64(env, v, x, &lossless) == napi_ok;
	if (napi_get_value_double(env, v, &d) != napi_ok || d < 0) {
		napi_throw_type_error(env, NULL, "ordlock: expected a number or a BigInt");
		return false;
	}
	*x = (uint64_t)d;
	return true;
}

/* a string argument, NULL for undefined/null; false after a throw */
static bool get_str(napi_env env, napi_value v, char *buf, size_t len,
		    const char **out)
{
	napi_valuetype t;
	size_t got;

	napi_typeof(env, v, &t);
	if (t == napi_undefined || t == napi_null) {
		*out = NULL;
		return true;
	}
	if (napi_get_value_string_utf8(env, v, buf, len, &got) != napi_ok) {
		napi_throw_type_error(env, NULL, "ordlock: expected a string");
		return false;
	}
	if (got >= len - 1) {
		throw_errno(env, EINVAL, "ordlock: name too long");
		return false;
	}
	*out = buf;
	return true;
}

/* the keys index.js packed: 16 bytes each, struct ordlock_key */
static bool get_keys(napi_env env, napi_value v, struct ordlock_key **keys,
		     unsigned int *n)
{
	void *data = NULL;
	size_t len = 0;

	if (napi_get_buffer_info(env, v, &data, &len) != napi_ok ||
	    len % sizeof(struct ordlock_key)) {
		napi_throw_type_error(env, NULL, "ordlock: bad key buffer");
		return false;
	}
	*n = len / sizeof(struct ordlock_key);
	*keys = malloc(len ? len : 1);
	if (!*keys) {
		throw_errno(env, ENOMEM, "ordlock");
		return false;
	}
	memcpy(*keys, data, len);
	return true;
}

/*
 * After a call of libordlock on @ol that returned @ret: fill @r with the
 * failure record, the message as the library words it, the cycle and the
 * revoked keys. Runs on any thread (no JS).
 */
static void collect(struct ordlock *ol, int ret, struct result *r,
		    const char *what)
{
	const struct ordlock_failure *f;
	int err = -ret;
	size_t used;

	r->ret = ret;
	if (ret >= 0)
		return;
	f = ordlock_last_failure(ol);
	r->f = *f;
	if (f->reason == ORDLOCK_REASON_NONE || (f->error && (int)f->error != err)) {
		r->plain = 1;
		snprintf(r->msg, sizeof(r->msg), "%s: %s", what, strerror(err));
		return;
	}
	ordlock_strfailure(&r->f, r->msg, sizeof(r->msg));
	if (f->reason == ORDLOCK_REASON_DEADLOCK) {
		int n = ordlock_last_cycle(ol, r->cycle, ORDLOCK_CYCLE_MAX);

		r->ncycle = n > 0 ? n : 0;
		used = strlen(r->msg);
		if (r->ncycle && used + 3 < sizeof(r->msg)) {
			memcpy(r->msg + used, ": ", 3);
			ordlock_strcycle(r->cycle, r->ncycle, r->msg + used + 2,
					 sizeof(r->msg) - used - 2);
		}
	}
	if (f->reason == ORDLOCK_REASON_REVOKED) {
		int n = ordlock_revoked_keys(ol, r->revoked, REVOKED_MAX);

		r->nrevoked = n > 0 ? n : 0;
		/* the record of the call itself stays the one reported */
	}
}

static napi_value result_js(napi_env env, const struct result *r)
{
	napi_value o, a, s;
	int i;

	napi_create_object(env, &o);
	if (r->ret >= 0) {
		set_u64(env, o, "token", r->token);
		set_u32(env, o, "resultFlags", r->rflags);
		set_u64(env, o, "leftMs", r->left_ms);
		if (r->ret > 0)
			set_i32(env, o, "value", r->ret);
		return o;
	}
	set_i32(env, o, "errno", -r->ret);
	set_str(env, o, "message", r->msg, sizeof(r->msg));
	set_u32(env, o, "resultFlags", r->rflags);
	if (r->cancelled) {
		napi_value t;

		napi_get_boolean(env, true, &t);
		napi_set_named_property(env, o, "cancelled", t);
	}
	if (r->plain)
		return o;
	set_u32(env, o, "reason", r->f.reason);
	set_cstr(env, o, "reasonName", ordlock_reason_name(r->f.reason));
	set_u32(env, o, "pid", r->f.pid);
	set_u32(env, o, "index", r->f.index);
	set_u32(env, o, "holderMode", r->f.holder_mode);
	set_u32(env, o, "cycleLen", r->f.cycle_len);
	if (r->f.key.rank || r->f.key.id)
		napi_set_named_property(env, o, "key", key_js(env, &r->f.key));
	if (r->f.held.rank || r->f.held.id)
		napi_set_named_property(env, o, "held", key_js(env, &r->f.held));
	napi_create_array_with_length(env, r->ncycle, &a);
	for (i = 0; i < r->ncycle; i++) {
		const struct ordlock_cycle_step *st = &r->cycle[i];

		napi_create_object(env, &s);
		set_u64(env, s, "ownerId", st->owner_id);
		set_u32(env, s, "pid", st->pid);
		set_str(env, s, "comm", st->comm, sizeof(st->comm));
		set_cstr(env, s, "edge", st->edge == ORDLOCK_EDGE_HARD ? "hard" :
			 st->edge == ORDLOCK_EDGE_SOFT ? "soft" :
			 st->edge == ORDLOCK_EDGE_THREAD ? "thread" : "?");
		napi_set_named_property(env, s, "key", key_js(env, &st->key));
		set_u32(env, s, "blockerMode", st->blocker_mode);
		set_u32(env, s, "flags", st->flags);
		napi_set_element(env, a, i, s);
	}
	napi_set_named_property(env, o, "cycle", a);
	napi_create_array_with_length(env, r->nrevoked, &a);
	for (i = 0; i < r->nrevoked; i++) {
		napi_create_object(env, &s);
		napi_set_named_property(env, s, "key", key_js(env, &r->revoked[i].key));
		set_u64(env, s, "token", r->revoked[i].token);
		napi_set_element(env, a, i, s);
	}
	napi_set_named_property(env, o, "revoked", a);
	return o;
}

static struct result *new_result(napi_env env)
{
	struct result *r = calloc(1, sizeof(*r));

	if (!r)
		throw_errno(env, ENOMEM, "ordlock");
	return r;
}

/* return the result object of one synchronous call and free @r */
static napi_value finish(napi_env env, struct result *r)
{
	napi_value o = result_js(env, r);

	free(r);
	return o;
}

/* ---- owners ---------------------------------------------------------- */

static void sync_cancel(struct req *q);
static void stop_thread(struct handle *h);

static void handle_finalize(napi_env env, void *data, void *hint)
{
	struct handle *h = data;

	(void)env;
	(void)hint;
	/* no request can be in flight: it keeps a reference */
	stop_thread(h);
	if (h->ol)
		ordlock_close(h->ol);
	free(h);
}

static napi_value wrap_handle(napi_env env, struct ordlock *ol)
{
	struct handle *h = calloc(1, sizeof(*h));
	napi_value v;

	if (!h) {
		ordlock_close(ol);
		return throw_errno(env, ENOMEM, "ordlock");
	}
	h->ol = ol;
	if (napi_create_external(env, h, handle_finalize, NULL, &v) != napi_ok) {
		ordlock_close(ol);
		free(h);
		return throw_last(env);
	}
	return v;
}

/* open(domain|null) -> handle; throws an Error with errno_ */
static napi_value js_open(napi_env env, napi_callback_info info)
{
	napi_value argv[1];
	char dom[ORDLOCK_DOMAIN_NAME_MAX + 2];
	const char *d;
	struct ordlock *ol;

	if (!get_args(env, info, 1, argv) ||
	    !get_str(env, argv[0], dom, sizeof(dom), &d))
		return NULL;
	ol = ordlock_open(d);
	if (!ol)
		return throw_errno(env, errno, "ordlock_open");
	return wrap_handle(env, ol);
}

static napi_value js_open_fd(napi_env env, napi_callback_info info)
{
	napi_value argv[1];
	int32_t fd;
	struct ordlock *ol;

	if (!get_args(env, info, 1, argv))
		return NULL;
	CHECK(napi_get_value_int32(env, argv[0], &fd));
	ol = ordlock_open_fd(fd);
	if (!ol)
		return throw_errno(env, errno ? errno : EBADF, "ordlock_open_fd");
	return wrap_handle(env, ol);
}

/* close(h): cancels a request in flight, releases everything, closes */
static napi_value js_close(napi_env env, napi_callback_info info)
{
	napi_value argv[1];
	struct handle *h = NULL;
	void *p = NULL;

	if (!get_args(env, info, 1, argv))
		return NULL;
	CHECK(napi_get_value_external(env, argv[0], &p));
	h = p;
	if (!h || !h->ol)
		return NULL;
	if (h->busy) {
		sync_cancel(h->busy);
		h->busy = NULL;
	}
	stop_thread(h);
	ordlock_close(h->ol);
	h->ol = NULL;
	return NULL;
}

static napi_value js_fd(napi_env env, napi_callback_info info)
{
	napi_value argv[1], v;
	struct handle *h;

	if (!get_args(env, info, 1, argv) || !get_handle(env, argv[0], &h, true))
		return NULL;
	napi_create_int32(env, ordlock_fd(h->ol), &v);
	return v;
}

/* acquireSync(h, keys, timeoutMs, flags, leaseMs) -> result */
static napi_value js_acquire_sync(napi_env env, napi_callback_info info)
{
	napi_value argv[5];
	struct handle *h;
	struct ordlock_key *keys;
	unsigned int n, t, fl, lease;
	struct result *r;
	int ret;

	if (!get_args(env, info, 5, argv) || !get_handle(env, argv[0], &h, false) ||
	    !get_u32(env, argv[2], &t) || !get_u32(env, argv[3], &fl) ||
	    !get_u32(env, argv[4], &lease) || !get_keys(env, argv[1], &keys, &n))
		return NULL;
	r = new_result(env);
	if (!r) {
		free(keys);
		return NULL;
	}
	ret = ordlock_acquire_lease(h->ol, keys, n, t, fl & ~NO_TOKEN, lease,
				   fl & NO_TOKEN ? NULL : &r->token);
	r->rflags = ordlock_result_flags(h->ol);
	collect(h->ol, ret, r, "acquire");
	free(keys);
	return finish(env, r);
}

/* convertSync(h, key, timeoutMs, flags) -> result */
static napi_value js_convert_sync(napi_env env, napi_callback_info info)
{
	napi_value argv[4];
	struct handle *h;
	struct ordlock_key *keys;
	unsigned int n, t, fl;
	struct result *r;
	int ret;

	if (!get_args(env, info, 4, argv) || !get_handle(env, argv[0], &h, false) ||
	    !get_u32(env, argv[2], &t) || !get_u32(env, argv[3], &fl) ||
	    !get_keys(env, argv[1], &keys, &n))
		return NULL;
	if (n != 1) {
		free(keys);
		return throw_errno(env, EINVAL, "convert: one key");
	}
	r = new_result(env);
	if (!r) {
		free(keys);
		return NULL;
	}
	ret = ordlock_convert(h->ol, keys[0], t, fl, &r->token);
	collect(h->ol, ret, r, "convert");
	free(keys);
	return finish(env, r);
}

/* release(h, keys|null) -> result */
static napi_value js_release(napi_env env, napi_callback_info info)
{
	napi_value argv[2];
	napi_valuetype t;
	struct handle *h;
	struct ordlock_key *keys = NULL;
	unsigned int n = 0;
	struct result *r;
	int ret;

	if (!get_args(env, info, 2, argv) || !get_handle(env, argv[0], &h, false))
		return NULL;
	napi_typeof(env, argv[1], &t);
	if (t != napi_null && t != napi_undefined && !get_keys(env, argv[1], &keys, &n))
		return NULL;
	r = new_result(env);
	if (!r) {
		free(keys);
		return NULL;
	}
	ret = keys ? ordlock_release(h->ol, keys, n) : ordlock_release_all(h->ol);
	collect(h->ol, ret, r, "release");
	free(keys);
	return finish(env, r);
}

/* renew(h, leaseMs) -> result with leftMs */
static napi_value js_renew(napi_env env, napi_callback_info info)
{
	napi_value argv[2];
	struct handle *h;
	unsigned int lease;
	struct result *r;
	int ret;

	if (!get_args(env, info, 2, argv) || !get_handle(env, argv[0], &h, false) ||
	    !get_u32(env, argv[1], &lease))
		return NULL;
	r = new_result(env);
	if (!r)
		return NULL;
	ret = ordlock_renew(h->ol, lease, &r->left_ms);
	collect(h->ol, ret, r, "renew");
	return finish(env, r);
}

static napi_value js_set_revoke_signal(napi_env env, napi_callback_info info)
{
	napi_value argv[2];
	struct handle *h;
	unsigned int sig;
	struct result *r;

	if (!get_args(env, info, 2, argv) || !get_handle(env, argv[0], &h, false) ||
	    !get_u32(env, argv[1], &sig))
		return NULL;
	r = new_result(env);
	if (!r)
		return NULL;
	collect(h->ol, ordlock_set_revoke_signal(h->ol, (int)sig), r,
		"set_revoke_signal");
	return finish(env, r);
}

/* revokedKeys(h) -> [{key, token}] */
static napi_value js_revoked_keys(napi_env env, napi_callback_info info)
{
	napi_value argv[1], a, s;
	struct handle *h;
	struct ordlock_revoked_key *rk;
	int n, i;

	if (!get_args(env, info, 1, argv) || !get_handle(env, argv[0], &h, false))
		return NULL;
	rk = calloc(REVOKED_MAX, sizeof(*rk));
	if (!rk)
		return throw_errno(env, ENOMEM, "ordlock");
	n = ordlock_revoked_keys(h->ol, rk, REVOKED_MAX);
	if (n < 0) {
		free(rk);
		return throw_errno(env, -n, "revoked_keys");
	}
	napi_create_array_with_length(env, n, &a);
	for (i = 0; i < n; i++) {
		napi_create_object(env, &s);
		napi_set_named_property(env, s, "key", key_js(env, &rk[i].key));
		set_u64(env, s, "token", rk[i].token);
		napi_set_element(env, a, i, s);
	}
	free(rk);
	return a;
}

/* tokenCheck(h, domain|null, rank, id, token) -> result (errno ESTALE: stale) */
static napi_value js_token_check(napi_env env, napi_callback_info info)
{
	napi_value argv[5];
	struct handle *h;
	char dom[ORDLOCK_DOMAIN_NAME_MAX + 2];
	const char *d;
	uint32_t rank;
	uint64_t id, token;
	struct result *r;

	if (!get_args(env, info, 5, argv) || !get_handle(env, argv[0], &h, false) ||
	    !get_str(env, argv[1], dom, sizeof(dom), &d) ||
	    !get_u32(env, argv[2], &rank) || !get_u64(env, argv[3], &id) ||
	    !get_u64(env, argv[4], &token))
		return NULL;
	r = new_result(env);
	if (!r)
		return NULL;
	collect(h->ol, ordlock_token_check(h->ol, d, rank, id, token), r,
		"token_check");
	return finish(env, r);
}

/* ownerInfo(h) -> {ownerId, nheld, policy, domain, lastToken} */
static napi_value js_owner_info(napi_env env, napi_callback_info info)
{
	napi_value argv[1], o;
	struct handle *h;
	struct ordlock_owner_info oi;
	int ret;

	if (!get_args(env, info, 1, argv) || !get_handle(env, argv[0], &h, true))
		return NULL;
	ret = ordlock_owner_info(h->ol, &oi);
	if (ret < 0)
		return throw_errno(env, -ret, "owner_info");
	napi_create_object(env, &o);
	set_u64(env, o, "ownerId", oi.owner_id);
	set_u32(env, o, "nheld", oi.nheld);
	set_cstr(env, o, "policy", ordlock_policy_name(oi.policy));
	set_str(env, o, "domain", oi.domain, sizeof(oi.domain));
	set_u64(env, o, "lastToken", oi.last_token);
	return o;
}

/* setDomain(h, name) / setLabel(h, label|null) -> result */
static napi_value js_set_domain(napi_env env, napi_callback_info info)
{
	napi_value argv[2];
	struct handle *h;
	char dom[ORDLOCK_DOMAIN_NAME_MAX + 2];
	const char *d;
	struct result *r;

	if (!get_args(env, info, 2, argv) || !get_handle(env, argv[0], &h, false) ||
	    !get_str(env, argv[1], dom, sizeof(dom), &d))
		return NULL;
	r = new_result(env);
	if (!r)
		return NULL;
	collect(h->ol, ordlock_set_domain(h->ol, d), r, "set_domain");
	return finish(env, r);
}

static napi_value js_set_label(napi_env env, napi_callback_info info)
{
	napi_value argv[2];
	struct handle *h;
	char lab[ORDLOCK_LABEL_MAX + 2];
	const char *l;
	struct result *r;

	if (!get_args(env, info, 2, argv) || !get_handle(env, argv[0], &h, false) ||
	    !get_str(env, argv[1], lab, sizeof(lab), &l))
		return NULL;
	r = new_result(env);
	if (!r)
		return NULL;
	collect(h->ol, ordlock_set_label(h->ol, l), r, "set_label");
	return finish(env, r);
}

/*
 * domainConfig(h, domain, flags, policy, detectDelayMs, maxHoldMs, strict)
 * -> {policy, detectDelayMs, nowners, maxHoldMs, strict, cluster} or result
 */
static napi_value js_domain_config(napi_env env, napi_callback_info info)
{
	napi_value argv[7], o;
	struct handle *h;
	char dom[ORDLOCK_DOMAIN_NAME_MAX + 2];
	const char *d;
	struct ordlock_domain_config cfg;
	uint32_t fl, pol, delay, hold, strict;
	int ret;

	if (!get_args(env, info, 7, argv) || !get_handle(env, argv[0], &h, false) ||
	    !get_str(env, argv[1], dom, sizeof(dom), &d) ||
	    !get_u32(env, argv[2], &fl) || !get_u32(env, argv[3], &pol) ||
	    !get_u32(env, argv[4], &delay) || !get_u32(env, argv[5], &hold) ||
	    !get_u32(env, argv[6], &strict))
		return NULL;
	memset(&cfg, 0, sizeof(cfg));
	cfg.flags = fl;
	cfg.policy = pol;
	cfg.detect_delay_ms = delay;
	cfg.max_hold_ms = hold;
	cfg.strict = strict;
	ret = ordlock_domain_config(h->ol, d, &cfg);
	if (ret < 0) {
		struct result *r = new_result(env);

		if (!r)
			return NULL;
		collect(h->ol, ret, r, "domain_config");
		return finish(env, r);
	}
	napi_create_object(env, &o);
	set_str(env, o, "name", cfg.name, sizeof(cfg.name));
	set_cstr(env, o, "policy", ordlock_policy_name(cfg.policy));
	set_u32(env, o, "detectDelayMs", cfg.detect_delay_ms);
	set_u32(env, o, "nowners", cfg.nowners);
	set_u32(env, o, "maxHoldMs", cfg.max_hold_ms);
	set_u32(env, o, "strict", cfg.strict);
	set_u32(env, o, "cluster", cfg.cluster);
	return o;
}

/* getOrder(h, domain) -> {edges, words, nedges, ...} or a failure result */
static napi_value js_get_order(napi_env env, napi_callback_info info)
{
	napi_value argv[2], o, a, e;
	struct handle *h;
	char dom[ORDLOCK_DOMAIN_NAME_MAX + 2];
	const char *d;
	struct ordlock_order_edge *edges = NULL;
	uint32_t *words = NULL;
	struct ordlock_order_get g;
	unsigned int room = 0, nwords = 0, i, try;
	int ret = 0;

	if (!get_args(env, info, 2, argv) || !get_handle(env, argv[0], &h, false) ||
	    !get_str(env, argv[1], dom, sizeof(dom), &d))
		return NULL;
	for (try = 0; try < 5; try++) {
		memset(&g, 0, sizeof(g));
		ret = ordlock_get_order(h->ol, d, edges, room, words, nwords, &g);
		if (ret < 0 || (g.nedges <= room && g.npotential_words <= nwords))
			break;
		room = g.nedges + 16;
		nwords = g.npotential_words + 64;
		free(edges);
		free(words);
		edges = calloc(room, sizeof(*edges));
		words = calloc(nwords, sizeof(*words));
		if (!edges || !words) {
			ret = -ENOMEM;
			break;
		}
	}
	if (ret < 0) {
		struct result *r = new_result(env);

		free(edges);
		free(words);
		if (!r)
			return NULL;
		collect(h->ol, ret, r, "get_order");
		return finish(env, r);
	}
	napi_create_object(env, &o);
	set_u32(env, o, "learning", g.learning);
	set_u32(env, o, "nranks", g.nranks);
	set_u32(env, o, "maxEdges", g.max_edges);
	set_u64(env, o, "npotential", g.npotential);
	set_u64(env, o, "dropped", g.dropped);
	napi_create_array(env, &a);
	for (i = 0; i < g.nedges && i < room; i++) {
		const struct ordlock_order_edge *x = &edges[i];

		napi_create_object(env, &e);
		set_u32(env, e, "fromRank", x->from_rank);
		set_u32(env, e, "toRank", x->to_rank);
		set_u32(env, e, "kind", x->kind);
		set_u32(env, e, "flags", x->flags);
		set_u64(env, e, "count", x->count);
		napi_set_named_property(env, e, "held", key_js(env, &x->held));
		napi_set_named_property(env, e, "taken", key_js(env, &x->taken));
		set_u64(env, e, "ownerId", x->owner_id);
		set_u64(env, e, "timeNs", x->time_ns);
		set_u32(env, e, "pid", x->pid);
		set_u32(env, e, "uid", x->uid);
		set_str(env, e, "comm", x->comm, sizeof(x->comm));
		set_str(env, e, "label", x->label, sizeof(x->label));
		napi_set_element(env, a, i, e);
	}
	napi_set_named_property(env, o, "edges", a);
	napi_create_array(env, &a);
	for (i = 0; i < g.npotential_words && i < nwords; i++) {
		napi_create_uint32(env, words[i], &e);
		napi_set_element(env, a, i, e);
	}
	napi_set_named_property(env, o, "words", a);
	free(edges);
	free(words);
	return o;
}

/* the names of the library: reasonName(n), modeName(n), policyName(n) */
static napi_value js_names(napi_env env, napi_callback_info info)
{
	napi_value argv[2], v;
	uint32_t kind, x;
	const char *s;

	if (!get_args(env, info, 2, argv) || !get_u32(env, argv[0], &kind) ||
	    !get_u32(env, argv[1], &x))
		return NULL;
	s = kind == 0 ? ordlock_reason_name(x) :
	    kind == 1 ? ordlock_mode_name(x) : ordlock_policy_name(x);
	napi_create_string_utf8(env, s ? s : "", NAPI_AUTO_LENGTH, &v);
	return v;
}

/* retryable(errno, reason, cycleLen) -> bool, as ordlock_retryable() says */
static napi_value js_retryable(napi_env env, napi_callback_info info)
{
	napi_value argv[3], v;
	struct ordlock_failure f;
	uint32_t err, reason, cycle_len;

	if (!get_args(env, info, 3, argv) || !get_u32(env, argv[0], &err) ||
	    !get_u32(env, argv[1], &reason) || !get_u32(env, argv[2], &cycle_len))
		return NULL;
	memset(&f, 0, sizeof(f));
	f.reason = reason;
	f.error = err;
	f.cycle_len = cycle_len;
	napi_get_boolean(env, ordlock_retryable((int)err, &f) != 0, &v);
	return v;
}

/* ---- asynchronous requests ------------------------------------------- */

static void unlink_req(struct req *q)
{
	struct req **pp;

	for (pp = &q->inst->reqs; *pp; pp = &(*pp)->next) {
		if (*pp == q) {
			*pp = q->next;
			return;
		}
	}
}

/* one request, on the handle's thread */
static void run_req(struct req *q)
{
	struct ordlock *ol = q->h->ol;
	napi_threadsafe_function tsfn;
	int ret;

	if (atomic_load(&q->cancel)) {
		q->res.ret = -EINTR;
		q->res.plain = 1;
		q->res.cancelled = 1;
		snprintf(q->res.msg, sizeof(q->res.msg), "acquire: cancelled");
	} else {
		if (q->op == OP_ACQUIRE)
			ret = ordlock_acquire_lease(ol, q->keys, q->n, q->timeout_ms,
						    q->flags & ~NO_TOKEN, q->lease_ms,
						    q->flags & NO_TOKEN ? NULL :
						    &q->res.token);
		else
			ret = ordlock_convert(ol, q->keys[0], q->timeout_ms,
					      q->flags, &q->res.token);
		q->res.rflags = q->op == OP_ACQUIRE ? ordlock_result_flags(ol) : 0;
		collect(ol, ret, &q->res, q->op == OP_ACQUIRE ? "acquire" : "convert");
		if (atomic_load(&q->cancel)) {
			q->res.cancelled = 1;
			/* a grant that won the race: give it back */
			if (ret == 0 && q->op == OP_ACQUIRE)
				ordlock_release(ol, q->keys, q->n);
		}
	}
	/* q may be freed on the loop's thread as soon as it is handed over */
	tsfn = q->tsfn;
	atomic_store(&q->done, 1);
	napi_call_threadsafe_function(tsfn, q, napi_tsfn_blocking);
	napi_release_threadsafe_function(tsfn, napi_tsfn_release);
}

/* the handle's thread: runs the requests handed to it, one at a time */
static void *handle_thread(void *arg)
{
	struct handle *h = arg;
	struct req *q;
	sigset_t set;

	/* only the cancel signal reaches this thread */
	sigfillset(&set);
	sigdelset(&set, cancel_sig);
	pthread_sigmask(SIG_SETMASK, &set, NULL);
	pthread_mutex_lock(&h->mu);
	for (;;) {
		while (!h->todo && !h->quit)
			pthread_cond_wait(&h->cv, &h->mu);
		if (!h->todo)
			break;
		q = h->todo;
		h->todo = NULL;
		pthread_mutex_unlock(&h->mu);
		run_req(q);
		pthread_mutex_lock(&h->mu);
	}
	pthread_mutex_unlock(&h->mu);
	return NULL;
}

/* end the handle's thread (idle: no request in flight) */
static void stop_thread(struct handle *h)
{
	if (!h->has_thr)
		return;
	pthread_mutex_lock(&h->mu);
	h->quit = 1;
	pthread_cond_signal(&h->cv);
	pthread_mutex_unlock(&h->mu);
	pthread_join(h->thr, NULL);
	h->has_thr = 0;
}

static void kick_close(uv_handle_t *t)
{
	free(t);
}

static void stop_kick(struct req *q)
{
	if (q->kick) {
		uv_timer_stop(q->kick);
		uv_close((uv_handle_t *)q->kick, kick_close);
		q->kick = NULL;
	}
}

static void kick_cb(uv_timer_t *t)
{
	struct req *q = t->data;

	if (!atomic_load(&q->done))
		pthread_kill(q->h->thr, cancel_sig);
	else
		stop_kick(q);
}

/* cancel and wait for the thread (the owner's close, the env's end) */
static void sync_cancel(struct req *q)
{
	struct timespec ms = { 0, 1000000 };

	atomic_store(&q->cancel, 1);
	while (!atomic_load(&q->done)) {
		pthread_kill(q->h->thr, cancel_sig);
		nanosleep(&ms, NULL);
	}
	stop_kick(q);
}

/* on the loop's thread: the request is done; env NULL when tearing down */
static void req_call_js(napi_env env, napi_value cb, void *ctx, void *data)
{
	struct req *q = data;
	napi_value res, undef;

	(void)ctx;
	if (env) {
		stop_kick(q);
		unlink_req(q);
		q->h->busy = NULL;
		res = result_js(env, &q->res);
		napi_get_undefined(env, &undef);
		napi_delete_reference(env, q->href);
		free(q->keys);
		free(q);
		napi_call_function(env, undef, cb, 1, &res, NULL);
		return;
	}
	/* tearing down: the cleanup hook already unlinked it */
	free(q->keys);
	free(q);
}

/*
 * start(h, op, keys, timeoutMs, flags, leaseMs, callback) -> request
 * (an external for cancel()); callback(result) runs on the loop.
 */
static napi_value js_start(napi_env env, napi_callback_info info)
{
	napi_value argv[7], name, ext;
	struct handle *h;
	struct inst *in;
	struct req *q;
	uint32_t op;
	int err;

	if (!get_args(env, info, 7, argv) || !get_handle(env, argv[0], &h, false))
		return NULL;
	CHECK(napi_get_instance_data(env, (void **)&in));
	q = calloc(1, sizeof(*q));
	if (!q)
		return throw_errno(env, ENOMEM, "ordlock");
	if (!get_u32(env, argv[1], &op) || !get_u32(env, argv[3], &q->timeout_ms) ||
	    !get_u32(env, argv[4], &q->flags) || !get_u32(env, argv[5], &q->lease_ms) ||
	    !get_keys(env, argv[2], &q->keys, &q->n)) {
		free(q);
		return NULL;
	}
	q->op = op ? OP_CONVERT : OP_ACQUIRE;
	if (q->op == OP_CONVERT && q->n != 1) {
		free(q->keys);
		free(q);
		return throw_errno(env, EINVAL, "convert: one key");
	}
	q->inst = in;
	q->h = h;
	napi_create_string_utf8(env, "ordlock.acquire", NAPI_AUTO_LENGTH, &name);
	if (napi_create_threadsafe_function(env, argv[6], NULL, name, 0, 1, NULL,
					    NULL, NULL, req_call_js,
					    &q->tsfn) != napi_ok) {
		free(q->keys);
		free(q);
		return throw_last(env);
	}
	napi_create_reference(env, argv[0], 1, &q->href);
	pthread_once(&handler_once, install_handler);
	err = 0;
	if (!h->has_thr) {
		pthread_mutex_init(&h->mu, NULL);
		pthread_cond_init(&h->cv, NULL);
		h->quit = 0;
		err = pthread_create(&h->thr, NULL, handle_thread, h);
		h->has_thr = !err;
	}
	if (err) {
		napi_release_threadsafe_function(q->tsfn, napi_tsfn_abort);
		napi_delete_reference(env, q->href);
		free(q->keys);
		free(q);
		return throw_errno(env, err, "ordlock: pthread_create");
	}
	h->busy = q;
	pthread_mutex_lock(&h->mu);
	h->todo = q;
	pthread_cond_signal(&h->cv);
	pthread_mutex_unlock(&h->mu);
	q->next = in->reqs;
	in->reqs = q;
	napi_create_external(env, q, NULL, NULL, &ext);
	return ext;
}

/* cancel(h, request): withdraw the request in the kernel (see the top) */
static napi_value js_cancel(napi_env env, napi_callback_info info)
{
	napi_value argv[2];
	struct handle *h;
	struct inst *in;
	void *p = NULL;
	struct req *q;

	if (!get_args(env, info, 2, argv))
		return NULL;
	CHECK(napi_get_value_external(env, argv[0], &p));
	h = p;
	CHECK(napi_get_value_external(env, argv[1], &p));
	q = p;
	/* a request that is already done (and freed) is no longer busy */
	if (!h || h->busy != q || atomic_load(&q->done))
		return NULL;
	CHECK(napi_get_instance_data(env, (void **)&in));
	atomic_store(&q->cancel, 1);
	pthread_kill(h->thr, cancel_sig);
	if (!q->kick) {
		q->kick = malloc(sizeof(*q->kick));
		if (!q->kick)
			return NULL;
		uv_timer_init(in->loop, q->kick);
		q->kick->data = q;
		uv_timer_start(q->kick, kick_cb, 2, 2);
	}
	return NULL;
}

/* ---- lease keep-alive and the query of a key --------------------------- */

/*
 * One keep-alive: libordlock's thread renews; when the hold is lost its
 * callback (on that thread) hands the record to the loop through a
 * thread-safe function, which calls the JS callback once.
 */
struct keepalive {
	struct ordlock_keepalive *ka;
	napi_threadsafe_function tsfn;	/* NULL once released */
	int refs;	/* the external and the function: freed by the last */
	struct result res;
};

static void ka_unref(struct keepalive *k)
{
	if (!--k->refs)
		free(k);
}

/* the function is finalized (released, its queue drained) */
static void ka_tsfn_finalize(napi_env env, void *data, void *hint)
{
	(void)env;
	(void)hint;
	ka_unref(data);
}

static void ka_lost(struct ordlock_keepalive *ka, int err,
		    const struct ordlock_failure *f, void *arg)
{
	struct keepalive *k = arg;

	(void)ka;
	k->res.ret = err;
	k->res.f = *f;
	ordlock_strfailure(&k->res.f, k->res.msg, sizeof(k->res.msg));
	napi_call_threadsafe_function(k->tsfn, k, napi_tsfn_nonblocking);
}

static void ka_call_js(napi_env env, napi_value cb, void *ctx, void *data)
{
	struct keepalive *k = data;
	napi_value res, undef;

	(void)ctx;
	if (!env)
		return;
	res = result_js(env, &k->res);
	napi_get_undefined(env, &undef);
	napi_call_function(env, undef, cb, 1, &res, NULL);
}

/* stop the thread, release the function; the result of the stop */
static int ka_stop(struct keepalive *k)
{
	int ret = 0;

	if (k->ka) {
		ret = ordlock_keepalive_stop(k->ka);
		k->ka = NULL;
	}
	if (k->tsfn) {
		napi_release_threadsafe_function(k->tsfn, napi_tsfn_release);
		k->tsfn = NULL;
	}
	return ret;
}

static void ka_finalize(napi_env env, void *data, void *hint)
{
	(void)env;
	(void)hint;
	ka_stop(data);
	ka_unref(data);
}

/*
 * keepaliveStart(h, leaseMs, intervalMs, onLost) -> keep-alive (external);
 * throws as renew() fails (the first renewal is made now)
 */
static napi_value js_keepalive_start(napi_env env, napi_callback_info info)
{
	napi_value argv[4], name, ext;
	unsigned int lease, interval;
	struct keepalive *k;
	struct handle *h;
	struct result r;

	if (!get_args(env, info, 4, argv) || !get_handle(env, argv[0], &h, false) ||
	    !get_u32(env, argv[1], &lease) || !get_u32(env, argv[2], &interval))
		return NULL;
	k = calloc(1, sizeof(*k));
	if (!k)
		return throw_errno(env, ENOMEM, "ordlock");
	napi_create_string_utf8(env, "ordlock.keepalive", NAPI_AUTO_LENGTH, &name);
	if (napi_create_threadsafe_function(env, argv[3], NULL, name, 0, 1, k,
					    ka_tsfn_finalize, NULL, ka_call_js,
					    &k->tsfn) != napi_ok) {
		free(k);
		return throw_last(env);
	}
	k->refs = 2;
	/* a keep-alive alone does not keep the process running */
	napi_unref_threadsafe_function(env, k->tsfn);
	k->ka = ordlock_keepalive_start(h->ol, lease, interval, ka_lost, k);
	if (!k->ka) {
		int err = errno;

		ka_stop(k);
		ka_unref(k);	/* the function's reference frees it */
		memset(&r, 0, sizeof(r));
		collect(h->ol, -err, &r, "keepalive");
		return result_js(env, &r);
	}
	if (napi_create_external(env, k, ka_finalize, NULL, &ext) != napi_ok) {
		ka_stop(k);
		ka_unref(k);
		return throw_last(env);
	}
	return ext;
}

static bool get_ka(napi_env env, napi_value v, struct keepalive **k)
{
	void *p = NULL;

	if (napi_get_value_external(env, v, &p) != napi_ok || !p) {
		throw_errno(env, EINVAL, "ordlock: not a keep-alive");
		return false;
	}
	*k = p;
	return true;
}

/*
 * keepalive(ka, stop) -> stop 0: the renewals made so far; 1: stop it,
 * 0 or the -errno of the loss (twice is once)
 */
static napi_value js_keepalive(napi_env env, napi_callback_info info)
{
	napi_value argv[2], v;
	struct keepalive *k;
	bool stop;

	if (!get_args(env, info, 2, argv) || !get_ka(env, argv[0], &k))
		return NULL;
	CHECK(napi_get_value_bool(env, argv[1], &stop));
	if (stop)
		napi_create_int32(env, ka_stop(k), &v);
	else
		napi_create_double(env, k->ka ? (double)ordlock_keepalive_renewals(k->ka) : 0, &v);
	return v;
}

/* query(domain|null, rank, id) -> {mode, holders: [pid], nholders, waiters, waiterPid, token} */
static napi_value js_query(napi_env env, napi_callback_info info)
{
	napi_value argv[3], o, a, v;
	struct ordlock_key_state st;
	char domain[ORDLOCK_DOMAIN_NAME_MAX];
	const char *d = NULL;
	uint32_t rank;
	uint64_t id;
	unsigned int i;
	int ret;

	if (!get_args(env, info, 3, argv))
		return NULL;
	if (!get_str(env, argv[0], domain, sizeof(domain), &d) ||
	    !get_u32(env, argv[1], &rank) || !get_u64(env, argv[2], &id))
		return NULL;
	ret = ordlock_query(d, rank, id, &st);
	if (ret < 0)
		return throw_errno(env, -ret, "ordlock: query");
	napi_create_object(env, &o);
	set_u32(env, o, "mode", st.mode);
	set_u32(env, o, "nholders", st.nholders);
	set_u32(env, o, "waiters", st.nwaiters);
	set_u32(env, o, "waiterPid", st.waiter_pid);
	set_u64(env, o, "token", st.token);
	napi_create_array_with_length(env, st.npids, &a);
	for (i = 0; i < st.npids; i++) {
		napi_create_uint32(env, st.pids[i], &v);
		napi_set_element(env, a, i, v);
	}
	napi_set_named_property(env, o, "holders", a);
	return o;
}

/* ---- the module ------------------------------------------------------ */

static void inst_cleanup(void *arg)
{
	struct inst *in = arg;
	struct req *q;

	/* the env ends (a Worker terminated): withdraw what still waits */
	for (q = in->reqs; q; q = q->next) {
		sync_cancel(q);
		q->h->busy = NULL;
	}
	in->reqs = NULL;
}

static void inst_free(napi_env env, void *data, void *hint)
{
	(void)env;
	(void)hint;
	free(data);
}

NAPI_MODULE_INIT()
{
	static const struct {
		const char *name;
		napi_callback fn;
	} fns[] = {
		{ "open", js_open },
		{ "openFd", js_open_fd },
		{ "close", js_close },
		{ "fd", js_fd },
		{ "acquireSync", js_acquire_sync },
		{ "convertSync", js_convert_sync },
		{ "release", js_release },
		{ "renew", js_renew },
		{ "setRevokeSignal", js_set_revoke_signal },
		{ "revokedKeys", js_revoked_keys },
		{ "tokenCheck", js_token_check },
		{ "ownerInfo", js_owner_info },
		{ "setDomain", js_set_domain },
		{ "setLabel", js_set_label },
		{ "domainConfig", js_domain_config },
		{ "getOrder", js_get_order },
		{ "names", js_names },
		{ "retryable", js_retryable },
		{ "start", js_start },
		{ "cancel", js_cancel },
		{ "keepaliveStart", js_keepalive_start },
		{ "keepalive", js_keepalive },
		{ "query", js_query },
	};
	struct inst *in = calloc(1, sizeof(*in));
	napi_value fn, v;
	size_t i;

	if (!in)
		return throw_errno(env, ENOMEM, "ordlock");
	if (napi_get_uv_event_loop(env, &in->loop) != napi_ok ||
	    napi_set_instance_data(env, in, inst_free, NULL) != napi_ok) {
		free(in);
		return throw_last(env);
	}
	napi_add_env_cleanup_hook(env, inst_cleanup, in);
	for (i = 0; i < sizeof(fns) / sizeof(fns[0]); i++) {
		if (napi_create_function(env, fns[i].name, NAPI_AUTO_LENGTH,
					 fns[i].fn, NULL, &fn) != napi_ok ||
		    napi_set_named_property(env, exports, fns[i].name, fn) != napi_ok)
			return throw_last(env);
	}
	pthread_once(&handler_once, install_handler);
	napi_create_int32(env, cancel_sig, &v);
	napi_set_named_property(env, exports, "cancelSignal", v);
	return exports;
}
