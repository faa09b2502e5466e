"""kazoo_interop takes turns with zksim's recipes on one lock, read-write
lock, semaphore or election path, for clients/interop_test.go. Two
clients, each on its own thread, take the recipe HOLDS times between them;
under each hold a client marks the hold in the owners directory (a multi
that checks its hold node, so a hold its session lost marks nothing) and
looks for a conflicting mark.

Usage: python3 kazoo_interop.py <kind> <path> <owners> <holds> <id>
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
READ_WAIT = 1.0
counts = {"holds": 0, "lost": 0, "timeouts": 0, "violations": 0}
counts_lock = threading.Lock()


def count(what):
    with counts_lock:
        counts[what] += 1


def conflict(mark, marks):
    """A mark that must not exist beside ours, or None."""
    if mark.startswith("s-"):
        return str(marks) if len(marks) > LEASES else None
    for m in marks:
        if m != mark and (not mark.startswith("r-") or m.startswith("w-")):
            return m
    return None


def hold(zk, node, owners, mark):
    """Marks the hold of node, checks the marks, waits, unmarks."""
    p = owners + "/" + mark

    def mark_it():
        t = zk.transaction()
        t.check(node, -1)
        t.create(p, mark.encode(), ephemeral=True)
        return t.commit()

    res = zk.retry(mark_it)
    if isinstance(res[0], NoNodeError):
        count("lost")  # our hold node is gone: the hold was lost
        return
    if isinstance(res[1], Exception) and not isinstance(res[1], NodeExistsError):
        raise res[1]
    # NodeExists: a retry of a multi whose reply was lost; the mark is ours.
    count("holds")
    marks = zk.retry(zk.get_children, owners)
    c = conflict(mark, marks)
    if c is not None:
        count("violations")
        print("VIOLATION %s holds with %s %s" % (mark, c, marks), flush=True)
    time.sleep(0.002)

    def unmark():
        t = zk.transaction()
        t.check(node, -1)
        t.delete(p)
        return t.commit()

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
        write = random.randrange(3) == 0
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


def main():
    logging.basicConfig(level=logging.CRITICAL)
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
