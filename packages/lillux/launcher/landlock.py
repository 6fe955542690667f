"""Runs a command confined by Linux Landlock to the folders a spec names.

Usage: python3 -I -S landlock.py '<spec JSON>' -- <command> [args...]
       python3 -I -S landlock.py --supervise '<spec JSON>' -- <command> [args...]
       python3 -I -S landlock.py --remove '<spec JSON>' <folder>

The spec is {"read": [paths], "write": [paths], "best_effort": bool}. Everything under a "read"
path may be read and executed; everything under a "write" path may also be written, created,
removed and renamed; nothing else on the filesystem is reachable. From Landlock ABI 6 the command
also cannot signal, or connect to an abstract unix socket of, a process outside its own domain;
from ABI 1 it cannot ptrace one, so it cannot read another process's /proc/<pid>/environ or mem,
or take its descriptors with pidfd_getfd. The restriction is inherited by every descendant and
can never be lifted. Only ctypes and the standard library: nothing to build or install.

--supervise stays as the command's confined parent and a child subreaper: a descendant that
detaches (setsid, double fork) is reparented to it, and when the command exits, or the supervisor
gets SIGTERM or SIGINT (or its own parent dies), every descendant left is killed and reaped before
it exits with the command's status. With "clean": <folder> in the spec, that folder's content is
then removed (no process of the run is left to race the removal). --remove confines itself to
write the folder only and removes it without ever following a link, at any depth.

Exit codes when the command never runs: 125 confinement unavailable or refused, 126 bad spec or
command not executable, 127 command not found.
"""

import ctypes
import json
import os
import signal
import sys
import time

# os.execvp imports it on first use, which a confined process may no longer be able to read.
import warnings  # noqa: F401

# Syscall numbers: asm-generic numbering, the same on x86_64 and aarch64 (and every arch since
# Landlock landed in 5.13), which is why no per-arch table is needed.
SYS_LANDLOCK_CREATE_RULESET = 444
SYS_LANDLOCK_ADD_RULE = 445
SYS_LANDLOCK_RESTRICT_SELF = 446

LANDLOCK_CREATE_RULESET_VERSION = 1 << 0
LANDLOCK_RULE_PATH_BENEATH = 1
PR_SET_NO_NEW_PRIVS = 38
PR_CAPBSET_DROP = 24
PR_CAP_AMBIENT = 47
PR_CAP_AMBIENT_CLEAR_ALL = 4
LINUX_CAPABILITY_VERSION_3 = 0x20080522

# Filesystem access rights (include/uapi/linux/landlock.h), by the ABI that introduced them.
ACCESS_FS_EXECUTE = 1 << 0
ACCESS_FS_WRITE_FILE = 1 << 1
ACCESS_FS_READ_FILE = 1 << 2
ACCESS_FS_READ_DIR = 1 << 3
ACCESS_FS_ABI1 = (1 << 13) - 1  # EXECUTE .. MAKE_SYM
ACCESS_FS_REFER = 1 << 13  # ABI 2
ACCESS_FS_TRUNCATE = 1 << 14  # ABI 3
ACCESS_FS_IOCTL_DEV = 1 << 15  # ABI 5
# The rights a rule on a file (not a folder) may carry: the kernel refuses a directory right there.
ACCESS_FILE = ACCESS_FS_EXECUTE | ACCESS_FS_WRITE_FILE | ACCESS_FS_READ_FILE | ACCESS_FS_TRUNCATE | ACCESS_FS_IOCTL_DEV

SCOPE_ABSTRACT_UNIX_SOCKET = 1 << 0  # ABI 6
SCOPE_SIGNAL = 1 << 1  # ABI 6


class RulesetAttr(ctypes.Structure):
    # struct landlock_ruleset_attr: three __u64; the size passed tells the kernel how many we fill
    # (8 before ABI 4, 16 with handled_access_net, 24 with scoped).
    _fields_ = [
        ("handled_access_fs", ctypes.c_uint64),
        ("handled_access_net", ctypes.c_uint64),
        ("scoped", ctypes.c_uint64),
    ]


