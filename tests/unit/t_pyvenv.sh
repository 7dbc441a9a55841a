#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# t_pyvenv -- the Python binding installs the way Python users expect: its
# pyproject.toml (the binding's own build backend, standard library only:
# no network, no setuptools, no wheel) lets "pip install --no-build-isolation
# tools/python" put it into a virtual environment, where it imports (the
# library is loaded on first use), carries type hints and docstrings, and
# loads libordlock ($ORDLOCK_LIB here; the in-VM t_python takes a key
# through such an install).  Then, for Debian's python3 and pyenv's
# python3.11 when there is one: in a bare virtual environment without the
# "wheel" package (issue 30: the setuptools backend failed there), plain
# "pip install tools/python" (build isolation, no index) installs the
# package ordlock with its PEP 561 marker py.typed and the "Typing ::
# Typed" classifier, "pip install -e" imports the tree's ordlock.py, and
# "pip uninstall" leaves nothing.  TAP.
set -uo pipefail

. "$(dirname "${BASH_SOURCE[0]}")/../lib/unit.sh"
py=/usr/bin/python3
[[ -x $py ]] || py=python3
unset PIP_FIND_LINKS PIP_INDEX_URL PYTHONPATH
export PIP_NO_INDEX=1

unit_work
cp -r "$repo/tools/python" "$work/src"
rm -rf "$work/src/build" "$work/src/"*.egg-info
$py -m venv --system-site-packages "$work/venv" >"$work/log" 2>&1
point $? "python3 -m venv --system-site-packages (python3-venv)"
"$work/venv/bin/pip" install -q --no-build-isolation "$work/src" >>"$work/log" 2>&1
rc=$?
point $rc "pip install --no-build-isolation tools/python into the venv"
((rc)) && sed 's/^/# /' "$work/log" | tail -n 15

cd "$work" || exit 1
# no library anywhere it looks: the import works all the same
ORDLOCK_LIB=$work/none.so "$work/venv/bin/python" - >"$work/out" 2>&1 <<'PY'
import sys, ordlock
assert ordlock.__file__.startswith(sys.prefix), ordlock.__file__
print(ordlock.__version__)
PY
point $? "the venv imports its own copy of ordlock, without loading the library yet"
[[ $(cat "$work/out") == 0.1.0 ]]
point $? "version 0.1.0"

ORDLOCK_LIB=$repo/tools/lib/libordlock.so.1 "$work/venv/bin/python" - >"$work/out" 2>&1 <<'PY'
import inspect, typing, ordlock
bad = []
for name in ordlock.__all__:
    obj = getattr(ordlock, name)
    if (inspect.isfunction(obj) or inspect.isclass(obj)) and not obj.__doc__:
        bad.append(name + ": no docstring")
    if inspect.isfunction(obj):
        hints = typing.get_type_hints(obj)
        if "return" not in hints:
            bad.append(name + ": no return type")
for meth in ("acquire", "try_acquire", "release", "convert", "info", "close"):
    f = getattr(ordlock.Owner, meth)
    if not f.__doc__ or "return" not in typing.get_type_hints(f):
        bad.append("Owner." + meth)
assert typing.get_type_hints(ordlock.acquire)["return"] is ordlock.Held
print("\n".join(bad) or "all")
print(ordlock.mode_name(1), ordlock.reason_name(3))
PY
point $? "type hints resolve (typing.get_type_hints)"
[[ $(head -1 "$work/out") == all ]]
point $? "every public function and class has a docstring and a return type"
grep -q "^shared timeout$" "$work/out"
point $? "and it loads libordlock on first use (mode_name, reason_name)"
((failed)) && sed 's/^/# /' "$work/out"

ORDLOCK_LIB=$work/none.so "$work/venv/bin/python" -c 'import ordlock; ordlock.mode_name(1)' >"$work/out" 2>&1
[[ $? != 0 ]] && grep -q "cannot load libordlock (set ORDLOCK_LIB)" "$work/out"
point $? "without the library, the first call says where it looked and how to point at it"
# bare virtual environments without wheel: Debian's python3, pyenv's 3.11
pys=("$py")
for p in /root/.pyenv/versions/3.11*/bin/python3 "${PYENV_ROOT:-}"/versions/3.11*/bin/python3; do
	[[ -x $p && $p != "$py" ]] && { pys+=("$p"); break; }
done
for p in "${pys[@]}"; do
	v=$work/bare-$(basename "$(dirname "$(dirname "$p")")")
	if ! "$p" -m venv "$v" >"$work/log" 2>&1; then
		point 1 "$p -m venv (bare)"
		sed 's/^/# /' "$work/log" | tail -n 5
		continue
	fi
	"$v/bin/pip" uninstall -q -y wheel >/dev/null 2>&1
	"$v/bin/python" -c 'import wheel' >/dev/null 2>&1
	point "$((! $?))" "$p: a bare virtual environment without the wheel package"
	"$v/bin/pip" install -q "$work/src" >"$work/log" 2>&1
	rc=$?
	point $rc "$p: pip install tools/python (build isolation, no index, no wheel)"
	((rc)) && sed 's/^/# /' "$work/log" | tail -n 15
	site=$("$v/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
	[[ -f $site/ordlock/py.typed && -f $site/ordlock/__init__.py ]]
	point $? "$p: the package ordlock with its PEP 561 marker py.typed"
	ORDLOCK_LIB=$work/none.so "$v/bin/python" -c '
import importlib.metadata as m, ordlock
md = m.metadata("ordlock")
assert "Typing :: Typed" in md.get_all("Classifier"), md.get_all("Classifier")
assert md["Version"] == ordlock.__version__
assert any(str(f) == "ordlock/py.typed" for f in m.files("ordlock"))
' >"$work/log" 2>&1
	point $? "$p: its metadata: Typing :: Typed, the version of ordlock.py, py.typed in RECORD" "$(cat "$work/log")"
	"$v/bin/pip" uninstall -q -y ordlock >"$work/log" 2>&1 && [[ ! -e $site/ordlock ]] &&
		! ls "$site" | grep -qi ordlock
	point $? "$p: pip uninstall ordlock leaves nothing"
	"$v/bin/pip" install -q -e "$work/src" >"$work/log" 2>&1 &&
		[[ $(cd / && ORDLOCK_LIB=$work/none.so "$v/bin/python" -c 'import ordlock; print(ordlock.__file__)') == "$work/src/ordlock.py" ]]
	point $? "$p: pip install -e: the tree's ordlock.py" "$(tail -n 5 "$work/log")"
done
unit_done
