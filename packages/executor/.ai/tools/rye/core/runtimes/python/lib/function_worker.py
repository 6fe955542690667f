# rye:signed:2026-11-28T11:07:28Z:8599b9bf6ad5c91f05f427ff96537dc7f56066edf478ae4a8d8600dcb4d8ca43:O-SvgLGwu-HYseByf6YACXqE_zqedxzxs4FH4fX1URMpggP6azXfdnbDDsezz3y0cvYvYUIrBQf2eD01SpxaDw==:007af625371e6e71
"""Runs a function-style Python tool: a file that defines execute(params, project_path).

    python function_worker.py <tool_path> <project_path> [--fork-per-call]

One-shot (the default): reads the params JSON on stdin, prints the result as JSON and exits; what
the tool prints goes to stderr. Warm (RYE_WORKER_PROTOCOL=1, lillux runWarm documents the
protocol): reads one request per line on fd 3 and answers each with one JSON line there (stdin is
/dev/null, stdout and stderr are only a log),
in one of two ways:

- shared (python/function): calls run one at a time in this interpreter, each on a fresh
  instance of the tool's module (its code compiled once), as node/function shares one worker per
  tool snapshot and project. The tool's own modules (those in its snapshot folder) are imported
  afresh by each call; the environment, working directory and sys.path are restored after it,
  and whatever processes it started are killed. Libraries it imports stay imported.
- --fork-per-call (python/function_isolated): the tool is imported once, and each call runs in a
  child forked from a zygote (a copy of this process made once the tool is imported), in its own
  process group, so it starts with the module already imported and leaves nothing behind for the
  next call: module state, globals and open files a call changes die with its child, and
  whatever it started is killed when it ends. The next call's child is forked while the worker
  is idle, and a child says how it ended before its teardown, so neither a fork nor an exit is
  on a call's path.
"""
import sys

# Only verified files and the interpreter's own: not the working directory (an unsigned json.py
# in the project would shadow the standard library), not this script's folder.
_here = __file__.rsplit("/", 1)[0] if "/" in __file__ else ""
sys.path[:] = [p for p in sys.path if p not in ("", ".", _here)]

import builtins  # noqa: E402
import fcntl  # noqa: E402
import importlib.util  # noqa: E402
import inspect  # noqa: E402
import json  # noqa: E402
import os  # noqa: E402
import resource  # noqa: E402
import select  # noqa: E402
import selectors  # noqa: E402
import signal  # noqa: E402
import socket  # noqa: E402
import time  # noqa: E402
import traceback  # noqa: E402

# Bound now: a shared call that replaces json's functions does not read or write the worker's
# requests and answers through them.
_dumps = json.dumps
_loads = json.loads

TOOL, PROJECT = sys.argv[1], sys.argv[2]
FORK_PER_CALL = "--fork-per-call" in sys.argv[3:]
sys.path.insert(0, os.path.dirname(TOOL))


def load_tool():
    spec = importlib.util.spec_from_file_location("rye_tool", TOOL)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def call_tool(module, raw):
    params = _loads(raw) if raw.strip() else {}
    result = module.execute(params, PROJECT)
    if inspect.isawaitable(result):
        # Imported only for a coroutine tool: asyncio brings threading and logging, whose fork
        # handlers cost every forked call (measured: a child ready in 6.9 ms instead of 2.3).
        import asyncio

        async def _await(awaitable):
            return await awaitable

        result = asyncio.run(_await(result))
    # No NaN or Infinity: they are not JSON, and the host could not read the answer.
    return json.dumps({} if result is None else result, default=str, allow_nan=False)


def exit_status(exit):
    """The status sys.exit(code) gives a process: an int as is (True is 1), None 0, else 1."""
    if exit.code is None:
        return 0
    return int(exit.code) if isinstance(exit.code, int) else 1


def one_shot():
    raw = sys.stdin.read()
    out, sys.stdout = sys.stdout, sys.stderr
    module = load_tool()
    if getattr(module, "execute", None) is None:
        sys.stderr.write("No execute() in %s\n" % TOOL)
        sys.exit(1)
    text = call_tool(module, raw)
    sys.stdout = out
    sys.stdout.write(text)


