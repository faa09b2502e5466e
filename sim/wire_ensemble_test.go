package sim_test

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/go-zookeeper/zk"
	"github.com/stretchr/testify/require"
	"github.com/zksim/zksim"
	"github.com/zksim/zksim/faults"
	"github.com/zksim/zksim/sim"
)

// zkEnsembleRun is what zkEnsembleScenario saw.
type zkEnsembleRun struct {
	spread      bool   // the go-zookeeper client and the writer were on different members
	stale       string // what the client read on its lagging member before sync
	synced      string // and after sync
	from, to    int    // the member it was on, and the one it moved to after the crash
	owner, sid  int64  // its ephemeral's owner after the move, and its session
	watched     zk.Event
	refused     bool // a member behind the client's last zxid refused it
	trace       string
	leaderFirst bool // the crashed member led (an election caught every member up)
}

// zkEnsembleScenario runs, on a 3-member ensemble, a native writer c0 and
// a go-zookeeper client c1 on another member. c1 makes an ephemeral /e and
// watches /w; its member lags; c0 sets /x; c1 reads /x (stale or not, as
// the seed schedules its member's applies), syncs and reads again. Then
// its member catches up, the two others lag, c1 writes /y0 to /y3 (so
// that it has seen zxids they have not applied), and its member
// crashes: c1 moves on, refused by a
// member that is behind, and keeps its session, its ephemeral and its
// watch, which fires when c0 creates /w.
func zkEnsembleScenario(t *testing.T, seed uint64) (r zkEnsembleRun) {
	t.Helper()
	// From the second part on, the clients' events go first (Choose picks
	// the first enabled event; a member applies only when no client has
	// anything to do), so that the other members stay behind while the
	// client writes and moves.
	var clientsFirst atomic.Bool
	cfg := sim.Config{Seed: seed, Clients: 1, Members: 3, Server: zkmemOptions(), Choose: func([]sim.Choice) int {
		if clientsFirst.Load() {
			return 0
		}
		return -1
	}}
	sim.Test(t, cfg, func(t *testing.T, w *sim.World) {
		zc, _, err := w.ConnectZK()
		require.NoError(t, err)
		require.NoError(t, w.Run(func() bool { return w.Member(1) >= 0 }))
		r.from = w.Member(1)
		writer := w.Member(0)
		if r.spread = writer != r.from; !r.spread {
			return
		}
		do := func(f func(ctx context.Context)) {
			t.Helper()
			var done atomic.Bool
			w.Go(func(ctx context.Context) {
				f(ctx)
				done.Store(true)
			})
			require.NoError(t, w.Run(done.Load))
		}
		c0 := w.Conn(0)
		var watch <-chan zk.Event
		do(func(ctx context.Context) {
			_, err := c0.Create(ctx, "/x", []byte("v1"), zksim.ModePersistent, zksim.OpenACL())
			require.NoError(t, err)
		})
		do(func(context.Context) {
			_, err := zc.Create("/e", nil, zk.FlagEphemeral, zk.WorldACL(zk.PermAll))
			require.NoError(t, err)
			_, _, watch, err = zc.ExistsW("/w")
			require.NoError(t, err)
		})
		require.NoError(t, w.Inject(lagFault(r.from)))
		do(func(ctx context.Context) {
			_, err := c0.Set(ctx, "/x", []byte("v2"), -1)
			require.NoError(t, err)
		})
		do(func(context.Context) {
			data, _, err := zc.Get("/x")
			require.NoError(t, err)
			r.stale = string(data)
			_, err = zc.Sync("/x")
			require.NoError(t, err)
			data, _, err = zc.Get("/x")
			require.NoError(t, err)
			r.synced = string(data)
		})

		// The other members fall behind the client's next writes.
		clientsFirst.Store(true)
		require.NoError(t, w.Inject(faults.CatchUp(r.from)))
		for m := range 3 {
			if m != r.from {
				require.NoError(t, w.Inject(faults.Lag(m)))
			}
		}
		do(func(context.Context) {
			for _, p := range []string{"/y0", "/y1", "/y2", "/y3"} {
				_, err := zc.Create(p, nil, 0, zk.WorldACL(zk.PermAll))
				require.NoError(t, err)
			}
		})
		r.leaderFirst = w.Ensemble().Leader() == r.from
		require.NoError(t, w.Inject(faults.Crash(r.from, -1)))
		require.NoError(t, w.Run(func() bool { return w.Member(1) >= 0 }))
		r.to = w.Member(1)
		r.sid = zc.SessionID()
		do(func(context.Context) {
			_, st, err := zc.Exists("/e")
			require.NoError(t, err)
			r.owner = st.EphemeralOwner
		})
		do(func(ctx context.Context) {
			_, err := c0.Create(ctx, "/w", nil, zksim.ModePersistent, zksim.OpenACL())
			require.NoError(t, err)
			r.watched = <-watch
		})
		r.trace = w.TraceString()
		r.refused = strings.Contains(r.trace, ", the client saw ")
	})
	return r
}

