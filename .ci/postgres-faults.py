#!/usr/bin/env python3
"""Faults under load, from outside: the dev server on PostgreSQL, reached over loopback TCP through a small
proxy, serves whole sign-in flows from several threads while the database is restarted, stopped and
started, has its backends terminated, frozen (SIGSTOP) and cut off (the proxy stops forwarding: a network
black hole).

Checks: no request ever gets a 500 or waits past the bound the configuration promises; every fault ends in
recovery (a whole flow succeeds again); nothing is left half-done in the database.

Usage (on a throwaway cluster): bash .ci/with-postgres python3 .ci/postgres-faults.py DEV_SERVER_BINARY
"""

import base64
import glob
import hashlib
import json
import os
import re
import secrets
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.parse
import urllib.request

binary = sys.argv[1]
url = os.environ["TILECAST_DATABASE_URL"]
socket_dir = urllib.parse.parse_qs(urllib.parse.urlsplit(url).query)["host"][0]
data_dir = os.path.join(socket_dir, "data")
pg_bin = sorted(glob.glob("/usr/lib/postgresql/*/bin"))[-1]
CALLBACK = "tilecast-ios://oauth/callback"
POOL_WAIT, CONNECT_TIMEOUT, OPERATION_TIMEOUT = 2, 2, 2
# The longest any request may take: a connection (waited for, or opened), then the operation — for each of
# the engine's store calls in one request (a code exchange makes three) — plus slack for the HTTP server.
BOUND = POOL_WAIT + CONNECT_TIMEOUT + 3 * OPERATION_TIMEOUT + 2


def as_postgres(command):
    wrapped = ["su", "postgres", "-s", "/bin/bash", "-c", command] if os.getuid() == 0 else ["bash", "-c", command]
    return subprocess.run(wrapped, capture_output=True, text=True, timeout=60)


def pg_ctl(arguments):
    result = as_postgres(f"'{pg_bin}/pg_ctl' -D '{data_dir}' -l '{socket_dir}/server.log' {arguments}")
    if result.returncode != 0 and "start" in arguments:
        sys.exit(f"pg_ctl {arguments} failed: {result.stdout}{result.stderr}")


def psql(sql):
    result = as_postgres(f"'{pg_bin}/psql' -h '{socket_dir}' -U postgres -d postgres -At -c \"{sql}\"")
    return result.stdout.strip()


# --- The proxy: loopback TCP to the cluster's Unix socket, able to stop forwarding (a black hole). ---

blackhole = threading.Event()


def pump(source, target):
    try:
        while True:
            while blackhole.is_set():
                time.sleep(0.05)  # nothing read, nothing forwarded; the peers see silence, not a close
            data = source.recv(65536)
            if not data:
                break
            while blackhole.is_set():
                time.sleep(0.05)
            target.sendall(data)
    except OSError:
        pass
    finally:
        for end in (source, target):
            try:
                end.close()
            except OSError:
                pass


listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
listener.bind(("127.0.0.1", 0))
listener.listen(256)
proxy_port = listener.getsockname()[1]


def accept_forever():
    while True:
        client, _ = listener.accept()
        server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            server.connect(os.path.join(socket_dir, ".s.PGSQL.5432"))
        except OSError:
            client.close()
            continue
        threading.Thread(target=pump, args=(client, server), daemon=True).start()
        threading.Thread(target=pump, args=(server, client), daemon=True).start()


threading.Thread(target=accept_forever, daemon=True).start()

# --- The dev server, on PostgreSQL through the proxy. ---

database_url = f"postgresql://postgres@127.0.0.1:{proxy_port}/postgres"
server = subprocess.Popen(
    [binary, "--port", "0", "--store", "postgres", "--database-url", database_url, "--rate-limit", "1000000",
     "--pool-wait", str(POOL_WAIT), "--connect-timeout", str(CONNECT_TIMEOUT), "--statement-timeout", "1",
     "--operation-timeout", str(OPERATION_TIMEOUT)],
    stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
base = None
for line in server.stdout:
    match = re.match(r"Tilecast dev server on (\S+)", line)
    if match:
        base = match.group(1)
        break
if base is None:
    sys.exit("the dev server did not start")
threading.Thread(target=lambda: [None for _ in server.stdout], daemon=True).start()

# --- Load: whole sign-in flows. ---


class Stop(Exception):
    pass


results = []  # (time, kind, status or "error", seconds)
results_lock = threading.Lock()
stop = threading.Event()


def request(kind, method, path, body=None, headers=None):
    started = time.monotonic()
    req = urllib.request.Request(base + path, data=body, method=method, headers=headers or {})
    status, payload, location = None, b"", None
    try:
        with urllib.request.urlopen(req, timeout=BOUND + 10) as response:
            status, payload = response.status, response.read()
    except urllib.error.HTTPError as error:
        status, payload, location = error.code, error.read(), error.headers.get("Location")
    except Exception:
        status = "error"
    elapsed = time.monotonic() - started
    with results_lock:
        results.append((time.time(), kind, status, elapsed))
    return status, payload, location


class NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args, **kwargs):
        return None