def max_fd():
    try:
        return int(os.sysconf("SC_OPEN_MAX"))
    except (ValueError, OSError):
        return 65536


def prctl(option, value):
    """Linux prctl(2), best effort (elsewhere, or without ctypes, nothing happens)."""
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(option, value, 0, 0, 0)
    except Exception:
        pass


PR_SET_PDEATHSIG = 1
PR_SET_DUMPABLE = 4


def kill_group(pgid):
    try:
        os.killpg(pgid, signal.SIGKILL)
    except OSError:
        pass


# The last bytes a call's child writes on its result pipe: NUL, then its exit code. JSON text
# never holds a raw NUL, so the parent knows the call ended, and how, without waiting for the
# child's exit (a process's teardown is a large part of a short call on a slow machine).
TRAILER = b"\0"


class Call:
    def __init__(self, request):
        self.id = request.get("id")
        cap = request.get("max_output_bytes")
        self.cap = cap if isinstance(cap, int) and cap > 0 else None
        self.progress = bool(request.get("progress"))
        self.result = bytearray()
        self.output = bytearray()
        self.totals = {"stdout": 0, "stderr": 0}
        self.output_fd = None
        self.tail = b""
        # Set once its child closed fd 3 without a trailer (Worker.wait_ending).
        self.deadline = None
        self.killed = False

    def take_result(self, chunk):
        """Keeps the result (capped) and the stream's last bytes, where a trailer would be."""
        self.keep(self.result, "stdout", chunk)
        self.tail = (self.tail + chunk)[-32:]

    def end_result(self):
        """The exit code from the trailer (None without one); the result loses its trailer."""
        _, marker, code = self.tail.rpartition(TRAILER)
        if not marker or not code.lstrip(b"-").isdigit():
            return None
        self.totals["stdout"] -= 1 + len(code)
        del self.result[self.totals["stdout"]:]
        return int(code)

    def keep(self, buffer, stream, chunk):
        self.totals[stream] += len(chunk)
        room = len(chunk) if self.cap is None else max(0, self.cap - len(buffer))
        buffer.extend(chunk[:room])


class Spare:
    """A child forked ahead of its call: it waits on its own pipe for the call's input. One is
    kept: a fork's cost is mostly CPU (the child's page copies), so more would only help while a
    core sits idle, and each holds ~2 MB."""

    def __init__(self, pid, request_w, result_r, output_r):
        self.pid = pid
        self.request_w = request_w
        self.result_r = result_r
        self.output_r = output_r


def exit_code_of(status):
    code = os.waitstatus_to_exitcode(status)
    return code if code >= 0 else -1


class Answering:
    """What both warm workers say on the protocol: a call's answer (its result and log, and which
    of them were cut at the call's cap) and, when asked, its log as it is written. `send` writes
    one message."""

    def send(self, message):
        raise NotImplementedError

    def answer(self, call, exit_code, stderr=None):
        """Answers `call` with its result and its log (`stderr` instead: a tool that did not load)."""
        message = {
            "id": call.id,
            "stdout": call.result.decode("utf-8", "replace"),
            "stderr": call.output.decode("utf-8", "replace") if stderr is None else stderr,
            "exit_code": exit_code,
        }
        truncated = {s: n for s, n in call.totals.items() if call.cap is not None and n > call.cap}
        if truncated:
            message["truncated"] = truncated
        self.send(message)

    def keep(self, call, stream, chunk):
        call.keep(call.output, "stderr", chunk)
        if call.progress:
            self.send({"id": call.id, "stream": "stderr", "chunk": chunk.decode("utf-8", "replace")})


