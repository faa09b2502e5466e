// CuratorInterop takes turns with zksim's recipes (and kazoo's, never at
// once) on one lock, read-write lock, semaphore or election path, for
// clients/interop_test.go. Two clients, each on its own thread, take the
// recipe "holds" times between them; under each hold a client marks the
// hold in the owners directory (a multi that checks its hold node, so a
// hold its session lost marks nothing) and looks for a conflicting mark.
//
// Usage: java CuratorInterop <kind> <path> <owners> <holds> <id>, or
// java CuratorInterop order <lock name> <child>... to print the children in
// Curator's order.
// kind: mutex, rw, semaphore (2 leases), latch, selector.
// It prints "VIOLATION ..." lines and a last line
// "DONE holds=<n> lost=<n> timeouts=<n> violations=<n>".
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.recipes.leader.LeaderLatch;
import org.apache.curator.framework.recipes.leader.LeaderSelector;
import org.apache.curator.framework.recipes.leader.LeaderSelectorListenerAdapter;
import org.apache.curator.framework.recipes.locks.InterProcessMutex;
import org.apache.curator.framework.recipes.locks.InterProcessReadWriteLock;
import org.apache.curator.framework.recipes.locks.InterProcessSemaphoreV2;
import org.apache.curator.framework.recipes.locks.Lease;
import org.apache.curator.framework.recipes.locks.LockInternals;
import org.apache.curator.framework.recipes.locks.StandardLockInternalsDriver;
import org.apache.curator.retry.ExponentialBackoffRetry;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.data.Stat;

public class CuratorInterop {
    static final AtomicInteger holds = new AtomicInteger(), lost = new AtomicInteger(),
            timeouts = new AtomicInteger(), violations = new AtomicInteger();
    static final int LEASES = 2, WAIT_S = 10;
    static String kind, path, owners, id;

    public static void main(String[] args) throws Exception {
        if (args[0].equals("order")) {
            // order <lock name> <child>...: the children as Curator's
            // locks sort them (LockInternals.getSortedChildren with the
            // standard driver, as InterProcessMutex and LeaderLatch do).
            List<String> children = Arrays.asList(Arrays.copyOfRange(args, 2, args.length));
            for (String c : LockInternals.getSortedChildren(args[1], new StandardLockInternalsDriver(), children)) {
                System.out.println(c);
            }
            return;
        }
        kind = args[0];
        path = args[1];
        owners = args[2];
        int n = Integer.parseInt(args[3]);
        id = args[4];
        String addr = System.getenv("ZK_ADDR");
        Thread[] ts = new Thread[2];
        Throwable[] errs = new Throwable[2];
        for (int i = 0; i < 2; i++) {
            final int me = i;
            final int mine = n / 2 + (i == 0 ? n % 2 : 0);
            ts[i] = new Thread(() -> {
                try (CuratorFramework c = CuratorFrameworkFactory.builder().connectString(addr)
                        .sessionTimeoutMs(4000).connectionTimeoutMs(4000)
                        .retryPolicy(new ExponentialBackoffRetry(20, 20, 500)).build()) {
                    c.start();
                    c.blockUntilConnected();
                    client(c, me, mine);
                } catch (Throwable e) {
                    errs[me] = e;
                }
            });
            ts[i].start();
        }
        for (Thread t : ts) {
            t.join();
        }
        for (Throwable e : errs) {
            if (e != null) {
                e.printStackTrace();
                System.out.println("ERROR " + e);
            }
        }
        System.out.printf("DONE holds=%d lost=%d timeouts=%d violations=%d%n",
                holds.get(), lost.get(), timeouts.get(), violations.get());
        System.exit(0);
    }

