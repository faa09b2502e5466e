// Curator 5.4 (Debian libcurator-recipes-java) against a ZooKeeper server:
// zksim's wire server or a real ZooKeeper.
//
// Usage: java -cp CLASSPATH CuratorRecipes SCENARIO...
// with SCENARIO one of mutex, leader, queue, cache, semaphore, double-barrier,
// transaction, admin, expiry, disconnect, lost-create, pause.
// The server address comes from ZK_ADDR (host:port); ZKSIM_CONTROL is the
// control URL of zksim's wire server, without which the last three skip.
//
// It runs the scenarios in turn, each with its own clients and root path.
// Output per scenario: "=== RUN scenario", then "PASS scenario", "SKIP
// scenario: reason" or "FAIL scenario: error" and a stack trace. The exit
// status is 1 if any failed. Every wait is bounded, so a hang is a failure.

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;

import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.api.transaction.CuratorTransactionResult;
import org.apache.curator.framework.recipes.barriers.DistributedDoubleBarrier;
import org.apache.curator.framework.recipes.cache.CuratorCache;
import org.apache.curator.framework.recipes.cache.CuratorCacheListener;
import org.apache.curator.framework.recipes.leader.LeaderLatch;
import org.apache.curator.framework.recipes.locks.InterProcessSemaphoreV2;
import org.apache.curator.framework.recipes.locks.Lease;
import org.apache.curator.framework.recipes.locks.InterProcessMutex;
import org.apache.curator.framework.recipes.queue.DistributedQueue;
import org.apache.curator.framework.recipes.queue.QueueBuilder;
import org.apache.curator.framework.recipes.queue.QueueConsumer;
import org.apache.curator.framework.recipes.queue.QueueSerializer;
import org.apache.curator.framework.state.ConnectionState;
import org.apache.curator.retry.ExponentialBackoffRetry;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.ZooKeeper;
import org.apache.zookeeper.WatchedEvent;
import org.apache.zookeeper.Watcher;

public class CuratorRecipes {
    static final String ADDR = envOr("ZK_ADDR", "127.0.0.1:2181");
    static final String CONTROL = envOr("ZKSIM_CONTROL", "").replaceAll("/$", "");
    static final long WAIT_MS = 20_000;

    final List<CuratorFramework> clients = new ArrayList<>();
    final String root = "/curator-" + UUID.randomUUID().toString().substring(0, 8);

    public static void main(String[] args) throws Exception {
        if (args.length == 0) {
            System.err.println("usage: CuratorRecipes SCENARIO... (see the file)");
            System.exit(2);
        }
        int code = 0;
        for (String scenario : args) {
            System.out.println("=== RUN " + scenario);
            CuratorRecipes t = new CuratorRecipes();
            try {
                String skip = t.run(scenario);
                System.out.println(skip == null ? "PASS " + scenario : "SKIP " + scenario + ": " + skip);
            } catch (Throwable e) {
                System.out.println("FAIL " + scenario + ": " + e);
                e.printStackTrace(System.out);
                code = 1;
            } finally {
                t.cleanup();
            }
        }
        System.exit(code);
    }

    /** Runs a scenario; returns null when it passed, or why it skipped. */
    String run(String scenario) throws Exception {
        switch (scenario) {
            case "mutex": mutex(); return null;
            case "leader": leader(); return null;
            case "queue": queue(); return null;
            case "cache": cache(); return null;
            case "semaphore": semaphore(); return null;
            case "double-barrier": doubleBarrier(); return null;
            case "transaction": transaction(); return null;
            case "admin": admin(); return null;
            case "expiry":
            case "disconnect":
            case "lost-create":
            case "pause":
                if (CONTROL.isEmpty()) {
                    return "ZKSIM_CONTROL not set (not zksim's wire server)";
                }
                if (scenario.equals("expiry")) {
                    expiry();
                } else if (scenario.equals("disconnect")) {
                    disconnect();
                } else if (scenario.equals("pause")) {
                    pause();
                } else {
                    lostCreate();
                }
                return null;
            default: throw new IllegalArgumentException("unknown scenario " + scenario);
        }
    }

    static String envOr(String key, String def) {
        String v = System.getenv(key);
        return v == null || v.isEmpty() ? def : v;
    }