class Zygote:
    """Forks the calls' children, in a process of its own. After a fork, parent and child share
    their memory copy-on-write and the first write to a page by either copies it (~20 µs a page
    measured on a slow VM; a reference count is a write). Forked from this idle process, which
    touches almost nothing, a child's faults are its own: the process that speaks the protocol
    is never forked from again, and keeps its pages to itself."""

    def __init__(self, worker, sock):
        self.worker = worker
        self.sock = sock
        self.children = set()
        self.pid = os.getpid()

    def serve(self):
        try:
            # Nothing of the protocol stays here (fd 3, its requests and answers).
            self.worker.selector.close()
            self.worker.channel.close()
            null = os.open(os.devnull, os.O_RDONLY)
            os.dup2(null, 0)
            os.close(null)
            wake_r, wake_w = os.pipe()
            os.set_blocking(wake_w, False)
            signal.signal(signal.SIGCHLD, lambda signum, frame: None)
            signal.set_wakeup_fd(wake_w, warn_on_full_buffer=False)
            while True:
                ready, _, _ = select.select([self.sock, wake_r], [], [])
                if wake_r in ready:
                    os.read(wake_r, 4096)
                if self.sock in ready:
                    data = self.sock.recv(4096)
                    if not data:
                        return  # the worker is gone
                    for _ in range(data.count(b"f")):
                        self.fork_child()
                self.reap()
        except BaseException:
            traceback.print_exc()
        finally:
            for pid in self.children:
                kill_group(pid)
            os._exit(0)

    def fork_child(self):
        request_r, request_w = os.pipe()
        result_r, result_w = os.pipe()
        output_r, output_w = os.pipe()
        sys.stderr.flush()
        pid = os.fork()
        if pid == 0:
            # Killed with the zygote, which dies with the worker (a kill the worker could not
            # clean up after, such as SIGKILL to its group, leaves no call running).
            prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
            if os.getppid() != self.pid:
                os._exit(1)  # the zygote is already gone
            signal.set_wakeup_fd(-1)
            signal.signal(signal.SIGCHLD, signal.SIG_DFL)
            self.worker.run_child(request_r, result_w, output_w)
        self.children.add(pid)
        socket.send_fds(self.sock, [b"spare %d\n" % pid], [request_w, result_r, output_r])
        for fd in (request_r, request_w, result_r, result_w, output_r, output_w):
            os.close(fd)

    def reap(self):
        while self.children:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return
            if pid == 0:
                return
            self.children.discard(pid)
            self.sock.sendall(b"exit %d %d\n" % (pid, status))