urllib.request.install_opener(urllib.request.build_opener(NoRedirect))


def issue_code():
    """A code and its verifier, through the authorize page and its approval, or None."""
    verifier = base64.urlsafe_b64encode(secrets.token_bytes(32)).rstrip(b"=").decode()
    challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()
    query = urllib.parse.urlencode({
        "response_type": "code", "client_id": "tilecast-ios", "redirect_uri": CALLBACK, "state": "s",
        "code_challenge": challenge, "code_challenge_method": "S256", "scope": "tiles:read"})
    status, page, _ = request("authorize", "GET", "/oauth/authorize?" + query)
    if status != 200:
        return None
    fields = re.findall(r'<input type="hidden" name="([^"]*)" value="([^"]*)">', page.decode())
    form = urllib.parse.urlencode(fields + [("account", "ada@tilecast.test"), ("decision", "approve")]).encode()
    status, _, location = request("approve", "POST", "/oauth/authorize", form,
                                  {"Origin": base, "Content-Type": "application/x-www-form-urlencoded"})
    if status != 302 or not location or "code=" not in location:
        return None
    return urllib.parse.parse_qs(urllib.parse.urlsplit(location).query)["code"][0], verifier


def flow():
    """Authorize page, approval, exchange, refresh. Returns True when every step succeeded."""
    issued = issue_code()
    if issued is None:
        return False
    code, verifier = issued
    body = json.dumps({"grant_type": "authorization_code", "client_id": "tilecast-ios", "code": code,
                       "redirect_uri": CALLBACK, "code_verifier": verifier}).encode()
    status, payload, _ = request("exchange", "POST", "/api/v1/oauth/ios-session", body,
                                 {"Content-Type": "application/json"})
    if status != 200:
        return False
    refresh = json.loads(payload)["data"]["credential"]["refresh_token"]
    body = json.dumps({"grant_type": "refresh_token", "client_id": "tilecast-ios", "refresh_token": refresh}).encode()
    status, _, _ = request("refresh", "POST", "/api/v1/oauth/ios-session", body, {"Content-Type": "application/json"})
    return status == 200


def worker():
    while not stop.is_set():
        flow()


def recovered(within=20):
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        if flow():
            return True
        time.sleep(0.2)
    return False


def backend_pids():
    return [int(p) for p in psql("SELECT pid FROM pg_stat_activity WHERE application_name LIKE 'tilecast-auth/%'").split()]


def freeze(seconds):
    pids = backend_pids()
    if not pids:
        sys.exit("no backend of the dev server to freeze")
    for pid in pids:
        os.kill(pid, signal.SIGSTOP)
    time.sleep(seconds)
    for pid in pids:
        os.kill(pid, signal.SIGCONT)


# A burst of exchanges at once while the database is down: three times the pool's 10 connections, so that
# requests queue for the request threads (the store's executor) as well as for connections. Each must be
# answered within its one wait for a connection — not after the waits of those ahead of it — and a page
# that never touches the database must not wait behind them.
BURST = 30
# While the database is stopped a connect through the proxy fails at once, so the connect timeout never
# runs: one connection wait and slack. Two rounds of queueing (about 4 s) fail it, as three do.
BURST_BOUND = POOL_WAIT + 1.5
burst_failures = []


def burst_while_down():
    codes = [code for code in (issue_code() for _ in range(BURST)) if code]
    pg_ctl("-m immediate stop")
    answers = []
    answers_lock = threading.Lock()

    def exchange(code, verifier):
        body = json.dumps({"grant_type": "authorization_code", "client_id": "tilecast-ios", "code": code,
                           "redirect_uri": CALLBACK, "code_verifier": verifier}).encode()
        started = time.monotonic()
        status, _, _ = request("burst", "POST", "/api/v1/oauth/ios-session", body, {"Content-Type": "application/json"})
        with answers_lock:
            answers.append((status, time.monotonic() - started))

    senders = [threading.Thread(target=exchange, args=code) for code in codes]
    for sender in senders:
        sender.start()
    time.sleep(0.5)
    started = time.monotonic()
    home_status, _, _ = request("home", "GET", "/")
    home_seconds = time.monotonic() - started
    for sender in senders:
        sender.join()
    pg_ctl("-w start -o \"-k '%s' -c listen_addresses=''\"" % socket_dir)
    slowest = max((seconds for _, seconds in answers), default=0)
    statuses = sorted({str(status) for status, _ in answers})
    print(f"       burst: {len(answers)} of {BURST} exchanges answered, statuses {statuses}, slowest {slowest:.2f} s "
          f"(bound {BURST_BOUND} s); the home page meanwhile: {home_status} in {home_seconds:.2f} s")
    if len(codes) != BURST or len(answers) != BURST or slowest > BURST_BOUND or statuses != ["503"]:
        burst_failures.append("the burst's exchanges")
    if home_status != 200 or home_seconds > 1:
        burst_failures.append("the home page during the burst")


