"""kazoo_interop takes turns with zksim's recipes on one lock, read-write
lock, semaphore or election path, for clients/interop_test.go. Two
clients, each on its own thread, take the recipe HOLDS times between them;
under each hold a client marks the hold in the owners directory (a multi
that checks its hold node, so a hold its session lost marks nothing) and
looks for a conflicting mark.

Usage: python3 kazoo_interop.py <kind> <path> <owners> <holds> <id>, or
python3 kazoo_interop.py order <child>... to print each child with the
predecessor kazoo's Lock finds for it.
kind: mutex, rw, semaphore (2 leases), election.
It prints "VIOLATION ..." lines and a last line
"DONE holds=<n> lost=<n> timeouts=<n> violations=<n>".
"""
import logging
import os
import random
import sys
import threading
import time

from kazoo.client import KazooClient
from kazoo.exceptions import (KazooException, LockTimeout, NodeExistsError,
                              NoNodeError)
from kazoo.retry import KazooRetry

LEASES = 2
WAIT = 10.0
# kazoo 2.8's ReadLock waits for every writer in the directory, even one
# that came after it, while that writer waits for the reader: a deadlock
# that only the reader's timeout breaks. Readers wait less.
READ_WAIT = 0.5
counts = {"holds": 0, "lost": 0, "timeouts": 0, "violations": 0}
counts_lock = threading.Lock()


def count(what):
    with counts_lock:
        counts[what] += 1


def live(zk, node, owners, mark):
    """The other marks that count against ours (a reader's against a
    writer's only) whose hold node exists at the same time as ours, as one
    multi of two checks sees them: a client can go on after its hold ended
    as the server sees it, which is the client's business."""
    found = []
    for m in zk.retry(zk.get_children, owners):
        if m == mark or (mark.startswith("r-") and not m.startswith("w-")):
            continue
        try:
            theirs = zk.retry(zk.get, owners + "/" + m)[0].decode()
        except NoNodeError:
            continue

        def both():
            t = zk.transaction()
            t.check(node, -1)
            t.check(theirs, -1)
            return t.commit()

        if not any(isinstance(r, Exception) for r in zk.retry(both)):
            found.append(m + "=" + theirs)
    return found


def hold(zk, node, owners, mark):
    """Marks the hold of node, checks the marks, waits, unmarks."""
    p = owners + "/" + mark

    def mark_it():
        t = zk.transaction()
        t.check(node, -1)
        t.create(p, node.encode(), ephemeral=True)
        return t.commit()

    res = zk.retry(mark_it)
    if isinstance(res[0], NoNodeError):
        count("lost")  # our hold node is gone: the hold was lost
        return
    if isinstance(res[1], Exception) and not isinstance(res[1], NodeExistsError):
        raise res[1]
    # NodeExists: a retry of a multi whose reply was lost; the mark is ours.
    count("holds")

    def unmark():
        try:
            zk.delete(p)  # ours alone, whatever became of the hold
        except NoNodeError:
            pass

    try:
        others = live(zk, node, owners, mark)
        if len(others) > (LEASES - 1 if mark.startswith("s-") else 0):
            count("violations")
            print("VIOLATION %s holds with %s (mine %s)" % (mark, others, node), flush=True)
        time.sleep(0.002)
    finally:
        zk.retry(unmark)


def client(me, n, kind, path, owners, ident):
    zk = KazooClient(hosts=os.environ["ZK_ADDR"], timeout=4.0,
                     connection_retry=KazooRetry(max_tries=-1, max_delay=0.5),
                     command_retry=KazooRetry(max_tries=-1, max_delay=0.5))
    zk.start(timeout=20)
    try:
        for k in range(n):
            mark = "%s-%d-%d" % (ident, me, k)
            try:
                one(zk, kind, path, owners, mark)
            except LockTimeout:
                count("timeouts")
            except KazooException:
                count("lost")
    finally:
        zk.stop()
        zk.close()


def one(zk, kind, path, owners, mark):
    if kind == "mutex":
        lock = zk.Lock(path, mark)
        if not lock.acquire(timeout=WAIT):
            count("timeouts")
            return
        try:
            hold(zk, path + "/" + lock.node, owners, "x-" + mark)
        finally:
            lock.release()
    elif kind == "rw":
        write = random.randrange(4) == 0
        lock = (zk.WriteLock if write else zk.ReadLock)(path, mark)
        if not lock.acquire(timeout=WAIT if write else READ_WAIT):
            count("timeouts")
            return
        try:
            hold(zk, path + "/" + lock.node, owners, ("w-" if write else "r-") + mark)
        finally:
            lock.release()
    elif kind == "semaphore":
        sem = zk.Semaphore(path, mark, max_leases=LEASES)
        if not sem.acquire(timeout=WAIT):
            count("timeouts")
            return
        try:
            hold(zk, sem.create_path, owners, "s-" + mark)
        finally:
            sem.release()
    elif kind == "election":
        election = zk.Election(path, mark)
        done = threading.Event()

        def lead():
            hold(zk, path + "/" + election.lock.node, owners, "x-" + mark)
            done.set()

        timer = threading.Timer(WAIT, election.cancel)
        timer.start()
        try:
            election.run(lead)
        finally:
            timer.cancel()
        if not done.is_set():
            count("timeouts")
    else:
        raise ValueError("unknown kind " + kind)


class _FakeHandler(object):
    sleep_func = staticmethod(lambda s: None)

    def event_object(self):
        return threading.Event()

    def lock_object(self):
        return threading.Lock()


class _FakeClient(object):
    """Just enough of a KazooClient for Lock._get_predecessor."""
    handler = _FakeHandler()

    def __init__(self, children):
        self.children = children

    def get_children(self, path):
        return list(self.children)


def order(children):
    """Prints each child and the predecessor kazoo's Lock finds for it."""
    from kazoo.recipe.lock import Lock
    lock = Lock(_FakeClient(children), "/p")
    for c in children:
        print(c, lock._get_predecessor(c))


def main():
    logging.basicConfig(level=logging.CRITICAL)
    if sys.argv[1] == "order":
        order(sys.argv[2:])
        return
    kind, path, owners, n, ident = sys.argv[1:6]
    n = int(n)
    threads = [threading.Thread(target=client, args=(i, n // 2 + (n % 2 if i == 0 else 0), kind, path, owners, ident))
               for i in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    print("DONE holds=%(holds)d lost=%(lost)d timeouts=%(timeouts)d violations=%(violations)d" % counts, flush=True)


if __name__ == "__main__":
    main()
