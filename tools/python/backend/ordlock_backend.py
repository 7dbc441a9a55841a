# SPDX-License-Identifier: LGPL-2.1-or-later
"""The PEP 517 build backend of the ordlock binding (pyproject.toml).

The binding is one pure-Python file, ordlock.py, so its wheel is written
here with the standard library alone: pip installs it with any python3,
without network and without setuptools or wheel (setuptools before 70.1
cannot build a wheel without the "wheel" package, which pyenv's pythons
and fresh virtual environments lack).  The wheel holds the package
ordlock (ordlock.py as ordlock/__init__.py) and its PEP 561 marker
ordlock/py.typed; the sdist the sources.  Editable installs (pip install
-e) put the source directory on sys.path with a .pth file.
"""
import base64
import hashlib
import io
import os
import re
import tarfile
import time
import zipfile

NAME = "ordlock"
SUMMARY = ("Ordered multi-resource locks from Python, over Linux's /dev/ordlock "
           "(ctypes binding of libordlock)")
LICENSE = "LGPL-2.1-or-later"
REQUIRES_PYTHON = ">=3.7"
CLASSIFIERS = (
    "Operating System :: POSIX :: Linux",
    "Programming Language :: Python :: 3",
    "Typing :: Typed",
)
SRC = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# the files of the sdist, relative to SRC
SDIST_FILES = ("pyproject.toml", "ordlock.py", "py.typed",
               "backend/ordlock_backend.py")
# a fixed time for the archives' entries (reproducible builds)
EPOCH = int(os.environ.get("SOURCE_DATE_EPOCH", "1764547200"))


def _version():
    with open(os.path.join(SRC, "ordlock.py"), encoding="utf-8") as f:
        m = re.search(r'^__version__ = "([^"]+)"$', f.read(), re.M)
    if not m:
        raise RuntimeError("ordlock.py has no __version__")
    return m.group(1)


def _metadata(version):
    lines = ["Metadata-Version: 2.1", "Name: " + NAME, "Version: " + version,
             "Summary: " + SUMMARY, "License: " + LICENSE,
             "Requires-Python: " + REQUIRES_PYTHON]
    lines += ["Classifier: " + c for c in CLASSIFIERS]
    lines += ["Description-Content-Type: text/plain", "",
              "See the ordlock README and the docstrings of the ordlock module.", ""]
    return "\n".join(lines)


def _dist_info(version):
    return "%s-%s.dist-info" % (NAME, version)


def _zip_add(zf, records, name, data):
    info = zipfile.ZipInfo(name, time.gmtime(max(EPOCH, 315532800))[:6])
    info.external_attr = 0o644 << 16
    info.compress_type = zipfile.ZIP_DEFLATED
    zf.writestr(info, data)
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=")
    records.append("%s,sha256=%s,%d" % (name, digest.decode(), len(data)))


def _wheel(wheel_directory, files):
    """Write the wheel of @files ({archive name: bytes}); its file name"""
    version = _version()
    dist = _dist_info(version)
    fname = "%s-%s-py3-none-any.whl" % (NAME, version)
    records = []
    with zipfile.ZipFile(os.path.join(wheel_directory, fname), "w") as zf:
        for name in sorted(files):
            _zip_add(zf, records, name, files[name])
        _zip_add(zf, records, dist + "/METADATA", _metadata(version).encode())
        _zip_add(zf, records, dist + "/WHEEL",
                 b"Wheel-Version: 1.0\nGenerator: ordlock_backend\n"
                 b"Root-Is-Purelib: true\nTag: py3-none-any\n")
        _zip_add(zf, records, dist + "/top_level.txt", NAME.encode() + b"\n")
        records.append(dist + "/RECORD,,")
        info = zipfile.ZipInfo(dist + "/RECORD", time.gmtime(max(EPOCH, 315532800))[:6])
        info.external_attr = 0o644 << 16
        zf.writestr(info, "\n".join(records) + "\n")
    return fname


def _read(name):
    with open(os.path.join(SRC, name), "rb") as f:
        return f.read()


# --- the hooks ----------------------------------------------------------------
def get_requires_for_build_wheel(config_settings=None):
    return []


def get_requires_for_build_sdist(config_settings=None):
    return []


def get_requires_for_build_editable(config_settings=None):
    return []


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    return _wheel(wheel_directory, {
        NAME + "/__init__.py": _read("ordlock.py"),
        NAME + "/py.typed": _read("py.typed"),
    })


def build_editable(wheel_directory, config_settings=None, metadata_directory=None):
    # the source directory on sys.path: "import ordlock" finds ordlock.py
    return _wheel(wheel_directory, {
        "__editable__.%s.pth" % NAME: (SRC + "\n").encode(),
    })


def build_sdist(sdist_directory, config_settings=None):
    version = _version()
    base = "%s-%s" % (NAME, version)
    fname = base + ".tar.gz"
    entries = [("PKG-INFO", _metadata(version).encode())]
    entries += [(name, _read(name)) for name in SDIST_FILES]
    with tarfile.open(os.path.join(sdist_directory, fname), "w:gz",
                      format=tarfile.PAX_FORMAT) as tf:
        for name, data in entries:
            info = tarfile.TarInfo(base + "/" + name)
            info.size = len(data)
            info.mtime = EPOCH
            info.mode = 0o644
            tf.addfile(info, io.BytesIO(data))
    return fname
