package zkmem_test

import (
	"context"
	"errors"
	"testing"

	"github.com/zksim/zksim"
	"github.com/zksim/zksim/zkmem"
)

// A disconnected Conn whose authentication fails is done: StateAuthFailed,
// calls fail with ErrAuthFailed, its watches end, and its session lives on
// at the server (until it expires).
func TestConnFailAuth(t *testing.T) {
	ctx := context.Background()
	srv := zkmem.NewServer(zkmem.Options{})
	t.Cleanup(srv.Close)
	c, err := srv.Connect()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Create(ctx, "/e", nil, zksim.ModeEphemeral, zksim.OpenACL()); err != nil {
		t.Fatal(err)
	}
	_, _, watch, err := c.ExistsW(ctx, "/w")
	if err != nil {
		t.Fatal(err)
	}
	if err := c.FailAuth(); !errors.Is(err, zkmem.ErrNotDisconnected) {
		t.Errorf("FailAuth while connected: %v, want ErrNotDisconnected", err)
	}
	srv.Control(c.SessionID()).Disconnect()
	if err := c.FailAuth(); err != nil {
		t.Fatalf("FailAuth: %v", err)
	}
	if st := c.State(); st != zksim.StateAuthFailed {
		t.Errorf("state %v, want StateAuthFailed", st)
	}
	if ev := <-watch; ev.Type != zksim.EventNotWatching || !errors.Is(ev.Err, zksim.ErrAuthFailed) {
		t.Errorf("watch event %+v, want EventNotWatching with ErrAuthFailed", ev)
	}
	if _, _, err := c.Exists(ctx, "/e"); !errors.Is(err, zksim.ErrAuthFailed) {
		t.Errorf("exists after the failure: %v, want ErrAuthFailed", err)
	}
	if err := srv.Control(c.SessionID()).Reconnect(); !errors.Is(err, zksim.ErrAuthFailed) {
		t.Errorf("reconnect after the failure: %v, want ErrAuthFailed", err)
	}
	other, err := srv.Connect()
	if err != nil {
		t.Fatal(err)
	}
	if ok, _, err := other.Exists(ctx, "/e"); err != nil || !ok {
		t.Errorf("the failed client's ephemeral node: %v, %v; want there until its session expires", ok, err)
	}
}
