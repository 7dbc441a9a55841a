// SPDX-License-Identifier: GPL-2.0
/*
 * t_domain: domains are separate lock namespaces; an owner moves only while
 * it holds and waits for nothing; domain names are validated.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "barrier.h"
#include "libordlock.h"
#include "oltest.h"
#include "tap.h"

#define SH ORDLOCK_MODE_SHARED
#define EX ORDLOCK_MODE_EXCLUSIVE

static int set_domain_raw(int fd, const char name[ORDLOCK_DOMAIN_NAME_MAX],
			  unsigned int flags)
{
	struct ordlock_set_domain sd;

	memset(&sd, 0, sizeof(sd));
	sd.size = sizeof(sd);
	sd.flags = flags;
	memcpy(sd.name, name, sizeof(sd.name));
	return olt_ioctl(fd, ORDLOCK_IOC_SET_DOMAIN, &sd);
}

static void domain_of(struct ordlock *ol, char *buf)
{
	struct ordlock_owner_info info;

	if (ordlock_owner_info(ol, &info))
		strcpy(buf, "?");
	else
		memcpy(buf, info.domain, ORDLOCK_DOMAIN_NAME_MAX);
	buf[ORDLOCK_DOMAIN_NAME_MAX - 1] = '\0';
}

static void test_separate(void)
{
	char da[ORDLOCK_DOMAIN_NAME_MAX], db[ORDLOCK_DOMAIN_NAME_MAX];
	char got[ORDLOCK_DOMAIN_NAME_MAX];
	struct ordlock *a, *b, *a2, *d;
	struct ordlock_key k = ORDLOCK_EX(1, 1);
	uint64_t ta = 0, tb = 0;

	snprintf(da, sizeof(da), "%s", olt_domain("dom-a"));
	snprintf(db, sizeof(db), "%s", olt_domain("dom-b"));
	a = olt_open(da);
	b = olt_open(db);
	a2 = olt_open(da);
	d = olt_open(NULL);
	domain_of(a, got);
	ok(!strcmp(got, da), "OWNER_INFO names the domain \"%s\"", got);
	is_int(ordlock_acquire(a, &k, 1, OLT_LONG_MS, 0, &ta), 0,
	       "A takes 1:1 exclusive in %s", da);
	is_int(ordlock_try_acquire(b, &k, 1, &tb), 0,
	       "B takes 1:1 exclusive in %s too: no contention", db);
	is_int(ordlock_try_acquire(d, &k, 1, NULL), 0,
	       "and an owner of the default domain as well");
	is_errno(ordlock_try_acquire(a2, &k, 1, NULL), EAGAIN,
		 "a second owner in %s contends with A", da);
	is_int(ordlock_last_failure(a2)->pid, getpid(), "failure names A's pid");
	ordlock_close(a);
	ordlock_close(b);
	ordlock_close(a2);
	ordlock_close(d);

	/* "default" by name is the default domain */
	a = olt_open("default");
	d = olt_open(NULL);
	ordlock_acquire(d, &k, 1, OLT_LONG_MS, 0, NULL);
	is_errno(ordlock_try_acquire(a, &k, 1, NULL), EAGAIN,
		 "an owner that set domain \"default\" contends with a new owner");
	ordlock_close(a);
	ordlock_close(d);
}

static void test_set_while_holding(void)
{
	char da[ORDLOCK_DOMAIN_NAME_MAX], got[ORDLOCK_DOMAIN_NAME_MAX];
	struct ordlock *a = olt_open(NULL);
	struct ordlock_key k = ORDLOCK_EX(2, 1);

	snprintf(da, sizeof(da), "%s", olt_domain("dom-c"));
	ordlock_acquire(a, &k, 1, OLT_LONG_MS, 0, NULL);
	is_errno(ordlock_set_domain(a, da), EBUSY,
		 "SET_DOMAIN while holding a key: EBUSY");
	domain_of(a, got);
	ok(!strcmp(got, "default"), "the owner stays in \"default\" (%s)", got);
	is_int(olt_nheld(a), 1, "and still holds its key");
	is_errno(olt_probe(NULL, 2, 1, SH), EAGAIN, "held in the default domain");
	ordlock_release_all(a);
	is_int(ordlock_set_domain(a, da), 0, "after releasing, SET_DOMAIN works");
	domain_of(a, got);
	ok(!strcmp(got, da), "now in %s", got);
	is_int(ordlock_acquire(a, &k, 1, OLT_LONG_MS, 0, NULL), 0,
	       "take 2:1 in the new domain");
	is_int(olt_probe(NULL, 2, 1, EX), 0, "2:1 of the default domain is free");
	is_errno(olt_probe(da, 2, 1, EX), EAGAIN, "2:1 of %s is held", da);
	ordlock_release_all(a);
	is_int(ordlock_set_domain(a, NULL), 0, "move back to default");
	domain_of(a, got);
	ok(!strcmp(got, "default"), "in \"default\" again");
	ordlock_close(a);
}

/*
 * The fd is shared with a child that waits: the owner waits for a key.
 * Other calls on the owner must not wait behind that wait: SET_DOMAIN
 * fails with EBUSY at once, OWNER_INFO answers at once.
 */
#define SHWAIT_MS 5000

struct shwait {
	int fd;
	int ret;
};

static int child_wait_on_fd(void *arg)
{
	struct shwait *s = arg;
	struct ordlock_key k = ORDLOCK_EX(2, 5);

	s->ret = olt_fd_acquire(s->fd, &k, 1, 0, (uint64_t)SHWAIT_MS * 1000000, NULL) ? -errno : 0;
	return 0;
}

