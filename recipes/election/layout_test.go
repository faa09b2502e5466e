package election_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/zksim/zksim"
	"github.com/zksim/zksim/recipes"
	"github.com/zksim/zksim/recipes/election"
	"github.com/zksim/zksim/zkmem"
)

// TestLayouts: in each Curator or kazoo layout a candidate waits behind
// that library's candidate node ahead of it, Leader reports that node, and
// the default layout refuses the directory.
func TestLayouts(t *testing.T) {
	for _, c := range []struct {
		layout election.Layout
		name   string // the other library's candidate name
	}{
		{election.CuratorLatch, "_c_6f1b2c3d-2a4b-4c5d-8e9f-0123456789ab-latch-"},
		{election.CuratorSelector, "_c_6f1b2c3d-2a4b-4c5d-8e9f-0123456789ab-lock-"},
		{election.Kazoo, "6f1b2c3d2a4b4c5d8e9f0123456789ab__lock__"},
	} {
		t.Run(c.layout.String(), func(t *testing.T) {
			ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
			defer cancel()
			srv := zkmem.NewServer(zkmem.Options{})
			defer srv.Close()
			other, _ := srv.Connect()
			defer other.Close()
			conn, _ := srv.Connect()
			defer conn.Close()
			if _, err := other.Create(ctx, "/e", nil, zksim.ModePersistent, zksim.OpenACL()); err != nil {
				t.Fatal(err)
			}
			theirs, err := other.Create(ctx, "/e/"+c.name, []byte("them"), zksim.ModeEphemeralSequential, zksim.OpenACL())
			if err != nil {
				t.Fatal(err)
			}
			e := election.New(conn, "/e", election.WithLayout(c.layout))
			l, err := e.Leader(ctx)
			if err != nil || l.Key != theirs {
				t.Fatalf("Leader = %+v, %v; want %s", l, err, theirs)
			}
			cctx, ccancel := context.WithTimeout(ctx, 50*time.Millisecond)
			err = e.Campaign(cctx, []byte("us"))
			ccancel()
			if !errors.Is(err, context.DeadlineExceeded) {
				t.Fatalf("Campaign behind their leader: %v, want a deadline", err)
			}
			if err := other.Delete(ctx, theirs, -1); err != nil {
				t.Fatal(err)
			}
			if err := e.Campaign(ctx, []byte("us")); err != nil {
				t.Fatal(err)
			}
			if _, err := other.Create(ctx, "/e/"+c.name, nil, zksim.ModeEphemeralSequential, zksim.OpenACL()); err != nil {
				t.Fatal(err)
			}
			if err := e.Resign(ctx); err != nil {
				t.Fatal(err)
			}
			def := election.New(conn, "/e")
			if err := def.Campaign(ctx, nil); !errors.Is(err, recipes.ErrForeignNodes) {
				t.Fatalf("default layout beside their candidate: %v, want ErrForeignNodes", err)
			}
		})
	}
}
