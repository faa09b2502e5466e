package lock_test

import (
	"context"
	"errors"
	"regexp"
	"testing"

	"github.com/zksim/zksim"
	"github.com/zksim/zksim/recipes"
	"github.com/zksim/zksim/recipes/lock"
	"github.com/zksim/zksim/zkmem"
)

// Names as Curator's and kazoo's recipes create them (the server appends
// the sequence).
const (
	curatorPrefix = "_c_6f1b2c3d-2a4b-4c5d-8e9f-0123456789ab-"
	kazooGUID     = "6f1b2c3d2a4b4c5d8e9f0123456789ab"
)

var (
	curatorWriter = regexp.MustCompile(`^/rw/_c_[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}-__WRIT__[0-9]{10}$`)
	kazooLock     = regexp.MustCompile(`^/kz/[0-9a-f]{32}__lock__[0-9]{10}$`)
)

// foreignNode creates, from a session of its own, an ephemeral-sequential
// node dir/name as another library would, and returns its path.
func foreignNode(t *testing.T, srv *zkmem.Server, dir, name string) string {
	t.Helper()
	ctx := t.Context()
	c, err := srv.Connect()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	if _, err := c.Create(ctx, dir, nil, zksim.ModePersistent, zksim.OpenACL()); err != nil && !errors.Is(err, zksim.ErrNodeExists) {
		t.Fatal(err)
	}
	p, err := c.Create(ctx, dir+"/"+name, nil, zksim.ModeEphemeralSequential, zksim.OpenACL())
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func layoutServer(t *testing.T) (*zkmem.Server, *zkmem.Conn) {
	t.Helper()
	srv := zkmem.NewServer(zkmem.Options{})
	t.Cleanup(srv.Close)
	conn, err := srv.Connect()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return srv, conn
}

// children lists dir.
func children(t *testing.T, conn zksim.Conn, dir string) []string {
	t.Helper()
	c, _, err := conn.Children(t.Context(), dir)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestCuratorLayoutRWMutex: a writer of Curator's
// InterProcessReadWriteLock keeps our Curator-layout readers and writers
// out, and our writer keeps Curator's reader (a node after it) waiting.
func TestCuratorLayoutRWMutex(t *testing.T) {
	ctx := t.Context()
	srv, conn := layoutServer(t)
	w := foreignNode(t, srv, "/rw", curatorPrefix+"__WRIT__")
	rw := lock.NewRWMutex(conn, "/rw", lock.WithLayout(lock.Curator))
	if err := rw.TryRLock(ctx); !errors.Is(err, lock.ErrLocked) {
		t.Fatalf("TryRLock beside Curator's writer: %v, want ErrLocked", err)
	}
	if err := rw.TryLock(ctx); !errors.Is(err, lock.ErrLocked) {
		t.Fatalf("TryLock beside Curator's writer: %v, want ErrLocked", err)
	}
	if err := conn.Delete(ctx, w, -1); err != nil {
		t.Fatal(err)
	}
	if err := rw.TryLock(ctx); err != nil {
		t.Fatalf("TryLock once Curator's writer left: %v", err)
	}
	if k := rw.Writer().Key(); !curatorWriter.MatchString(k) {
		t.Errorf("writer node %s, want Curator's name", k)
	}
	// A reader of Curator's after our writer: our writer goes on holding,
	// and a reader of ours after both must wait for the writer.
	foreignNode(t, srv, "/rw", curatorPrefix+"__READ__")
	other := lock.NewRWMutex(conn, "/rw", lock.WithLayout(lock.Curator))
	if err := other.TryRLock(ctx); !errors.Is(err, lock.ErrLocked) {
		t.Fatalf("our TryRLock behind our writer: %v, want ErrLocked", err)
	}
	if err := rw.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
	if err := other.TryRLock(ctx); err != nil {
		t.Fatalf("TryRLock beside Curator's reader: %v", err)
	}
}

// TestKazooLayoutMutex: kazoo's Lock node ahead keeps our kazoo-layout
// Mutex out; ours is named as kazoo names its own.
func TestKazooLayoutMutex(t *testing.T) {
	ctx := t.Context()
	srv, conn := layoutServer(t)
	k := foreignNode(t, srv, "/kz", kazooGUID+"__lock__")
	m := lock.New(conn, "/kz", lock.WithLayout(lock.Kazoo))
	if err := m.TryLock(ctx); !errors.Is(err, lock.ErrLocked) {
		t.Fatalf("TryLock beside kazoo's lock: %v, want ErrLocked", err)
	}
	if err := conn.Delete(ctx, k, -1); err != nil {
		t.Fatal(err)
	}
	if err := m.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	if k := m.Key(); !kazooLock.MatchString(k) {
		t.Errorf("node %s, want <32 hex>__lock__<seq>", k)
	}
}

// TestLayoutRefusesForeignNodes: a lock refuses a directory holding the
// nodes of a layout it cannot order, and leaves no node behind.
func TestLayoutRefusesForeignNodes(t *testing.T) {
	for _, c := range []struct {
		name    string
		foreign string // the other library's node name
		take    func(zksim.Conn, string) error
	}{
		{"Mutex beside kazoo", kazooGUID + "__lock__", func(c zksim.Conn, dir string) error { return lock.New(c, dir).Lock(context.Background()) }},
		{"RWMutex beside Curator's writer", curatorPrefix + "__WRIT__", func(c zksim.Conn, dir string) error { return lock.NewRWMutex(c, dir).Lock(context.Background()) }},
		{"RWMutex beside Curator's reader", curatorPrefix + "__READ__", func(c zksim.Conn, dir string) error { return lock.NewRWMutex(c, dir).RLock(context.Background()) }},
		{"Curator layout beside kazoo", kazooGUID + "__rlock__", func(c zksim.Conn, dir string) error {
			return lock.NewRWMutex(c, dir, lock.WithLayout(lock.Curator)).TryRLock(context.Background())
		}},
		{"Curator layout beside our RWMutex", curatorPrefix + "write-", func(c zksim.Conn, dir string) error {
			return lock.New(c, dir, lock.WithLayout(lock.Curator)).Lock(context.Background())
		}},
		{"kazoo layout beside Curator", curatorPrefix + "lock-", func(c zksim.Conn, dir string) error {
			return lock.New(c, dir, lock.WithLayout(lock.Kazoo)).Lock(context.Background())
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			srv, conn := layoutServer(t)
			foreignNode(t, srv, "/d", c.foreign)
			if err := c.take(conn, "/d"); !errors.Is(err, recipes.ErrForeignNodes) {
				t.Fatalf("got %v, want ErrForeignNodes", err)
			}
			if got := children(t, conn, "/d"); len(got) != 1 {
				t.Errorf("children %q, want the foreign node alone", got)
			}
		})
	}
}

// TestKazooLayoutSemaphore: leases are the children of the directory, at
// most max of them; the directory's data is max, and another max is
// refused, as kazoo refuses it; Curator's directories are refused.
func TestKazooLayoutSemaphore(t *testing.T) {
	ctx := t.Context()
	srv, conn := layoutServer(t)
	s, err := lock.NewSemaphore(conn, "/sem", 2, lock.WithLayout(lock.Kazoo))
	if err != nil {
		t.Fatal(err)
	}
	l1, err := s.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	data, _, err := conn.Get(ctx, "/sem")
	if err != nil || string(data) != "2" {
		t.Fatalf("/sem data %q, %v; want \"2\"", data, err)
	}
	// A kazoo lease of another client: the semaphore is full.
	other, _ := srv.Connect()
	defer other.Close()
	if _, err := other.Create(ctx, "/sem/"+kazooGUID, nil, zksim.ModeEphemeral, zksim.OpenACL()); err != nil {
		t.Fatal(err)
	}
	if _, err := s.TryAcquire(ctx); !errors.Is(err, lock.ErrNoLease) {
		t.Fatalf("TryAcquire with 2 leases out: %v, want ErrNoLease", err)
	}
	if err := l1.Release(ctx); err != nil {
		t.Fatal(err)
	}
	l2, err := s.TryAcquire(ctx)
	if err != nil {
		t.Fatalf("TryAcquire with 1 lease out: %v", err)
	}
	if got := children(t, conn, "/sem-__lock__"); len(got) != 0 {
		t.Errorf("internal lock left %q", got)
	}
	_ = l2.Release(ctx)

	three, _ := lock.NewSemaphore(conn, "/sem", 3, lock.WithLayout(lock.Kazoo))
	if _, err := three.TryAcquire(ctx); !errors.Is(err, zksim.ErrBadArguments) {
		t.Errorf("another max: %v, want ErrBadArguments", err)
	}
	curator, _ := lock.NewSemaphore(conn, "/csem", 2)
	cl, err := curator.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Release(ctx)
	kz, _ := lock.NewSemaphore(conn, "/csem", 2, lock.WithLayout(lock.Kazoo))
	if _, err := kz.TryAcquire(ctx); !errors.Is(err, recipes.ErrForeignNodes) {
		t.Errorf("kazoo layout on a Curator semaphore: %v, want ErrForeignNodes", err)
	}
	cur, _ := lock.NewSemaphore(conn, "/sem", 2, lock.WithLayout(lock.Curator))
	if _, err := cur.TryAcquire(ctx); !errors.Is(err, recipes.ErrForeignNodes) {
		t.Errorf("Curator layout on a kazoo semaphore: %v, want ErrForeignNodes", err)
	}
}

// TestCuratorLayoutSemaphoreCountsEveryChild: Curator counts every child
// of the leases directory as a lease; so does its layout.
func TestCuratorLayoutSemaphoreCountsEveryChild(t *testing.T) {
	ctx := t.Context()
	srv, conn := layoutServer(t)
	foreignNode(t, srv, "/sem", "x")
	foreignNode(t, srv, "/sem/leases", "odd-")
	s, _ := lock.NewSemaphore(conn, "/sem", 1, lock.WithLayout(lock.Curator))
	if _, err := s.TryAcquire(ctx); !errors.Is(err, lock.ErrNoLease) {
		t.Fatalf("TryAcquire beside an odd child: %v, want ErrNoLease", err)
	}
	d, _ := lock.NewSemaphore(conn, "/sem", 1)
	l, err := d.TryAcquire(ctx)
	if err != nil {
		t.Fatalf("the Zksim layout counts lease- nodes only: %v", err)
	}
	_ = l.Release(ctx)
}
