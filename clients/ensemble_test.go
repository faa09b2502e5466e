package clients_test

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zksim/zksim/zkwire"
)

// ensembleControl is the control endpoint's member routes, for a test.
type ensembleControl struct {
	t   *testing.T
	url string
}

func (c ensembleControl) members() []zkwire.MemberStatus {
	c.t.Helper()
	resp, err := http.Get(c.url + "/servers")
	if err != nil {
		c.t.Fatal(err)
	}
	defer resp.Body.Close()
	var ms []zkwire.MemberStatus
	if err := json.NewDecoder(resp.Body).Decode(&ms); err != nil || resp.StatusCode != 200 {
		c.t.Fatalf("GET /servers: %d %v", resp.StatusCode, err)
	}
	return ms
}

// post runs POST /servers/{myid}/{action}.
func (c ensembleControl) post(myid int, action string) {
	c.t.Helper()
	resp, err := http.Post(fmt.Sprintf("%s/servers/%d/%s", c.url, myid, action), "", nil)
	if err != nil {
		c.t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		c.t.Fatalf("POST /servers/%d/%s: %s", myid, action, resp.Status)
	}
}

// leader returns the leader's myid.
func (c ensembleControl) leader() int {
	c.t.Helper()
	for _, m := range c.members() {
		if m.Role == "leader" {
			return m.ID
		}
	}
	c.t.Fatal("no leader")
	return 0
}