class Worker(Answering):
    def __init__(self):
        # Requests and answers travel on fd 3, which only this process reads and writes; fd 0 is
        # /dev/null and fd 1 and 2 are a log. Not inherited: a program the tool's import starts
        # (os.system, a forked pool) must not hold the channel.
        os.set_inheritable(3, False)
        self.channel = os.fdopen(3, "wb", buffering=0)
        self.selector = selectors.DefaultSelector()
        self.pending = b""
        self.calls = {}
        self.spare = None
        self.spare_asked = False
        self.zygote = None
        self.zygote_pending = b""
        self.exits = {}
        self.ending = {}
        try:
            self.module = load_tool()
            self.load_error = None
            if getattr(self.module, "execute", None) is None:
                self.load_error = "No execute() in %s\n" % TOOL
        except BaseException:
            self.module = None
            self.load_error = traceback.format_exc()
        if self.load_error is None:
            self.start_zygote()

    def start_zygote(self):
        # Not dumpable: another process of this user (a call's child among them) cannot open this
        # worker's descriptors through /proc/<pid>/fd — its requests and answers (fd 3),
        # another call's pipes. The zygote and every child inherit it; a process still sees its
        # own /proc/self.
        prctl(PR_SET_DUMPABLE, 0)
        mine, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        sys.stderr.flush()
        pid = os.fork()
        if pid == 0:
            mine.close()
            Zygote(self, theirs).serve()  # never returns
        theirs.close()
        self.zygote = mine
        self.selector.register(mine, selectors.EVENT_READ, "zygote")
        self.ask_spare()

    def send(self, message):
        write_all(self.channel.fileno(), (json.dumps(message) + "\n").encode("utf-8"))

    def ask_spare(self):
        """Asks the zygote for the next call's child now: a call then starts without a fork."""
        if self.spare is None and not self.spare_asked:
            self.zygote.sendall(b"f")
            self.spare_asked = True

    def read_zygote(self):
        """Takes what the zygote said: a ready child (with its pipes), or a child's exit."""
        data, fds, _, _ = socket.recv_fds(self.zygote, 4096, 3)
        if not data:
            raise ZygoteGone()
        self.zygote_pending += data
        *lines, self.zygote_pending = self.zygote_pending.split(b"\n")
        for line in lines:
            word, *numbers = line.split()
            if word == b"spare" and len(fds) == 3:
                self.spare = Spare(int(numbers[0]), *fds)
                self.spare_asked = False
                fds = []
            elif word == b"exit":
                self.child_exited(int(numbers[0]), int(numbers[1]))
        for fd in fds:
            os.close(fd)

    def child_exited(self, pid, status):
        call = self.ending.pop(pid, None)
        if call is not None:
            kill_group(pid)
            self.finish(pid, call, exit_code_of(status))
        elif pid in self.calls:
            self.exits[pid] = status  # its result pipe's end is still to be read

    def start(self, request):
        call = Call(request)
        if self.load_error is not None:
            self.answer(call, 1, stderr=self.load_error)
            return
        while self.spare is None:
            self.ask_spare()
            self.read_zygote()
        spare, self.spare = self.spare, None
        # One byte ahead of the input: a child that reads nothing at all knows this process is
        # gone (its end of the pipe closed), not that the call has empty input.
        data = b"!" + (request.get("input") or "").encode("utf-8")
        try:
            write_all(spare.request_w, data)
        except OSError:
            pass  # the child died early: its pipes say so, and the call gets its exit status
        os.close(spare.request_w)
        call.output_fd = spare.output_r
        self.calls[spare.pid] = call
        self.selector.register(spare.result_r, selectors.EVENT_READ, (spare.pid, "stdout"))
        self.selector.register(spare.output_r, selectors.EVENT_READ, (spare.pid, "stderr"))

    def run_child(self, request_r, result_w, output_w):
        code = 1
        try:
            signal.signal(signal.SIGTERM, signal.SIG_DFL)
            # Its own process group: whatever the call starts is killed when the call ends.
            os.setpgid(0, 0)
            # Out of the way of the descriptors they become (any of them may be 3 or 4 here).
            request_r, result_w, output_w = (fcntl.fcntl(fd, fcntl.F_DUPFD, 10) for fd in (request_r, result_w, output_w))
            null = os.open(os.devnull, os.O_RDONLY)
            os.dup2(null, 0)
            os.dup2(output_w, 1)
            os.dup2(output_w, 2)
            # The result pipe becomes fd 3, its request pipe fd 4 until read, and every other
            # descriptor is closed: no call can read another call's pipes.
            os.dup2(result_w, 3)
            os.dup2(request_r, 4)
            os.closerange(5, max_fd())
            warm_up()
            raw = bytearray()
            while True:
                chunk = os.read(4, 65536)
                if not chunk:
                    break
                raw.extend(chunk)
            os.close(4)
            if not raw:
                os._exit(0)  # the worker is gone: there is no call to run
            text = call_tool(self.module, raw[1:].decode("utf-8"))
            write_all(3, text.encode("utf-8"))
            code = 0
        except SystemExit as exit:
            code = exit_status(exit)
        except BaseException:
            traceback.print_exc()
            code = 1
        finally:
            try:
                sys.stdout.flush()
                sys.stderr.flush()
                # Its log is complete and its answer is written: both pipes are closed now, so
                # the parent answers before this process's teardown (slow where page faults are).
                null = os.open(os.devnull, os.O_WRONLY)
                os.dup2(null, 1)
                os.dup2(null, 2)
                write_all(3, TRAILER + str(code).encode("ascii"))
                os.close(3)
            finally:
                os._exit(code)

    def read(self, fd, pid, stream):
        call = self.calls.get(pid)
        if call is None or (stream == "stderr" and call.output_fd != fd):
            return  # an event of this select() batch for a call that has just been answered
        chunk = os.read(fd, 65536)
        if chunk:
            if stream == "stdout":
                call.take_result(chunk)
            else:
                self.keep(call, stream, chunk)
            return
        self.selector.unregister(fd)
        os.close(fd)
        if stream == "stderr":
            call.output_fd = None
            return
        # The result pipe closed: the call's child has ended or is ending (a program it started
        # does not hold fd 3). A child that wrote its trailer is done: its exit code is in it,
        # and what it started is killed now. One that closed fd 3 without it is answered with
        # its exit status; if it carries on, it gets a moment, then is killed (wait_ending).
        exit_code = call.end_result()
        if exit_code is None:
            status = self.exits.pop(pid, None)
            if status is None:
                call.deadline = time.monotonic() + 0.1
                self.ending[pid] = call
                return
            exit_code = exit_code_of(status)
        kill_group(pid)
        self.finish(pid, call, exit_code)

    def finish(self, pid, call, exit_code):
        self.exits.pop(pid, None)
        if call.output_fd is not None:
            self.selector.unregister(call.output_fd)
            # One that left the group could hold the pipe open: wait for it a second at most.
            deadline = time.monotonic() + 1.0
            while True:
                ready, _, _ = select.select([call.output_fd], [], [], max(0.0, deadline - time.monotonic()))
                rest = os.read(call.output_fd, 65536) if ready else b""
                if not rest:
                    break
                self.keep(call, "stderr", rest)
            os.close(call.output_fd)
            call.output_fd = None
        del self.calls[pid]
        self.answer(call, exit_code)

    def wait_ending(self):
        """Children that closed their result pipe without a trailer: killed after their moment,
        and answered once their exit is known (or, should it never be told, a while later)."""
        now = time.monotonic()
        for pid, call in list(self.ending.items()):
            if now < call.deadline:
                continue
            if not call.killed:
                kill_group(pid)
                call.killed = True
                call.deadline = now + 2.0
            else:
                del self.ending[pid]
                self.finish(pid, call, -1)

    def next_deadline(self):
        if not self.ending:
            return None
        return max(0.0, min(call.deadline for call in self.ending.values()) - time.monotonic())

    def read_requests(self):
        try:
            chunk = os.read(3, 65536)
        except OSError:
            chunk = b""  # ECONNRESET: the host closed its end with answers unread; it is gone
        if not chunk:
            return False
        self.pending += chunk
        *lines, self.pending = self.pending.split(b"\n")
        for line in lines:
            if not line.strip():
                continue
            try:
                request = json.loads(line)
            except ValueError:
                continue
            if isinstance(request, dict):
                self.start(request)
        return True

    def serve(self):
        self.selector.register(3, selectors.EVENT_READ, None)
        try:
            while True:
                for key, _ in self.selector.select(self.next_deadline()):
                    if key.data is None:
                        if not self.read_requests():
                            return
                    elif key.data == "zygote":
                        self.read_zygote()
                    else:
                        self.read(key.fd, *key.data)
                self.wait_ending()
                # The next call's child is forked once no call is running: a fork beside a
                # running call takes the CPU it needs (measured: 3-4 ms later answers).
                if not self.calls and self.zygote is not None:
                    self.ask_spare()
        except ZygoteGone:
            sys.stderr.write("The worker's zygote ended; the worker stops\n")
        finally:
            # The host is gone (or retired this worker): no call, nor anything it started,
            # outlives it; the waiting spare and the zygote go too.
            if self.spare is not None:
                kill_group(self.spare.pid)
            for pid in list(self.calls):
                kill_group(pid)
            kill_group(os.getpgrp())


