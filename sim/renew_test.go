package sim_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/zksim/zksim"
	"github.com/zksim/zksim/faults"
	"github.com/zksim/zksim/sim"
)

// A Renewing client goes on with a new session once its session expired:
// its events say Expired then Connected, its session id changes, its
// ephemeral node is gone, and its calls succeed on the new session.
func TestRenewingReplacesExpiredSession(t *testing.T) {
	sim.Test(t, sim.Config{Seed: 1, Clients: 1}, func(t *testing.T, w *sim.World) {
		r := w.Renewing(0)
		first := r.SessionID()
		var states box[[]zksim.State]
		events := r.SessionEvents(w.Context())
		w.Go(func(ctx context.Context) {
			var seen []zksim.State
			for ev := range events {
				seen = append(seen, ev.State)
				states.put(slices.Clone(seen))
			}
		})
		var created box[bool]
		w.Go(func(ctx context.Context) {
			_, err := r.Create(ctx, "/e", nil, zksim.ModeEphemeral, open)
			created.put(err == nil)
		})
		run(t, w, created.ok)
		if err := w.Inject(faults.Expire(0)); err != nil {
			t.Fatal(err)
		}
		run(t, w, func() bool { return slices.Contains(states.get(), zksim.StateConnected) })
		if got := states.get(); !slices.Equal(got, []zksim.State{zksim.StateDisconnected, zksim.StateExpired, zksim.StateConnected}) {
			t.Errorf("session events %v, want Disconnected, Expired, Connected", got)
		}
		if r.SessionID() == first || r.Current().Index() != 1 || r.State() != zksim.StateConnected {
			t.Errorf("after renewal: session %#x (was %#x), client c%d, state %v", r.SessionID(), first, r.Current().Index(), r.State())
		}
		// What a recipe draws on it comes from its current client's
		// stream, which the seed fixes.
		if zksim.RandReader(r) != zksim.RandReader(r.Current()) {
			t.Errorf("a Renewing's random stream is not its current client's")
		}
		var ok box[bool]
		w.Go(func(ctx context.Context) {
			found, _, err := r.Exists(ctx, "/e")
			ok.put(err == nil && !found)
		})
		run(t, w, ok.ok)
		if !ok.get() {
			t.Errorf("the old session's ephemeral node is still there, or the call failed")
		}
	})
}

// A Renewing that was closed renews nothing: a client library that was
// told to close and learns only afterwards that its session had expired
// (it was paused when the expiry came) stays on the closed session, as
// Curator's does after close(). Found by exploration: a barrier Wait on a
// closed Renewing returned on a session opened after the Close.
func TestRenewingClosedRenewsNothing(t *testing.T) {
	sim.Test(t, sim.Config{Seed: 1, Clients: 1}, func(t *testing.T, w *sim.World) {
		r := w.Renewing(0)
		first := r.SessionID()
		inject := func(f faults.StepFault) {
			t.Helper()
			if err := w.Inject(f); err != nil {
				t.Fatal(err)
			}
		}
		inject(faults.Pause(0, -1))
		var closed box[bool]
		w.Go(func(ctx context.Context) {
			r.Close()
			closed.put(true)
		})
		inject(faults.Expire(0))
		inject(faults.Resume(0))
		run(t, w, closed.ok)
		if r.SessionID() != first || r.Current().Index() != 0 {
			t.Errorf("closed Renewing moved to session %#x (client c%d), want %#x (c0)", r.SessionID(), r.Current().Index(), first)
		}
		if tr := w.TraceString(); strings.Contains(tr, "renewed") || strings.Contains(tr, "c1 connect") {
			t.Errorf("a closed Renewing renewed its session:\n%s", tr)
		}
		if st := r.State(); st != zksim.StateExpired && st != zksim.StateClosed {
			t.Errorf("closed Renewing in state %v, want StateExpired or StateClosed", st)
		}
	})
}