    /** A started client on ADDR, closed at cleanup. */
    CuratorFramework client() throws InterruptedException {
        CuratorFramework c = CuratorFrameworkFactory.newClient(ADDR, 10_000, 5_000, new ExponentialBackoffRetry(100, 3));
        synchronized (clients) {
            clients.add(c);
        }
        c.start();
        check(c.blockUntilConnected((int) WAIT_MS, TimeUnit.MILLISECONDS), "client did not connect to " + ADDR);
        return c;
    }

    void cleanup() {
        try {
            if (!clients.isEmpty()) {
                CuratorFramework c = clients.get(0);
                if (c.getZookeeperClient().isConnected() && c.checkExists().forPath(root) != null) {
                    c.delete().deletingChildrenIfNeeded().forPath(root);
                }
            }
        } catch (Exception e) {
            System.err.println("cleanup: " + e);
        }
        for (CuratorFramework c : clients) {
            c.close();
        }
    }

    /**
     * The children of path, none if it does not exist: the recipes make
     * their parents as containers, which a real server deletes once empty.
     */
    static List<String> children(CuratorFramework c, String path) throws Exception {
        try {
            return c.getChildren().forPath(path);
        } catch (KeeperException.NoNodeException e) {
            return List.of();
        }
    }

    static void check(boolean cond, String msg) {
        if (!cond) {
            throw new AssertionError(msg);
        }
    }

