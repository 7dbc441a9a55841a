// SPDX-License-Identifier: GPL-2.0
/*
 * The one-line description of every column of ordlockctl's tables (as
 * lslocks --help lists its "Available output columns"): "COMMAND --help"
 * prints them under Columns, "help --columns COMMAND" one per line.
 * tests/unit/t_ctl_opts checks that every column of every table has one.
 */
#include <string.h>

#include "ordlockctl.h"

struct olc_column_help {
	const char *cmd;
	const char *column;
	const char *help;
};

static const struct olc_column_help olc_column_helps[] = {
	{ "locks", "DOMAIN", "the domain of the key" },
	{ "locks", "KEY", "the key, RANK:ID (NAME:ID when its rank has a name)" },
	{ "locks", "ROLE", "holder, waiter (queued) or converter (holds it, queued to convert)" },
	{ "locks", "POS", "place among the holders, or in the FIFO queue (0 first)" },
	{ "locks", "OWNER", "the owner's id (an open /dev/ordlock, or a netlink socket)" },
	{ "locks", "PID", "the process that made the owner's last request" },
	{ "locks", "COMM", "its command name" },
	{ "locks", "MODE", "shared or exclusive: held, or asked for" },
	{ "locks", "TOKEN", "a holder's fencing token (- for a waiter, a fast-path hold)" },
	{ "locks", "WAITED", "how long a waiter has waited" },
	{ "locks", "LEASE", "what is left of a holder's lease before the kernel revokes it" },
	{ "locks", "NODE", "the cluster node of the row (local: this host)" },
	{ "blockers", "PID", "a process in the way of PID's request" },
	{ "blockers", "COMM", "its command name" },
	{ "blockers", "OWNER", "the owner's id through which it is in the way" },
	{ "blockers", "BECAUSE", "holds (the key, in a conflicting mode) or queued (ahead of PID)" },
	{ "blockers", "KEY", "the key PID waits for" },
	{ "blockers", "EDGE", "hard (a holder), soft (queued ahead), thread or cluster" },
	{ "blockers", "WAITER", "the owner of PID that waits" },
	{ "blockers", "WANTS", "the mode PID asks for" },
	{ "blockers", "WAITED", "how long PID has waited" },
	{ "blockers", "NODE", "the cluster node of the blocker (local: this host)" },
	{ "owners", "OWNER", "the owner's id, unique while the module is loaded" },
	{ "owners", "PID", "the process that made the owner's last request" },
	{ "owners", "COMM", "its command name" },
	{ "owners", "DOMAIN", "the domain the owner is in" },
	{ "owners", "KIND", "device (/dev/ordlock) or netlink (a socket)" },
	{ "owners", "HELD", "how many keys it holds" },
	{ "owners", "WAITS FOR", "the mode and the key it waits for (- when none)" },
	{ "owners", "WAITED", "how long it has waited" },
	{ "owners", "LABEL", "the owner's label (ordlock_set_label(); - when none)" },
};

const char *olc_column_help(const struct olc_cmd *cmd, const char *column)
{
	size_t i;

	for (i = 0; i < sizeof(olc_column_helps) / sizeof(olc_column_helps[0]); i++)
		if (!strcmp(olc_column_helps[i].cmd, cmd->name) &&
		    !strcmp(olc_column_helps[i].column, column))
			return olc_column_helps[i].help;
	return NULL;
}

void olc_print_columns(const struct olc_cmd *cmd, FILE *f, const char *indent)
{
	const char *help;
	unsigned int i, w = 0;

	for (i = 0; cmd->columns && cmd->columns[i]; i++)
		if (strlen(cmd->columns[i]) > w)
			w = (unsigned int)strlen(cmd->columns[i]);
	for (i = 0; cmd->columns && cmd->columns[i]; i++) {
		const char *p;
		unsigned int k = 0;

		fputs(indent, f);
		for (p = cmd->columns[i]; *p; p++, k++)
			fputc(*p == ' ' ? '_' : *p, f);
		help = olc_column_help(cmd, cmd->columns[i]);
		fprintf(f, "%*s  %s\n", (int)(w - k), "", help ? help : "");
	}
}
