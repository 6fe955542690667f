# rye:signed:2026-11-25T04:07:44Z:75b48e4d2ba28724beea098933ad233ce0b6613114615c7f76bd0e3c176fea64:EMSKwjiCSFCDyL9nzp4aK6KDl-UCuNpJ9WSa-xBPh6WgVHfrMVUYYTYef1tfYFaBYJT94wECBE6mK-XH8dNJCg==:007af625371e6e71
"""Runs a function-style Python tool: a file that defines execute(params, project_path).

    python function_worker.py <tool_path> <project_path>

One-shot (the default): reads the params JSON on stdin, prints the result as JSON and exits; what
the tool prints goes to stderr. Warm (RYE_WORKER_PROTOCOL=1, lillux runWarm documents the
protocol): imports the tool once, then answers one request per stdin line with one JSON line on
fd 3 (stdout is only a log). Each call runs in a child forked from this warm process, in its own
process group, so it starts with the module already imported and leaves nothing behind for the
next call: module state, globals and open files a call changes die with its child, and whatever
it started is killed when it ends.
"""
import sys

# Only verified files and the interpreter's own: not the working directory (an unsigned json.py
# in the project would shadow the standard library), not this script's folder.
_here = __file__.rsplit("/", 1)[0] if "/" in __file__ else ""
sys.path[:] = [p for p in sys.path if p not in ("", ".", _here)]

import asyncio  # noqa: E402
import importlib.util  # noqa: E402
import inspect  # noqa: E402
import json  # noqa: E402
import os  # noqa: E402
import select  # noqa: E402
import selectors  # noqa: E402
import signal  # noqa: E402
import time  # noqa: E402
import traceback  # noqa: E402

TOOL, PROJECT = sys.argv[1], sys.argv[2]
sys.path.insert(0, os.path.dirname(TOOL))


def load_tool():
    spec = importlib.util.spec_from_file_location("rye_tool", TOOL)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def call_tool(module, raw):
    params = json.loads(raw) if raw.strip() else {}
    result = module.execute(params, PROJECT)
    if inspect.isawaitable(result):

        async def _await(awaitable):
            return await awaitable

        result = asyncio.run(_await(result))
    return json.dumps({} if result is None else result, default=str)


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


def reap(pid, grace=0.1):
    """The exit status of a call's child, killing it if it is still running after `grace` seconds."""
    deadline = time.monotonic() + grace
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return status
        if time.monotonic() >= deadline:
            kill_group(pid)
            return os.waitpid(pid, 0)[1]
        time.sleep(0.001)


def kill_group(pgid):
    try:
        os.killpg(pgid, signal.SIGKILL)
    except OSError:
        pass


class Call:
    def __init__(self, request):
        self.id = request.get("id")
        cap = request.get("max_output_bytes")
        self.cap = cap if isinstance(cap, int) and cap > 0 else None
        self.progress = bool(request.get("progress"))
        self.result = bytearray()
        self.output = bytearray()
        self.totals = {"stdout": 0, "stderr": 0}
        self.pid = None
        self.output_fd = None

    def keep(self, buffer, stream, chunk):
        self.totals[stream] += len(chunk)
        room = len(chunk) if self.cap is None else max(0, self.cap - len(buffer))
        buffer.extend(chunk[:room])


