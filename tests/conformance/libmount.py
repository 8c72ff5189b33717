# The part of python3-libmount (util-linux's pylibmount) that crun's
# tests/test_mounts.py uses, over libmount1 with ctypes: Debian 12 packages
# libmount1 but no python3-libmount, and without the module test_mounts.py
# skips itself whole. scripts/conformance.sh puts this directory on
# PYTHONPATH for crun's tests; nothing else imports it.
#
# Table(path) parses a mountinfo file; Table.find_target(path) returns the
# last (topmost) entry mounted on path, as libmount's MNT_ITER_BACKWARD does,
# or None; an entry's vfs_options and fs_options are the per-mount and the
# superblock options as strings (None when empty).

import ctypes
import ctypes.util

_lib = ctypes.CDLL(ctypes.util.find_library("mount") or "libmount.so.1")

_lib.mnt_new_table_from_file.restype = ctypes.c_void_p
_lib.mnt_new_table_from_file.argtypes = [ctypes.c_char_p]
_lib.mnt_unref_table.argtypes = [ctypes.c_void_p]
_lib.mnt_table_find_target.restype = ctypes.c_void_p
_lib.mnt_table_find_target.argtypes = [ctypes.c_void_p, ctypes.c_char_p,
                                       ctypes.c_int]
for _name in ("mnt_fs_get_vfs_options", "mnt_fs_get_fs_options",
              "mnt_fs_get_target", "mnt_fs_get_source", "mnt_fs_get_fstype",
              "mnt_fs_get_options"):
    getattr(_lib, _name).restype = ctypes.c_char_p
    getattr(_lib, _name).argtypes = [ctypes.c_void_p]

_MNT_ITER_BACKWARD = 1


def _str(raw):
    return raw.decode() if raw is not None else None


class Fs:
    """One mountinfo entry; valid while its Table lives (it holds it)."""

    def __init__(self, table, fs):
        self._table = table
        self._fs = fs

    def _get(self, name):
        return _str(getattr(_lib, name)(self._fs))

    vfs_options = property(lambda self: self._get("mnt_fs_get_vfs_options"))
    fs_options = property(lambda self: self._get("mnt_fs_get_fs_options"))
    options = property(lambda self: self._get("mnt_fs_get_options"))
    target = property(lambda self: self._get("mnt_fs_get_target"))
    source = property(lambda self: self._get("mnt_fs_get_source"))
    fstype = property(lambda self: self._get("mnt_fs_get_fstype"))


class Table:
    def __init__(self, path):
        self._tb = _lib.mnt_new_table_from_file(path.encode())
        if not self._tb:
            raise OSError("libmount cannot parse %s" % path)

    def find_target(self, path):
        fs = _lib.mnt_table_find_target(self._tb, path.encode(),
                                        _MNT_ITER_BACKWARD)
        return Fs(self, fs) if fs else None

    def __del__(self):
        if getattr(self, "_tb", None):
            _lib.mnt_unref_table(self._tb)
