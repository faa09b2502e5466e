// Curator 5.4 (Debian libcurator-recipes-java) against zksim's ensemble
// over the wire (zksim serve -servers 3): ZK_ADDR is the members' connect
// string (host:port,host:port,host:port), ZKSIM_CONTROL the control URL.
//
// A client given the three addresses rides out a leader failover and the
// crash of its member, keeping its session and its ephemeral; a client of
// a lagging follower reads stale data, and the leader's data after a sync
// that returns once the follower caught up. It prints one line per step
// and exits 0, or throws (exit status 1). Every wait is bounded.
//
// Usage: java -cp CLASSPATH CuratorEnsemble

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.RetryNTimes;
import org.apache.zookeeper.CreateMode;

public class CuratorEnsemble {
    static final String ADDR = System.getenv("ZK_ADDR");
    static final String CONTROL = System.getenv("ZKSIM_CONTROL").replaceAll("/$", "");
    static final long WAIT_MS = 20_000;
    static final HttpClient HTTP = HttpClient.newHttpClient();

    // A member as GET /servers reports it (the fields this program reads).
    record Member(int id, String role, List<Long> sessions) {}

    static String control(String method, String path) throws Exception {
        HttpRequest req = HttpRequest.newBuilder(URI.create(CONTROL + path))
            .method(method, HttpRequest.BodyPublishers.noBody())
            .timeout(Duration.ofMillis(WAIT_MS)).build();
        HttpResponse<String> resp = HTTP.send(req, HttpResponse.BodyHandlers.ofString());
        if (resp.statusCode() != 200) {
            throw new AssertionError(method + " " + path + ": " + resp.statusCode() + " " + resp.body());
        }
        return resp.body();
    }

    // members parses GET /servers: its objects' id, role and sessions.
    static List<Member> members() throws Exception {
        String body = control("GET", "/servers");
        List<Member> out = new ArrayList<>();
        Matcher m = Pattern.compile("\"id\": (\\d+),\\s*\"role\": \"([a-z-]+)\"[^}]*?\"sessions\": \\[([^\\]]*)\\]").matcher(body);
        while (m.find()) {
            List<Long> sessions = new ArrayList<>();
            for (String s : m.group(3).split(",")) {
                if (!s.isBlank()) {
                    sessions.add(Long.parseLong(s.trim()));
                }
            }
            out.add(new Member(Integer.parseInt(m.group(1)), m.group(2), sessions));
        }
        if (out.isEmpty()) {
            throw new AssertionError("GET /servers: no members in " + body);
        }
        return out;
    }

    static void post(int myid, String action) throws Exception {
        control("POST", "/servers/" + myid + "/" + action);
    }

    static int withRole(String role) throws Exception {
        for (Member m : members()) {
            if (m.role().equals(role)) {
                return m.id();
            }
        }
        throw new AssertionError("no " + role + " in " + members());
    }

    static int memberOf(long sessionId) throws Exception {
        long deadline = System.currentTimeMillis() + WAIT_MS;
        while (System.currentTimeMillis() < deadline) {
            for (Member m : members()) {
                if (m.sessions().contains(sessionId)) {
                    return m.id();
                }
            }
            Thread.sleep(10);
        }
        throw new AssertionError("session " + Long.toHexString(sessionId) + " is on no member");
    }

    // client starts a Curator client whose operations retry a connection
    // loss for up to 20s while it moves between members.
    static CuratorFramework client(String hosts) throws Exception {
        CuratorFramework c = CuratorFrameworkFactory.builder().connectString(hosts)
            .sessionTimeoutMs(10_000).connectionTimeoutMs(5_000)
            .retryPolicy(new RetryNTimes(400, 50)).build();
        c.start();
        if (!c.blockUntilConnected((int) WAIT_MS, TimeUnit.MILLISECONDS)) {
            throw new AssertionError("no connection to " + hosts);
        }
        return c;
    }

    static long sessionId(CuratorFramework c) throws Exception {
        return c.getZookeeperClient().getZooKeeper().getSessionId();
    }

    static String read(CuratorFramework c, String path) throws Exception {
        return new String(c.getData().forPath(path), StandardCharsets.UTF_8);
    }

    public static void main(String[] args) throws Exception {
        String[] servers = ADDR.split(",");
        try (CuratorFramework zk = client(ADDR)) {
            if (zk.checkExists().forPath("/ens") == null) {
                zk.create().forPath("/ens");
            }
            zk.setData().forPath("/ens", "0".getBytes(StandardCharsets.UTF_8));
            zk.create().withMode(CreateMode.EPHEMERAL).forPath("/ens/eph");
            long sid = sessionId(zk);

            int old = withRole("leader");
            post(old, "crash");
            zk.setData().forPath("/ens", "after-failover".getBytes(StandardCharsets.UTF_8));
            int now = withRole("leader");
            if (now == old) {
                throw new AssertionError("member " + now + " still leads after its crash");
            }
            post(old, "restart");
            System.out.printf("failover: leader %d crashed, %d leads, the client wrote on%n", old, now);

            int m = memberOf(sid);
            post(m, "crash");
            if (zk.checkExists().forPath("/ens/eph") == null) {
                throw new AssertionError("the ephemeral is gone");
            }
            if (sessionId(zk) != sid) {
                throw new AssertionError("the session changed");
            }
            int moved = memberOf(sid);
            if (moved == m) {
                throw new AssertionError("the session is still on crashed member " + m);
            }
            post(m, "restart");
            System.out.printf("member crash: the session moved from %d to %d with its ephemeral%n", m, moved);

            int follower = withRole("follower");
            try (CuratorFramework r = client(servers[follower - 1]);
                 CuratorFramework w = client(servers[withRole("leader") - 1])) {
                post(follower, "lag");
                w.setData().forPath("/ens", "fresh".getBytes(StandardCharsets.UTF_8));
                String stale = read(r, "/ens");
                if (!stale.equals("after-failover")) {
                    throw new AssertionError("read on the lagging follower: " + stale);
                }
                System.out.printf("lagging follower %d: read %s%n", follower, stale);
                CountDownLatch synced = new CountDownLatch(1);
                r.sync().inBackground((client, event) -> synced.countDown()).forPath("/ens");
                post(follower, "catch-up");
                if (!synced.await(WAIT_MS, TimeUnit.MILLISECONDS)) {
                    throw new AssertionError("no sync within 20s");
                }
                String fresh = read(r, "/ens");
                if (!fresh.equals("fresh")) {
                    throw new AssertionError("read after sync: " + fresh);
                }
                System.out.printf("after sync: read %s%n", fresh);
            }
        }
    }
}
