# SPDX-License-Identifier: GPL-2.0
# bash completion for ordlockctl(8)
# shellcheck disable=SC2207 # compgen words have no spaces

_ordlockctl_domains()
{
	local d=/sys/kernel/debug/ordlock/owners
	[[ -r $d ]] && awk '!/^#/ { print $4 }' "$d" 2>/dev/null | sort -u
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

	local cmds="cycles locks owners graph stats monitor exec domain check-token help"
	local common="-j --json -p --pretty -n --numeric -S --source --color -v --verbose -h --help"
	local cmd="" i
	for ((i = 1; i < cword; i++)); do
		case ${words[i]} in
		-S | --source | --color) ((i++)) ;;
		-*) ;;
		*)
			cmd=${words[i]}
			break
			;;
		esac
	done

	case $prev in
	-S | --source)
		COMPREPLY=($(compgen -W "debugfs netlink" -- "$cur"))
		return
		;;
	--color)
		COMPREPLY=($(compgen -W "auto always never" -- "$cur"))
		return
		;;
	-d | --domain)
		COMPREPLY=($(compgen -W "$(_ordlockctl_domains)" -- "$cur"))
		return
		;;
	-f | --file)
		COMPREPLY=($(compgen -f -- "$cur"))
		return
		;;
	esac
	if [[ $cur == --color=* ]]; then
		COMPREPLY=($(compgen -W "auto always never" -- "${cur#--color=}"))
		return
	fi

	local opts=""
	case $cmd in
	"")
		if [[ $cur == -* ]]; then
			COMPREPLY=($(compgen -W "$common -V --version" -- "$cur"))
		else
			COMPREPLY=($(compgen -W "$cmds" -- "$cur"))
		fi
		return
		;;
	help)
		COMPREPLY=($(compgen -W "$cmds" -- "$cur"))
		return
		;;
	cycles) opts="-d --domain -f --file -l --limit -q --quiet --history --max-work" ;;
	locks) opts="-d --domain" ;;
	owners) opts="-d --domain -w --waiting" ;;
	graph) opts="-d --domain -f --file --dot" ;;
	stats) opts="-d --domain -a --all" ;;
	monitor) opts="-d --domain -c --count -t --timeout" ;;
	check-token) opts="-d --domain" ;;
	exec)
		# after "--" the rest is a command line
		for ((i = i + 1; i < cword; i++)); do
			if [[ ${words[i]} == -- ]]; then
				COMPREPLY=($(compgen -c -- "$cur"))
				return
			fi
		done
		opts="-s --shared -x --exclusive -w --wait --timeout -n --nonblock -E --conflict-exit-code -o --close -F --no-fork -u --unlock -d --domain -c --command -q --quiet --"
		;;
	domain)
		if [[ $cur != -* ]]; then
			case $prev in
			policy) COMPREPLY=($(compgen -W "enforce detect timeout" -- "$cur")) ;;
			delay | rank | max-hold) ;;
			domain) COMPREPLY=($(compgen -W "$(_ordlockctl_domains)" -- "$cur")) ;;
			*) COMPREPLY=($(compgen -W "set policy delay max-hold rank norank" -- "$cur")) ;;
			esac
			return
		fi
		;;
	esac
	COMPREPLY=($(compgen -W "$opts $common" -- "$cur"))
}
complete -F _ordlockctl ordlockctl
