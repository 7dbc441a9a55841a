// SPDX-License-Identifier: GPL-2.0
/*
 * ordlockctl stats: the counters of each domain, and its histogram of wait
 * times (debugfs only).
 */
#include <string.h>

#include "ordlockctl.h"

static uint64_t olc_stat(const struct olc_domain_stats *d, const char *name)
{
	unsigned int i;

	for (i = 0; i < d->n; i++)
		if (!strcmp(d->v[i].name, name))
			return d->v[i].value;
	return 0;
}

/* "lt_1" -> "< 1 us", "more" -> ">= 4.19 s" after @prev */
static void olc_hist_label(char *buf, size_t len, const char *name,
			   const char *prev)
{
	char tmp[32];
	uint64_t us;

	if (!strncmp(name, "lt_", 3) && !olc_parse_u64(name + 3, &us)) {
		snprintf(buf, len, "< %s", olc_us_str(tmp, sizeof(tmp), us));
		return;
	}
	if (!strcmp(name, "more") && prev && !strncmp(prev, "lt_", 3) &&
	    !olc_parse_u64(prev + 3, &us)) {
		snprintf(buf, len, ">= %s", olc_us_str(tmp, sizeof(tmp), us));
		return;
	}
	snprintf(buf, len, "%s", name);
}

static void olc_stats_detail(const struct olc_domain_stats *d)
{
	static const char *const cheaders[] = { "COUNTER", "VALUE" };
	static const char *const hheaders[] = { "WAIT", "COUNT", "" };
	uint64_t max = 0;
	struct olc_table *t;
	unsigned int i, last = 0;
	char label[48];

	printf("%sdomain %s%s: policy %s", olc_c(OLC_BOLD), d->name, olc_c(OLC_RESET),
	       d->policy[0] ? d->policy : "?");
	if (d->have_delay)
		printf(", detect_delay_ms %u", d->detect_delay_ms);
	printf("\n");
	t = olc_table_new(2, cheaders, "lr");
	for (i = 0; i < d->n; i++) {
		olc_table_cell(t, OLC_RESET, "%s", d->v[i].name);
		olc_table_cell(t, OLC_RESET, "%llu", (unsigned long long)d->v[i].value);
	}
	olc_table_print(t, stdout);
	if (!d->have_hist)
		return;
	for (i = 0; i < d->nhist; i++) {
		if (d->hist[i].value > max)
			max = d->hist[i].value;
		if (d->hist[i].value)
			last = i + 1;
	}
	if (!max) {
		printf("no waits\n");
		return;
	}
	putchar('\n');
	t = olc_table_new(3, hheaders, "rrl");
	for (i = 0; i < last; i++) {
		unsigned int bar = (unsigned int)(d->hist[i].value * 40 / max);
		char bars[41];

		memset(bars, '#', bar);
		bars[bar] = '\0';
		if (!bar && d->hist[i].value)
			strcpy(bars, ".");
		olc_hist_label(label, sizeof(label), d->hist[i].name,
			       i ? d->hist[i - 1].name : NULL);
		olc_table_cell(t, OLC_RESET, "%s", label);
		olc_table_cell(t, OLC_RESET, "%llu", (unsigned long long)d->hist[i].value);
		olc_table_cell(t, OLC_CYAN, "%s", bars);
	}
	olc_table_print(t, stdout);
}

struct olc_stats_args {
	struct olc_args base;
	int all;
};

static const struct olc_option olc_stats_options[] = {
	OLC_OPTION_DOMAIN("only this domain, in detail"),
	{ 'a', "all", NULL, "every domain in detail" },
	{ 0 },
};

/* -a */
static int olc_stats_opt(const struct olc_cmd *cmd, int c, const char *arg,
			 void *args)
{
	(void)cmd;
	(void)c;
	(void)arg;
	((struct olc_stats_args *)args)->all = 1;
	return -1;
}