// TestZKClientOnEnsemble: a go-zookeeper client on a lagging member reads
// stale data in some runs (fresh in others, as the seed schedules the
// member's applies), and always fresh data after sync; when its member
// crashes it moves to another member, refused by one that has not applied
// what it saw, and keeps its session, its ephemeral and its watch. A seed
// replays its trace byte for byte.
func TestZKClientOnEnsemble(t *testing.T) {
	stale, fresh, refused, waited := 0, 0, 0, 0
	replayed := false
	for seed := range uint64(30) {
		r := zkEnsembleScenario(t, seed)
		if !r.spread {
			continue
		}
		require.Equal(t, "v2", r.synced, "seed %d: after sync the client still reads %q", seed, r.synced)
		require.NotEqual(t, r.from, r.to, "seed %d: the client did not move", seed)
		require.GreaterOrEqual(t, r.to, 0, "seed %d", seed)
		require.Equal(t, r.sid, r.owner, "seed %d: the ephemeral's owner is not the client's session", seed)
		require.Equal(t, zk.Event{Type: zk.EventNodeCreated, State: zk.State(3), Path: "/w"}, r.watched, "seed %d", seed)
		if r.refused {
			require.False(t, r.leaderFirst, "seed %d: refused after an election caught every member up", seed)
			refused++
		}
		if strings.Contains(r.trace, "c1 apply sync /x -> waits for its member") {
			waited++
		}
		if r.stale == "v2" {
			fresh++
			continue
		}
		require.Equal(t, "v1", r.stale, "seed %d", seed)
		require.Contains(t, r.trace, "c1 apply getData /x -> 2 bytes v0")
		stale++
		if !replayed {
			replayed = true
			again := zkEnsembleScenario(t, seed)
			require.Equal(t, r.trace, again.trace, "seed %d: same seed, different trace", seed)
		}
	}
	t.Logf("stale reads %d, fresh reads %d, syncs that waited %d, refusals %d", stale, fresh, waited, refused)
	require.NotZero(t, stale, "no run read stale data")
	require.NotZero(t, fresh, "no run read fresh data before the sync")
	require.NotZero(t, waited, "no sync waited for its member")
	require.NotZero(t, refused, "no member refused a client that had seen more")
}

// TestReplayZKClientsOnEnsemble: go-zookeeper clients taking zk.Lock beside
// native clients taking recipes/lock on a 3-member ensemble, under the
// whole fault mix (the ensemble's faults included), replay their traces
// byte for byte; the ensemble's faults reach the go-zookeeper clients
// (frames that wait for a lagging member, refused handshakes, moves).
func TestReplayZKClientsOnEnsemble(t *testing.T) {
	seeds := 30
	if testing.Short() {
		seeds = 10
	}
	kinds := []string{"fault Lag(", "fault Crash(", "fault Isolate(", "-> waits for its member",
		"-> refused: ", "elected leader", "on m0", "on m1", "on m2", "apply setWatches"}
	struck := map[string]int{}
	locks := 0
	for seed := range uint64(seeds) {
		first, n := runZKLockWorldOn(t, seed, 3, 3, 2)
		second, _ := runZKLockWorldOn(t, seed, 3, 3, 2)
		if first != second {
			t.Fatalf("seed %d: traces differ:\n%s", seed, firstDifference(first, second))
		}
		locks += n
		for _, k := range kinds {
			if strings.Contains(first, k) {
				struck[k]++
			}
		}
	}
	for _, k := range kinds {
		if struck[k] == 0 {
			t.Errorf("no run of %d had %q", seeds, k)
		}
	}
	if locks < seeds {
		t.Errorf("only %d zk.Locks taken in %d runs", locks, seeds)
	}
	t.Logf("%d seeds x 2 runs: identical traces; zk.Locks taken %d; runs struck: %v", seeds, locks, struck)
}

// TestZKWriteWaitingForItsMemberWhenTheConnectionDrops: a go-zookeeper
// client's create waits for its lagging member; its connection is cut
// meanwhile: the create fails with a connection loss (it was committed all
// the same), the client reconnects to its session and finds the node.
func TestZKWriteWaitingForItsMemberWhenTheConnectionDrops(t *testing.T) {
	sim.Test(t, sim.Config{Seed: 3, Members: 3, Server: zkmemOptions()}, func(t *testing.T, w *sim.World) {
		zc, _, err := w.ConnectZK()
		require.NoError(t, err)
		require.NoError(t, w.Run(func() bool { return w.Member(0) >= 0 }))
		m := w.Member(0)
		require.NoError(t, w.Inject(faults.Lag(m)))
		var createErr atomic.Value
		var done atomic.Bool
		w.Go(func(context.Context) {
			_, err := zc.Create("/p", nil, 0, zk.WorldACL(zk.PermAll))
			createErr.Store(fmtErr(err))
			done.Store(true)
		})
		require.NoError(t, w.Run(func() bool {
			return strings.Contains(w.TraceString(), "c0 apply create /p -> waits for its member")
		}))
		require.NoError(t, w.Inject(faults.Disconnect(0, 0)))
		require.NoError(t, w.Run(done.Load))
		require.Equal(t, fmtErr(zk.ErrConnectionClosed), createErr.Load())
		require.Contains(t, w.TraceString(), "c0 answer create /p -> no reply")
		var exists atomic.Bool
		done.Store(false)
		w.Go(func(context.Context) {
			ok, _, err := zc.Exists("/p")
			exists.Store(ok && err == nil)
			done.Store(true)
		})
		require.NoError(t, w.Run(done.Load))
		require.True(t, exists.Load(), "the create was committed before the connection dropped")
	})
}

func fmtErr(err error) string {
	if err == nil {
		return "<nil>"
	}
	return err.Error()
}
