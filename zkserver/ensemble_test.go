package zkserver_test

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/zksim/zksim"
	"github.com/zksim/zksim/gozk"
	"github.com/zksim/zksim/zkserver"
)

// TestEnsembleControls starts a 3-member ensemble and drives each of its
// controls once, checking what the members report.
func TestEnsembleControls(t *testing.T) {
	e := zkserver.StartEnsemble(t, 3)
	t.Logf("a 3-member ensemble started in %v", e.StartupTime())
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	leader, err := e.Leader(ctx)
	if err != nil {
		t.Fatal(err)
	}
	follower := (leader + 1) % 3
	t.Logf("member %d leads; the test lags and isolates member %d", leader, follower)
	for i := range 3 {
		want := zkserver.ModeFollower
		if i == leader {
			want = zkserver.ModeLeader
		}
		if mode, err := e.Mode(ctx, i); err != nil || mode != want {
			t.Fatalf("member %d: mode %q, %v; want %q", i, mode, err, want)
		}
	}

	// A router hands connections to its members in order.
	r, err := e.Router(follower, leader)
	if err != nil {
		t.Fatal(err)
	}
	c, err := gozk.Connect(ctx, r.Servers(), gozk.WithSessionTimeout(10*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if got := r.Member(); got != follower {
		t.Fatalf("the client is on member %d, want %d", got, follower)
	}
	r.Drop()
	waitFor(t, ctx, "the client to move to the leader", func() bool {
		return r.Member() == leader && c.State() == zksim.StateConnected
	})
	if got := r.Tried(); !slices.Equal(got, []int{follower, leader}) {
		t.Fatalf("Tried() = %v, want [%d %d]", got, follower, leader)
	}
	time.Sleep(50 * time.Millisecond) // go-zookeeper/zk#35: let setWatches go first

	// A lagging follower applies nothing until it catches up.
	e.Lag(follower)
	if _, err := c.Create(ctx, "/lag", []byte("x"), zksim.ModePersistent, zksim.OpenACL()); err != nil {
		t.Fatal(err)
	}
	lz, err := e.LastZxid(ctx, leader)
	if err != nil {
		t.Fatal(err)
	}
	if fz, err := e.LastZxid(ctx, follower); err != nil || fz >= lz {
		t.Fatalf("lagging follower at zxid %#x (%v), leader at %#x", fz, err, lz)
	}
	e.CatchUp(follower)
	waitFor(t, ctx, "the follower to catch up", func() bool {
		fz, err := e.LastZxid(ctx, follower)
		return err == nil && fz == lz
	})

	// An isolated follower turns read-only. ZooKeeper 3.8 serves only
	// local sessions in read-only mode: without localSessionsEnabled it
	// refuses to create a session.
	e.Isolate(follower)
	start := time.Now()
	if err := e.WaitMode(ctx, follower, zkserver.ModeReadOnly); err != nil {
		t.Fatal(err)
	}
	t.Logf("the isolated follower was read-only after %v", time.Since(start))
	if _, err := zkserver.DialReadOnly(ctx, e.Addr(follower), 10*time.Second, lz); !errors.Is(err, zksim.ErrNotReadOnly) {
		t.Fatalf("a new session on the read-only member: %v, want ErrNotReadOnly", err)
	}
	// Restarted with local sessions, it takes read-only clients, serves
	// their reads and refuses their writes, and refuses clients that have
	// seen newer zxids.
	e.Crash(follower)
	e.SetMemberConfig(follower, "localSessionsEnabled=true")
	start = time.Now()
	if err := e.Restart(ctx, follower, zkserver.ModeReadOnly); err != nil {
		t.Fatal(err)
	}
	t.Logf("restarted isolated, the follower was read-only after %v", time.Since(start))
	ro, err := zkserver.DialReadOnly(ctx, e.Addr(follower), 10*time.Second, lz)
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	if !ro.ReadOnly() {
		t.Fatal("the isolated member granted a read-write session")
	}
	if data, _, err := ro.Get(ctx, "/lag"); err != nil || string(data) != "x" {
		t.Fatalf("read-only Get = %q, %v", data, err)
	}
	if _, err := ro.Create(ctx, "/ro", nil, zksim.ModePersistent); !errors.Is(err, zksim.ErrNotReadOnly) {
		t.Fatalf("read-only Create: %v, want ErrNotReadOnly", err)
	}
	if _, err := c.Set(ctx, "/lag", []byte("y"), -1); err != nil {
		t.Fatal(err)
	}
	newer, err := e.LastZxid(ctx, leader)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := zkserver.DialReadOnly(ctx, e.Addr(follower), 10*time.Second, newer); !errors.Is(err, zkserver.ErrSessionRefused) {
		t.Fatalf("a client that has seen %#x on the read-only member: %v, want ErrSessionRefused", newer, err)
	}
	e.Crash(follower)
	e.SetMemberConfig(follower)
	e.Heal(follower)
	start = time.Now()
	if err := e.Restart(ctx, follower); err != nil {
		t.Fatal(err)
	}
	t.Logf("the healed follower rejoined after %v", time.Since(start))

	// A crashed leader is replaced; restarted, it follows.
	e.Crash(leader)
	start = time.Now()
	next, err := e.Leader(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if next == leader {
		t.Fatalf("member %d still leads after its crash", leader)
	}
	t.Logf("member %d led %v after the crash", next, time.Since(start))
	start = time.Now()
	if err := e.Restart(ctx, leader); err != nil {
		t.Fatal(err)
	}
	t.Logf("the old leader served again %v after its restart", time.Since(start))
	if mode, err := e.Mode(ctx, leader); err != nil || mode != zkserver.ModeFollower {
		t.Fatalf("restarted member: mode %q, %v", mode, err)
	}
}

func waitFor(t *testing.T, ctx context.Context, what string, cond func() bool) {
	t.Helper()
	for !cond() {
		select {
		case <-ctx.Done():
			t.Fatalf("waiting for %s: %v", what, ctx.Err())
		case <-time.After(10 * time.Millisecond):
		}
	}
}
