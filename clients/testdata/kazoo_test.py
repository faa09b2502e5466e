"""kazoo 2.8 (Debian python3-kazoo) against a ZooKeeper server: zksim's wire
server or a real ZooKeeper.

The server address comes from ZK_ADDR (host:port). ZKSIM_CONTROL is the
control URL of zksim's wire server (http://127.0.0.1:port); without it the
tests that force a session expiry through the controls skip.

Run one test:  /usr/bin/python3 kazoo_test.py -v KazooRecipes.test_lock
The Go tests in package clients run each test_ method of KazooRecipes as its
own process and read unittest's verbose output.

Every test works under its own root path and removes it at the end, so the
tests can share a server. Every wait is bounded: a hang is a failure, never
a stuck process.
"""

import json
import logging
import os
import threading
import time
import unittest
import urllib.request
import uuid

from kazoo.client import KazooClient
from kazoo.exceptions import (BadVersionError, ConnectionLoss, NoAuthError,
                              NodeExistsError, RolledBackError,
                              RuntimeInconsistency)
from kazoo.security import make_digest_acl
from kazoo.protocol.states import EventType, KazooState
from kazoo.recipe.barrier import Barrier, DoubleBarrier
from kazoo.recipe.queue import LockingQueue, Queue

ADDR = os.environ.get("ZK_ADDR", "127.0.0.1:2181")
CONTROL = os.environ.get("ZKSIM_CONTROL", "").rstrip("/")

# WAIT bounds every wait for something the server must do.
WAIT = 20.0


def wait_until(cond, what, timeout=WAIT):
    """Polls cond until it is true; fails after timeout seconds."""
    deadline = time.monotonic() + timeout
    while True:
        if cond():
            return
        if time.monotonic() > deadline:
            raise AssertionError("timed out after %.0fs waiting for %s" % (timeout, what))
        time.sleep(0.01)


def control(method, path):
    """Calls the wire server's control endpoint; returns (status, body)."""
    req = urllib.request.Request(CONTROL + path, method=method, data=b"" if method == "POST" else None)
    try:
        with urllib.request.urlopen(req, timeout=WAIT) as resp:
            return resp.status, resp.read().decode()
    except urllib.error.HTTPError as err:
        return err.code, err.read().decode()


def live_sessions():
    status, body = control("GET", "/sessions")
    if status != 200:
        raise AssertionError("GET /sessions: %d %s" % (status, body))
    return [s["id"] for s in json.loads(body) if s["state"] not in ("expired", "closed")]