class ZygoteGone(Exception):
    pass


class CallOutput:
    """sys.stdout and sys.stderr while a shared call runs: its log, capped, streamed on request."""

    encoding = "utf-8"
    errors = "replace"

    def __init__(self, worker, call):
        self.worker = worker
        self.call = call

    def write(self, text):
        if not isinstance(text, str):
            raise TypeError("write() argument must be str, not %s" % type(text).__name__)
        if text:
            self.worker.keep(self.call, "stderr", text.encode("utf-8", "replace"))
        return len(text)

    def writelines(self, lines):
        for line in lines:
            self.write(line)

    def flush(self):
        pass

    def isatty(self):
        return False

    def writable(self):
        return True

    def fileno(self):
        raise OSError("a tool's log has no file descriptor; print to it instead")


class SharedWorker(Answering):
    """Runs calls one at a time in this interpreter, each on a fresh module instance (see the
    module docstring). The host sends one call at a time (max_concurrency 1), and queues the rest."""

    def __init__(self):
        # Requests and answers move to a private copy of fd 3, which is closed: a tool that reads
        # or writes fd 3 (or dup2s over it) does not reach the protocol by accident. On purpose it
        # still can (it runs in this process): SECURITY.md says so. Its stdin is /dev/null.
        self.requests = fcntl.fcntl(3, fcntl.F_DUPFD_CLOEXEC, 10)
        self.answers = self.requests
        os.close(3)
        self.pid = os.getpid()
        self.pending = b""
        # The tool's own folders: its own and its anchor's (PYTHONPATH), whose modules are the
        # tool's code and are imported afresh by every call.
        folders = [os.path.dirname(TOOL)] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
        self.folders = tuple(os.path.join(os.path.realpath(folder), "") for folder in folders)
        prctl(PR_SET_CHILD_SUBREAPER, 1)
        # Not dumpable: another process of this user cannot open this worker's descriptors
        # through /proc/<pid>/fd (its requests, its answers). A tool runs in here, so it can.
        prctl(PR_SET_DUMPABLE, 0)
        self.code = None
        self.load_error = None
        before = set(sys.modules)
        try:
            with open(TOOL, "rb") as source:
                self.code = compile(source.read(), TOOL, "exec")
            # Run once now: imports the libraries the tool uses (they stay imported), and says at
            # once when there is no execute().
            if getattr(self.fresh_module(), "execute", None) is None:
                self.load_error = "No execute() in %s\n" % TOOL
        except BaseException:
            self.load_error = traceback.format_exc()
        self.forget_own_modules(before)

    def fresh_module(self):
        module = type(sys)("rye_tool")
        module.__file__ = TOOL
        exec(self.code, module.__dict__)
        return module

    def forget_own_modules(self, before):
        """Drops the modules a call imported that are the tool's own (or have no file, so may be
        made up), so the next call imports them afresh; libraries stay."""
        for name, module in list(sys.modules.items()):
            if name in before:
                continue
            path = getattr(module, "__file__", None)
            if not isinstance(path, str) or os.path.realpath(path).startswith(self.folders):
                del sys.modules[name]

    def send(self, message):
        write_all(self.answers, (_dumps(message) + "\n").encode("utf-8"))

    def run(self, request):
        """Runs one call; False when this process could not be put back as it was (it retires)."""
        call = Call(request)
        if self.load_error is not None:
            self.answer(call, 1, stderr=self.load_error)
            return True
        state = CallState()
        streams = sys.stdout, sys.stderr
        sys.stdout = sys.stderr = CallOutput(self, call)
        code = 1
        try:
            text = call_tool(self.fresh_module(), request.get("input") or "")
            call.take_result(text.encode("utf-8"))
            code = 0
        except SystemExit as exit:
            code = exit_status(exit)
        except BaseException:
            traceback.print_exc()
            code = 1
        finally:
            if os.getpid() != self.pid:
                os._exit(0)  # a copy the call forked (without exec) came back here: not its to answer
            sys.stdout, sys.stderr = streams
            restored = state.restore()
            self.forget_own_modules(state.modules)
            kill_descendants()
        self.answer(call, code)
        return restored

    def serve(self):
        try:
            while True:
                try:
                    chunk = os.read(self.requests, 65536)
                except OSError:
                    chunk = b""  # ECONNRESET: the host closed its end with answers unread; it is gone
                if not chunk:
                    return
                self.pending += chunk
                *lines, self.pending = self.pending.split(b"\n")
                for line in lines:
                    try:
                        request = _loads(line) if line.strip() else None
                    except ValueError:
                        request = None
                    if isinstance(request, dict) and not self.run(request):
                        sys.stderr.write("A call changed what cannot be put back; the worker retires\n")
                        return
        finally:
            kill_descendants()


