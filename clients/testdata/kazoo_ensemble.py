"""kazoo 2.8 (Debian python3-kazoo) against zksim's ensemble over the wire
(zksim serve -servers 3): ZK_ADDR is the members' connect string
(host:port,host:port,host:port), ZKSIM_CONTROL the control URL.

A client given the three addresses rides out a leader failover and the
crash of its member, keeping its session and its ephemeral; a client of a
lagging follower reads stale data, and the leader's data after a sync that
returns once the follower caught up. It prints one line per step and exits
0, or raises.

Run:  /usr/bin/python3 kazoo_ensemble.py
"""

import json
import logging
import os
import threading
import time
import urllib.request

from kazoo.client import KazooClient
from kazoo.exceptions import ConnectionLoss, SessionMovedError
from kazoo.retry import KazooRetry

ADDR = os.environ["ZK_ADDR"]
CONTROL = os.environ["ZKSIM_CONTROL"].rstrip("/")
WAIT = 20.0


def control(method, path):
    req = urllib.request.Request(CONTROL + path, method=method, data=b"" if method == "POST" else None)
    with urllib.request.urlopen(req, timeout=WAIT) as resp:
        return resp.read().decode()


def members():
    return json.loads(control("GET", "/servers"))


def post(myid, action):
    control("POST", "/servers/%d/%s" % (myid, action))


def leader():
    return [m["id"] for m in members() if m["role"] == "leader"][0]


def member_of(session_id):
    deadline = time.monotonic() + WAIT
    while time.monotonic() < deadline:
        for m in members():
            if session_id in m["sessions"]:
                return m
        time.sleep(0.01)
    raise AssertionError("session %#x is on no member" % session_id)


def client(hosts):
    # Every operation retries a connection loss while the client moves
    # between members.
    retry = KazooRetry(max_tries=-1, delay=0.05, max_delay=0.5, deadline=WAIT,
                       ignore_expire=False)
    zk = KazooClient(hosts=hosts, timeout=10.0, command_retry=retry,
                     connection_retry=dict(max_tries=-1, delay=0.05, max_delay=0.5))
    zk.start(timeout=WAIT)
    return zk


def main():
    logging.basicConfig(level=logging.CRITICAL)
    servers = ADDR.split(",")
    zk = client(ADDR)
    zk.ensure_path("/ens")
    zk.set("/ens", b"0")
    zk.create("/ens/eph", ephemeral=True)
    sid = zk.client_id[0]

    old = leader()
    post(old, "crash")
    zk.retry(zk.set, "/ens", b"after-failover")
    now = leader()
    assert now != old, "member %d still leads after its crash" % now
    post(old, "restart")
    print("failover: leader %d crashed, %d leads, the client wrote on" % (old, now))

    m = member_of(sid)
    post(m["id"], "crash")
    assert zk.retry(zk.exists, "/ens/eph") is not None, "the ephemeral is gone"
    assert zk.client_id[0] == sid, "the session changed"
    moved = member_of(sid)["id"]
    assert moved != m["id"]
    post(m["id"], "restart")
    print("member crash: the session moved from %d to %d with its ephemeral" % (m["id"], moved))

    follower = [m["id"] for m in members() if m["role"] == "follower"][0]
    r = client(servers[follower - 1])
    w = client(servers[leader() - 1])
    post(follower, "lag")
    w.set("/ens", b"fresh")
    stale, _ = r.get("/ens")
    assert stale == b"after-failover", "read on the lagging follower: %r" % stale
    print("lagging follower %d: read %s" % (follower, stale.decode()))
    synced = r.sync_async("/ens")
    post(follower, "catch-up")
    synced.get(timeout=WAIT)
    fresh, _ = r.get("/ens")
    assert fresh == b"fresh", "read after sync: %r" % fresh
    print("after sync: read %s" % fresh.decode())

    for c in (r, w, zk):
        c.stop()
        c.close()


if __name__ == "__main__":
    main()
