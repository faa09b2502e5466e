"""kazoo 2.8 (Debian python3-kazoo) on null and empty data.

ZooKeeper keeps null data (length -1, None in kazoo) apart from empty data
(length 0, b""): kazoo creates nodes with b"" by default, and its Counter,
TreeCache and DataWatch read them back. This program prints what kazoo sees,
one line per observation, paths relative to its own root; the Go test in
package clients (TestKazooEmptyData) runs it against zksim's wire server
and a real ZooKeeper and requires the same output from both.

The server address comes from ZK_ADDR (host:port). Every wait is bounded:
a hang is a failure, never a stuck process. Exit status 0 when every step
ran; any exception is printed and exits 1.
"""

import os
import sys
import threading
import time
import uuid

from kazoo.client import KazooClient
from kazoo.recipe.cache import TreeCache, TreeEvent
from kazoo.recipe.counter import Counter

ADDR = os.environ.get("ZK_ADDR", "127.0.0.1:2181")
WAIT = 20.0
ROOT = "/kazoo-data-" + uuid.uuid4().hex


def say(*parts):
    print(*parts, flush=True)


def rel(path):
    return "~" + path[len(ROOT):]


def wait_until(cond, what):
    deadline = time.monotonic() + WAIT
    while not cond():
        if time.monotonic() > deadline:
            raise AssertionError("timed out after %.0fs waiting for %s" % (WAIT, what))
        time.sleep(0.01)


def plain(zk):
    say("== get")
    zk.create(ROOT + "/default")  # kazoo's default value: b""
    zk.create(ROOT + "/empty", b"")
    zk.create(ROOT + "/none", None)
    zk.create(ROOT + "/x", b"x")
    for name in ("default", "empty", "none", "x"):
        data, stat = zk.get(ROOT + "/" + name)
        say("get", name, repr(data), "dataLength", stat.dataLength)
    zk.set(ROOT + "/x", b"")
    say("set x b'' then get", repr(zk.get(ROOT + "/x")[0]))
    zk.set(ROOT + "/x", None)
    say("set x None then get", repr(zk.get(ROOT + "/x")[0]))
    say("get /", repr(zk.get("/")[0]), "get /zookeeper", repr(zk.get("/zookeeper")[0]))
    tx = zk.transaction()
    tx.create(ROOT + "/tx-empty", b"")
    tx.set_data(ROOT + "/none", b"")  # kazoo's transactions take bytes only
    say("transaction", [rel(p) if isinstance(p, str) else p.version for p in tx.commit()])
    for name in ("tx-empty", "none"):
        say("get", name, repr(zk.get(ROOT + "/" + name)[0]))


def counter(zk):
    say("== Counter")
    c = Counter(zk, ROOT + "/counter")
    say("fresh counter", c.value)
    c += 5
    say("after += 5", c.value, "pre", c.pre_value, "post", c.post_value)
    c -= 2
    say("after -= 2", c.value)
    zk.set(ROOT + "/counter", b"")
    say("node set to b''", c.value)
    f = Counter(zk, ROOT + "/float", default=1.5)
    f += 1.0
    say("float counter", f.value)
    zk.create(ROOT + "/counter-none", None)
    n = Counter(zk, ROOT + "/counter-none")
    try:
        say("counter on a null node", n.value)
    except Exception as err:  # kazoo decodes None: AttributeError
        say("counter on a null node raises", type(err).__name__)


def data_watch(zk):
    say("== DataWatch")
    calls = []
    path = ROOT + "/watched"

    @zk.DataWatch(path)
    def watch(data, stat):
        calls.append((data, stat.version if stat else None))

    def step(what, n, action):
        action()
        wait_until(lambda: len(calls) >= n, "DataWatch call %d (%s)" % (n, what))
        say("DataWatch after", what, "->", repr(calls[n - 1]))

    wait_until(lambda: len(calls) >= 1, "DataWatch's first call")
    say("DataWatch first call", repr(calls[0]))
    step("create b''", 2, lambda: zk.create(path, b""))
    step("set b'x'", 3, lambda: zk.set(path, b"x"))
    step("set b''", 4, lambda: zk.set(path, b""))
    step("set None", 5, lambda: zk.set(path, None))
    step("set b'' again", 6, lambda: zk.set(path, b""))
    step("delete", 7, lambda: zk.delete(path))
    say("DataWatch calls", len(calls))


def tree_cache(zk):
    say("== TreeCache")
    top = ROOT + "/tree"
    zk.create(top)
    zk.create(top + "/a", b"")
    zk.create(top + "/b", None)
    zk.create(top + "/c", b"c")
    events = []
    lock = threading.Lock()
    cache = TreeCache(zk, top)

    def listener(event):
        with lock:
            events.append(event)

    cache.listen(listener)
    cache.start()
    try:
        wait_until(lambda: any(e.event_type == TreeEvent.INITIALIZED for e in list(events)), "INITIALIZED")
        for name in ("", "/a", "/b", "/c"):
            nd = cache.get_data(top + name)
            say("cache", rel(top + name), repr(nd.data), "version", nd.stat.version)

        def updated(path, version):
            nd = cache.get_data(path)
            return nd is not None and nd.stat.version == version

        zk.set(top + "/c", b"")
        wait_until(lambda: updated(top + "/c", 1), "the cache to see c set to b''")
        say("cache after set c b''", repr(cache.get_data(top + "/c").data))
        zk.set(top + "/a", None)
        wait_until(lambda: updated(top + "/a", 1), "the cache to see a set to None")
        say("cache after set a None", repr(cache.get_data(top + "/a").data))
        zk.create(top + "/d", b"")
        wait_until(lambda: cache.get_data(top + "/d") is not None, "the cache to see d")
        say("cache after create d b''", repr(cache.get_data(top + "/d").data))
        with lock:
            kinds = {TreeEvent.NODE_ADDED: "added", TreeEvent.NODE_UPDATED: "updated"}
            seen = sorted("%s %s %r" % (kinds[e.event_type], rel(e.event_data.path), e.event_data.data)
                          for e in events if e.event_type in kinds)
        for line in seen:
            say("event", line)
    finally:
        cache.close()


def main():
    zk = KazooClient(hosts=ADDR, timeout=WAIT)
    zk.start(timeout=WAIT)
    try:
        zk.create(ROOT)
        plain(zk)
        counter(zk)
        data_watch(zk)
        tree_cache(zk)
        zk.delete(ROOT, recursive=True)
    finally:
        zk.stop()
        zk.close()
    say("== done")


if __name__ == "__main__":
    try:
        main()
    except Exception as err:
        print("error:", type(err).__name__, err, flush=True)
        sys.exit(1)
