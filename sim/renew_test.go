package sim_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
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

// A Renewing whose process is paused renews nothing until it resumes: a
// call the process made on its expired session before the pause gets its
// answer (ErrSessionExpired) once it resumes, and only then does the
// library open its new session. Found by exploration (TestElectionEnsemble,
// "liveness"): the library renewed while the process was paused, the
// process went on with the new session, and the old client's pause, which
// held the call's request, was never ended: the Campaign never returned.
func TestRenewingPausedRenewsAfterItResumes(t *testing.T) {
	cfg := sim.Config{Seed: 3, Clients: 1, Members: 3, SessionTimeout: time.Second, Server: zkmemOptions()}
	sim.Test(t, cfg, func(t *testing.T, w *sim.World) {
		r := w.Renewing(0)
		inject := func(f faults.StepFault) {
			t.Helper()
			require.NoError(t, w.Inject(f))
		}
		// The session expires during an election and the process pauses;
		// its client library learns of the expiry once a leader is
		// elected, and the process once it resumes, when no member takes
		// a new session (no quorum): the library keeps trying.
		leader := w.Ensemble().Leader()
		require.NoError(t, w.Faults().Crash(leader, -1))
		inject(faults.Expire(0))
		inject(faults.Pause(0, -1))
		require.NoError(t, w.RunFor(time.Second))
		require.NotEqual(t, -1, w.Ensemble().Leader())
		other := w.Ensemble().Leader()
		require.NoError(t, w.Faults().Crash(other, -1))
		inject(faults.Resume(0))
		run(t, w, func() bool { return r.State() == zksim.StateExpired })
		require.NoError(t, w.RunFor(time.Second))
		require.Equal(t, 0, r.Current().Index())

		// The process pauses with a call on the expired session in
		// flight; a leader is elected meanwhile.
		inject(faults.Pause(0, -1))
		var created box[error]
		w.Go(func(ctx context.Context) {
			_, err := r.Create(ctx, "/x", nil, zksim.ModePersistent, open)
			created.put(err)
		})
		require.NoError(t, w.Faults().Restart(leader))
		require.NoError(t, w.RunFor(2*time.Second))
		require.NotEqual(t, -1, w.Ensemble().Leader())
		require.False(t, created.ok(), "a paused process's call returned")
		require.Equal(t, 0, r.Current().Index(), "the library of a paused process renewed its session")

		inject(faults.Resume(0))
		run(t, w, created.ok)
		require.ErrorIs(t, created.get(), zksim.ErrSessionExpired)
		run(t, w, func() bool { return r.Current().Index() == 1 })
		require.Equal(t, zksim.StateConnected, r.State())
	})
}
