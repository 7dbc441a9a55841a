/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The DLM's LS_all files of the lockspace ordlock.c_vw as the cluster case
 * c_views saved them (the run's shared/c_views directory), with
 * node 1 mastering key 1:1, node 2 holding it EX and node 3 waiting for it.
 */
struct olc_dlm_sample {
	const char *kernel;
	int node;
	const char *text;
};

static const struct olc_dlm_sample olc_dlm_samples[] = {
	{ NULL, 0, NULL },
};
