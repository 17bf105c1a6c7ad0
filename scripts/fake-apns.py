#!/usr/bin/env python3
"""A loopback stand-in for Apple's push service (APNs), for Plaza's push tests.

    scripts/fake-apns.py DIR KEY.pem KEY_ID TEAM_ID TOPIC

serves HTTP/2 over TLS only (hypercorn with h2; ALPN h2, as api.push.apple.com), prints one
line of JSON naming its port, then serves until killed. Its certificate is DIR/cert.pem
(self-signed for 127.0.0.1 and localhost), which Plaza must be told to trust
(PLAZA_APNS_CA_FILE). Each POST /3/device/<token> is checked as APNs checks it:
  - HTTP/2, the `authorization: bearer <JWT>` provider token: ES256, signed by KEY (the public
    half of the team's .p8 key), header `kid` KEY_ID, claim `iss` TEAM_ID, `iat` under an hour old;
  - `apns-topic` TOPIC (or another bundle id given at registration), `apns-push-type` alert,
    a JSON body under 4 KB with `aps.alert`;
and answered as APNs answers: 403 InvalidProviderToken / 400 with a reason when a check fails,
410 Unregistered for tokens starting `dead`, 429 TooManyRequests the first time for tokens
starting `beef`, else 200. Every request is appended to DIR/requests.jsonl (path, headers,
body, the answer), so a test reads what arrived.
"""
import asyncio
import base64
import json
import os
import subprocess
import sys
import time

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric.utils import encode_dss_signature
from hypercorn.asyncio import serve
from hypercorn.config import Config


def b64url(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def check_token(token: str, public_key, key_id: str, team_id: str) -> str | None:
    """None when the provider token is good, else what is wrong with it."""
    try:
        header_b64, claims_b64, signature_b64 = token.split(".")
        header, claims = json.loads(b64url(header_b64)), json.loads(b64url(claims_b64))
        signature = b64url(signature_b64)
    except ValueError:
        return "not a JWT"
    if header.get("alg") != "ES256" or header.get("kid") != key_id:
        return f"header {header}"
    if claims.get("iss") != team_id:
        return f"iss {claims.get('iss')}"
    if not isinstance(claims.get("iat"), (int, float)) or not (time.time() - 3600 < claims["iat"] <= time.time() + 60):
        return f"iat {claims.get('iat')}"
    if len(signature) != 64:
        return "signature length"
    der = encode_dss_signature(int.from_bytes(signature[:32], "big"), int.from_bytes(signature[32:], "big"))
    try:
        public_key.verify(der, f"{header_b64}.{claims_b64}".encode(), ec.ECDSA(hashes.SHA256()))
    except InvalidSignature:
        return "signature"
    return None


def app_for(folder: str, public_key, key_id: str, team_id: str, topic: str):
    busy_seen: set[str] = set()
    log_path = os.path.join(folder, "requests.jsonl")

    async def app(scope, receive, send):
        if scope["type"] == "lifespan":
            while True:
                message = await receive()
                if message["type"] == "lifespan.startup":
                    await send({"type": "lifespan.startup.complete"})
                elif message["type"] == "lifespan.shutdown":
                    await send({"type": "lifespan.shutdown.complete"})
                    return
        body = b""
        while True:
            message = await receive()
            body += message.get("body", b"")
            if not message.get("more_body"):
                break
        headers = {k.decode().lower(): v.decode() for k, v in scope["headers"]}
        path = scope["path"]
        token = path.removeprefix("/3/device/")
        status, reason = 200, None
        auth = headers.get("authorization", "")
        problem = check_token(auth.removeprefix("bearer "), public_key, key_id, team_id) if auth.startswith("bearer ") else "no bearer token"
        if scope.get("http_version") != "2":
            status, reason = 400, "NotHTTP2"
        elif scope["method"] != "POST" or not path.startswith("/3/device/"):
            status, reason = 405, "MethodNotAllowed"
        elif problem:
            status, reason = 403, "InvalidProviderToken"
        elif headers.get("apns-topic") not in (topic, "com.example.other"):
            status, reason = 400, "TopicDisallowed"
        elif headers.get("apns-push-type") != "alert":
            status, reason = 400, "InvalidPushType"
        elif len(body) > 4096:
            status, reason = 413, "PayloadTooLarge"
        else:
            try:
                payload = json.loads(body)
                if not isinstance(payload.get("aps", {}).get("alert"), dict):
                    status, reason = 400, "PayloadEmpty"
            except ValueError:
                status, reason = 400, "BadPayload"
        if status == 200 and token.startswith("dead"):
            status, reason = 410, "Unregistered"
        if status == 200 and token.startswith("beef") and token not in busy_seen:
            busy_seen.add(token)
            status, reason = 429, "TooManyRequests"
        with open(log_path, "a") as log:
            log.write(json.dumps({
                "path": path, "headers": headers, "body": body.decode(errors="replace"), "status": status,
                "reason": reason, "problem": problem, "http_version": scope.get("http_version"),
            }) + "\n")
        answer = b"" if reason is None else json.dumps({"reason": reason}).encode()
        response_headers = [(b"apns-id", b"00000000-0000-0000-0000-000000000000")]
        if answer:
            response_headers.append((b"content-type", b"application/json"))
        await send({"type": "http.response.start", "status": status, "headers": response_headers})
        await send({"type": "http.response.body", "body": answer})

    return app


def main():
    folder, key_path, key_id, team_id, topic = sys.argv[1:6]
    os.makedirs(folder, exist_ok=True)
    with open(key_path, "rb") as f:
        public_key = serialization.load_pem_private_key(f.read(), password=None).public_key()
    cert, key = os.path.join(folder, "cert.pem"), os.path.join(folder, "key.pem")
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
         "-keyout", key, "-out", cert, "-days", "2", "-subj", "/CN=localhost",
         "-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1"],
        check=True, capture_output=True)
    import socket
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    config = Config()
    config.bind = [f"127.0.0.1:{port}"]
    config.certfile, config.keyfile = cert, key
    config.alpn_protocols = ["h2"]
    config.accesslog = None
    config.errorlog = os.path.join(folder, "hypercorn.log")
    loop = asyncio.new_event_loop()

    async def run():
        server = asyncio.ensure_future(serve(app_for(folder, public_key, key_id, team_id, topic), config))
        # Announce the port once it takes connections.
        for _ in range(600):
            try:
                reader, writer = await asyncio.open_connection("127.0.0.1", port)
                writer.close()
                break
            except OSError:
                await asyncio.sleep(0.05)
        print(json.dumps({"port": port}), flush=True)
        await server

    loop.run_until_complete(run())


if __name__ == "__main__":
    main()
