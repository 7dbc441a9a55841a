// SPDX-License-Identifier: GPL-2.0
/*
 * ordlockctl monitor: print the events of the netlink "events" group as
 * they happen: deadlocks (with the cycle), timeouts, order violations,
 * limits, owners that died holding keys.
 */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "libordlock.h"
#include "ordlockctl.h"

static volatile sig_atomic_t olc_monitor_stop;

static void olc_monitor_signal(int sig)
{
	(void)sig;
	olc_monitor_stop = 1;
}

static const char *olc_event_str(unsigned int event)
{
	const char *name = olc_nl_event_name(event);

	return name ? name : "unknown";
}

struct olc_monitor {
	const char *domain;
	unsigned long count;	/* events printed */
	struct olc_json j;
};

static void olc_json_fkey(struct olc_json *j, const char *name, const char *domain,
			  const struct ordlock_key *k)
{
	olc_json_obj(j, name);
	olc_json_key(j, domain, k->rank, k->id);
	olc_json_str(j, "mode", olc_mode_str(k->mode));
	olc_json_obj_end(j);
}

static void olc_failure_json(struct olc_json *j, const char *domain,
			     const struct ordlock_failure *f)
{
	char text[512];

	olc_json_obj(j, "failure");
	olc_json_str(j, "reason", ordlock_reason_name(f->reason));
	olc_json_u64(j, "errno", f->error);
	olc_json_str(j, "error", f->error ? strerror((int)f->error) : NULL);
	olc_json_u64(j, "pid", f->pid);
	if (f->index == ~0U)
		olc_json_null(j, "index");
	else
		olc_json_u64(j, "index", f->index);
	olc_json_fkey(j, "key", domain, &f->key);
	if (f->held.mode)
		olc_json_fkey(j, "held", domain, &f->held);
	else
		olc_json_null(j, "held");
	olc_json_str(j, "holder_mode", f->holder_mode ? olc_mode_str(f->holder_mode) : NULL);
	olc_json_u64(j, "cycle_len", f->cycle_len);
	olc_json_str(j, "text", ordlock_strfailure(f, text, sizeof(text)));
	olc_json_obj_end(j);
}