static void test_set_while_waiting(void)
{
	struct ordlock_key k = ORDLOCK_EX(2, 5);
	struct olt_holder *h = olt_holder_start(NULL, &k, 1);
	struct shwait *s = shm_alloc(sizeof(*s));
	char name[ORDLOCK_DOMAIN_NAME_MAX];
	uint64_t t0, dt;
	long n;
	int ret;
	pid_t pid;

	s->fd = olt_raw_fd();
	pid = child_start(child_wait_on_fd, s);
	is_int(wait_blocked_ioctl(pid, ORDLOCK_IOC_ACQUIRE, 0), 0,
	       "a child waits for 2:5 (timeout %d ms) through a shared owner",
	       SHWAIT_MS);
	t0 = now_ms();
	n = olt_fd_nheld(s->fd);
	dt = now_ms() - t0;
	ok(dt < 2000, "OWNER_INFO on the waiting owner answers at once (%llu ms)",
	   (unsigned long long)dt);
	is_int(n, 0, "the waiting owner holds nothing");
	memset(name, 0, sizeof(name));
	snprintf(name, sizeof(name), "%s", olt_domain("dom-w"));
	t0 = now_ms();
	ret = set_domain_raw(s->fd, name, 0);
	dt = now_ms() - t0;
	is_errno(ret, EBUSY, "SET_DOMAIN while the owner waits: EBUSY");
	ok(dt < 2000, "at once (%llu ms)", (unsigned long long)dt);
	is_int(wait_blocked_ioctl(pid, ORDLOCK_IOC_ACQUIRE, 1000), 0,
	       "the child still waits");
	olt_holder_stop(h);
	is_int(child_wait(pid, 30), 0, "the waiter finishes");
	is_int(s->ret, 0, "and was granted 2:5 in the default domain");
	is_errno(olt_probe(NULL, 2, 5, SH), EAGAIN, "2:5 is held by that owner");
	close(s->fd);
	shm_free(s, sizeof(*s));
}

static void test_names(void)
{
	char name[ORDLOCK_DOMAIN_NAME_MAX];
	char got[ORDLOCK_DOMAIN_NAME_MAX];
	struct ordlock *a = olt_open(NULL);
	int fd = ordlock_fd(a);
	static const char *const bad[] = {
		"a b", "a/b", "a:b", "dom\n", "caf\xc3\xa9", "a\tb", "*",
	};
	unsigned int i;

	memset(name, 0, sizeof(name));
	is_errno(set_domain_raw(fd, name, 0), EINVAL, "empty name: EINVAL");
	memset(name, 'x', sizeof(name));
	is_errno(set_domain_raw(fd, name, 0), EINVAL,
		 "32 characters, no NUL: EINVAL");
	memset(name, 0, sizeof(name));
	memset(name, 'y', sizeof(name) - 1);
	is_int(set_domain_raw(fd, name, 0), 0, "31 characters: accepted");
	domain_of(a, got);
	ok(!strcmp(got, name), "OWNER_INFO shows the 31-character name");
	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		memset(name, 0, sizeof(name));
		strcpy(name, bad[i]);
		is_errno(set_domain_raw(fd, name, 0), EINVAL,
			 "bad character in name #%u: EINVAL", i);
	}
	memset(name, 0, sizeof(name));
	strcpy(name, "abc");
	name[5] = 'z';
	is_errno(set_domain_raw(fd, name, 0), EINVAL,
		 "non-zero bytes after the NUL: EINVAL");
	memset(name, 0, sizeof(name));
	strcpy(name, "Az09._-");
	is_errno(set_domain_raw(fd, name, 1), EINVAL, "flags 1: EINVAL");
	is_int(set_domain_raw(fd, name, 0), 0,
	       "\"Az09._-\" uses every allowed class: accepted");
	domain_of(a, got);
	ok(!strcmp(got, "Az09._-"),
	   "and nothing changed on the rejected calls before it (\"%s\")", got);
	is_errno(ordlock_set_domain(a, "0123456789012345678901234567890123"),
		 EINVAL, "library: a name too long for the field: EINVAL");
	is_int(ordlock_last_failure(a)->reason, ORDLOCK_REASON_INVALID,
	       "recorded as INVALID");
	ok(ordlock_open("bad name") == NULL && errno == EINVAL,
	   "ordlock_open(\"bad name\") fails with EINVAL");
	ordlock_close(a);
}

static void test_tokens_per_domain(void)
{
	char da[ORDLOCK_DOMAIN_NAME_MAX];
	struct ordlock *a, *b;
	struct ordlock_key k = ORDLOCK_EX(1, 1);
	uint64_t t1 = 0, t2 = 0;
	struct ordlock_owner_info info;

	snprintf(da, sizeof(da), "%s", olt_domain("dom-t"));
	a = olt_open(da);
	b = olt_open(da);
	ordlock_acquire(a, &k, 1, OLT_LONG_MS, 0, &t1);
	ordlock_release_all(a);
	ordlock_acquire(b, &k, 1, OLT_LONG_MS, 0, &t2);
	ok(t2 > t1 && t1 > 0, "tokens increase within domain %s (%llu < %llu)",
	   da, (unsigned long long)t1, (unsigned long long)t2);
	ordlock_owner_info(a, &info);
	is_int(info.policy, ORDLOCK_POLICY_ENFORCE,
	       "a new domain enforces the order rule");
	ordlock_close(a);
	ordlock_close(b);
}

int main(void)
{
	watchdog_start(600);
	test_separate();
	test_set_while_holding();
	test_set_while_waiting();
	test_names();
	test_tokens_per_domain();
	return tap_done();
}