class PathBeneathAttr(ctypes.Structure):
    # struct landlock_path_beneath_attr is __attribute__((packed)): 12 bytes, no padding.
    _pack_ = 1
    _fields_ = [("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32)]


def fail(code, message):
    sys.stderr.write("ryeos confine: " + message + "\n")
    sys.stderr.flush()
    os._exit(code)


def libc_syscall():
    libc = ctypes.CDLL(None, use_errno=True)
    # prctl's arguments after the first are unsigned long: typed, so no upper half is left
    # undefined (PR_SET_NO_NEW_PRIVS refuses non-zero unused arguments).
    libc.prctl.argtypes = [ctypes.c_int, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong]
    call = libc.syscall
    call.restype = ctypes.c_long
    return libc, call


class CapHeader(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]


class CapData(ctypes.Structure):
    _fields_ = [("effective", ctypes.c_uint32), ("permitted", ctypes.c_uint32), ("inheritable", ctypes.c_uint32)]


def drop_capabilities(libc):
    # A process with CAP_SYS_PTRACE (a server run as root) may still read another domain's
    # /proc/<pid>/environ; a tool never needs a capability, so it keeps none, now or after exec.
    for cap in range(64):
        libc.prctl(PR_CAPBSET_DROP, cap, 0, 0, 0)  # EINVAL past the last cap, EPERM without CAP_SETPCAP
    libc.prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0)
    data = (CapData * 2)()
    if libc.capset(ctypes.byref(CapHeader(LINUX_CAPABILITY_VERSION_3, 0)), data) != 0:
        fail(125, "capset failed: " + os.strerror(ctypes.get_errno()))


def handled_fs(abi):
    rights = ACCESS_FS_ABI1
    if abi >= 2:
        rights |= ACCESS_FS_REFER
    if abi >= 3:
        rights |= ACCESS_FS_TRUNCATE
    if abi >= 5:
        rights |= ACCESS_FS_IOCTL_DEV
    return rights


def landlock_abi(syscall):
    if not sys.platform.startswith("linux"):
        return 0, "Landlock is a Linux feature (this is " + sys.platform + ")"
    abi = syscall(ctypes.c_long(SYS_LANDLOCK_CREATE_RULESET), None, ctypes.c_size_t(0),
                  ctypes.c_uint32(LANDLOCK_CREATE_RULESET_VERSION))
    if abi < 0:
        err = ctypes.get_errno()
        why = {38: "the kernel is older than 5.13", 95: "Landlock is not enabled (lsm= boot parameter)"}
        return 0, "Landlock is unavailable: " + why.get(err, os.strerror(err))
    return abi, ""


def add_rule(syscall, ruleset_fd, path, access, handled):
    try:
        fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
    except OSError:
        # Missing (e.g. /lib64 on aarch64) or closed to this account: nothing there to allow.
        return
    try:
        if not os.path.isdir(path):
            access &= ACCESS_FILE
        rule = PathBeneathAttr(access & handled, fd)
        if syscall(ctypes.c_long(SYS_LANDLOCK_ADD_RULE), ctypes.c_int(ruleset_fd),
                   ctypes.c_int(LANDLOCK_RULE_PATH_BENEATH), ctypes.byref(rule), ctypes.c_uint32(0)) < 0:
            fail(125, "cannot allow " + path + ": " + os.strerror(ctypes.get_errno()))
    finally:
        os.close(fd)


def confine(spec):
    libc, syscall = libc_syscall()
    abi, why = landlock_abi(syscall)
    if abi <= 0:
        if spec.get("best_effort") is True:
            return
        fail(125, why + "; refusing to run the command unconfined")
    # Without it restrict_self is refused to an unprivileged process; it also keeps a setuid
    # program from gaining rights the domain denies.
    if libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
        fail(125, "prctl(PR_SET_NO_NEW_PRIVS) failed: " + os.strerror(ctypes.get_errno()))
    drop_capabilities(libc)
    handled = handled_fs(abi)
    attr = RulesetAttr(handled, 0, 0)
    size = 8
    if abi >= 6:
        attr.scoped = SCOPE_ABSTRACT_UNIX_SOCKET | SCOPE_SIGNAL
        size = 24
    ruleset_fd = syscall(ctypes.c_long(SYS_LANDLOCK_CREATE_RULESET), ctypes.byref(attr),
                         ctypes.c_size_t(size), ctypes.c_uint32(0))
    if ruleset_fd < 0:
        fail(125, "landlock_create_ruleset failed: " + os.strerror(ctypes.get_errno()))
    read = ACCESS_FS_EXECUTE | ACCESS_FS_READ_FILE | ACCESS_FS_READ_DIR
    for path in spec.get("read", []):
        add_rule(syscall, ruleset_fd, path, read, handled)
    for path in spec.get("write", []):
        add_rule(syscall, ruleset_fd, path, handled, handled)
    if syscall(ctypes.c_long(SYS_LANDLOCK_RESTRICT_SELF), ctypes.c_int(ruleset_fd), ctypes.c_uint32(0)) < 0:
        fail(125, "landlock_restrict_self failed: " + os.strerror(ctypes.get_errno()))
    os.close(ruleset_fd)


PR_SET_PDEATHSIG = 1
PR_SET_CHILD_SUBREAPER = 36


def process_table():
    """pid -> (ppid, state) of every process visible in /proc."""
    table = {}
    try:
        names = os.listdir("/proc")
    except OSError:
        return table
    for name in names:
        if not name.isdigit():
            continue
        try:
            with open("/proc/" + name + "/stat", "rb") as f:
                stat = f.read()
        except OSError:
            continue
        fields = stat[stat.rfind(b")") + 2:].split()
        table[int(name)] = (int(fields[1]), fields[0])
    return table


def descendants(root):
    table = process_table()
    children = {}
    for pid, (ppid, state) in table.items():
        children.setdefault(ppid, []).append((pid, state))
    found, stack = [], [root]
    while stack:
        for pid, state in children.get(stack.pop(), []):
            found.append((pid, state))
            stack.append(pid)
    return found


def reap_all():
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


def kill_all():
    # A killed process's children are reparented to this subreaper, so each pass finds what the
    # last one missed; it ends when nothing below is left, not even a zombie.
    me = os.getpid()
    while True:
        left = descendants(me)
        if not left:
            reap_all()
            return
        for pid, state in left:
            if state != b"Z":
                try:
                    os.kill(pid, 9)
                except OSError:
                    pass
        reap_all()
        time.sleep(0.002)


def remove_content(root, keep_root):
    """Removes what is under root (and root unless keep_root), never following a link.

    One directory descriptor open at a time, names kept on a list, ".." to climb back: no depth
    limit, no path longer than one name.
    """
    flags = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
    try:
        fd = os.open(root, flags)
    except OSError:
        return
    names = []
    while True:
        entered = False
        with os.scandir(fd) as entries:
            listed = list(entries)
        for entry in listed:
            if entry.is_dir(follow_symlinks=False):
                try:
                    child = os.open(entry.name, flags, dir_fd=fd)
                except OSError:
                    continue
                os.close(fd)
                fd = child
                names.append(entry.name)
                entered = True
                break
            try:
                os.unlink(entry.name, dir_fd=fd)
            except OSError:
                pass
        if entered:
            continue
        if not names:
            os.close(fd)
            break
        parent = os.open("..", flags, dir_fd=fd)
        os.close(fd)
        fd = parent
        try:
            os.rmdir(names.pop(), dir_fd=fd)
        except OSError:
            # Not empty after a pass (it could not be entered): leave it rather than loop.
            os.close(fd)
            return
    if not keep_root:
        try:
            os.rmdir(root)
        except OSError:
            pass


def supervise(spec, command, args):
    libc, _ = libc_syscall()
    libc.prctl(PR_SET_PDEATHSIG, 15, 0, 0, 0)
    if os.getppid() == 1:
        os._exit(143)
    if libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
        fail(125, "prctl(PR_SET_CHILD_SUBREAPER) failed: " + os.strerror(ctypes.get_errno()))
    # It must see /proc to find what is left of the run, whatever the spec says.
    confine(dict(spec, read=list(spec.get("read", [])) + ["/proc"]))
    clean = spec.get("clean")

    def finish(status):
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        kill_all()
        if isinstance(clean, str):
            remove_content(clean, True)
        sys.stdout.flush()
        os._exit(status)

    def stop(signum, frame):
        finish(128 + signum)

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    child = os.fork()
    if child == 0:
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        try:
            os.execvp(command, args)
        except OSError as error:
            sys.stderr.write("ryeos confine: cannot run " + command + ": " + str(error) + "\n")
            os._exit(127)
    while True:
        pid, status = os.waitpid(child, 0)
        if pid == child:
            break
    finish(os.waitstatus_to_exitcode(status) if os.WIFEXITED(status) else 128 + os.WTERMSIG(status))


def parse(argv):
    if len(argv) == 2 and argv[1] == "--abi":
        _, syscall = libc_syscall()
        abi, why = landlock_abi(syscall)
        sys.stdout.write(json.dumps({"abi": abi, "why": why}) + "\n")
        sys.stdout.flush()
        os._exit(0)
    if len(argv) < 4 or argv[2] != "--":
        fail(126, "usage: landlock.py '<spec JSON>' -- <command> [args...]")
    return parse_spec(argv[1]), argv[3], argv[3:]


def parse_spec(text):
    try:
        spec = json.loads(text)
    except ValueError as error:
        fail(126, "the spec is not JSON: " + str(error))
    paths_ok = lambda v: isinstance(v, list) and all(isinstance(p, str) and os.path.isabs(p) for p in v)
    if not isinstance(spec, dict) or not paths_ok(spec.get("read", [])) or not paths_ok(spec.get("write", [])):
        fail(126, "the spec must be an object whose read and write are lists of absolute paths")
    return spec


def main():
    if len(sys.argv) >= 5 and sys.argv[1] == "--supervise" and sys.argv[3] == "--":
        supervise(parse_spec(sys.argv[2]), sys.argv[4], sys.argv[4:])
        return
    if len(sys.argv) == 4 and sys.argv[1] == "--remove" and os.path.isabs(sys.argv[3]):
        folder = sys.argv[3]
        spec = parse_spec(sys.argv[2])
        spec["write"] = [folder]
        confine(spec)
        remove_content(folder, True)
        os._exit(0)
    spec, command, args = parse(sys.argv)
    confine(spec)
    try:
        os.execvp(command, args)
    except FileNotFoundError:
        fail(127, "command not found: " + command)
    except OSError as error:
        fail(126, "cannot run " + command + ": " + error.strerror)


if __name__ == "__main__":
    main()