class Worker:
    def __init__(self):
        # Answers go on fd 3, which only this process writes; fd 1 and 2 are a log.
        self.channel = os.fdopen(3, "wb", buffering=0)
        self.selector = selectors.DefaultSelector()
        self.pending = b""
        self.calls = {}
        try:
            self.module = load_tool()
            self.load_error = None
            if getattr(self.module, "execute", None) is None:
                self.load_error = "No execute() in %s\n" % TOOL
        except BaseException:
            self.module = None
            self.load_error = traceback.format_exc()

    def send(self, message):
        self.channel.write((json.dumps(message) + "\n").encode("utf-8"))

    def answer(self, call, stdout, stderr, exit_code):
        message = {"id": call.id, "stdout": stdout, "stderr": stderr, "exit_code": exit_code}
        truncated = {s: n for s, n in call.totals.items() if call.cap is not None and n > call.cap}
        if truncated:
            message["truncated"] = truncated
        self.send(message)

    def start(self, request):
        call = Call(request)
        if self.load_error is not None:
            self.answer(call, "", self.load_error, 1)
            return
        raw = request.get("input") or ""
        result_r, result_w = os.pipe()
        output_r, output_w = os.pipe()
        sys.stderr.flush()
        pid = os.fork()
        if pid == 0:
            self.run_child(raw, result_r, result_w, output_r, output_w)
        os.close(result_w)
        os.close(output_w)
        call.pid = pid
        call.output_fd = output_r
        self.calls[pid] = call
        self.selector.register(result_r, selectors.EVENT_READ, (pid, "stdout"))
        self.selector.register(output_r, selectors.EVENT_READ, (pid, "stderr"))

    def run_child(self, raw, result_r, result_w, output_r, output_w):
        code = 1
        try:
            signal.signal(signal.SIGTERM, signal.SIG_DFL)
            # Its own process group: whatever the call starts is killed when the call ends.
            os.setpgid(0, 0)
            self.selector.close()
            null = os.open(os.devnull, os.O_RDONLY)
            os.dup2(null, 0)
            os.dup2(output_w, 1)
            os.dup2(output_w, 2)
            # The result pipe becomes fd 3 (the protocol fd is gone from this child), and every
            # other descriptor is closed: no call can read another call's pipes.
            os.dup2(result_w, 3)
            os.closerange(4, max_fd())
            text = call_tool(self.module, raw)
            data = text.encode("utf-8")
            view = memoryview(data)
            while view:
                view = view[os.write(3, view):]
            code = 0
        except SystemExit as exit:
            code = exit.code if isinstance(exit.code, int) else 1
        except BaseException:
            traceback.print_exc()
            code = 1
        finally:
            try:
                sys.stdout.flush()
                sys.stderr.flush()
            finally:
                os._exit(code)

    def read(self, fd, pid, stream):
        call = self.calls.get(pid)
        if call is None or (stream == "stderr" and call.output_fd != fd):
            return  # an event of this select() batch for a call that has just been answered
        chunk = os.read(fd, 65536)
        if chunk:
            self.keep(call, stream, chunk)
            return
        self.selector.unregister(fd)
        os.close(fd)
        if stream == "stderr":
            call.output_fd = None
            return
        # The result pipe closed: the call's child is ending (a program it started does not hold
        # fd 3). Reap it — a child that closed fd 3 and carried on gets a moment, then is killed,
        # so it cannot stall this loop — kill whatever it left running, take the rest of its log.
        status = reap(pid)
        kill_group(pid)
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
        del self.calls[pid]
        exit_code = os.waitstatus_to_exitcode(status)
        exit_code = exit_code if exit_code >= 0 else -1
        stdout = call.result.decode("utf-8", "replace")
        stderr = call.output.decode("utf-8", "replace")
        self.answer(call, stdout, stderr, exit_code)

    def keep(self, call, stream, chunk):
        if stream == "stdout":
            call.keep(call.result, "stdout", chunk)
            return
        call.keep(call.output, "stderr", chunk)
        if call.progress:
            self.send({"id": call.id, "stream": "stderr", "chunk": chunk.decode("utf-8", "replace")})

    def read_requests(self):
        chunk = os.read(0, 65536)
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
        self.selector.register(0, selectors.EVENT_READ, None)
        try:
            while True:
                for key, _ in self.selector.select():
                    if key.data is None:
                        if not self.read_requests():
                            return
                    else:
                        self.read(key.fd, *key.data)
        finally:
            # The host is gone (or retired this worker): no call, nor anything it started,
            # outlives it.
            for pid in list(self.calls):
                kill_group(pid)
            kill_group(os.getpgrp())


if os.environ.get("RYE_WORKER_PROTOCOL") != "1":
    one_shot()
elif not hasattr(os, "fork"):
    sys.stderr.write("A warm Python worker needs fork(); set RYE_WARM_WORKERS=0 to run each call alone\n")
    sys.exit(1)
else:
    Worker().serve()
