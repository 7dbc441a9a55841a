#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# t_install -- "make install" works as it stands, tested by running what it
# installed: with PREFIX under a scratch directory (the same layout as
# /usr/local) ordlockctl lands in PREFIX/bin and runs, a program builds
# against the installed header and library through the installed
# libordlock.pc and runs, the Python binding lands in the directory
# Debian's python3 reads for that prefix and imports, finding the installed
# library by itself; for the default PREFIX=/usr/local those directories
# are on PATH and sys.path.  "make uninstall" leaves no file and no
# directory of ordlock's behind.  TAP.
set -uo pipefail

. "$(dirname "${BASH_SOURCE[0]}")/../lib/unit.sh"
unset MAKEFLAGS MFLAGS MAKELEVEL
py=/usr/bin/python3
[[ -x $py ]] || py=python3

# the defaults: where they put things, and whether those are looked in
eval "$(make -s --no-print-directory -C "$repo/tools" print-dirs)"
[[ $BINDIR == /usr/local/bin ]]
point $? "default BINDIR is /usr/local/bin (on an ordinary user's PATH), not sbin"
$py -c "import sys; sys.exit(0 if '$PYTHONDIR' in sys.path else 1)"
point $? "default PYTHONDIR $PYTHONDIR is on $py's sys.path"
[[ $UDEVRULESDIR == /etc/udev/rules.d ]]
point $? "default UDEVRULESDIR is /etc/udev/rules.d (udev reads it)"
# the Node.js package: where node's require() looks from any directory
# (issue 42: PREFIX/lib/node_modules was found only with NODE_PATH)
if command -v node >/dev/null 2>&1; then
	out=$(cd / && node -p "require('module').globalPaths.includes('$(dirname "$NODEMODDIR")')" 2>&1)
	[[ $out == true && $(basename "$NODEMODDIR") == ordlock ]]
	point $? "default NODEMODDIR $NODEMODDIR: its directory is one require() searches (module.globalPaths)"
fi
eval "$(make -s --no-print-directory -C "$repo/tools" print-dirs PREFIX=/usr)"
$py -c "import sys; sys.exit(0 if '$PYTHONDIR' in sys.path else 1)" && [[ $UDEVRULESDIR == /usr/lib/udev/rules.d ]]
point $? "PREFIX=/usr: PYTHONDIR $PYTHONDIR on sys.path, the rule in /usr/lib/udev/rules.d"

work=$(mktemp -d)
scratch=$(mktemp -d)
trap 'rm -rf "$work" "$scratch"' EXIT
prefix=$work/usr/local
# the Node.js package in a scratch home's ~/.node_modules, which require()
# searches from any directory as it does node's own (module.globalPaths)
mk() { make -s --no-print-directory -C "$repo/tools" PREFIX="$prefix" \
	UDEVRULESDIR="$work/etc/udev/rules.d" SYSTEMDUNITDIR="$work/etc/systemd/system" NODEMODDIR="$work/home/.node_modules/ordlock" \
	LDCONFIG= "$@"; }
mk install >"$scratch/log" 2>&1
rc=$?
point $rc "make install PREFIX=$prefix"
((rc)) && sed 's/^/# /' "$scratch/log" | tail -n 20
eval "$(mk print-dirs)"

"$prefix/bin/ordlockctl" --help >"$scratch/help" 2>&1
point $? "the installed $prefix/bin/ordlockctl runs (--help)"
[[ ! -e $prefix/sbin/ordlockctl ]]
point $? "nothing in sbin"
# the daemon of detection across nodes, where libcpg is (tools/xdetectd)
if pkg-config --exists libcpg 2>/dev/null; then
	"$prefix/sbin/ordlock-xdetectd" --help >"$scratch/help" 2>&1 &&
		grep -q "^ExecStart=$prefix/sbin/ordlock-xdetectd\$" \
			"$work/etc/systemd/system/ordlock-xdetectd.service" &&
		[[ -f $prefix/share/man/man8/ordlock-xdetectd.8 ]]
	point $? "ordlock-xdetectd in SBINDIR runs (--help), its unit starts it, its man page"
fi

cat >"$scratch/t.c" <<'EOC'
#include <errno.h>
#include <stdio.h>
#include <libordlock.h>

int main(void)
{
	struct ordlock *ol = ordlock_open(NULL);
	struct ordlock_key k = ORDLOCK_EX(1, 1);

	/* no module here: a clean failure, not a crash */
	if (ol)
		return ordlock_acquire(ol, &k, 1, 10, 0, NULL) ? 1 : 0;
	printf("open: %d\n", errno);
	return ordlock_try_acquire(NULL, &k, 1, NULL) == -EINVAL ? 3 : 4;
}
EOC
PKG_CONFIG_PATH=$LIBDIR/pkgconfig cc -o "$scratch/t" "$scratch/t.c" \
	$(PKG_CONFIG_PATH=$LIBDIR/pkgconfig pkg-config --cflags --libs libordlock) 2>"$scratch/cc"
rc=$?
point $rc "a program builds with the installed header and library (pkg-config libordlock)"
((rc)) && sed 's/^/# /' "$scratch/cc"
LD_LIBRARY_PATH=$LIBDIR "$scratch/t" >/dev/null
rc=$?
[[ $rc == 0 || $rc == 1 || $rc == 3 ]]
point $? "and runs against the installed libordlock.so.1 (exit $rc)"
[[ $(pkg-config --variable=includedir --define-variable=prefix="$prefix" \
	--with-path="$LIBDIR/pkgconfig" libordlock 2>/dev/null) == "$INCLUDEDIR" ||
	-f $INCLUDEDIR/libordlock.h ]]
point $? "libordlock.pc's include directory holds libordlock.h"

# as a user's python3 does: bytecode written beside the module (issue 30:
# uninstall left the .pyc)
out=$(cd / && env -u PYTHONDONTWRITEBYTECODE PYTHONPATH=$PYTHONDIR $py -c 'import ordlock, sys; print(ordlock._lib._name)' 2>&1)
[[ $out == "$LIBDIR/libordlock.so.1" ]]
point $? "the installed binding imports and loads the installed library by itself ($out)"
[[ -f $PYTHONDIR/ordlock/py.typed && -n $(find "$PYTHONDIR" -name '*.pyc') ]]
point $? "it is the package ordlock with its marker py.typed (PEP 561); the import wrote bytecode"
[[ -f $work/etc/udev/rules.d/60-ordlock.rules ]]
point $? "the udev rule is in UDEVRULESDIR"
# the Node.js package, where make built the addon (node and node_api.h)
if [[ -e $repo/tools/node/ordlock.node ]]; then
	out=$(cd / && env -u NODE_PATH HOME="$work/home" node -e "const o = require('ordlock'); process.stdout.write(o.version + ' ' + o.key('1:2').name)" 2>&1)
	[[ $out == "0.1.0 1:2" && -e $NODEMODDIR/index.d.ts ]]
	point $? "the Node.js package in NODEMODDIR: require('ordlock') from / finds it, without NODE_PATH, and loads its addon ($out)"
fi

mk uninstall >"$scratch/log" 2>&1
point $? "make uninstall"
left=$(find "$work" -type f | sed "s|^$work||")
[[ -z $left ]]
point $? "no file is left${left:+: $left}"
dirs=$(find "$work" -depth -type d \( -name ordlock -o -name linux -o -name pkgconfig -o -name completions -o -name node_modules \) | sed "s|^$work||")
[[ -z $dirs ]]
point $? "no directory of ordlock's is left${dirs:+: $dirs}"
unit_done