RLIMITS = [
    getattr(resource, name)
    for name in ("RLIMIT_NOFILE", "RLIMIT_NPROC", "RLIMIT_FSIZE", "RLIMIT_CPU", "RLIMIT_AS", "RLIMIT_DATA",
                 "RLIMIT_STACK", "RLIMIT_CORE")
    if hasattr(resource, name)
]
SIGNALS = [sig for sig in signal.valid_signals() if sig not in (signal.SIGKILL, signal.SIGSTOP)]


class CallState:
    """What a shared call may change in this process, taken before the call and put back after
    it: the environment, working directory, import system, builtins, hooks, umask, signal
    handlers and resource limits."""

    def __init__(self):
        self.environ = dict(os.environ)
        self.cwd = os.getcwd()
        self.path = list(sys.path)
        self.meta_path = list(sys.meta_path)
        self.path_hooks = list(sys.path_hooks)
        self.modules = set(sys.modules)
        self.builtins = dict(builtins.__dict__)
        self.recursion = sys.getrecursionlimit()
        self.hooks = (sys.gettrace(), sys.getprofile(), sys.excepthook, sys.unraisablehook)
        self.umask = os.umask(0o022)
        os.umask(self.umask)
        self.signals = {sig: signal.getsignal(sig) for sig in SIGNALS}
        self.limits = {limit: resource.getrlimit(limit) for limit in RLIMITS}

    def restore(self):
        """Puts it all back; False when a resource limit could not be (a lowered hard limit)."""
        restore_environ(self.environ)
        try:
            os.chdir(self.cwd)
        except OSError:
            pass
        sys.path[:] = self.path
        sys.meta_path[:] = self.meta_path
        sys.path_hooks[:] = self.path_hooks
        namespace = builtins.__dict__
        for name in [name for name in namespace if name not in self.builtins]:
            del namespace[name]
        for name, value in self.builtins.items():
            if namespace.get(name) is not value:
                namespace[name] = value
        sys.setrecursionlimit(self.recursion)
        trace, profile, sys.excepthook, sys.unraisablehook = self.hooks
        sys.settrace(trace)
        sys.setprofile(profile)
        os.umask(self.umask)
        for sig, handler in self.signals.items():
            if handler is not None and signal.getsignal(sig) is not handler:
                try:
                    signal.signal(sig, handler)
                except (OSError, ValueError):
                    pass
        restored = True
        for limit, value in self.limits.items():
            if resource.getrlimit(limit) != value:
                try:
                    resource.setrlimit(limit, value)
                except (OSError, ValueError):
                    restored = False
        return restored


