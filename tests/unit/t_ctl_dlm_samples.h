/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The DLM's LS_all files of the lockspace ordlock.c_vw as the cluster case
 * c_views saved them (the run's shared/c_views directory), unchanged: node
 * 1 uses key 1:1 first (it masters it), node 2 holds it EX, node 3 waits.
 * Captured on 2026-12-01 on Debian's 6.1.0-57 and 6.12.117 (node 1's of
 * 6.12 from a second run, node 2's from the first).
 */
struct olc_dlm_sample {
	const char *kernel;
	int node;		/* the node that saved it */
	unsigned int holders;	/* other nodes' holders it shows (node 2's EX) */
	unsigned int waiters;	/* and waiters (node 3's) */
	const char *text;
};

static const struct olc_dlm_sample olc_dlm_samples[] = {
	{ "6.1.0-57-amd64", 1, 1, 1,
	  "version rsb 1.1 lvb 1.1 lkb 1.1\n"
	  "rsb (____ptrval____) 0 0 0 0 0 0 25 str 00000001:0000000000000001\n"
	  "lvb 1 32 9e 9e eb 28 97 61 06 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00\n"
	  "lkb 4 3 1 9 0 0 10000 2 0 -1 0 0 0 0 19461426926 0\n"
	  "lkb 3 2 2 24 0 8 10000 2 5 -1 0 0 0 1 19008187268 0\n"
	  "lkb 2 2 1 24 0 0 10000 2 0 -1 0 0 0 0 19004260207 0\n"
	  "lkb 1 0 0 9 0 0 0 2 0 -1 0 0 0 0 18378045064 0\n"
	  "lkb 5 3 2 9 0 8 10000 1 -1 5 0 0 0 0 19469662420 0\n" },
	{ "6.1.0-57-amd64", 2, 0, 0,
	  "version rsb 1.1 lvb 1.1 lkb 1.1\n"
	  "rsb (____ptrval____) 1 0 0 0 0 0 25 str 00000001:0000000000000001\n"
	  "lkb 2 1 3 24 0 8 0 2 5 -1 0 0 0 1 18657373315 0\n"
	  "lkb 1 1 2 24 0 0 0 2 0 -1 0 0 0 0 18654888323 0\n" },
	{ "6.12.117+deb12-amd64", 1, 1, 1,
	  "rsb ptr nodeid first_lkid flags !root_list_empty !recover_list_empty recover_locks_count len\n"
	  "rsb (____ptrval____) 0 0 200 0 0 0 25 str 00000001:0000000000000001\n"
	  "lvb 1 32 8c c6 0e 93 97 61 06 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00\n"
	  "lkb 4 3 1 181 0 0 10000 2 0 -1 -1 0 0 0 28393603509 0\n"
	  "lkb 3 2 2 113 0 8 10000 2 5 -1 -1 0 0 1 27436979774 0\n"
	  "lkb 2 2 1 113 0 0 10000 2 0 -1 -1 0 0 0 27429379686 0\n"
	  "lkb 1 0 0 31 0 0 0 2 0 -1 -1 0 0 0 26663887556 0\n"
	  "lkb 5 3 2 181 0 8 10000 1 -1 5 -1 0 0 0 28398588268 0\n" },
	{ "6.12.117+deb12-amd64", 2, 0, 0,
	  "rsb ptr nodeid first_lkid flags !root_list_empty !recover_list_empty recover_locks_count len\n"
	  "rsb 000000004b097d56 1 0 200 0 0 0 25 str 00000001:0000000000000001\n"
	  "lkb 2 1 3 12 0 8 0 2 5 -1 -1 0 0 1 23923773435 0\n"
	  "lkb 1 1 2 12 0 0 0 2 0 -1 -1 0 0 0 23919025258 0\n" },
	{ NULL, 0, 0, 0, NULL },
};
