package election_test

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/zksim/zksim"
	"github.com/zksim/zksim/faults"
	"github.com/zksim/zksim/recipes"
	"github.com/zksim/zksim/recipes/election"
	"github.com/zksim/zksim/sim"
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

// TestCampaignAgainAcrossSessionRenewal: a process keeps one Election, on
// a client library that replaces an expired session with a new one
// (sim.Renewing, as Curator's). Its leadership is Lost after the
// connection stayed down for the session timeout, and it campaigns again
// with the same Election while still cut off: Campaign first deletes what
// is left of the old node, waiting for the connection. When the client is
// back, its session has expired and the library renews it. The call began
// on the old session, so it must fail with ErrSessionExpired (recipes/doc.go:
// a cleanup that meets the expiry ends its call), not go on and lead on the
// new one.
func TestCampaignAgainAcrossSessionRenewal(t *testing.T) {
	cfg := sim.Config{Seed: 1, Clients: 1}
	sim.Test(t, cfg, func(t *testing.T, w *sim.World) {
		must := func(err error) {
			t.Helper()
			if err != nil {
				t.Fatal(err)
			}
		}
		r := w.Renewing(0)
		e := election.New(r, "/e")
		var first, again outcome
		w.Go(func(ctx context.Context) { first.put(e.Campaign(ctx, []byte("v"))) })
		must(w.Run(first.ok))
		must(first.get())
		must(w.Inject(faults.Disconnect(0, -1)))
		must(w.RunFor(2 * r.SessionTimeout()))
		if st := e.State(); st != recipes.Lost {
			t.Fatalf("cut off for two session timeouts: %v, want Lost", st)
		}
		w.Go(func(ctx context.Context) { again.put(e.Campaign(ctx, []byte("v"))) })
		must(w.Run(func() bool { return again.ok() || w.Enabled() == 0 }))
		if again.ok() {
			t.Fatalf("Campaign ended while cut off: %v", again.get())
		}
		must(w.Inject(faults.Reconnect(0)))
		must(w.Run(again.ok))
		if err := again.get(); !errors.Is(err, zksim.ErrSessionExpired) {
			t.Fatalf("Campaign begun on the expired session: %v (state %v), want ErrSessionExpired", err, e.State())
		}
		if st := e.State(); st != recipes.Lost {
			t.Fatalf("after the failed Campaign: %v, want Lost (the last leadership's)", st)
		}
	})
}