    // client takes n holds of the recipe with one CuratorFramework.
    static void client(CuratorFramework c, int me, int n) throws Exception {
        Random rnd = new Random();
        InterProcessReadWriteLock rw = new InterProcessReadWriteLock(c, path);
        InterProcessMutex mutex = new InterProcessMutex(c, path);
        InterProcessSemaphoreV2 sem = new InterProcessSemaphoreV2(c, path, LEASES);
        for (int k = 0; k < n; k++) {
            String mark = id + "-" + me + "-" + k;
            System.err.printf("%d %s session %d%n", System.currentTimeMillis() % 100000, mark,
                    c.getZookeeperClient().getZooKeeper().getSessionId());
            try {
                switch (kind) {
                case "mutex":
                    if (!mutex.acquire(WAIT_S, TimeUnit.SECONDS)) {
                        timeouts.incrementAndGet();
                        continue;
                    }
                    try {
                        hold(c, ownedChild(c, path), "x-" + mark);
                    } finally {
                        mutex.release();
                    }
                    break;
                case "rw": {
                    boolean write = rnd.nextInt(4) == 0;
                    InterProcessMutex l = write ? rw.writeLock() : rw.readLock();
                    if (!l.acquire(WAIT_S, TimeUnit.SECONDS)) {
                        timeouts.incrementAndGet();
                        continue;
                    }
                    try {
                        hold(c, ownedChild(c, path), (write ? "w-" : "r-") + mark);
                    } finally {
                        l.release();
                    }
                    break;
                }
                case "semaphore": {
                    Lease lease = sem.acquire(WAIT_S, TimeUnit.SECONDS);
                    if (lease == null) {
                        timeouts.incrementAndGet();
                        continue;
                    }
                    try {
                        String p = lease.getNodeName();
                        hold(c, p.startsWith("/") ? p : path + "/leases/" + p, "s-" + mark);
                    } finally {
                        lease.close();
                    }
                    break;
                }
                case "latch": {
                    LeaderLatch latch = new LeaderLatch(c, path, mark);
                    latch.start();
                    try {
                        if (!latch.await(WAIT_S, TimeUnit.SECONDS)) {
                            timeouts.incrementAndGet();
                            continue;
                        }
                        hold(c, latch.getOurPath(), "x-" + mark);
                    } finally {
                        latch.close();
                    }
                    break;
                }
                case "selector": {
                    CountDownLatch done = new CountDownLatch(1);
                    AtomicBoolean led = new AtomicBoolean();
                    LeaderSelector sel = new LeaderSelector(c, path, new LeaderSelectorListenerAdapter() {
                        @Override
                        public void takeLeadership(CuratorFramework cf) throws Exception {
                            if (led.getAndSet(true)) {
                                return; // requeued before close: once is enough
                            }
                            try {
                                hold(cf, ownedChild(cf, path), "x-" + mark);
                            } finally {
                                done.countDown();
                            }
                        }
                    });
                    // A selector whose attempt fails (a fault) gives up
                    // unless it requeues itself.
                    sel.autoRequeue();
                    sel.start();
                    try {
                        if (!done.await(WAIT_S, TimeUnit.SECONDS)) {
                            timeouts.incrementAndGet();
                        }
                    } finally {
                        sel.close();
                    }
                    break;
                }
                default:
                    throw new IllegalArgumentException("unknown kind " + kind);
                }
            } catch (KeeperException | IllegalStateException e) {
                // A fault the recipe gave up on (Curator's own retries
                // exhausted, or its session lost): not a hold.
                lost.incrementAndGet();
            } catch (IllegalArgumentException e) {
                // Curator 5.4's lock can fail this way when the reply to
                // its protected create is lost ("Path cannot be null": it
                // found no node of its own and went on with none): its
                // failure, not a hold, and not a breach of exclusion,
                // which is what this program checks.
                System.err.printf("%s gave up: %s%n", mark, e);
                lost.incrementAndGet();
            }
        }
    }

    // ownedChild returns the child of dir that our session owns: the node
    // of the hold we just took.
    static String ownedChild(CuratorFramework c, String dir) throws Exception {
        long sid = c.getZookeeperClient().getZooKeeper().getSessionId();
        for (String child : c.getChildren().forPath(dir)) {
            Stat st = c.checkExists().forPath(dir + "/" + child);
            if (st != null && st.getEphemeralOwner() == sid) {
                return dir + "/" + child;
            }
        }
        return null;
    }

    // hold marks the hold of node under owners, checks the marks for a
    // conflict, waits a little and removes the mark.
    static void hold(CuratorFramework c, String node, String mark) throws Exception {
        if (node == null) {
            lost.incrementAndGet();
            return;
        }
        String p = owners + "/" + mark;
        byte[] data = node.getBytes(StandardCharsets.UTF_8);
        try {
            c.transaction().forOperations(c.transactionOp().check().forPath(node),
                    c.transactionOp().create().withMode(CreateMode.EPHEMERAL).forPath(p, data));
        } catch (KeeperException.NoNodeException e) {
            lost.incrementAndGet(); // our hold node is gone: the hold was lost
            return;
        } catch (KeeperException.NodeExistsException e) {
            // A retry of a multi whose reply was lost: the mark is ours.
        }
        holds.incrementAndGet();
        try {
            List<String> live = live(c, node, mark);
            if (live.size() > (mark.startsWith("s-") ? LEASES - 1 : 0)) {
                violations.incrementAndGet();
                System.out.println("VIOLATION " + mark + " holds with " + live + " (mine " + node + ")");
            }
            Thread.sleep(2);
        } finally {
            // Unmark even when interrupted (LeaderSelector.close interrupts
            // a leader): a mark left behind would be a false overlap.
            boolean interrupted = Thread.interrupted();
            try {
                c.delete().forPath(p); // ours alone, whatever became of the hold
            } catch (KeeperException.NoNodeException e) {
                // Gone with its session.
            } finally {
                if (interrupted) {
                    Thread.currentThread().interrupt();
                }
            }
        }
    }

    // live returns the other marks that count against ours (a reader's
    // against a writer's only) whose hold node exists at the same time as
    // ours, as one multi of two checks sees them: a client can go on after
    // its hold ended as the server sees it (LeaderLatch deletes its node
    // when it reconnects), which is the client's business.
    static List<String> live(CuratorFramework c, String node, String mark) throws Exception {
        List<String> live = new ArrayList<>();
        for (String m : c.getChildren().forPath(owners)) {
            if (m.equals(mark) || (mark.startsWith("r-") && !m.startsWith("w-"))) {
                continue;
            }
            String theirs;
            try {
                theirs = new String(c.getData().forPath(owners + "/" + m), StandardCharsets.UTF_8);
            } catch (KeeperException.NoNodeException e) {
                continue;
            }
            try {
                c.transaction().forOperations(c.transactionOp().check().forPath(node),
                        c.transactionOp().check().forPath(theirs));
                live.add(m + "=" + theirs);
            } catch (KeeperException.NoNodeException e) {
                // One of the two holds has ended.
            }
        }
        return live;
    }
}
