package seqnode

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/zksim/zksim"
	"github.com/zksim/zksim/faults"
	"github.com/zksim/zksim/sim"
)

// TestCreateOwnedAcrossSessionRenewal: CreateOwned waits out a connection
// loss in its own loop (retry.Pause). The client library replaces the
// expired session with a new one meanwhile (sim.Renewing, as Curator's):
// CreateOwned must not go on and create the node for the new session, as
// if the caller had never lost the old one; it fails with
// ErrSessionExpired.
func TestCreateOwnedAcrossSessionRenewal(t *testing.T) {
	sim.Test(t, sim.Config{Seed: 1, Clients: 1}, func(t *testing.T, w *sim.World) {
		r := w.Renewing(0)
		inject := func(f sim.StepFault) {
			t.Helper()
			if err := w.Inject(f); err != nil {
				t.Fatalf("inject %v: %v", f, err)
			}
		}
		run := func(until func() bool) {
			t.Helper()
			if err := w.Run(until); err != nil {
				t.Fatalf("run: %v", err)
			}
		}
		inject(faults.Disconnect(0, -1))
		run(func() bool { return r.State() == zksim.StateDisconnected })
		var (
			mu    sync.Mutex
			done  bool
			owned bool
			err   error
		)
		finished := func() bool {
			mu.Lock()
			defer mu.Unlock()
			return done
		}
		w.Go(func(ctx context.Context) {
			o, _, e := CreateOwned(ctx, r, "/n", nil, zksim.OpenACL())
			mu.Lock()
			defer mu.Unlock()
			done, owned, err = true, o, e
		})
		run(func() bool { return finished() || w.Enabled() == 0 }) // the create is lost
		if finished() {
			t.Fatalf("CreateOwned ended while disconnected: %v, %v", owned, err)
		}
		inject(faults.Expire(0))
		inject(faults.Reconnect(0))
		run(finished)
		if !errors.Is(err, zksim.ErrSessionExpired) || owned {
			t.Fatalf("CreateOwned across a session renewal: owned %v, %v; want ErrSessionExpired", owned, err)
		}
	})
}
