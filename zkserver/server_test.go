package zkserver_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/zksim/zksim"
	"github.com/zksim/zksim/zkserver"
)

func TestStartConfiguresAndStops(t *testing.T) {
	srv := zkserver.Start(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	answer, err := srv.FourLetterWord(ctx, "ruok")
	if err != nil || answer != "imok" {
		t.Fatalf("ruok = %q, %v", answer, err)
	}
	conf, err := srv.FourLetterWord(ctx, "conf")
	if err != nil {
		t.Fatalf("conf: %v", err)
	}
	for _, want := range []string{"tickTime=100", "minSessionTimeout=200", "maxSessionTimeout=2000"} {
		if !strings.Contains(conf, want) {
			t.Errorf("conf lacks %q:\n%s", want, conf)
		}
	}
	if !strings.HasPrefix(srv.Addr(), "127.0.0.1:") {
		t.Errorf("Addr() = %q", srv.Addr())
	}
	c := srv.Connect(t)
	// Extended types (TTL) are enabled.
	if _, err := c.CreateTTL(ctx, "/ttl", nil, zksim.ModePersistentWithTTL, zksim.OpenACL(), time.Hour); err != nil {
		t.Fatalf("CreateTTL: %v", err)
	}
	if !strings.Contains(srv.LogTail(1000), "ZooKeeperServer") {
		t.Errorf("the log does not show the server's output:\n%s", srv.LogTail(20))
	}

	before, err := srv.LastZxid(ctx)
	if err != nil {
		t.Fatalf("LastZxid: %v", err)
	}
	if _, err := c.Create(ctx, "/ttl", nil, zksim.ModePersistent, zksim.OpenACL()); err == nil {
		t.Fatal("created /ttl twice")
	}
	if after, err := srv.LastZxid(ctx); err != nil || after != before+1 {
		t.Fatalf("LastZxid after a failed create = %#x, %v; want %#x", after, err, before+1)
	}

	srv.Stop()
	if _, err := srv.FourLetterWord(ctx, "ruok"); err == nil {
		t.Fatal("the server still answers after Stop")
	}
	srv.Stop() // idempotent
}

func TestSharedIsOneServer(t *testing.T) {
	a := zkserver.Shared(t)
	b := zkserver.Shared(t)
	if a != b {
		t.Fatalf("Shared returned %p and %p", a, b)
	}
	if r1, r2 := a.Root(t), a.Root(t); r1 == r2 || !strings.HasPrefix(r1, "/TestSharedIsOneServer-") {
		t.Fatalf("roots %q and %q", r1, r2)
	}
	if err := zksim.ValidatePath(a.Root(t), false); err != nil {
		t.Fatal(err)
	}
}

func TestSessionAliveUntilClosed(t *testing.T) {
	srv := zkserver.Shared(t)
	c := srv.Connect(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	alive, err := srv.SessionAlive(ctx, c.SessionID())
	if err != nil || !alive {
		t.Fatalf("SessionAlive = %v, %v", alive, err)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if err := srv.WaitSessionGone(ctx, c.SessionID()); err != nil {
		t.Fatalf("WaitSessionGone after Close: %v", err)
	}
}
