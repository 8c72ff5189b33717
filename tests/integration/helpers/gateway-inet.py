# The test "internet" for gateway.sh: an HTTP server and an HTTPS server (a
# certificate from the test's CA) that answer every request with what they
# received, so the test can see what the gateway passed on, and which
# connection it came on: "peer=" the gateway's address and port, "served="
# the requests that connection carried so far. /idle-close/ is answered
# kept alive, and the connection closed by the server a moment later (as a
# server's idle timeout does).
#   gateway-inet.py HTTP_ADDR HTTPS_ADDR CERT KEY READY_FILE
import http.server
import socketserver
import ssl
import sys
import threading
import time


class Echo(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def setup(self):
        # The handshake here, not in accept(): a tunnel the gateway holds
        # open before the ClientHello must not stall the other clients.
        if hasattr(self.request, "do_handshake"):
            self.request.do_handshake()
        super().setup()

    def read_body(self):
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            body = b""
            while True:
                size = int(self.rfile.readline().split(b";")[0], 16)
                if size == 0:
                    while self.rfile.readline() not in (b"\r\n", b""):
                        pass
                    return body
                body += self.rfile.read(size)
                self.rfile.readline()
        return self.rfile.read(int(self.headers.get("Content-Length", "0")))

    def answer(self):
        body = self.read_body()
        lines = ["method=" + self.command, "path=" + self.path]
        lines += ["header:%s=%s" % (k.lower(), v) for k, v in self.headers.items()]
        lines.append("body_bytes=%d" % len(body))
        self.served = getattr(self, "served", 0) + 1
        lines += ["peer=%s:%d" % self.client_address[:2], "served=%d" % self.served]
        out = ("\n".join(lines) + "\n").encode()
        if self.path.startswith("/big/"):
            out = b"x" * int(self.path[5:])
        if self.path.startswith("/slow/"):
            self.send_response(200)
            self.send_header("Content-Length", str(1000 * int(self.path[6:])))
            self.end_headers()
            for _ in range(int(self.path[6:])):
                self.wfile.write(b"s" * 1000)
                self.wfile.flush()
                time.sleep(0.05)
            return
        self.send_response(200)
        self.send_header("Content-Type", "text/plain")
        self.send_header("Connection", "keep-alive, X-Hop")
        self.send_header("X-Hop", "should-not-pass")
        if self.path.startswith("/chunked"):
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            for i in range(0, len(out), 7):
                piece = out[i:i + 7]
                self.wfile.write(b"%x\r\n%s\r\n" % (len(piece), piece))
            self.wfile.write(b"0\r\n\r\n")
            return
        self.send_header("Content-Length", str(len(out)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(out)
        if self.path.startswith("/idle-close/"):
            self.wfile.flush()
            time.sleep(0.2)
            self.close_connection = True

    do_GET = do_POST = do_PUT = do_HEAD = do_DELETE = answer


class Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True
    allow_reuse_address = True


def main():
    http_addr, https_addr, cert, key, ready = sys.argv[1:6]
    plain = Server((http_addr, 80), Echo)
    tls = Server((https_addr, 443), Echo)
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(cert, key)
    tls.socket = ctx.wrap_socket(tls.socket, server_side=True, do_handshake_on_connect=False)
    for s in (plain, tls):
        threading.Thread(target=s.serve_forever, daemon=True).start()
    with open(ready, "w") as f:
        f.write("ready\n")
    threading.Event().wait()


main()