faults = [
    ("restart (pg_ctl restart -m fast)", lambda: pg_ctl("-w -m fast restart -o \"-k '%s' -c listen_addresses=''\"" % socket_dir), None),
    ("immediate stop, 3 s down, start", lambda: (pg_ctl("-m immediate stop"), time.sleep(3),
                                                pg_ctl("-w start -o \"-k '%s' -c listen_addresses=''\"" % socket_dir)), None),
    ("every backend terminated", lambda: psql(
        "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE application_name LIKE 'tilecast-auth/%'"), None),
    ("backends frozen (SIGSTOP) for 5 s", lambda: freeze(5), None),
    ("network black hole for 5 s (the proxy stops forwarding)", lambda: (blackhole.set(), time.sleep(5)),
     lambda: blackhole.clear()),
    (f"{BURST} exchanges at once while stopped, and a page that needs no database", burst_while_down, None),
]

failed = False
try:
    if not recovered(30):
        sys.exit("no flow succeeded before any fault")
    threads = [threading.Thread(target=worker, daemon=True) for _ in range(6)]
    for thread in threads:
        thread.start()
    time.sleep(2)
    print(f"faults under load: dev server {base}, PostgreSQL through a TCP proxy on :{proxy_port}, "
          f"6 flows at once, every request bounded by {BOUND} s")
    for name, inject, undo in faults:
        started = time.time()
        inject()
        if undo:
            undo()
        ended = time.time()
        ok = recovered(20)
        recovered_at = time.time()
        with results_lock:
            # Requests under way at any time from the fault's start to the recovery (r[0] is when one ended).
            window = [r for r in results if r[0] >= started and r[0] - r[3] <= recovered_at]
        statuses = {}
        for _, _, status, _ in window:
            statuses[status] = statuses.get(status, 0) + 1
        slowest = max((r[3] for r in window), default=0)
        print(f"  {'ok  ' if ok else 'FAIL'} {name}: {len(window)} requests, statuses {dict(sorted(statuses.items(), key=str))}, "
              f"slowest {slowest:.2f} s, recovered {recovered_at - ended:.1f} s after")
        failed |= not ok
        time.sleep(1)
    stop.set()
    for thread in threads:
        thread.join(timeout=BOUND + 15)
    with results_lock:
        total = len(results)
        five_hundreds = [r for r in results if r[2] == 500]
        errors = [r for r in results if r[2] == "error"]
        slowest = max(r[3] for r in results)
    print(f"  {total} requests in all; slowest {slowest:.2f} s (bound {BOUND} s); "
          f"500s: {len(five_hundreds)}; transport errors: {len(errors)}")
    if five_hundreds or errors or slowest > BOUND:
        failed = True
        print("FAIL a request got a 500, no answer, or waited past the bound")
    if burst_failures:
        failed = True
        print("FAIL past its bound during the burst: " + ", ".join(burst_failures))
    half_done = psql(
        "SELECT (SELECT count(*) FROM tilecast_dev.codes c WHERE c.redeemed_grant IS NOT NULL AND NOT EXISTS "
        "(SELECT 1 FROM tilecast_dev.grants g WHERE g.id = c.redeemed_grant)) + (SELECT count(*) FROM "
        "tilecast_dev.grants g WHERE NOT EXISTS (SELECT 1 FROM tilecast_dev.refresh_tokens r WHERE r.grant_id = g.id))")
    print(f"  half-done records (a redeemed code without its grant, a grant without a refresh token): {half_done}")
    if half_done != "0":
        failed = True
finally:
    stop.set()
    blackhole.clear()
    server.terminate()
    try:
        server.wait(timeout=15)
    except subprocess.TimeoutExpired:
        server.kill()
print("faults under load: " + ("FAILED" if failed else "passed"))
sys.exit(1 if failed else 0)