    static void waitUntil(BooleanSupplier cond, String what) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(WAIT_MS);
        while (!cond.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("timed out waiting for " + what);
            }
            Thread.sleep(10);
        }
    }

    /** Waits for every future; rethrows the first failure. */
    static void joinAll(List<Future<?>> futures) throws Exception {
        for (Future<?> f : futures) {
            f.get(WAIT_MS, TimeUnit.MILLISECONDS);
        }
    }

    // InterProcessMutex: four clients increment one counter under the mutex;
    // never two holders at once, no lost update; a held mutex is not taken
    // by another client and is reentrant for its holder.
    void mutex() throws Exception {
        CuratorFramework admin = client();
        String lockPath = root + "/lock";
        String counter = root + "/counter";
        admin.create().creatingParentsIfNeeded().forPath(counter, "0".getBytes(StandardCharsets.UTF_8));

        AtomicInteger inside = new AtomicInteger();
        AtomicInteger max = new AtomicInteger();
        int workers = 4, rounds = 5;
        ExecutorService pool = Executors.newFixedThreadPool(workers);
        List<Future<?>> futures = new ArrayList<>();
        for (int i = 0; i < workers; i++) {
            futures.add(pool.submit(() -> {
                CuratorFramework c = client();
                InterProcessMutex m = new InterProcessMutex(c, lockPath);
                for (int r = 0; r < rounds; r++) {
                    check(m.acquire(WAIT_MS, TimeUnit.MILLISECONDS), "acquire timed out");
                    try {
                        max.accumulateAndGet(inside.incrementAndGet(), Math::max);
                        int v = Integer.parseInt(new String(c.getData().forPath(counter), StandardCharsets.UTF_8));
                        Thread.sleep(5);
                        c.setData().forPath(counter, Integer.toString(v + 1).getBytes(StandardCharsets.UTF_8));
                        inside.decrementAndGet();
                    } finally {
                        m.release();
                    }
                }
                return null;
            }));
        }
        joinAll(futures);
        pool.shutdown();
        check(max.get() == 1, "two clients held the mutex at once (max " + max.get() + ")");
        int total = Integer.parseInt(new String(admin.getData().forPath(counter), StandardCharsets.UTF_8));
        check(total == workers * rounds, "counter " + total + ", want " + workers * rounds);

        InterProcessMutex a = new InterProcessMutex(client(), lockPath);
        InterProcessMutex b = new InterProcessMutex(client(), lockPath);
        check(a.acquire(WAIT_MS, TimeUnit.MILLISECONDS), "a: acquire");
        check(a.acquire(WAIT_MS, TimeUnit.MILLISECONDS), "a: reentrant acquire");
        check(!b.acquire(300, TimeUnit.MILLISECONDS), "b took a mutex that a holds");
        a.release();
        check(!b.acquire(300, TimeUnit.MILLISECONDS), "b took the mutex a still holds once");
        a.release();
        check(b.acquire(WAIT_MS, TimeUnit.MILLISECONDS), "b: acquire after a released");
        b.release();
        check(children(admin, lockPath).isEmpty(), "lock nodes left behind");
    }

    // LeaderLatch: of three latches exactly one leads and all agree on who;
    // when the leader closes its latch another takes over.
    void leader() throws Exception {
        String path = root + "/leader";
        List<LeaderLatch> latches = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            LeaderLatch l = new LeaderLatch(client(), path, "latch-" + i);
            latches.add(l);
            l.start();
        }
        List<LeaderLatch> open = new ArrayList<>(latches);
        for (int round = 0; round < 3; round++) {
            waitUntil(() -> open.stream().filter(LeaderLatch::hasLeadership).count() == 1, "exactly one leader");
            LeaderLatch leader = open.stream().filter(LeaderLatch::hasLeadership).findFirst().get();
            for (LeaderLatch l : open) {
                String seen = l.getLeader().getId();
                check(seen.equals(leader.getId()), l.getId() + " sees leader " + seen + ", want " + leader.getId());
                check(l.getParticipants().size() == open.size(), "participants " + l.getParticipants().size() + ", want " + open.size());
            }
            check(open.stream().filter(LeaderLatch::hasLeadership).count() == 1, "two leaders at once");
            leader.close();
            open.remove(leader);
        }
        CuratorFramework admin = clients.get(0);
        // close deletes the latch node in the background.
        waitUntil(() -> {
            try {
                return children(admin, path).isEmpty();
            } catch (Exception e) {
                throw new RuntimeException(e);
            }
        }, "no latch nodes left");
    }

    // DistributedQueue: one client puts 20 items, a consumer on another
    // client gets every one exactly once, in order.
    void queue() throws Exception {
        String path = root + "/queue";
        QueueSerializer<String> ser = new QueueSerializer<>() {
            public byte[] serialize(String item) {
                return item.getBytes(StandardCharsets.UTF_8);
            }

            public String deserialize(byte[] bytes) {
                return new String(bytes, StandardCharsets.UTF_8);
            }
        };
        BlockingQueue<String> got = new LinkedBlockingQueue<>();
        QueueConsumer<String> consumer = new QueueConsumer<>() {
            public void consumeMessage(String message) {
                got.add(message);
            }

            public void stateChanged(CuratorFramework client, ConnectionState newState) {
            }
        };
        DistributedQueue<String> producer = QueueBuilder.builder(client(), null, ser, path).buildQueue();
        producer.start();
        List<String> want = new ArrayList<>();
        for (int i = 0; i < 20; i++) {
            String item = String.format("item-%02d", i);
            want.add(item);
            producer.put(item);
        }
        DistributedQueue<String> q = QueueBuilder.builder(client(), consumer, ser, path).buildQueue();
        q.start();
        List<String> taken = new ArrayList<>();
        while (taken.size() < want.size()) {
            String item = got.poll(WAIT_MS, TimeUnit.MILLISECONDS);
            check(item != null, "consumer got " + taken.size() + " of " + want.size() + " items");
            taken.add(item);
        }
        check(taken.equals(want), "consumed " + taken + ", want " + want);
        check(got.poll(200, TimeUnit.MILLISECONDS) == null, "an item was consumed twice");
        q.close();
        producer.close();
    }

    // CuratorCache (a persistent recursive watch, addWatch): it sees every
    // node made, changed and deleted under its root by another client.
    void cache() throws Exception {
        CuratorFramework a = client();
        CuratorFramework b = client();
        String path = root + "/cache";
        b.create().creatingParentsIfNeeded().forPath(path, "r".getBytes(StandardCharsets.UTF_8));
        List<String> events = new CopyOnWriteArrayList<>();
        CuratorCache cache = CuratorCache.build(a, path);
        java.util.concurrent.CountDownLatch primed = new java.util.concurrent.CountDownLatch(1);
        cache.listenable().addListener(CuratorCacheListener.builder()
                .forCreates(n -> events.add("create " + n.getPath() + " " + new String(n.getData(), StandardCharsets.UTF_8)))
                .forChanges((o, n) -> events.add("change " + n.getPath() + " " + new String(n.getData(), StandardCharsets.UTF_8)))
                .forDeletes(o -> events.add("delete " + o.getPath()))
                .forInitialized(primed::countDown)
                .build());
        cache.start();
        check(primed.await(WAIT_MS, TimeUnit.MILLISECONDS), "cache not initialized");
        // The cache reads a node's data in the background after each event:
        // a change made before that read would be folded into the create.
        // So each step waits for the cache to catch up before the next.
        b.create().forPath(path + "/x", "1".getBytes(StandardCharsets.UTF_8));
        waitForEvent(events, "create " + path + "/x 1");
        b.create().forPath(path + "/x/y", "2".getBytes(StandardCharsets.UTF_8));
        waitForEvent(events, "create " + path + "/x/y 2");
        b.setData().forPath(path + "/x", "3".getBytes(StandardCharsets.UTF_8));
        waitForEvent(events, "change " + path + "/x 3");
        b.delete().forPath(path + "/x/y");
        waitForEvent(events, "delete " + path + "/x/y");
        List<String> want = List.of("create " + path + " r", "create " + path + "/x 1", "create " + path + "/x/y 2",
                "change " + path + "/x 3", "delete " + path + "/x/y");
        waitUntil(() -> events.size() >= want.size(), "cache events " + want);
        check(events.equals(want), "cache events " + events + ", want " + want);
        check(new String(cache.get(path + "/x").get().getData(), StandardCharsets.UTF_8).equals("3"), "cache data of x");
        check(cache.get(path + "/x/y").isEmpty(), "cache still has x/y");
        cache.close();
    }

    static void waitForEvent(List<String> events, String want) throws InterruptedException {
        try {
            waitUntil(() -> events.contains(want), want);
        } catch (AssertionError e) {
            throw new AssertionError(e.getMessage() + "; cache events " + events, e);
        }
    }

    // InterProcessSemaphoreV2 with two leases: a third client waits until a
    // holder returns its lease.
    void semaphore() throws Exception {
        String path = root + "/semaphore";
        InterProcessSemaphoreV2 s1 = new InterProcessSemaphoreV2(client(), path, 2);
        InterProcessSemaphoreV2 s2 = new InterProcessSemaphoreV2(client(), path, 2);
        InterProcessSemaphoreV2 s3 = new InterProcessSemaphoreV2(client(), path, 2);
        Lease l1 = s1.acquire(WAIT_MS, TimeUnit.MILLISECONDS);
        Lease l2 = s2.acquire(WAIT_MS, TimeUnit.MILLISECONDS);
        check(l1 != null && l2 != null, "two leases of two");
        check(s3.acquire(300, TimeUnit.MILLISECONDS) == null, "a third lease of two");
        ExecutorService pool = Executors.newSingleThreadExecutor();
        Future<Lease> third = pool.submit(() -> s3.acquire(WAIT_MS, TimeUnit.MILLISECONDS));
        Thread.sleep(100);
        check(!third.isDone(), "the third client got a lease while two were out");
        s1.returnLease(l1);
        Lease l3 = third.get(WAIT_MS, TimeUnit.MILLISECONDS);
        check(l3 != null, "no lease after one was returned");
        check(s1.getParticipantNodes().size() == 2, "participants " + s1.getParticipantNodes());
        s2.returnLease(l2);
        s3.returnLease(l3);
        pool.shutdown();
    }

    // DistributedDoubleBarrier with three members: nobody passes enter
    // before all three arrived; all leave.
    void doubleBarrier() throws Exception {
        String path = root + "/dbarrier";
        int n = 3;
        AtomicInteger arrived = new AtomicInteger();
        List<Integer> passed = new CopyOnWriteArrayList<>();
        ExecutorService pool = Executors.newFixedThreadPool(n);
        List<Future<?>> futures = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            int id = i;
            futures.add(pool.submit(() -> {
                DistributedDoubleBarrier b = new DistributedDoubleBarrier(client(), path, n);
                Thread.sleep(100L * id);
                arrived.incrementAndGet();
                check(b.enter(WAIT_MS, TimeUnit.MILLISECONDS), "enter timed out");
                passed.add(arrived.get());
                check(b.leave(WAIT_MS, TimeUnit.MILLISECONDS), "leave timed out");
                return null;
            }));
        }
        joinAll(futures);
        pool.shutdown();
        check(passed.equals(List.of(n, n, n)), "passed enter with arrivals " + passed + ", want all " + n);
    }

    // A transaction (multi): all or nothing, with each operation's result.
    void transaction() throws Exception {
        CuratorFramework c = client();
        c.create().creatingParentsIfNeeded().forPath(root + "/t");
        List<CuratorTransactionResult> res = c.transaction().forOperations(
                c.transactionOp().create().forPath(root + "/t/a", "1".getBytes(StandardCharsets.UTF_8)),
                c.transactionOp().create().withMode(CreateMode.PERSISTENT_SEQUENTIAL).forPath(root + "/t/s-"),
                c.transactionOp().setData().forPath(root + "/t/a", "2".getBytes(StandardCharsets.UTF_8)),
                c.transactionOp().check().withVersion(1).forPath(root + "/t/a"));
        check(res.size() == 4, "results " + res);
        check(res.get(1).getResultPath().equals(root + "/t/s-0000000001"), "sequential path " + res.get(1).getResultPath());
        check(res.get(2).getResultStat().getVersion() == 1, "setData stat version " + res.get(2).getResultStat());
        try {
            c.transaction().forOperations(
                    c.transactionOp().delete().forPath(root + "/t/a"),
                    c.transactionOp().check().withVersion(7).forPath(root + "/t/s-0000000001"));
            throw new AssertionError("a transaction with a failing check committed");
        } catch (KeeperException.BadVersionException e) {
            // expected: all or nothing
        }
        check(c.checkExists().forPath(root + "/t/a") != null, "a failed transaction deleted a");
    }

    // The 3.6+ requests a ZooKeeper client sends: getEphemerals,
    // getAllChildrenNumber, whoAmI, sync, createContainer (Curator's
    // creatingParentContainersIfNeeded).
    void admin() throws Exception {
        CuratorFramework c = client();
        ZooKeeper zk = c.getZookeeperClient().getZooKeeper();
        c.create().creatingParentContainersIfNeeded().withMode(CreateMode.EPHEMERAL).forPath(root + "/box/e1");
        c.create().withMode(CreateMode.EPHEMERAL).forPath(root + "/box/e2");
        c.create().forPath(root + "/box/p");
        check(c.checkExists().forPath(root + "/box").getEphemeralOwner() == 0, "the container is ephemeral");
        List<String> eph = zk.getEphemerals(root + "/box");
        Collections.sort(eph);
        check(eph.equals(List.of(root + "/box/e1", root + "/box/e2")), "getEphemerals " + eph);
        check(zk.getAllChildrenNumber(root) == 4, "getAllChildrenNumber " + zk.getAllChildrenNumber(root));
        List<org.apache.zookeeper.data.ClientInfo> who = zk.whoAmI();
        check(who.size() == 1 && who.get(0).getAuthScheme().equals("ip") && who.get(0).getUser().equals("127.0.0.1"), "whoAmI " + who);
        java.util.concurrent.CompletableFuture<Integer> synced = new java.util.concurrent.CompletableFuture<>();
        zk.sync(root, (rc, p, ctx) -> synced.complete(rc), null);
        check(synced.get(WAIT_MS, TimeUnit.MILLISECONDS) == 0, "sync rc");
    }

    // A session expired through ZKSIM_CONTROL: Curator reports LOST then
    // RECONNECTED on a new session; the ephemeral node and the mutex the
    // session held are gone, and a waiting client takes the mutex.
    void expiry() throws Exception {
        CuratorFramework a = client();
        CuratorFramework b = client();
        List<ConnectionState> states = new CopyOnWriteArrayList<>();
        a.getConnectionStateListenable().addListener((c, s) -> states.add(s));
        String eph = root + "/eph";
        a.create().creatingParentsIfNeeded().withMode(CreateMode.EPHEMERAL).forPath(eph);
        InterProcessMutex ma = new InterProcessMutex(a, root + "/lock");
        InterProcessMutex mb = new InterProcessMutex(b, root + "/lock");
        check(ma.acquire(WAIT_MS, TimeUnit.MILLISECONDS), "a: acquire");
        check(!mb.acquire(300, TimeUnit.MILLISECONDS), "b took a mutex that a holds");

        long sid = a.getZookeeperClient().getZooKeeper().getSessionId();
        HttpResponse<String> resp = control("/sessions/" + sid + "/expire");
        check(resp.statusCode() == 200, "expire: " + resp.statusCode() + " " + resp.body());

        waitUntil(() -> states.contains(ConnectionState.LOST), "state LOST");
        waitUntil(() -> states.lastIndexOf(ConnectionState.RECONNECTED) > states.indexOf(ConnectionState.LOST), "state RECONNECTED after LOST");
        check(b.checkExists().forPath(eph) == null, "the expired session's ephemeral is still there");
        long sid2 = a.getZookeeperClient().getZooKeeper().getSessionId();
        check(sid2 != sid, "same session id after expiry");
        check(mb.acquire(WAIT_MS, TimeUnit.MILLISECONDS), "b did not get the mutex of an expired holder");
        mb.release();
    }

    // A dropped connection: Curator reports SUSPENDED then RECONNECTED on
    // the same session; the ZooKeeper client re-registers its watch on the
    // reconnect (setWatches), so a change made around the drop fires it
    // once; the ephemeral stays; the LeaderLatch leads again with one node.
    void disconnect() throws Exception {
        CuratorFramework a = client();
        CuratorFramework b = client();
        List<ConnectionState> states = new CopyOnWriteArrayList<>();
        a.getConnectionStateListenable().addListener((c, s) -> states.add(s));
        String path = root + "/data";
        String eph = root + "/eph";
        b.create().creatingParentsIfNeeded().forPath(path, "v0".getBytes(StandardCharsets.UTF_8));
        a.create().withMode(CreateMode.EPHEMERAL).forPath(eph);
        LeaderLatch latch = new LeaderLatch(a, root + "/leader", "a");
        latch.start();
        check(latch.await(WAIT_MS, TimeUnit.MILLISECONDS), "latch: no leadership");
        List<WatchedEvent> events = new CopyOnWriteArrayList<>();
        // State changes reach every watcher too (type None): keep the others.
        a.getData().usingWatcher((Watcher) e -> {
            if (e.getType() != Watcher.Event.EventType.None) {
                events.add(e);
            }
        }).forPath(path);

        long sid = a.getZookeeperClient().getZooKeeper().getSessionId();
        HttpResponse<String> resp = control("/sessions/" + sid + "/disconnect");
        check(resp.statusCode() == 200, "disconnect: " + resp.statusCode() + " " + resp.body());
        b.setData().forPath(path, "v1".getBytes(StandardCharsets.UTF_8));

        waitUntil(() -> states.contains(ConnectionState.SUSPENDED), "state SUSPENDED");
        waitUntil(() -> states.lastIndexOf(ConnectionState.RECONNECTED) > states.indexOf(ConnectionState.SUSPENDED), "state RECONNECTED after SUSPENDED");
        check(!states.contains(ConnectionState.LOST), "LOST after a mere disconnect: " + states);
        check(a.getZookeeperClient().getZooKeeper().getSessionId() == sid, "a new session after a mere disconnect");
        waitUntil(() -> !events.isEmpty(), "the data watch to fire");
        WatchedEvent ev = events.get(0);
        check(ev.getType() == Watcher.Event.EventType.NodeDataChanged && path.equals(ev.getPath()),
                "watch event " + ev + ", want NodeDataChanged " + path);
        check(b.checkExists().forPath(eph) != null, "the ephemeral went with the connection");
        waitUntil(latch::hasLeadership, "latch leads again");
        waitUntil(() -> {
            try {
                return children(b, root + "/leader").size() == 1;
            } catch (Exception e) {
                throw new RuntimeException(e);
            }
        }, "one latch node");
        b.setData().forPath(path, "v2".getBytes(StandardCharsets.UTF_8));
        Thread.sleep(200);
        check(events.size() == 1, "a one-shot watch fired " + events.size() + " times: " + events);
        latch.close();
    }

    // A lost reply to the create of a lock node: the node is made, the
    // client gets a connection loss, and Curator's protected create finds
    // the node after the reconnect, so the mutex is held with no orphan
    // node and released cleanly.
    void lostCreate() throws Exception {
        CuratorFramework a = client();
        CuratorFramework b = client();
        List<ConnectionState> states = new CopyOnWriteArrayList<>();
        a.getConnectionStateListenable().addListener((c, s) -> states.add(s));
        String lockPath = root + "/lock";
        a.create().creatingParentsIfNeeded().forPath(lockPath);

        long sid = a.getZookeeperClient().getZooKeeper().getSessionId();
        // Curator 5 creates with op create2 (the reply carries a Stat).
        HttpResponse<String> resp = control("/sessions/" + sid + "/lose-next-reply?op=create2");
        check(resp.statusCode() == 200, "lose-next-reply: " + resp.statusCode() + " " + resp.body());
        InterProcessMutex m = new InterProcessMutex(a, lockPath);
        check(m.acquire(WAIT_MS, TimeUnit.MILLISECONDS), "acquire through a lost create reply");
        waitUntil(() -> states.contains(ConnectionState.SUSPENDED), "SUSPENDED: the lost reply closes the connection");
        List<String> nodes = b.getChildren().forPath(lockPath);
        check(nodes.size() == 1, "lock nodes " + nodes + ", want one");
        check(!new InterProcessMutex(b, lockPath).acquire(300, TimeUnit.MILLISECONDS), "b took a mutex that a holds");
        m.release();
        check(b.getChildren().forPath(lockPath).isEmpty(), "lock nodes left after release");
    }

    // A paused leader (the server stops hearing it, as in a long GC pause):
    // its LeaderLatch gives up leadership when its connection goes quiet
    // (SUSPENDED), the session expires, the other latch takes over, and
    // never do both lead at once; the paused client comes back on a new
    // session as a follower.
    void pause() throws Exception {
        CuratorFramework a = CuratorFrameworkFactory.newClient(ADDR, 4_000, 5_000, new ExponentialBackoffRetry(100, 3));
        synchronized (clients) {
            clients.add(a);
        }
        a.start();
        check(a.blockUntilConnected((int) WAIT_MS, TimeUnit.MILLISECONDS), "a did not connect");
        List<ConnectionState> states = new CopyOnWriteArrayList<>();
        a.getConnectionStateListenable().addListener((c, s) -> states.add(s));
        String path = root + "/leader";
        LeaderLatch la = new LeaderLatch(a, path, "a");
        la.start();
        check(la.await(WAIT_MS, TimeUnit.MILLISECONDS), "a: no leadership");
        LeaderLatch lb = new LeaderLatch(client(), path, "b");
        lb.start();
        waitUntil(() -> {
            try {
                return lb.getParticipants().size() == 2;
            } catch (Exception e) {
                throw new RuntimeException(e);
            }
        }, "two participants");
        check(!lb.hasLeadership(), "b leads while a does");

        long sid = a.getZookeeperClient().getZooKeeper().getSessionId();
        HttpResponse<String> resp = control("/sessions/" + sid + "/pause");
        check(resp.statusCode() == 200, "pause: " + resp.statusCode() + " " + resp.body());
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(WAIT_MS);
        while (!lb.hasLeadership()) {
            check(!la.hasLeadership() || !lb.hasLeadership(), "two leaders at once");
            check(System.nanoTime() < deadline, "b did not take over from the paused a");
            Thread.sleep(5);
        }
        check(!la.hasLeadership(), "a still leads after b took over");
        check(states.contains(ConnectionState.SUSPENDED), "a never SUSPENDED: " + states);
        waitUntil(() -> states.contains(ConnectionState.LOST), "a: state LOST");
        resp = control("/sessions/" + sid + "/resume");
        check(resp.statusCode() == 404, "resume of an expired session: " + resp.statusCode());
        waitUntil(() -> states.lastIndexOf(ConnectionState.RECONNECTED) > states.indexOf(ConnectionState.LOST), "a: RECONNECTED after LOST");
        waitUntil(() -> {
            try {
                return lb.getParticipants().size() == 2;
            } catch (Exception e) {
                throw new RuntimeException(e);
            }
        }, "a back as a participant");
        check(lb.hasLeadership() && !la.hasLeadership(), "b leads, a follows");
        check(lb.getLeader().getId().equals("b"), "leader " + lb.getLeader().getId());
    }

    static HttpResponse<String> control(String path) throws Exception {
        HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofMillis(WAIT_MS)).build();
        HttpRequest req = HttpRequest.newBuilder(URI.create(CONTROL + path))
                .timeout(Duration.ofMillis(WAIT_MS))
                .POST(HttpRequest.BodyPublishers.noBody())
                .build();
        return http.send(req, HttpResponse.BodyHandlers.ofString());
    }
}
