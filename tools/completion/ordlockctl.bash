# SPDX-License-Identifier: GPL-2.0
# bash completion for ordlockctl(8)
#
# The options come from ordlockctl itself ("ordlockctl help --options
# COMMAND" prints the table its getopt and --help are made from), so the
# completion offers exactly what each subcommand accepts.
# shellcheck disable=SC2207 # compgen words have no spaces

_ordlockctl_domains()
{
	local d=/sys/kernel/debug/ordlock/owners
	[[ -r $d ]] && awk '!/^#/ { print $4 }' "$d" 2>/dev/null | sort -u
}

# The words to offer for an option's argument named $1 (its --help name)
_ordlockctl_arg()
{
	case $1 in
	DOMAIN) COMPREPLY=($(compgen -W "$(_ordlockctl_domains)" -- "$cur")) ;;
	FILE) COMPREPLY=($(compgen -f -- "$cur")) ;;
	SRC) COMPREPLY=($(compgen -W "debugfs netlink auto" -- "$cur")) ;;
	WHEN) COMPREPLY=($(compgen -W "auto always never" -- "$cur")) ;;
	LIST) COMPREPLY=($(compgen -W "$("$prog" help --columns "$cmd" 2>/dev/null | cut -d' ' -f1)" -- "$cur")) ;;
	CMD) COMPREPLY=($(compgen -c -- "$cur")) ;;
	*) COMPREPLY=() ;;
	esac
}

# Every option of an "help --options" table, once
_ordlockctl_words()
{
	awk '{ if ($1 != "-" && !seen[$1]++) print $1; if (!seen[$2]++) print $2 }' <<<"$1"
}

_ordlockctl()
{
	local cur prev words cword
	if declare -F _init_completion >/dev/null; then
		_init_completion || return
	else
		cur=${COMP_WORDS[COMP_CWORD]}
		prev=${COMP_WORDS[COMP_CWORD - 1]}
		words=("${COMP_WORDS[@]}")
		cword=$COMP_CWORD
	fi
	local prog=${words[0]}
	command -v "$prog" >/dev/null 2>&1 || prog=ordlockctl

	local cmd="" i table
	# the options before COMMAND are ordlockctl's own
	table=$("$prog" help --options 2>/dev/null)
	for ((i = 1; i < cword; i++)); do
		case ${words[i]} in
		-*)
			# an option that takes an argument skips it
			if [[ ${words[i]} != *=* ]] &&
				awk -v o="${words[i]}" '($1 == o || $2 == o) && $3 != "-" { f = 1 } END { exit !f }' <<<"$table"; then
				((i++))
			fi
			;;
		*)
			cmd=${words[i]}
			break
			;;
		esac
	done
	if [[ -n $cmd && $cmd != help ]]; then
		table=$("$prog" help --options "$cmd" 2>/dev/null) || return
	fi

	# the argument of an option: as "--opt=ARG" or after "-o"/"--opt"
	local argname
	if [[ $cur == --*=* ]]; then
		argname=$(awk -v o="${cur%%=*}" '$2 == o { print $3 }' <<<"$table")
		cur=${cur#*=}
		[[ -n $argname && $argname != - ]] && _ordlockctl_arg "$argname"
		return
	fi
	if [[ $prev == -* ]]; then
		argname=$(awk -v o="$prev" '($1 == o || $2 == o) { print $3; exit }' <<<"$table")
		if [[ -n $argname && $argname != - ]]; then
			_ordlockctl_arg "$argname"
			return
		fi
	fi

	case $cmd in
	"")
		if [[ $cur == -* ]]; then
			COMPREPLY=($(compgen -W "$(_ordlockctl_words "$table")" -- "$cur"))
		else
			COMPREPLY=($(compgen -W "$("$prog" help --commands 2>/dev/null)" -- "$cur"))
		fi
		return
		;;
	help)
		COMPREPLY=($(compgen -W "$("$prog" help --commands 2>/dev/null)" -- "$cur"))
		return
		;;
	exec)
		# after "--" the rest is a command line
		for ((i = i + 1; i < cword; i++)); do
			if [[ ${words[i]} == -- ]]; then
				COMPREPLY=($(compgen -c -- "$cur"))
				return
			fi
		done
		;;
	domain)
		if [[ $cur != -* ]]; then
			case $prev in
			policy) COMPREPLY=($(compgen -W "enforce detect timeout" -- "$cur")) ;;
			strict | cluster | fastpath) COMPREPLY=($(compgen -W "on off" -- "$cur")) ;;
			on) [[ ${words[cword - 2]} == fastpath ]] && COMPREPLY=($(compgen -W "uid" -- "$cur")) ;;
			uid) COMPREPLY=($(compgen -u -- "$cur")) ;;
			delay | rank | max-hold) ;;
			domain) COMPREPLY=($(compgen -W "$(_ordlockctl_domains)" -- "$cur")) ;;
			*) COMPREPLY=($(compgen -W "set policy delay max-hold strict cluster fastpath rank norank" -- "$cur")) ;;
			esac
			return
		fi
		;;
	esac
	COMPREPLY=($(compgen -W "$(_ordlockctl_words "$table")" -- "$cur"))
}
complete -F _ordlockctl ordlockctl
