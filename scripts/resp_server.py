"""What the SF measuring scripts (static-figures.py, sf-encodings-compare.py) share: a plain
RESP client over a socket, a server started on loopback with the module, and a command's
server CPU from INFO commandstats."""
import os, socket, subprocess, tempfile, time


def encode(args):
    out = [b"*%d\r\n" % len(args)]
    for a in args:
        a = a if isinstance(a, bytes) else str(a).encode()
        out.append(b"$%d\r\n%s\r\n" % (len(a), a))
    return b"".join(out)


class Conn:
    def __init__(self, port):
        self.s = socket.create_connection(("127.0.0.1", port))
        self.f = self.s.makefile("rb")

    def send(self, *args):
        self.s.sendall(encode(args))

    def read(self):
        line = self.f.readline()[:-2]
        t, rest = line[:1], line[1:]
        if t == b"+": return rest.decode()
        if t == b"-": raise RuntimeError(rest.decode())
        if t == b":": return int(rest)
        if t == b"$":
            l = int(rest)
            return None if l < 0 else self.f.read(l + 2)[:-2]
        if t == b"*": return [self.read() for _ in range(int(rest))]
        raise RuntimeError(line)

    def call(self, *args):
        self.send(*args)
        return self.read()


def start(server_bin, module, base_port):
    """A server on 127.0.0.1 (port base_port + pid mod 1000) with `module` loaded, no
    persistence: (process, connection). Stop it by its process."""
    port = base_port + os.getpid() % 1000
    p = subprocess.Popen([server_bin, "--port", str(port), "--bind", "127.0.0.1", "--save", "",
                          "--dir", tempfile.mkdtemp(), "--loadmodule", module],
                         stdout=subprocess.DEVNULL)
    for _ in range(100):
        try:
            return p, Conn(port)
        except OSError:
            time.sleep(0.1)
    p.kill()
    raise RuntimeError("no server")


def usec(conn, command):
    """INFO commandstats' usec of `command` (lower case) so far."""
    for line in conn.call("INFO", "commandstats").decode().splitlines():
        if line.startswith("cmdstat_%s:" % command):
            return int(line.split("usec=")[1].split(",")[0])
    return 0
