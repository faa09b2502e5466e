package barrier_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/zksim/zksim"
	"github.com/zksim/zksim/faults"
	"github.com/zksim/zksim/recipes/barrier"
	"github.com/zksim/zksim/sim"
	"github.com/zksim/zksim/zkmem"
)

// outcome is what a call made on a sim.World client returned.
type outcome struct {
	mu   sync.Mutex
	done bool
	err  error
}

func (o *outcome) put(err error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.done, o.err = true, err
}

func (o *outcome) ok() bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.done
}

func (o *outcome) get() error {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.err
}

// simStep runs w until done, or injects f when f is not nil.
func simStep(t *testing.T, w *sim.World, f sim.StepFault, done func() bool) {
	t.Helper()
	var err error
	if f != nil {
		err = w.Inject(f)
	} else {
		err = w.Run(done)
	}
	if err != nil {
		t.Fatal(err)
	}
}

// simChildren lists dir through client i of w.
func simChildren(t *testing.T, w *sim.World, i int, dir string) []string {
	t.Helper()
	var (
		o        outcome
		children []string
	)
	w.Go(func(ctx context.Context) {
		c, _, err := w.Conn(i).Children(ctx, dir)
		children = c
		o.put(err)
	})
	simStep(t, w, nil, o.ok)
	if err := o.get(); err != nil {
		t.Fatalf("children of %s: %v", dir, err)
	}
	return children
}

// TestEnterAcrossSessionRenewal: a double-barrier member runs on a client
// library that replaces an expired session with a new one (sim.Renewing,
// as Curator's). The group opens while the member is looking at the ready
// node again after a connection loss, and its session expires (its member
// node with it) before it is back. It must not pass Enter on the new
// session, where it is no member at all: its Enter fails with
// ErrSessionExpired, as the package promises.
func TestEnterAcrossSessionRenewal(t *testing.T) {
	cfg := sim.Config{Seed: 1, Clients: 3, ReconnectDelay: time.Second}
	sim.Test(t, cfg, func(t *testing.T, w *sim.World) {
		const dir = "/db"
		r := w.Renewing(0)
		a, err := barrier.NewDouble(r, dir, 2)
		if err != nil {
			t.Fatal(err)
		}
		b, err := barrier.NewDouble(w.Conn(1), dir, 2)
		if err != nil {
			t.Fatal(err)
		}
		var aEnter, bEnter outcome
		w.Go(func(ctx context.Context) { aEnter.put(a.Enter(ctx)) })
		simStep(t, w, nil, func() bool { return w.Enabled() == 0 })
		if aEnter.ok() || len(simChildren(t, w, 2, dir)) != 1 {
			t.Fatalf("a's Enter: done %v (%v), want waiting with its node", aEnter.ok(), aEnter.get())
		}
		// a's look at the ready node once it opens is lost.
		simStep(t, w, faults.DropNextRequest(0, zkmem.OpExists), nil)
		w.Go(func(ctx context.Context) { bEnter.put(b.Enter(ctx)) })
		simStep(t, w, nil, func() bool { return bEnter.ok() && r.State() == zksim.StateDisconnected })
		if err := bEnter.get(); err != nil {
			t.Fatalf("b's Enter: %v", err)
		}
		simStep(t, w, faults.Expire(0), nil)
		simStep(t, w, nil, aEnter.ok)
		if err := aEnter.get(); !errors.Is(err, zksim.ErrSessionExpired) {
			t.Fatalf("a's Enter across its session's expiry and renewal: %v, want ErrSessionExpired (members now: %v)",
				err, simChildren(t, w, 2, dir))
		}
	})
}