// memberOf waits until session id is connected to a member, and returns
// the member.
func (c ensembleControl) memberOf(id int64) zkwire.MemberStatus {
	c.t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		for _, m := range c.members() {
			if slices.Contains(m.Sessions, id) {
				return m
			}
		}
		if time.Now().After(deadline) {
			c.t.Fatalf("session %#x is on no member within 20s: %+v", id, c.members())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// connectOne connects go-zookeeper to one server and waits for its
// session.
func connectOne(t *testing.T, addr string) *zk.Conn {
	t.Helper()
	c, events, err := zk.Connect([]string{addr}, 10*time.Second, zk.WithLogger(quietLogger{}))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	for ev := range events {
		if ev.State == zk.StateHasSession {
			break
		}
	}
	return c
}

// retry runs f until it does not fail with a connection loss (the client
// is between members), for up to 20s.
func retry(t *testing.T, what string, f func() error) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		err := f()
		if err == nil {
			return
		}
		if !errors.Is(err, zk.ErrConnectionClosed) && !errors.Is(err, zk.ErrNoServer) || time.Now().After(deadline) {
			t.Fatalf("%s: %v", what, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestGoZooKeeperEnsemble: go-zookeeper, given the three addresses of
// zksim serve -servers 3, rides out a leader failover and the crash of its member
// (its session, ephemeral and data intact); a go-zookeeper client of a
// lagging follower reads stale data, and the leader's after a sync that
// returns once the follower caught up.
func TestGoZooKeeperEnsemble(t *testing.T) {
	b := startServeEnsemble(t)
	ctl := ensembleControl{t, b.control}
	servers := strings.Split(b.addr, ",")
	c, _, err := zk.Connect(servers, 10*time.Second, zk.WithLogger(quietLogger{}))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	acl := zk.WorldACL(zk.PermAll)
	retry(t, "create /ens", func() error { _, err := c.Create("/ens", []byte("0"), 0, acl); return err })
	retry(t, "create /ens/eph", func() error { _, err := c.Create("/ens/eph", nil, zk.FlagEphemeral, acl); return err })
	id := c.SessionID()

	// A leader failover: the leader crashes, the next is elected, the
	// client writes on.
	leader := ctl.leader()
	ctl.post(leader, "crash")
	retry(t, "set after the failover", func() error { _, err := c.Set("/ens", []byte("after-failover"), -1); return err })
	if next := ctl.leader(); next == leader {
		t.Fatalf("member %d still leads after its crash", next)
	}
	ctl.post(leader, "restart")

	// The crash of the client's member: it moves on with its session.
	m := ctl.memberOf(id)
	ctl.post(m.ID, "crash")
	var ok bool
	retry(t, "exists after the member's crash", func() error { ok, _, err = c.Exists("/ens/eph"); return err })
	if !ok || c.SessionID() != id {
		t.Fatalf("after the crash: ephemeral %v, session %#x (was %#x)", ok, c.SessionID(), id)
	}
	ctl.post(m.ID, "restart")

	// A lagging follower, read by a client connected to it alone, while
	// a client of the leader writes.
	var follower int
	for _, m := range ctl.members() {
		if m.Role == "follower" {
			follower = m.ID
			break
		}
	}
	r := connectOne(t, servers[follower-1])
	w := connectOne(t, servers[ctl.leader()-1])
	ctl.post(follower, "lag")
	retry(t, "the writer's set", func() error { _, err := w.Set("/ens", []byte("fresh"), -1); return err })
	data, _, err := r.Get("/ens")
	if err != nil || string(data) != "after-failover" {
		t.Fatalf("read on the lagging follower: %q %v, want the stale %q", data, err, "after-failover")
	}
	synced := make(chan error, 1)
	go func() { _, err := r.Sync("/ens"); synced <- err }()
	ctl.post(follower, "catch-up")
	if err := <-synced; err != nil {
		t.Fatal(err)
	}
	if data, _, err = r.Get("/ens"); err != nil || string(data) != "fresh" {
		t.Fatalf("read after sync: %q %v, want %q", data, err, "fresh")
	}
}

// startServeEnsemble runs zksim serve -servers 3 (read-only mode on) as a
// process for the test, stopped at its end, and returns the members'
// connect string and the control URL, read from its first lines.
func startServeEnsemble(t *testing.T) backend {
	t.Helper()
	bin := buildZksim(t)
	cmd := exec.Command(bin, "serve", "-servers", "3", "-addr", "127.0.0.1:0", "-readonlymode.enabled",
		"-tickTime", "200ms", "-maxSessionTimeout", "20s")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Signal(os.Interrupt)
		cmd.Wait()
	})
	lines := bufio.NewScanner(out)
	var addrs []string
	for i := 1; i <= 3; i++ {
		if !lines.Scan() {
			t.Fatalf("zksim serve -servers 3 stopped after %d lines: %v", i-1, lines.Err())
		}
		addr, ok := strings.CutPrefix(lines.Text(), fmt.Sprintf("server %d listening on ", i))
		if !ok {
			t.Fatalf("line %d %q, want server %d listening on ADDR", i, lines.Text(), i)
		}
		addrs = append(addrs, addr)
	}
	if !lines.Scan() || !strings.HasPrefix(lines.Text(), "control on ") {
		t.Fatalf("line 4 %q, want the control URL", lines.Text())
	}
	control := strings.TrimPrefix(lines.Text(), "control on ")
	go io.Copy(io.Discard, out)
	return backend{name: "zksim-serve-servers-3", addr: strings.Join(addrs, ","), control: control}
}

// ensembleSteps are the lines the kazoo and Curator programs print, in
// order, with the members' numbers as \d.
var ensembleSteps = []string{
	`failover: leader \d crashed, \d leads, the client wrote on`,
	`member crash: the session moved from \d to \d with its ephemeral`,
	`lagging follower \d: read after-failover`,
	`after sync: read fresh`,
}

// checkEnsembleSteps fails t unless stdout is the steps' lines, in order.
func checkEnsembleSteps(t *testing.T, r result) {
	t.Helper()
	want := "^" + strings.Join(ensembleSteps, "\n") + "\n$"
	if r.code != 0 || !regexp.MustCompile(want).MatchString(r.stdout) {
		t.Fatalf("want exit status 0 and the lines\n%s\n%s", strings.Join(ensembleSteps, "\n"), r)
	}
}

// TestKazooEnsemble: kazoo, given the three addresses of zksim serve
// -servers 3, rides out a leader failover and its member's crash
// (testdata/kazoo_ensemble.py); a kazoo client of a lagging follower reads
// stale data, and fresh data after sync.
func TestKazooEnsemble(t *testing.T) {
	needKazoo(t)
	b := startServeEnsemble(t)
	checkEnsembleSteps(t, run(t, b, "testdata", python, "kazoo_ensemble.py"))
}

// TestCuratorEnsemble: Curator, given the three addresses of zksim serve
// -servers 3, rides out a leader failover and its member's crash
// (testdata/CuratorEnsemble.java, compiled by the test); a Curator client
// of a lagging follower reads stale data, and fresh data after sync.
func TestCuratorEnsemble(t *testing.T) {
	needJDK(t)
	classes := t.TempDir()
	if out, err := exec.Command("javac", "-d", classes, "-cp", curatorClasspath(), "testdata/CuratorEnsemble.java").CombinedOutput(); err != nil {
		t.Fatalf("javac: %v\n%s", err, out)
	}
	b := startServeEnsemble(t)
	checkEnsembleSteps(t, runWithin(t, curatorTimeout, b, ".", "java", "-cp", curatorClasspath(classes), "CuratorEnsemble"))
}
