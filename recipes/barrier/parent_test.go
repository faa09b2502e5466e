package barrier_test

import (
	"context"
	"testing"

	"github.com/zksim/zksim"
	"github.com/zksim/zksim/recipes/barrier"
	"github.com/zksim/zksim/zkmem"
)

// parentThief is a Conn on which a third party deletes the barrier's
// parent right after the client created it, before the barrier node's
// create: an operator's cleanup racing the first Set.
type parentThief struct {
	zksim.Conn
	parent string
	other  zksim.Conn
	done   bool
}

func (p *parentThief) Create(ctx context.Context, path string, data []byte, mode zksim.CreateMode, acl []zksim.ACL) (string, error) {
	got, err := p.Conn.Create(ctx, path, data, mode, acl)
	if err == nil && path == p.parent && !p.done {
		p.done = true
		if err := p.other.Delete(ctx, p.parent, -1); err != nil {
			return "", err
		}
	}
	return got, err
}

// TestSetRecreatesDeletedParent: Set creates missing parents, again when a
// third party deletes one between its creation and the barrier node's
// (found by the Barrier machine's third-party deletes).
func TestSetRecreatesDeletedParent(t *testing.T) {
	ctx := context.Background()
	srv := zkmem.NewServer(zkmem.Options{})
	defer srv.Close()
	conn, err := srv.Connect()
	if err != nil {
		t.Fatal(err)
	}
	other, err := srv.Connect()
	if err != nil {
		t.Fatal(err)
	}
	thief := &parentThief{Conn: conn, parent: "/b", other: other}
	if err := barrier.New(thief, "/b/barrier").Set(ctx); err != nil {
		t.Fatalf("Set with its parent deleted meanwhile: %v", err)
	}
	if !thief.done {
		t.Fatal("the third party deleted nothing: the test did not race the Set")
	}
	if ok, _, err := other.Exists(ctx, "/b/barrier"); err != nil || !ok {
		t.Fatalf("the barrier is not set after Set returned nil: exists %v, %v", ok, err)
	}
}
