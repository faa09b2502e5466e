// Curator 5.4 (Debian libcurator-recipes-java) against a ZooKeeper server:
// zksim's wire server or a real ZooKeeper.
//
// Usage: java -cp CLASSPATH CuratorRecipes SCENARIO
// with SCENARIO one of mutex, leader, queue, expiry, disconnect, lost-create.
// The server address comes from ZK_ADDR (host:port); ZKSIM_CONTROL is the
// control URL of zksim's wire server, without which the last three skip.
//
// Output: "PASS scenario" (exit 0), "SKIP scenario: reason" (exit 0), or a
// stack trace (exit 1). Every wait is bounded, so a hang is a failure.

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
import org.apache.curator.framework.recipes.leader.LeaderLatch;
import org.apache.curator.framework.recipes.locks.InterProcessMutex;
import org.apache.curator.framework.recipes.queue.DistributedQueue;
import org.apache.curator.framework.recipes.queue.QueueBuilder;
import org.apache.curator.framework.recipes.queue.QueueConsumer;
import org.apache.curator.framework.recipes.queue.QueueSerializer;
import org.apache.curator.framework.state.ConnectionState;
import org.apache.curator.retry.ExponentialBackoffRetry;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.WatchedEvent;
import org.apache.zookeeper.Watcher;

public class CuratorRecipes {
    static final String ADDR = envOr("ZK_ADDR", "127.0.0.1:2181");
    static final String CONTROL = envOr("ZKSIM_CONTROL", "").replaceAll("/$", "");
    static final long WAIT_MS = 20_000;

    final List<CuratorFramework> clients = new ArrayList<>();
    final String root = "/curator-" + UUID.randomUUID().toString().substring(0, 8);

    public static void main(String[] args) throws Exception {
        if (args.length != 1) {
            System.err.println("usage: CuratorRecipes mutex|leader|queue|expiry|disconnect|lost-create");
            System.exit(2);
        }
        CuratorRecipes t = new CuratorRecipes();
        int code = 0;
        try {
            String skip = t.run(args[0]);
            System.out.println(skip == null ? "PASS " + args[0] : "SKIP " + args[0] + ": " + skip);
        } catch (Throwable e) {
            System.out.println("FAIL " + args[0] + ": " + e);
            e.printStackTrace();
            code = 1;
        } finally {
            t.cleanup();
        }
        System.exit(code);
    }

    /** Runs a scenario; returns null when it passed, or why it skipped. */
    String run(String scenario) throws Exception {
        switch (scenario) {
            case "mutex": mutex(); return null;
            case "leader": leader(); return null;
            case "queue": queue(); return null;
            case "expiry":
            case "disconnect":
            case "lost-create":
                if (CONTROL.isEmpty()) {
                    return "ZKSIM_CONTROL not set (not zksim's wire server)";
                }
                if (scenario.equals("expiry")) {
                    expiry();
                } else if (scenario.equals("disconnect")) {
                    disconnect();
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
        check(admin.getChildren().forPath(lockPath).isEmpty(), "lock nodes left behind");
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
                return admin.getChildren().forPath(path).isEmpty();
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
                return b.getChildren().forPath(root + "/leader").size() == 1;
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

    static HttpResponse<String> control(String path) throws Exception {
        HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofMillis(WAIT_MS)).build();
        HttpRequest req = HttpRequest.newBuilder(URI.create(CONTROL + path))
                .timeout(Duration.ofMillis(WAIT_MS))
                .POST(HttpRequest.BodyPublishers.noBody())
                .build();
        return http.send(req, HttpResponse.BodyHandlers.ofString());
    }
}
