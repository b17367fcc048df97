"""What the differential-fuzz scripts (scripts/diff-fuzz-*.py, not in CI) share: a raw
RESP connection that returns each reply's exact bytes, and the loop that sends the same
commands to a reference server (RedisBloom) and to redbloom and compares the replies.

Each script passes a generator of commands; `run` counts the differing replies, groups
them by command and the first line of each side's reply (the "kind" of difference), prints
the groups, and deletes the key of a differing write on both servers so one refused
creation does not make every later reply of that key differ too."""

import socket
from collections import Counter


class Conn:
    def __init__(self, port, protocol=2):
        self.sock = socket.create_connection(("127.0.0.1", port))
        self.buf = b""
        if protocol == 3:
            self.call(["HELLO", "3"])

    def send(self, argv):
        out = b"*%d\r\n" % len(argv)
        for arg in argv:
            arg = arg if isinstance(arg, bytes) else str(arg).encode()
            out += b"$%d\r\n%s\r\n" % (len(arg), arg)
        self.sock.sendall(out)

    def _fill(self, pred):
        while not pred():
            data = self.sock.recv(65536)
            if not data:
                raise EOFError("the server closed the connection")
            self.buf += data

    def _line(self):
        self._fill(lambda: b"\r\n" in self.buf)
        end = self.buf.index(b"\r\n") + 2
        line, self.buf = self.buf[:end], self.buf[end:]
        return line

    def _take(self, n):
        self._fill(lambda: len(self.buf) >= n)
        data, self.buf = self.buf[:n], self.buf[n:]
        return data

    def raw(self):
        """The next reply's exact bytes."""
        line = self._line()
        kind = line[:1]
        if kind in b"+-:_#,(":
            return line
        if kind in b"$=!":
            n = int(line[1:-2])
            return line if n < 0 else line + self._take(n + 2)
        if kind in b"*~>%|":
            n = int(line[1:-2])
            count = 2 * n if kind in b"%|" else n
            return line + b"".join(self.raw() for _ in range(max(count, 0)))
        raise ValueError(line)

    def call(self, argv):
        self.send(argv)
        return self.raw()

    def call_cut_at_error(self, argv):
        """A reply whose array the server may end early with an error element (RedisBloom's
        TOPK.INCRBY with a bad increment announces the whole array, then sends the error
        and nothing more): its bytes up to and with that error, and whether it ended so."""
        self.send(argv)
        head = self._line()
        if head[:1] != b"*":
            return head, False
        got = head
        for _ in range(max(int(head[1:-2]), 0)):
            element = self.raw()
            got += element
            if element[:1] == b"-":
                return got, True
        return got, False


def first_line(reply):
    return reply.split(b"\r\n", 1)[0][:120]


def run(reference_port, redbloom_port, protocol, commands, show=3):
    """Sends each command of `commands` (argument lists; the key is argv[1]) to both
    servers; returns (commands sent, differing replies, Counter of kinds)."""
    ref, ours = Conn(reference_port, protocol), Conn(redbloom_port, protocol)
    ref.call(["FLUSHALL"])
    ours.call(["FLUSHALL"])
    sent, kinds, shown = 0, Counter(), Counter()
    for argv in commands:
        sent += 1
        a, b = ref.call(argv), ours.call(argv)
        if a == b:
            continue
        kind = (argv[0].upper(), first_line(a), first_line(b))
        kinds[kind] += 1
        if shown[kind] < show:
            shown[kind] += 1
            print("DIFF", argv[:8], a[:160], b[:160])
        if len(argv) > 1:
            ref.call(["DEL", argv[1]])
            ours.call(["DEL", argv[1]])
    return sent, sum(kinds.values()), kinds


def report(label, sent, differing, kinds):
    print(f"{label}: {sent} commands, {differing} differing replies, {len(kinds)} kinds")
    for (command, theirs, mine), count in kinds.most_common():
        print(f"  {count:6}  {command}: reference {theirs!r} / redbloom {mine!r}")
