#!/usr/bin/env python3
"""Real SMTP servers (aiosmtpd) on loopback that keep what they receive, for Plaza's mail tests.

    scripts/smtp-sink.py DIR

starts three servers and prints one line of JSON naming their ports, then serves until killed:
  plain     no TLS, no AUTH (a local relay)
  starttls  STARTTLS required, then AUTH PLAIN or LOGIN as plaza / plaza-secret
  tls       TLS from the first byte (implicit, as on port 465), then AUTH as above
Their certificate is DIR/cert.pem (self-signed for 127.0.0.1 and localhost), which the client
must be told to trust. Every message accepted is written as DIR/mail/<n>.eml (the bytes as
received; renamed into place, so a reader never sees half of one) with DIR/mail/<n>.json ({"from", "to", "server", "auth"}) written after it.
Recipients decide the answer: anything at reject.test gets 550 (permanent), anything at
busy.test gets 451 (try again later).
"""
import asyncio
import warnings
import itertools
import json
import os
import ssl
import subprocess
import sys

from aiosmtpd.controller import Controller
from aiosmtpd.smtp import SMTP, AuthResult

warnings.filterwarnings("ignore")
USER, PASSWORD = b"plaza", b"plaza-secret"


class Sink:
    counter = itertools.count(1)

    def __init__(self, folder, name):
        self.folder, self.name = folder, name

    async def handle_RCPT(self, server, session, envelope, address, rcpt_options):
        domain = address.rsplit("@", 1)[-1].lower()
        if domain == "reject.test":
            return "550 5.1.1 No such mailbox here"
        if domain == "busy.test":
            return "451 4.3.0 Try again later"
        envelope.rcpt_tos.append(address)
        return "250 OK"

    async def handle_DATA(self, server, session, envelope):
        n = next(self.counter)
        path = os.path.join(self.folder, f"{n:05d}")
        with open(path + ".eml.tmp", "wb") as f:
            f.write(envelope.original_content or envelope.content)
        os.rename(path + ".eml.tmp", path + ".eml")
        meta = {
            "from": envelope.mail_from,
            "to": envelope.rcpt_tos,
            "server": self.name,
            "auth": session.authenticated,
        }
        with open(path + ".json.tmp", "w") as f:
            json.dump(meta, f)
        os.rename(path + ".json.tmp", path + ".json")
        return "250 Message accepted"


def authenticator(server, session, envelope, mechanism, auth_data):
    ok = getattr(auth_data, "login", None) == USER and getattr(auth_data, "password", None) == PASSWORD
    # handled=False: aiosmtpd answers a refusal with 535 itself (by default it answers nothing).
    return AuthResult(success=ok, handled=False)


class TLSController(Controller):
    """Wraps the listening socket in TLS: SMTP over TLS from the first byte."""

    def __init__(self, *args, server_context, **kwargs):
        super().__init__(*args, ssl_context=server_context, **kwargs)


def free_port():
    import socket
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def main():
    folder = sys.argv[1]
    mail = os.path.join(folder, "mail")
    os.makedirs(mail, exist_ok=True)
    cert, key = os.path.join(folder, "cert.pem"), os.path.join(folder, "key.pem")
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
         "-keyout", key, "-out", cert, "-days", "2", "-subj", "/CN=localhost",
         "-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1"],
        check=True, capture_output=True)
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(cert, key)

    controllers = {
        "plain": Controller(Sink(mail, "plain"), hostname="127.0.0.1", port=free_port()),
        "starttls": Controller(
            Sink(mail, "starttls"), hostname="127.0.0.1", port=free_port(), tls_context=context, require_starttls=True,
            auth_required=True, authenticator=authenticator),
        "tls": TLSController(
            Sink(mail, "tls"), hostname="127.0.0.1", port=free_port(), server_context=context, auth_required=True,
            auth_require_tls=False, authenticator=authenticator),
    }
    ports = {}
    for name, controller in controllers.items():
        controller.start()
        ports[name] = controller.port
    print(json.dumps(ports), flush=True)
    try:
        asyncio.new_event_loop().run_forever()
    finally:
        for controller in controllers.values():
            controller.stop()


if __name__ == "__main__":
    main()