static int olc_monitor_event(struct nlattr **tb, void *arg)
{
	struct ordlock_cycle_step steps[ORDLOCK_CYCLE_MAX];
	struct olc_monitor *m = arg;
	struct olc_nl_entry e;
	struct ordlock_failure f;
	struct olc_who who = { 0 };
	unsigned int event, kind = 0, held = 0, uid = 0;
	int have_who = 0, have_uid = 0, have_failure = 0, nsteps = 0, i;
	char domain[ORDLOCK_DOMAIN_NAME_MAX], when[64], text[512];
	struct timespec ts;
	uint64_t ns;

	clock_gettime(CLOCK_REALTIME, &ts);
	ns = (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
	if (!tb[ORDLOCK_A_EVENT])
		return 0;
	event = nla_get_u32(tb[ORDLOCK_A_EVENT]);
	olc_nl_copy_str(domain, sizeof(domain), tb[ORDLOCK_A_DOMAIN]);
	if (m->domain && strcmp(m->domain, domain))
		return 0;
	if (tb[ORDLOCK_A_ENTRY] && !olc_nl_parse_entry(tb[ORDLOCK_A_ENTRY], &e) &&
	    !olc_nl_who(&e, &who)) {
		have_who = 1;
		kind = e.kind;
		held = e.held;
		if (OLC_NL_HAS(&e, ORDLOCK_E_UID)) {
			uid = e.uid;
			have_uid = 1;
		}
	}
	if (tb[ORDLOCK_A_FAILURE] && !olc_nl_parse_failure(tb[ORDLOCK_A_FAILURE], &f))
		have_failure = 1;
	if (tb[ORDLOCK_A_CYCLE]) {
		nsteps = olc_nl_cycle(tb[ORDLOCK_A_CYCLE], steps);
		if (nsteps < 0)
			nsteps = 0;
	}
	m->count++;

	if (olc_opt.json) {
		struct olc_json *j = &m->j;

		olc_json_init(j, stdout, 0);
		olc_json_obj(j, NULL);
		olc_json_str(j, "time", olc_time_str(when, sizeof(when), ns));
		olc_json_u64(j, "time_ns", ns);
		olc_json_str(j, "event", olc_event_str(event));
		olc_json_str(j, "domain", domain);
		if (have_who) {
			olc_json_obj(j, "owner");
			olc_json_u64(j, "owner_id", who.id);
			olc_json_u64(j, "pid", who.pid);
			olc_json_str(j, "comm", who.comm);
			olc_json_str(j, "kind", olc_kind_str(kind));
			olc_json_u64(j, "held", held);
			if (have_uid)
				olc_json_u64(j, "uid", uid);
			else
				olc_json_null(j, "uid");
			olc_json_obj_end(j);
		} else {
			olc_json_null(j, "owner");
		}
		if (have_failure)
			olc_failure_json(j, domain, &f);
		else
			olc_json_null(j, "failure");
		if (nsteps) {
			olc_json_arr(j, "cycle");
			for (i = 0; i < nsteps; i++) {
				olc_json_obj(j, NULL);
				olc_json_u64(j, "owner_id", steps[i].owner_id);
				olc_json_u64(j, "pid", steps[i].pid);
				olc_json_str(j, "comm", steps[i].comm);
				olc_json_str(j, "mode", olc_mode_str(steps[i].key.mode));
				olc_json_key(j, domain, steps[i].key.rank, steps[i].key.id);
				olc_json_str(j, "edge", olc_edge_str(steps[i].edge));
				olc_json_str(j, "blocker_mode", olc_mode_str(steps[i].blocker_mode));
				olc_json_obj_end(j);
			}
			olc_json_arr_end(j);
		} else {
			olc_json_null(j, "cycle");
		}
		olc_json_obj_end(j);
		olc_json_end(j);
		return 0;
	}

	printf("%s %s%s%s domain \"%s\"", olc_time_str(when, sizeof(when), ns),
	       event == ORDLOCK_EVENT_DEADLOCK ? olc_c(OLC_RED) : olc_c(OLC_YELLOW),
	       olc_event_str(event), olc_c(OLC_RESET), domain);
	if (have_who)
		printf(": pid %u (%s) owner %llu", who.pid, who.comm,
		       (unsigned long long)who.id);
	if (have_uid)
		printf(" uid %u", uid);
	if (event == ORDLOCK_EVENT_OWNER_DIED)
		printf(" went away holding %u key%s", held, held == 1 ? "" : "s");
	if (have_failure)
		printf(": %s", ordlock_strfailure(&f, text, sizeof(text)));
	putchar('\n');
	for (i = 0; i < nsteps; i++) {
		const struct ordlock_cycle_step *s = &steps[i], *t = &steps[(i + 1) % nsteps];
		struct olc_who a = { .id = s->owner_id, .pid = s->pid };
		struct olc_who b = { .id = t->owner_id, .pid = t->pid };

		memcpy(a.comm, s->comm, sizeof(a.comm));
		memcpy(b.comm, t->comm, sizeof(b.comm));
		a.comm[sizeof(a.comm) - 1] = b.comm[sizeof(b.comm) - 1] = '\0';
		fputs("  ", stdout);
		olc_step_line(stdout, s->flags & ORDLOCK_STEP_OTHER_DOMAIN ?
			      "(another domain)" : domain, &a, s->key.mode, s->key.rank, s->key.id,
			      &b, s->blocker_mode, s->edge);
	}
	fflush(stdout);
	return 0;
}

struct olc_monitor_args {
	struct olc_args base;
	uint64_t count;
	uint64_t timeout_s;
};

static const struct olc_option olc_monitor_options[] = {
	OLC_OPTION_DOMAIN("only events of this domain"),
	{ 'c', "count", "COUNT", "exit after COUNT events" },
	{ 't', "timeout", "SECS", "exit after SECS seconds" },
	{ 0 },
};

static int olc_monitor_opt(const struct olc_cmd *cmd, int c, const char *arg,
			   void *args)
{
	struct olc_monitor_args *a = args;

	switch (c) {
	case 'c':
		if (olc_parse_u64(arg, &a->count) || !a->count)
			return olc_usage(cmd, "--count: \"%s\" is not a positive number",
					 arg);
		return -1;
	default:	/* -t */
		if (olc_parse_u64(arg, &a->timeout_s) || a->timeout_s > 100000000)
			return olc_usage(cmd, "--timeout: \"%s\" is not a number of seconds",
					 arg);
		return -1;
	}
}

static int olc_monitor_run(const struct olc_cmd *cmd, int argc, char **argv)
{
	struct olc_monitor_args a = { 0 };
	struct olc_monitor m = { 0 };
	struct sigaction sa;
	unsigned long lost = 0;
	uint64_t count, timeout_s;
	struct timespec start, now;
	struct olc_nl *nl;
	int ret;

	ret = olc_getopt(cmd, argc, argv, &a);
	if (ret >= 0)
		return ret;
	m.domain = a.base.domain;
	count = a.count;
	timeout_s = a.timeout_s;
	/*
	 * A socket of its own: rank names are looked up on the shared one,
	 * whose replies must not be mixed with the events.
	 */
	ret = olc_nl_open_ctl(&nl);
	if (ret) {
		olc_nl_report(NULL, ret, "netlink");
		return olc_module_missing() ? OLC_EXIT_UNAVAILABLE : olc_exit_errno(ret);
	}
	ret = olc_nl_join(nl);
	if (ret) {
		olc_nl_report(nl, ret, "joining the \"events\" group");
		olc_nl_close(nl);
		return olc_exit_errno(ret);
	}
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = olc_monitor_signal;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	if (olc_opt.verbose)
		olc_err("listening for events (Ctrl-C to stop)");
	clock_gettime(CLOCK_MONOTONIC, &start);
	while (!olc_monitor_stop && (!count || m.count < count)) {
		int wait = -1;

		if (timeout_s) {
			int64_t left;

			clock_gettime(CLOCK_MONOTONIC, &now);
			left = (int64_t)timeout_s * 1000 -
			       ((now.tv_sec - start.tv_sec) * 1000 +
				(now.tv_nsec - start.tv_nsec) / 1000000);
			if (left <= 0)
				break;
			wait = (int)left;
		}
		ret = olc_nl_wait_event(nl, wait, olc_monitor_event, &m);
		if (ret == -EINTR)
			continue;
		if (ret < 0) {
			olc_err("receiving events: %s", strerror(-ret));
			olc_nl_close(nl);
			return olc_exit_errno(ret);
		}
		if (nl->lost != lost) {
			olc_err("events were lost (the receive buffer overflowed %lu times)",
				nl->lost - lost);
			lost = nl->lost;
		}
	}
	olc_nl_close(nl);
	return OLC_EXIT_OK;
}

const struct olc_cmd olc_cmd_monitor = {
	.name = "monitor",
	.run = olc_monitor_run,
	.flags = OLC_CMD_DOMAIN,
	.options = olc_monitor_options,
	.opt = olc_monitor_opt,
	.summary = "print ordlock's events as they happen",
	.usage = "monitor [-d DOMAIN] [-c COUNT] [-t SECONDS] [-j]",
	.about =
	"Subscribes to the netlink \"events\" group and prints each event with a\n"
	"timestamp: deadlock (the victim and its cycle), timeout, order (an order\n"
	"violation), limit, owner-died (an owner's process was killed holding keys),\n"
	"revoked (an owner's lease expired: the kernel released its keys). The\n"
	"kernel sends at most 100 events a second. Runs until interrupted. Joining\n"
	"the group needs CAP_NET_ADMIN (on kernels that support the restriction).\n",
	.help =
	"JSON: one document per line: {\"time\", \"time_ns\", \"event\", \"domain\",\n"
	"\"owner\": {\"owner_id\", \"pid\", \"comm\", \"kind\", \"held\", \"uid\"}, \"failure\": null or\n"
	"{\"reason\", \"errno\", \"error\", \"pid\", \"index\", \"key\": {\"key\", \"rank\", \"id\",\n"
	"\"mode\"}, \"held\", \"holder_mode\", \"cycle_len\", \"text\"}, \"cycle\": null or\n"
	"[{\"owner_id\", \"pid\", \"comm\", \"mode\", \"key\", \"rank\", \"id\", \"edge\",\n"
	"\"blocker_mode\"}]}.\n",
};
