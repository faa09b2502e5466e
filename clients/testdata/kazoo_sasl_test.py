"""kazoo 2.8 authenticating with SASL DIGEST-MD5 (pure-sasl, Debian
python3-pure-sasl) against a ZooKeeper server whose JAAS Server section is
testdata/jaas.conf (users bob and carol) and whose superDigest is that of
super:sekret: zksim's wire server or a real ZooKeeper.

The server address comes from ZK_ADDR (host:port), the control URL of
zksim's wire server from ZKSIM_CONTROL; the test_control_ methods need it
and skip without it.

Run one test:  /usr/bin/python3 kazoo_sasl_test.py -v KazooSASL.test_right_password
The Go test TestKazooSASL in package clients runs each test_ method as its
own process, against both servers.
"""

import logging
import os
import time
import unittest
import urllib.request
import uuid

from kazoo.client import KazooClient
from kazoo.exceptions import NoAuthError
from kazoo.protocol.states import KazooState, KeeperState
from kazoo.security import ACL, Id, make_acl

ADDR = os.environ.get("ZK_ADDR", "127.0.0.1:2181")
CONTROL = os.environ.get("ZKSIM_CONTROL")

# The longest any wait may take, in seconds.
WAIT = 20.0

logging.basicConfig(level=logging.CRITICAL)


def sasl(user, password):
    return {"mechanism": "DIGEST-MD5", "username": user, "password": password}


class KazooSASL(unittest.TestCase):
    def shortDescription(self):
        return None  # one line per test in verbose output

    def setUp(self):
        self.clients = []
        self.path = "/kazoo-sasl-%s-%s" % (self._testMethodName, uuid.uuid4().hex[:8])

    def tearDown(self):
        for c in self.clients:
            c.stop()
            c.close()

    def client(self, start=True, **kwargs):
        """A KazooClient on ADDR, started unless start is False, stopped at
        tearDown."""
        c = KazooClient(hosts=ADDR, timeout=10.0, **kwargs)
        self.clients.append(c)
        if start:
            c.start(timeout=WAIT)
        return c

    def test_right_password(self):
        bob = self.client(sasl_options=sasl("bob", "bobpw"))
        bob.create(self.path, b"for bob", acl=[make_acl("sasl", "bob", all=True)])
        data, _ = bob.get(self.path)
        self.assertEqual(data, b"for bob")
        acl, _ = bob.get_acls(self.path)
        self.assertEqual(acl, [ACL(31, Id("sasl", "bob"))])

        # Another connection as bob reads it; carol and an anonymous
        # client may not.
        again = self.client(sasl_options=sasl("bob", "bobpw"))
        self.assertEqual(again.get(self.path)[0], b"for bob")
        carol = self.client(sasl_options=sasl("carol", "carolpw"))
        with self.assertRaises(NoAuthError):
            carol.get(self.path)
        anon = self.client()
        with self.assertRaises(NoAuthError):
            anon.get(self.path)
        with self.assertRaises(NoAuthError):
            anon.set(self.path, b"not bob")
        bob.delete(self.path)

    def test_wrong_password(self):
        # A wrong password and an unknown user: the server answers
        # AuthFailed and closes the connection; kazoo gives up for good
        # (AUTH_FAILED, never connected).
        for user, password in (("bob", "wrong"), ("eve", "evepw")):
            c = self.client(start=False, sasl_options=sasl(user, password))
            # The connection thread's state changes, seen through kazoo
            # 2.8's _session_callback: CONNECTED with the session, before
            # SASL; AUTH_FAILED when the server refuses; CLOSED as kazoo
            # stops trying.
            seen = []
            callback = c._session_callback

            def spy(state, seen=seen, callback=callback):
                seen.append(state)
                callback(state)

            c._session_callback = spy
            c.start_async()
            deadline = time.monotonic() + WAIT
            while KeeperState.CLOSED not in seen and time.monotonic() < deadline:
                time.sleep(0.02)
            want = [KeeperState.CONNECTING, KeeperState.CONNECTED, KeeperState.AUTH_FAILED, KeeperState.CLOSED]
            self.assertEqual(seen, want, "%s with %r" % (user, password))
            self.assertFalse(c.connected)
        # The server serves on.
        bob = self.client(sasl_options=sasl("bob", "bobpw"))
        self.assertIsNotNone(bob.exists("/"))

    def test_super_digest(self):
        # superDigest: the digest auth super:sekret passes an ACL that
        # refuses everyone else.
        bob = self.client(sasl_options=sasl("bob", "bobpw"))
        bob.create(self.path, b"for bob", acl=[make_acl("sasl", "bob", read=True)])
        root = self.client(auth_data=[("digest", "super:sekret")])
        self.assertEqual(root.get(self.path)[0], b"for bob")
        root.set(self.path, b"from super")
        root.delete(self.path)
        # Another password for super is an ordinary digest identity.
        other = self.client(auth_data=[("digest", "super:other")])
        bob.create(self.path, b"x", acl=[make_acl("sasl", "bob", all=True)])
        with self.assertRaises(NoAuthError):
            other.get(self.path)
        bob.delete(self.path)

    def test_control_reconnect_authenticates_again(self):
        # The SASL identity belongs to the connection: after the server
        # drops it, kazoo authenticates again on the new connection to the
        # same session and still reads bob's node.
        if not CONTROL:
            self.skipTest("needs the wire server's control endpoint (ZKSIM_CONTROL)")
        bob = self.client(sasl_options=sasl("bob", "bobpw"))
        bob.create(self.path, b"for bob", acl=[make_acl("sasl", "bob", all=True)])
        states = []
        bob.add_listener(states.append)
        sid = bob.client_id[0]
        req = urllib.request.Request("%s/sessions/%d/disconnect" % (CONTROL, sid), method="POST", data=b"")
        with urllib.request.urlopen(req, timeout=WAIT) as resp:
            self.assertEqual(resp.status, 200)
        deadline = time.monotonic() + WAIT
        while states[-1:] != [KazooState.CONNECTED] and time.monotonic() < deadline:
            time.sleep(0.02)
        self.assertEqual(states, [KazooState.SUSPENDED, KazooState.CONNECTED])
        self.assertEqual(bob.client_id[0], sid)
        self.assertEqual(bob.get(self.path)[0], b"for bob")
        bob.delete(self.path)


if __name__ == "__main__":
    unittest.main()
