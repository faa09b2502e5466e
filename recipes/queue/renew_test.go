package queue_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/zksim/zksim"
	"github.com/zksim/zksim/faults"
	"github.com/zksim/zksim/recipes/queue"
	"github.com/zksim/zksim/sim"
	"github.com/zksim/zksim/zkmem"
)

// simCall runs f as a client goroutine of w and steps w until it returns.
func simCall[T any](t *testing.T, w *sim.World, f func(ctx context.Context) (T, error)) (T, error) {
	t.Helper()
	var (
		mu   sync.Mutex
		done bool
		v    T
		err  error
	)
	w.Go(func(ctx context.Context) {
		r, e := f(ctx)
		mu.Lock()
		defer mu.Unlock()
		done, v, err = true, r, e
	})
	if err := w.Run(func() bool {
		mu.Lock()
		defer mu.Unlock()
		return done
	}); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	return v, err
}

// TestAckAcrossSessionRenewal: a locking-queue consumer runs on a client
// library that replaces an expired session with a new one (sim.Renewing,
// as Curator's). It takes an item, its session expires (its claim with
// it), and another consumer takes the item. Its Ack, on the new session,
// must fail with ErrClaimLost (and ErrSessionExpired), as the package
// promises when "our claim is gone (session expired ...)": not delete the
// other consumer's claim with the item and succeed, which would leave the
// other consumer's Ack failing on an item nobody else was given, or,
// after a lost reply, deliver it twice.
func TestAckAcrossSessionRenewal(t *testing.T) {
	cfg := sim.Config{Seed: 1, Clients: 3, ReconnectDelay: time.Second}
	sim.Test(t, cfg, func(t *testing.T, w *sim.World) {
		const dir = "/q"
		r := w.Renewing(0)
		a := queue.NewLocking(r, dir)
		b := queue.NewLocking(w.Conn(1), dir)
		p := queue.NewLocking(w.Conn(2), dir)
		if _, err := simCall(t, w, func(ctx context.Context) (struct{}, error) {
			return struct{}{}, p.Offer(ctx, []byte("x"))
		}); err != nil {
			t.Fatalf("Offer: %v", err)
		}
		itA, err := simCall(t, w, a.TryTake)
		if err != nil {
			t.Fatalf("a's TryTake: %v", err)
		}
		old := r.Current()
		if err := w.Inject(faults.Expire(0)); err != nil {
			t.Fatal(err)
		}
		if err := w.Run(func() bool { return r.Current() != old }); err != nil {
			t.Fatal(err)
		}
		itB, err := simCall(t, w, b.TryTake)
		if err != nil {
			t.Fatalf("b's TryTake once a's session expired: %v", err)
		}
		if _, err := simCall(t, w, func(ctx context.Context) (struct{}, error) { return struct{}{}, itA.Ack(ctx) }); !errors.Is(err, queue.ErrClaimLost) || !errors.Is(err, zksim.ErrSessionExpired) {
			t.Fatalf("a's Ack on its renewed session: %v, want ErrClaimLost and ErrSessionExpired", err)
		}
		if _, err := simCall(t, w, func(ctx context.Context) (struct{}, error) { return struct{}{}, itB.Ack(ctx) }); err != nil {
			t.Fatalf("b's Ack: %v", err)
		}
	})
}

// renewingConn is a client library that replaces an expired session with
// a new one (as sim.Renewing, over zkmem): renew expires the session and
// goes on with a new one. beforeGet, if set, runs before each Get and may
// answer it.
type renewingConn struct {
	zksim.Conn
	srv       *zkmem.Server
	beforeGet func(path string) (answered bool, err error)
}

func (r *renewingConn) renew(t *testing.T) {
	r.srv.Control(r.Conn.SessionID()).Expire()
	c, err := r.srv.Connect()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	r.Conn = c
}

func (r *renewingConn) Get(ctx context.Context, p string) ([]byte, *zksim.Stat, error) {
	if r.beforeGet != nil {
		if answered, err := r.beforeGet(p); answered {
			return nil, nil, err
		}
	}
	return r.Conn.Get(ctx, p)
}

// TestTakeAcrossSessionRenewal: a locking-queue consumer on a client
// library that renews expired sessions claims the first item, finds it
// gone (acknowledged by another consumer meanwhile, here deleted by a
// third party), and its session expires while it deletes its claim
// again. Its TryTake began on that session and must fail with
// ErrSessionExpired (recipes/doc.go: a call belongs to the session it
// began on), not go on to claim the next item on the new session, nor,
// with no next item, report the queue empty there.
func TestTakeAcrossSessionRenewal(t *testing.T) {
	for _, items := range [][]string{{"1", "2"}, {"1"}} {
		t.Run(fmt.Sprintf("%d items", len(items)), func(t *testing.T) { testTakeAcrossSessionRenewal(t, items) })
	}
}

func testTakeAcrossSessionRenewal(t *testing.T, items []string) {
	srv := zkmem.NewServer(zkmem.Options{})
	t.Cleanup(srv.Close)
	connect := func() *zkmem.Conn {
		c, err := srv.Connect()
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = c.Close() })
		return c
	}
	ctx := t.Context()
	const dir = "/lq"
	p := queue.NewLocking(connect(), dir)
	for _, d := range items {
		if err := p.Offer(ctx, []byte(d)); err != nil {
			t.Fatalf("Offer: %v", err)
		}
	}
	observer := connect()
	r := &renewingConn{Conn: connect(), srv: srv}
	stage := 0
	r.beforeGet = func(p string) (bool, error) {
		switch {
		case stage == 0 && strings.HasPrefix(p, dir+"/items/"):
			stage++
			if err := observer.Delete(ctx, p, -1); err != nil {
				t.Fatalf("third party's delete of %s: %v", p, err)
			}
		case stage == 1 && strings.HasPrefix(p, dir+"/claims/"):
			stage++
			r.renew(t)
			return true, zksim.ErrSessionExpired
		}
		return false, nil
	}
	it, err := queue.NewLocking(r, dir).TryTake(ctx)
	if stage != 2 {
		t.Fatalf("the schedule did not happen (stage %d); TryTake: %v", stage, err)
	}
	if !errors.Is(err, zksim.ErrSessionExpired) {
		got := "no item"
		if it != nil {
			got = fmt.Sprintf("item %q", it.Data())
		}
		t.Fatalf("TryTake across its session's renewal: %s, %v; want ErrSessionExpired", got, err)
	}
}