class KazooRecipes(unittest.TestCase):
    def shortDescription(self):
        return None  # one line per test in verbose output

    def setUp(self):
        self.clients = []
        self.root = "/kazoo-%s-%s" % (self._testMethodName, uuid.uuid4().hex[:8])
        self.admin = self.client()
        self.admin.ensure_path(self.root)

    def tearDown(self):
        try:
            if self.admin.connected:
                self.admin.delete(self.root, recursive=True)
        finally:
            for c in self.clients:
                c.stop()
                c.close()

    def client(self, **kwargs):
        """A started KazooClient on ADDR, stopped at tearDown."""
        c = KazooClient(hosts=ADDR, timeout=10.0, **kwargs)
        self.clients.append(c)
        c.start(timeout=WAIT)
        return c

    def run_threads(self, target, args_list):
        """Runs target(*args) in one thread per args; re-raises the first
        error; fails if a thread is still running after WAIT."""
        errors = []

        def wrap(*args):
            try:
                target(*args)
            except BaseException as err:  # noqa: B902 - reported below
                errors.append(err)

        threads = [threading.Thread(target=wrap, args=a, daemon=True) for a in args_list]
        for th in threads:
            th.start()
        for th in threads:
            th.join(WAIT)
            self.assertFalse(th.is_alive(), "a thread is still running after %.0fs" % WAIT)
        if errors:
            raise errors[0]

    # -- Lock -------------------------------------------------------------

    def test_lock(self):
        """kazoo's Lock: four clients increment one counter under the lock;
        never two holders at once, no lost update."""
        path, counter = self.root + "/lock", self.root + "/counter"
        self.admin.create(counter, b"0")
        mu = threading.Lock()
        state = {"inside": 0, "max": 0}
        rounds = 5

        def worker(i):
            c = self.client()
            lock = c.Lock(path, "worker-%d" % i)
            for _ in range(rounds):
                self.assertTrue(lock.acquire(timeout=WAIT), "worker-%d: acquire timed out" % i)
                try:
                    with mu:
                        state["inside"] += 1
                        state["max"] = max(state["max"], state["inside"])
                    data, stat = c.get(counter)
                    time.sleep(0.005)  # widen the window a broken lock would show
                    c.set(counter, str(int(data) + 1).encode())
                    with mu:
                        state["inside"] -= 1
                finally:
                    lock.release()

        self.run_threads(worker, [(i,) for i in range(4)])
        self.assertEqual(state["max"], 1, "two clients held the lock at once")
        data, _ = self.admin.get(counter)
        self.assertEqual(int(data), 4 * rounds)

    def test_lock_contended(self):
        """A second client cannot take a held lock; it gets it when the holder
        releases, and contenders() names both in order."""
        path = self.root + "/lock"
        a, b = self.client(), self.client()
        la, lb = a.Lock(path, "a"), b.Lock(path, "b")
        self.assertTrue(la.acquire(timeout=WAIT))
        self.assertFalse(lb.acquire(blocking=False), "b took a lock that a holds")

        got = threading.Event()

        def take():
            if lb.acquire(timeout=WAIT):
                got.set()

        th = threading.Thread(target=take, daemon=True)
        th.start()
        wait_until(lambda: la.contenders() == ["a", "b"], "contenders [a, b]")
        time.sleep(0.1)
        self.assertFalse(got.is_set(), "b took the lock while a held it")
        la.release()
        self.assertTrue(got.wait(WAIT), "b did not get the lock after a released it")
        th.join(WAIT)
        self.assertEqual(lb.contenders(), ["b"])
        lb.release()

    # -- Election ---------------------------------------------------------

    def test_election(self):
        """kazoo's Election: three contenders lead one at a time, each once;
        while the first leads, contenders() lists all three, leader first."""
        path = self.root + "/election"
        mu = threading.Lock()
        state = {"inside": 0, "max": 0, "leaders": []}
        first_in = threading.Event()

        def lead(name, election):
            with mu:
                state["inside"] += 1
                state["max"] = max(state["max"], state["inside"])
                state["leaders"].append(name)
                first = len(state["leaders"]) == 1
            if first:
                first_in.set()
                # Stay leader until the other two wait behind us.
                wait_until(lambda: len(election.contenders()) == 3, "three contenders")
                self.assertEqual(election.contenders()[0], name)
            time.sleep(0.02)
            with mu:
                state["inside"] -= 1

        def contender(i):
            c = self.client()
            name = "c%d" % i
            election = c.Election(path, name)
            if i > 0:
                self.assertTrue(first_in.wait(WAIT), "no first leader")
            election.run(lead, name, election)

        self.run_threads(contender, [(i,) for i in range(3)])
        self.assertEqual(state["max"], 1, "two leaders at once")
        self.assertEqual(sorted(state["leaders"]), ["c0", "c1", "c2"])
        self.assertEqual(state["leaders"][0], "c0")
        self.assertEqual(self.admin.get_children(path), [])

    # -- Queue ------------------------------------------------------------

    def test_queue(self):
        """kazoo.recipe.queue.Queue: priority then FIFO order across clients,
        and concurrent consumers take every item exactly once."""
        producer, consumer = self.client(), self.client()
        path = self.root + "/queue"
        q = Queue(producer, path)
        q.put(b"low", priority=200)
        q.put(b"high", priority=10)
        q.put(b"mid-1")
        q.put(b"mid-2")
        self.assertEqual(len(q), 4)
        cq = Queue(consumer, path)
        got = [cq.get() for _ in range(4)]
        self.assertEqual(got, [b"high", b"mid-1", b"mid-2", b"low"])
        self.assertIsNone(cq.get())
        self.assertEqual(len(cq), 0)

        items = [("item-%02d" % i).encode() for i in range(30)]
        for it in items:
            q.put(it)
        mu = threading.Lock()
        taken = []

        def drain(_):
            dq = Queue(self.client(), path)
            while True:
                it = dq.get()
                if it is None:
                    return
                with mu:
                    taken.append(it)

        self.run_threads(drain, [(i,) for i in range(3)])
        self.assertEqual(sorted(taken), items, "items lost or taken twice")

    def test_locking_queue(self):
        """kazoo.recipe.queue.LockingQueue: an item got by one client is
        locked from the others until released, then consumed once."""
        a, b = self.client(), self.client()
        path = self.root + "/lqueue"
        qa, qb = LockingQueue(a, path), LockingQueue(b, path)
        qa.put(b"job")
        self.assertEqual(qa.get(timeout=WAIT), b"job")
        self.assertTrue(qa.holds_lock())
        self.assertIsNone(qb.get(timeout=0.3), "b got an item a holds")
        self.assertTrue(qa.release())
        self.assertEqual(qb.get(timeout=WAIT), b"job")
        self.assertTrue(qb.consume())
        self.assertEqual(len(qa), 0)
        self.assertIsNone(qa.get(timeout=0.2))

    # -- Barrier ----------------------------------------------------------

    def test_barrier(self):
        """kazoo's Barrier: wait blocks while the barrier stands and returns
        when another client removes it."""
        a, b = self.client(), self.client()
        path = self.root + "/barrier"
        self.assertTrue(Barrier(b, path).wait(timeout=1), "no barrier, wait must pass")
        Barrier(a, path).create()
        result = []
        th = threading.Thread(target=lambda: result.append(Barrier(b, path).wait(timeout=WAIT)), daemon=True)
        th.start()
        time.sleep(0.2)
        self.assertTrue(th.is_alive(), "wait returned while the barrier stood")
        self.assertTrue(Barrier(a, path).remove())
        th.join(WAIT)
        self.assertEqual(result, [True])

    def test_double_barrier(self):
        """kazoo's DoubleBarrier with three clients: nobody passes enter
        before all three arrived, and leave empties the barrier."""
        path = self.root + "/dbarrier"
        mu = threading.Lock()
        state = {"arrived": 0, "passed": []}
        n = 3

        def member(i):
            c = self.client()
            time.sleep(0.1 * i)  # arrive one after another
            db = DoubleBarrier(c, path, n, identifier="m%d" % i)
            with mu:
                state["arrived"] += 1
            db.enter()
            self.assertTrue(db.participating, "m%d failed to enter" % i)
            with mu:
                state["passed"].append(state["arrived"])
            db.leave()
            self.assertFalse(db.participating)

        self.run_threads(member, [(i,) for i in range(n)])
        self.assertEqual(state["passed"], [n] * n, "a member passed enter before all arrived")
        self.assertEqual(self.admin.get_children(path), [])

    # -- Watches ----------------------------------------------------------

    def test_data_watch(self):
        """A one-shot data watch fires once for a change made by another
        client; kazoo's DataWatch sees every version and the deletion."""
        a, b = self.client(), self.client()
        path = self.root + "/data"
        a.create(path, b"v0")

        fired = []
        ev = threading.Event()

        def once(event):
            fired.append(event)
            ev.set()

        data, stat = b.get(path, watch=once)
        self.assertEqual(data, b"v0")
        a.set(path, b"v1")
        self.assertTrue(ev.wait(WAIT), "data watch did not fire")
        self.assertEqual(fired[0].type, EventType.CHANGED)
        self.assertEqual(fired[0].path, path)
        a.set(path, b"v2")
        time.sleep(0.2)
        self.assertEqual(len(fired), 1, "a one-shot watch fired twice")

        created = threading.Event()
        self.assertIsNone(b.exists(path + "-later", watch=lambda e: e.type == EventType.CREATED and created.set()))
        a.create(path + "-later")
        self.assertTrue(created.wait(WAIT), "exists watch did not fire on create")

        seen = []

        @b.DataWatch(path)
        def watcher(data, stat, event=None):
            seen.append(data)

        wait_until(lambda: seen[-1:] == [b"v2"], "DataWatch initial value v2")
        a.set(path, b"v3")
        wait_until(lambda: seen[-1:] == [b"v3"], "DataWatch value v3")
        a.delete(path)
        wait_until(lambda: seen[-1:] == [None], "DataWatch deletion")

    def test_children_watch(self):
        """A one-shot child watch fires for a new child; kazoo's ChildrenWatch
        follows children as they come and go."""
        a, b = self.client(), self.client()
        path = self.root + "/parent"
        a.create(path)

        ev = threading.Event()
        fired = []
        self.assertEqual(b.get_children(path, watch=lambda e: (fired.append(e), ev.set())), [])
        a.create(path + "/x")
        self.assertTrue(ev.wait(WAIT), "child watch did not fire")
        self.assertEqual(fired[0].type, EventType.CHILD)
        self.assertEqual(fired[0].path, path)

        seen = []

        @b.ChildrenWatch(path)
        def watcher(children):
            seen.append(sorted(children))

        wait_until(lambda: seen[-1:] == [["x"]], "ChildrenWatch [x]")
        a.create(path + "/y")
        wait_until(lambda: seen[-1:] == [["x", "y"]], "ChildrenWatch [x, y]")
        a.delete(path + "/x")
        wait_until(lambda: seen[-1:] == [["y"]], "ChildrenWatch [y]")

    # -- Transactions, ACLs, four-letter words ----------------------------

    def test_transaction(self):
        """kazoo's transaction (multi): all or nothing; a failed check rolls
        back the whole of it and reports each operation's outcome."""
        c = self.client()
        a, b = self.root + "/a", self.root + "/b"
        t = c.transaction()
        t.create(a, b"1")
        t.create(b, b"2")
        t.set_data(a, b"3")
        self.assertEqual(t.commit()[:2], [a, b])
        self.assertEqual(c.get(a)[0], b"3")

        t = c.transaction()
        t.delete(b)
        t.check(a, 7)  # wrong version
        t.set_data(a, b"4")
        results = t.commit()
        # Before the failed op: rolled back (0); after it: -2.
        self.assertIsInstance(results[0], RolledBackError)
        self.assertIsInstance(results[1], BadVersionError)
        self.assertIsInstance(results[2], RuntimeInconsistency)
        self.assertIsNotNone(c.exists(b), "a failed transaction deleted b")
        self.assertEqual(c.get(a)[0], b"3")

        t = c.transaction()
        t.check(a, 1)
        t.delete(b)
        self.assertEqual(t.commit(), [True, True])
        self.assertIsNone(c.exists(b))

    def test_digest_acl(self):
        """A node readable only with a digest credential: a client without
        it gets NoAuthError, one that adds it (addAuth) reads it."""
        owner, stranger, friend = self.client(), self.client(), self.client()
        owner.add_auth("digest", "alice:secret")
        path = self.root + "/private"
        owner.create(path, b"s3cret", acl=[make_digest_acl("alice", "secret", all=True)])
        try:
            self.assertEqual(owner.get(path)[0], b"s3cret")
            with self.assertRaises(NoAuthError):
                stranger.get(path)
            with self.assertRaises(NoAuthError):  # getACL needs READ or ADMIN since 3.4.14
                stranger.get_acls(path)
            friend.add_auth("digest", "alice:secret")
            self.assertEqual(friend.get(path)[0], b"s3cret")
            acls, _ = friend.get_acls(path)
            self.assertEqual(len(acls), 1)
            self.assertEqual(acls[0].id.scheme, "digest")
            self.assertTrue(acls[0].id.id.startswith("alice:"))
        finally:
            owner.delete(path)

    def test_four_letter_words(self):
        """kazoo's command() sends four-letter words on a side connection:
        ruok answers imok, srvr and stat describe the server, and
        server_version() parses envi."""
        c = self.client()
        self.assertEqual(c.command(b"ruok"), "imok")
        self.assertIn("Zookeeper version: 3.8", c.command(b"srvr"))
        self.assertIn("Clients:", c.command(b"stat"))
        self.assertIn("zk_version", c.command(b"mntr"))
        self.assertEqual(c.server_version()[:2], (3, 8))

    # -- Faults through ZKSIM_CONTROL ---------------------------------------
    # The test_control_ methods need zksim's control endpoint.

    def need_control(self):
        if not CONTROL:
            self.skipTest("ZKSIM_CONTROL not set (not zksim's wire server)")

    def fault(self, c, action):
        """POSTs /sessions/{c's session}/action; fails unless 200."""
        status, body = control("POST", "/sessions/%d/%s" % (c.client_id[0], action))
        self.assertEqual(status, 200, "%s: %s" % (action, body))

    def watch_states(self, c):
        states = []
        c.add_listener(lambda s: states.append(s))
        return states

    def test_control_expiry(self):
        """A session expired through ZKSIM_CONTROL: its ephemeral node is
        gone, kazoo reports LOST, then reconnects with a new session."""
        self.need_control()
        c = self.client()
        states = self.watch_states(c)
        eph = self.root + "/eph"
        c.create(eph, b"mine", ephemeral=True)
        sid = c.client_id[0]
        self.assertIn(sid, live_sessions())

        status, body = control("POST", "/sessions/%d/expire" % sid)
        self.assertEqual(status, 200, body)
        wait_until(lambda: KazooState.LOST in states, "kazoo state LOST")
        self.assertIsNone(self.admin.exists(eph), "the expired session's ephemeral is still there")
        self.assertNotIn(sid, live_sessions())

        # kazoo starts a new session after LOST.
        wait_until(lambda: c.connected and c.client_id and c.client_id[0] != sid, "a new session")
        self.assertIsNotNone(c.exists(self.root))
        status, _ = control("POST", "/sessions/%d/expire" % sid)
        self.assertEqual(status, 404, "expiring an expired session")

    def test_control_expiry_lock(self):
        """A lock holder whose session is expired through ZKSIM_CONTROL loses
        the lock: the waiting client gets it."""
        self.need_control()
        a, b = self.client(), self.client()
        path = self.root + "/lock"
        la, lb = a.Lock(path, "a"), b.Lock(path, "b")
        self.assertTrue(la.acquire(timeout=WAIT))
        self.assertFalse(lb.acquire(blocking=False), "b took a lock that a holds")
        status, body = control("POST", "/sessions/%d/expire" % a.client_id[0])
        self.assertEqual(status, 200, body)
        self.assertTrue(lb.acquire(timeout=WAIT), "b did not get the lock of an expired holder")
        lb.release()

    def test_control_disconnect(self):
        """A dropped connection: kazoo goes SUSPENDED then CONNECTED on the
        same session; its ephemeral stays. kazoo 2.8 does not restore
        one-shot watches (it fires them with a NONE event on the drop); its
        DataWatch recipe re-reads after the reconnect and sees the change
        made meanwhile."""
        self.need_control()
        a, b = self.client(), self.client()
        states = self.watch_states(b)
        path, eph = self.root + "/data", self.root + "/eph"
        a.create(path, b"v0")
        b.create(eph, ephemeral=True)
        sid = b.client_id[0]
        fired = []
        b.get(path, watch=fired.append)
        seen = []
        b.DataWatch(path)(lambda data, stat: seen.append(data))
        wait_until(lambda: seen == [b"v0"], "DataWatch v0")

        self.fault(b, "disconnect")
        a.set(path, b"v1")
        wait_until(lambda: KazooState.SUSPENDED in states, "kazoo state SUSPENDED")
        wait_until(lambda: states[-1] == KazooState.CONNECTED, "kazoo state CONNECTED again")
        self.assertEqual(b.client_id[0], sid, "a new session after a mere disconnect")
        self.assertNotIn(KazooState.LOST, states)
        wait_until(lambda: seen[-1:] == [b"v1"], "DataWatch v1 after the reconnect")
        self.assertIn(fired[0].type, (EventType.NONE, EventType.CHANGED))
        self.assertIsNotNone(a.exists(eph), "the ephemeral went with the connection")
        a.set(path, b"v2")
        wait_until(lambda: seen[-1:] == [b"v2"], "DataWatch v2")

    def test_control_lose_reply(self):
        """A lost reply: the create is applied but kazoo gets ConnectionLoss;
        after the reconnect (same session) the node is there, so a retried
        create gets NodeExistsError."""
        self.need_control()
        c = self.client()
        sid = c.client_id[0]
        path = self.root + "/applied"
        self.fault(c, "lose-next-reply?op=create")
        with self.assertRaises(ConnectionLoss):
            c.create(path, b"x")
        wait_until(lambda: c.connected, "kazoo connected again")
        self.assertEqual(c.client_id[0], sid)
        self.assertEqual(self.admin.get(path)[0], b"x", "the request whose reply was lost was not applied")
        with self.assertRaises(NodeExistsError):
            c.retry(c.create, path, b"x")

    def test_control_drop_request(self):
        """A dropped request: kazoo gets ConnectionLoss and the create was
        never applied; kazoo's retry then creates it once."""
        self.need_control()
        c = self.client()
        path = self.root + "/dropped"
        self.fault(c, "drop-next-request?op=create")
        with self.assertRaises(ConnectionLoss):
            c.create(path, b"x")
        wait_until(lambda: c.connected, "kazoo connected again")
        self.assertIsNone(self.admin.exists(path), "a dropped request was applied")
        c.retry(c.create, path, b"y")
        self.assertEqual(self.admin.get(path)[0], b"y")

    def test_control_pause(self):
        """A paused client (the server stops hearing it): its session
        expires after its timeout; kazoo sees LOST; its lock passes on."""
        self.need_control()
        c = KazooClient(hosts=ADDR, timeout=4.0)  # the wire server's smallest by default
        self.clients.append(c)
        c.start(timeout=WAIT)
        states = self.watch_states(c)
        other = self.client()
        path = self.root + "/lock"
        self.assertTrue(c.Lock(path, "paused").acquire(timeout=WAIT))
        waiting = other.Lock(path, "other")
        self.assertFalse(waiting.acquire(blocking=False))
        self.fault(c, "pause")
        self.assertTrue(waiting.acquire(timeout=WAIT), "the lock of a paused, expired client did not pass on")
        wait_until(lambda: KazooState.LOST in states, "kazoo state LOST")
        waiting.release()

    def test_control_delay(self):
        """Delayed replies: a read takes at least the delay; a zero delay
        ends it."""
        self.need_control()
        c = self.client()
        self.fault(c, "delay?for=500ms")
        start = time.monotonic()
        c.exists(self.root)
        self.assertGreaterEqual(time.monotonic() - start, 0.45, "the reply was not delayed")
        self.fault(c, "delay?for=0s")
        self.assertIsNotNone(c.exists(self.root))

    def test_session_expiry_by_close(self):
        """The way kazoo's own test harness expires a session, which works on
        any server: a second client attaches to the session with its id and
        password and closes it. The first client sees LOST and its ephemeral
        is gone."""
        c = self.client()
        states = self.watch_states(c)
        eph = self.root + "/eph"
        c.create(eph, ephemeral=True)
        sid = c.client_id[0]
        twin = KazooClient(hosts=ADDR, timeout=10.0, client_id=c.client_id)
        twin.start(timeout=WAIT)
        self.assertEqual(twin.client_id[0], sid, "the twin got a different session")
        twin.stop()
        twin.close()
        wait_until(lambda: KazooState.LOST in states, "kazoo state LOST")
        self.assertIsNone(self.admin.exists(eph), "the closed session's ephemeral is still there")
        wait_until(lambda: c.connected and c.client_id[0] != sid, "a new session")


if __name__ == "__main__":
    logging.basicConfig(level=logging.WARNING)
    unittest.main(verbosity=2)