def restore_environ(saved):
    for name in [name for name in os.environ if name not in saved]:
        del os.environ[name]
    for name, value in saved.items():
        if os.environ.get(name) != value:
            os.environ[name] = value


PR_SET_CHILD_SUBREAPER = 36


def child_pids(pid):
    """The children of `pid`, from /proc/<pid>/task/*/children (Linux); [] where it is absent."""
    found = []
    try:
        tasks = os.listdir("/proc/%d/task" % pid)
    except OSError:
        return found
    for task in tasks:
        try:
            with open("/proc/%d/task/%s/children" % (pid, task), "rb") as children:
                found.extend(int(word) for word in children.read().split())
        except (OSError, ValueError):
            pass
    return found


def kill_descendants():
    """SIGKILL to every process this one started that is still running, and theirs. This
    process is their subreaper, so one whose parent has exited is still found here. A shared
    call's programs end with it, as a forked call's process group does."""
    found, queue = [], child_pids(os.getpid())
    while queue:
        pid = queue.pop()
        found.append(pid)
        queue.extend(child_pids(pid))
    for pid in found:
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


def warm_up():
    """Runs a call's own steps once on sample data while the child waits for its call. A forked
    child pays a copy-on-write fault for each page it first writes, and a reference count is a
    write: taken here, off the call's path, they are not taken during the call."""
    json.dumps(json.loads('{"a": [1, 2.5, "x", true, null, {"b": {}}]}'), default=str)
    inspect.isawaitable(None)
    sys.stdout.flush()
    sys.stderr.flush()


def write_all(fd, data):
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


if os.environ.get("RYE_WORKER_PROTOCOL") != "1":
    one_shot()
elif not FORK_PER_CALL:
    SharedWorker().serve()
elif not hasattr(os, "fork"):
    sys.stderr.write("A forking Python worker needs fork(); set RYE_WARM_WORKERS=0 to run each call alone\n")
    sys.exit(1)
else:
    Worker().serve()