static int olc_stats_run(const struct olc_cmd *cmd, int argc, char **argv)
{
	static const char *const headers[] = {
		"DOMAIN", "POLICY", "OWNERS", "RESOURCES", "WAITERS", "ACQUIRES",
		"CONTENDED", "TIMEOUTS", "DEADLOCKS", "ORDER", "RELEASES",
	};
	struct olc_stats stats = { 0 };
	struct olc_stats_args a = { 0 };
	const char *source = NULL;
	struct olc_table *t;
	struct olc_json j;
	unsigned int k;
	size_t i;
	int ret;

	ret = olc_getopt(cmd, argc, argv, &a);
	if (ret >= 0)
		return ret;
	ret = olc_load_stats(&stats, a.base.domain, &source);
	if (ret)
		return olc_exit_errno(ret);

	if (olc_opt.json) {
		olc_json_init(&j, stdout, olc_opt.pretty);
		olc_json_obj(&j, NULL);
		olc_json_str(&j, "source", source);
		if (stats.have_global) {
			olc_json_obj(&j, "global");
			olc_json_u64(&j, "owners", stats.owners);
			olc_json_u64(&j, "resources", stats.resources);
			olc_json_obj_end(&j);
		} else {
			olc_json_null(&j, "global");
		}
		olc_json_arr(&j, "domains");
		for (i = 0; i < stats.n; i++) {
			const struct olc_domain_stats *d = &stats.v[i];

			olc_json_obj(&j, NULL);
			olc_json_str(&j, "name", d->name);
			olc_json_str(&j, "policy", d->policy[0] ? d->policy : NULL);
			olc_json_u64(&j, "detect_delay_ms", d->detect_delay_ms);
			olc_json_obj(&j, "counters");
			for (k = 0; k < d->n; k++)
				olc_json_u64(&j, d->v[k].name, d->v[k].value);
			olc_json_obj_end(&j);
			if (d->have_hist) {
				olc_json_obj(&j, "wait_us");
				for (k = 0; k < d->nhist; k++)
					olc_json_u64(&j, d->hist[k].name, d->hist[k].value);
				olc_json_obj_end(&j);
			} else {
				olc_json_null(&j, "wait_us");
			}
			olc_json_obj_end(&j);
		}
		olc_list_end(&j, NULL, NULL, NULL);
		olc_stats_free(&stats);
		return OLC_EXIT_OK;
	}

	if (stats.have_global)
		printf("%llu owners, %llu resources in all domains\n\n",
		       (unsigned long long)stats.owners,
		       (unsigned long long)stats.resources);
	if (a.base.domain || a.all) {
		for (i = 0; i < stats.n; i++) {
			if (i)
				putchar('\n');
			olc_stats_detail(&stats.v[i]);
		}
		olc_stats_free(&stats);
		return OLC_EXIT_OK;
	}
	t = olc_table_new(11, headers, "llrrrrrrrrr");
	for (i = 0; i < stats.n; i++) {
		const struct olc_domain_stats *d = &stats.v[i];

		olc_table_cell(t, OLC_RESET, "%s", d->name);
		olc_table_cell(t, OLC_RESET, "%s", d->policy[0] ? d->policy : "?");
		olc_table_cell(t, OLC_RESET, "%llu", (unsigned long long)olc_stat(d, "owners"));
		olc_table_cell(t, OLC_RESET, "%llu", (unsigned long long)olc_stat(d, "resources"));
		olc_table_cell(t, OLC_RESET, "%llu", (unsigned long long)olc_stat(d, "waiters"));
		olc_table_cell(t, OLC_RESET, "%llu", (unsigned long long)olc_stat(d, "acquires"));
		olc_table_cell(t, OLC_RESET, "%llu", (unsigned long long)olc_stat(d, "contended"));
		olc_table_cell(t, OLC_RESET, "%llu", (unsigned long long)olc_stat(d, "timeouts"));
		olc_table_cell(t, olc_stat(d, "deadlocks") ? OLC_RED : OLC_RESET, "%llu",
			       (unsigned long long)(olc_stat(d, "deadlocks") +
						    olc_stat(d, "upgrade_deadlocks")));
		olc_table_cell(t, OLC_RESET, "%llu",
			       (unsigned long long)olc_stat(d, "order_violations"));
		olc_table_cell(t, OLC_RESET, "%llu", (unsigned long long)olc_stat(d, "releases"));
	}
	olc_list_end(NULL, t, "domains", NULL);
	olc_stats_free(&stats);
	return OLC_EXIT_OK;
}

const struct olc_cmd olc_cmd_stats = {
	.name = "stats",
	.run = olc_stats_run,
	.flags = OLC_CMD_DOMAIN,
	.options = olc_stats_options,
	.opt = olc_stats_opt,
	.summary = "show the counters of each domain",
	.usage = "stats [-d DOMAIN] [-a] [-j]",
	.about =
	"One row per domain (DEADLOCKS counts cycle and upgrade deadlocks, ORDER the\n"
	"order violations); with -d or -a every counter and the histogram of wait\n"
	"times (debugfs only). Through netlink (no debugfs) the domains listed are\n"
	"\"default\" and those that have owners.\n",
	.help =
	"JSON: {\"source\", \"global\": {\"owners\", \"resources\"} or null (netlink),\n"
	"\"domains\": [{\"name\", \"policy\", \"detect_delay_ms\", \"counters\": {NAME: N...},\n"
	"\"wait_us\": {\"lt_1\": N, ..., \"more\": N} or null}]}; the counter names are\n"
	"those of the debugfs stats file.\n",
};
