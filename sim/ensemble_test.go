package sim_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/zksim/zksim"
	"github.com/zksim/zksim/sim"
)

// staleReadRun runs, on a 3-member ensemble, a writer and a reader on two
// different members: the reader's member lags, the writer creates /x, the
// reader does not see it, syncs, and sees it. It returns the reader's two
// answers and the trace.
func staleReadRun(t *testing.T, seed uint64) (spread, before, after bool, trace string) {
	t.Helper()
	cfg := sim.Config{Seed: seed, Clients: 2, Members: 3, Server: zkmemOptions()}
	sim.Test(t, cfg, func(t *testing.T, w *sim.World) {
		writer, reader := w.Member(0), w.Member(1)
		require.NotEqual(t, -1, writer)
		if spread = writer != reader; !spread {
			return
		}
		require.NoError(t, w.Inject(lagFault(reader)))
		require.True(t, w.Lagging(reader))

		var wrote, done atomic.Bool
		w.Go(func(ctx context.Context) {
			_, err := w.Conn(0).Create(ctx, "/x", []byte("v1"), zksim.ModePersistent, zksim.OpenACL())
			if err == nil {
				wrote.Store(true)
			}
		})
		require.NoError(t, w.Run(wrote.Load))
		// The writer's answer came: the leader committed /x. Whether the
		// reader's member applied it before the reader reads is the
		// seed's choice.
		w.Go(func(ctx context.Context) {
			c := w.Conn(1)
			before, _, _ = c.Exists(ctx, "/x")
			if _, err := c.Sync(ctx, "/"); err == nil {
				after, _, _ = c.Exists(ctx, "/x")
			}
			done.Store(true)
		})
		require.NoError(t, w.Run(done.Load))
		require.Zero(t, w.Ensemble().Pending(reader))
		trace = w.TraceString()
	})
	return spread, before, after, trace
}

// lagFault is a sim.StepFault that makes member m lag.
type lagFault int

func (m lagFault) Inject(w *sim.World) error { return w.Faults().Lag(int(m)) }
func (m lagFault) String() string            { return "Lag(m" + string(rune('0'+m)) + ")" }

// TestEnsembleStaleReadThenSync: over seeds, a reader on a lagging member
// reads stale data in some runs, fresh data in others (the member's
// applies are scheduler events), and always fresh data after sync; a seed
// replays its trace byte for byte.
func TestEnsembleStaleReadThenSync(t *testing.T) {
	stale, fresh, waited := 0, 0, 0
	for seed := range uint64(40) {
		spread, before, after, trace := staleReadRun(t, seed)
		if !spread {
			continue
		}
		require.True(t, after, "seed %d: after sync the reader still misses /x", seed)
		require.Contains(t, trace, "apply commit (0 pending)")
		if before {
			fresh++
			continue
		}
		stale++
		require.Contains(t, trace, "c1 apply exists /x -> absent")
		if strings.Contains(trace, "c1 apply sync / -> waits for its member") {
			waited++
		}
		if stale == 1 {
			_, _, _, again := staleReadRun(t, seed)
			require.Equal(t, trace, again, "seed %d: same seed, different trace", seed)
		}
	}
	t.Logf("stale reads %d (sync waited in %d), fresh reads %d", stale, waited, fresh)
	require.NotZero(t, waited, "no sync waited for its member")
	require.NotZero(t, stale, "no run read stale data")
	require.NotZero(t, fresh, "no run read fresh data before the sync")
}

func TestEnsembleFaultsNeedAnEnsemble(t *testing.T) {
	sim.Test(t, sim.Config{Seed: 1, Clients: 1}, func(t *testing.T, w *sim.World) {
		require.ErrorIs(t, w.Faults().Lag(0), sim.ErrNotEnsemble)
		require.ErrorIs(t, w.Faults().Crash(0, time.Second), sim.ErrNotEnsemble)
		require.ErrorIs(t, w.Faults().FailLeader(true), sim.ErrNotEnsemble)
		require.Equal(t, 0, w.Members())
		require.Equal(t, -1, w.Member(0))
	})
	sim.Test(t, sim.Config{Seed: 1, Clients: 1, Members: 3}, func(t *testing.T, w *sim.World) {
		require.EqualError(t, w.Faults().Lag(3), "sim: no member 3 in an ensemble of 3")
	})
}

// TestEnsembleClientsSpreadFromTheSeed: clients' member lists are
// orders drawn from the seed, so over a few clients more than one member
// serves, and the same seed gives the same spread.
func TestEnsembleClientsSpreadFromTheSeed(t *testing.T) {
	spread := func(seed uint64) []int {
		var out []int
		sim.Test(t, sim.Config{Seed: seed, Clients: 8, Members: 3}, func(t *testing.T, w *sim.World) {
			for i := range 8 {
				out = append(out, w.Member(i))
			}
		})
		return out
	}
	a := spread(7)
	require.Equal(t, a, spread(7))
	used := map[int]bool{}
	for _, m := range a {
		used[m] = true
	}
	require.Len(t, used, 3, "8 clients on members %v", a)
}

// TestEnsembleLeaderFailover: a write that reaches a failing leader gets
// ErrConnectionLoss, the clients reconnect after an election, and the
// write took effect or not as the fault said.
func TestEnsembleLeaderFailover(t *testing.T) {
	for _, committed := range []bool{true, false} {
		cfg := sim.Config{Seed: 3, Clients: 2, Members: 3, Server: zkmemOptions()}
		sim.Test(t, cfg, func(t *testing.T, w *sim.World) {
			old := w.Ensemble().Leader()
			require.NoError(t, w.Faults().FailLeader(committed))
			var err error
			var done atomic.Bool
			w.Go(func(ctx context.Context) {
				_, err = w.Conn(0).Create(ctx, "/y", nil, zksim.ModePersistent, zksim.OpenACL())
				done.Store(true)
			})
			require.NoError(t, w.Run(done.Load))
			require.ErrorIs(t, err, zksim.ErrConnectionLoss)
			require.NoError(t, w.RunFor(2*time.Second))
			leader := w.Ensemble().Leader()
			require.NotEqual(t, -1, leader)
			require.NotEqual(t, old, leader)
			var ok bool
			done.Store(false)
			w.Go(func(ctx context.Context) {
				ok, _, err = w.Conn(1).Exists(ctx, "/y")
				done.Store(true)
			})
			require.NoError(t, w.Run(done.Load))
			require.NoError(t, err)
			require.Equal(t, committed, ok)
			tr := w.TraceString()
			require.Contains(t, tr, "the leader failed on this write")
			require.Contains(t, tr, "elected leader")
			require.Contains(t, tr, "deliver state StateDisconnected")
		})
	}
}

// TestEnsembleCrashAndIsolate: a crashed member's clients move on and it
// restarts; an isolated member's clients move on and it heals.
func TestEnsembleCrashAndIsolate(t *testing.T) {
	cfg := sim.Config{Seed: 5, Clients: 4, Members: 3, Server: zkmemOptions()}
	sim.Test(t, cfg, func(t *testing.T, w *sim.World) {
		e := w.Ensemble()
		follower := (e.Leader() + 1) % 3
		require.NoError(t, w.Faults().Crash(follower, time.Second))
		for i := range 4 {
			require.NotEqual(t, follower, w.Member(i))
		}
		require.NoError(t, w.RunFor(1500*time.Millisecond))
		require.Equal(t, "follower", e.Role(follower).String())
		require.NoError(t, w.Faults().Isolate(follower, -1))
		require.Equal(t, "looking", e.Role(follower).String())
		require.NoError(t, w.Faults().Heal(follower))
		require.Equal(t, "follower", e.Role(follower).String())
		tr := w.TraceString()
		require.Contains(t, tr, "restarts")
		if err := w.RunFor(time.Second); err != nil && !errors.Is(err, sim.ErrIdle) {
			t.Fatal(err)
		}
		for i := range 4 {
			require.True(t, w.Live(i))
		}
	})
}

// TestEnsembleHealKeepsAnotherMemberLagging: healing one member leaves
// another's lag alone, and a write of the lagging member's client waits
// for it (the scheduler applies its commits) instead of blocking the
// World.
func TestEnsembleHealKeepsAnotherMemberLagging(t *testing.T) {
	cfg := sim.Config{Seed: 2, Clients: 6, Members: 3, Server: zkmemOptions()}
	sim.Test(t, cfg, func(t *testing.T, w *sim.World) {
		e := w.Ensemble()
		leader := e.Leader()
		lagging, other := (leader+1)%3, (leader+2)%3
		require.NoError(t, w.Faults().Lag(lagging))
		require.NoError(t, w.Faults().Isolate(other, -1))
		require.NoError(t, w.Faults().Heal(other))
		require.True(t, w.Lagging(lagging), "the heal of m%d forgot the lag of m%d", other, lagging)
		client := -1
		for i := range 6 {
			if w.Member(i) == lagging {
				client = i
			}
		}
		require.NotEqual(t, -1, client, "no client on m%d", lagging)
		var done atomic.Bool
		var err error
		w.Go(func(ctx context.Context) {
			_, err = w.Conn(client).Create(ctx, "/z", nil, zksim.ModePersistent, zksim.OpenACL())
			done.Store(true)
		})
		require.NoError(t, w.Run(done.Load))
		require.NoError(t, err)
		require.Contains(t, w.TraceString(), "create /z -> waits for its member")
	})
}

// TestEnsembleChooseWaitingWithMembersBehind: when Config.Choose lets time
// pass with the members behind, the next step chooses afresh (it once
// took the waiting as a member's event, out of range).
func TestEnsembleChooseWaitingWithMembersBehind(t *testing.T) {
	cfg := sim.Config{Seed: 3, Clients: 2, Members: 3, Server: zkmemOptions(),
		Choose: func(cs []sim.Choice) int { return len(cs) - 1 }} // always the last: waiting, when offered
	sim.Test(t, cfg, func(t *testing.T, w *sim.World) {
		for m := range 3 {
			if m != w.Ensemble().Leader() {
				require.NoError(t, w.Faults().Lag(m))
			}
		}
		w.Go(func(ctx context.Context) {
			for i := 0; ctx.Err() == nil; i++ {
				_, _ = w.Conn(0).Create(ctx, fmt.Sprintf("/n%d", i), nil, zksim.ModePersistent, zksim.OpenACL())
			}
		})
		w.Go(func(ctx context.Context) { // a reader whose requests come while the members wait
			for ctx.Err() == nil {
				_, _, _ = w.Conn(1).Exists(ctx, "/n0")
				time.Sleep(30 * time.Millisecond)
			}
		})
		require.NoError(t, w.RunFor(time.Second))
		require.Contains(t, w.TraceString(), "apply commit")
	})
}

// TestEnsembleFailLeaderArmedThroughAnElection: a FailLeader armed while
// the ensemble has no leader strikes the first write the next leader
// takes, and the World follows: another election. (The World once took
// the leaderless ensemble for the failure done, and missed the real one.)
func TestEnsembleFailLeaderArmedThroughAnElection(t *testing.T) {
	cfg := sim.Config{Seed: 3, Clients: 2, Members: 3, Server: zkmemOptions()}
	sim.Test(t, cfg, func(t *testing.T, w *sim.World) {
		first := w.Ensemble().Leader()
		call := func(f func(ctx context.Context) error) error {
			var err error
			var done atomic.Bool
			w.Go(func(ctx context.Context) { err = f(ctx); done.Store(true) })
			require.NoError(t, w.Run(done.Load))
			return err
		}
		// A read sent before the leader crashed, applied after: while no
		// member leads, FailLeader armed.
		var done atomic.Bool
		w.Go(func(ctx context.Context) { _, _, _ = w.Conn(0).Exists(ctx, "/"); done.Store(true) })
		require.Positive(t, w.Enabled())
		require.NoError(t, w.Faults().Crash(first, -1))
		require.NoError(t, w.Faults().FailLeader(true))
		require.NoError(t, w.Run(done.Load))
		require.NoError(t, w.RunFor(time.Second))
		second := w.Ensemble().Leader()
		require.NotEqual(t, -1, second)
		// The next write fails the second leader.
		err := call(func(ctx context.Context) error {
			_, err := w.Conn(1).Create(ctx, "/x", nil, zksim.ModePersistent, zksim.OpenACL())
			return err
		})
		require.ErrorIs(t, err, zksim.ErrConnectionLoss)
		tr := w.TraceString()
		require.Equal(t, 1, strings.Count(tr, "the leader failed on this write"), tr)
		require.Greater(t, strings.Index(tr, "the leader failed on this write"), strings.Index(tr, "apply create /x"), tr)
		require.NoError(t, w.Faults().Restart(first))
		require.NoError(t, w.RunFor(time.Second))
		require.NotEqual(t, -1, w.Ensemble().Leader(), "a third leader")
		require.NotEqual(t, second, w.Ensemble().Leader())
	})
}

// TestEnsembleNoExpiryWithoutALeader: while no member leads, no session
// expires, however long its client is cut off; the next leader gives it a
// fresh timeout, and its client, which waited for a member, learns of an
// expiry only once one takes it again.
func TestEnsembleNoExpiryWithoutALeader(t *testing.T) {
	cfg := sim.Config{Seed: 3, Clients: 1, Members: 3, SessionTimeout: time.Second, Server: zkmemOptions()}
	sim.Test(t, cfg, func(t *testing.T, w *sim.World) {
		leader := w.Ensemble().Leader()
		other := (leader + 1) % 3
		id := w.Conn(0).SessionID()
		require.NoError(t, w.Faults().Crash(leader, -1))
		require.NoError(t, w.Faults().Crash(other, -1))
		require.NoError(t, w.RunFor(5*time.Second))
		require.Contains(t, w.Server().SessionIDs(), id, "expired with no leader")
		require.NotContains(t, w.TraceString(), "session expired by the server")
		require.NoError(t, w.Faults().Restart(other))
		require.NoError(t, w.RunFor(700*time.Millisecond)) // elected at 500ms: not yet a timeout since
		require.Contains(t, w.Server().SessionIDs(), id)
		require.Equal(t, zksim.StateConnected, w.Conn(0).State())
	})
}

// TestEnsembleSlowWriteAcrossAnElection: on a slow server a write sent
// while the leader served is applied after it crashed, during the
// election, with FailLeader armed meanwhile. That write reaches no leader,
// so the failure stays armed and strikes the next write the new leader
// takes; every client hears its connection break then, and works again
// once a leader is back. (The World once took the leaderless ensemble for
// the failure done: the next leader failed unseen, and a client whose
// connection it broke was never told, its calls failing for good. The
// ensemble machines left the Slow fault out because of it.)
func TestEnsembleSlowWriteAcrossAnElection(t *testing.T) {
	cfg := sim.Config{Seed: 3, Clients: 2, Members: 3, Server: zkmemOptions()}
	sim.Test(t, cfg, func(t *testing.T, w *sim.World) {
		first := w.Ensemble().Leader()
		call := func(f func(ctx context.Context) error) error {
			t.Helper()
			var err error
			var done atomic.Bool
			w.Go(func(ctx context.Context) { err = f(ctx); done.Store(true) })
			require.NoError(t, w.Run(done.Load))
			return err
		}
		create := func(i int, path string) func(ctx context.Context) error {
			return func(ctx context.Context) error {
				_, err := w.Conn(i).Create(ctx, path, nil, zksim.ModePersistent, zksim.OpenACL())
				return err
			}
		}
		w.Faults().SlowServer(200*time.Millisecond, 10*time.Second)
		var done atomic.Bool
		w.Go(func(ctx context.Context) { _ = create(0, "/a")(ctx); done.Store(true) })
		for !strings.Contains(w.TraceString(), "c0 admit create /a") {
			require.NoError(t, w.Step())
		}
		require.NoError(t, w.Faults().Crash(first, -1))
		require.NoError(t, w.Faults().FailLeader(true))
		require.NoError(t, w.Run(done.Load)) // applied with no leader: it fails no one
		require.NotContains(t, w.TraceString(), "the leader failed on this write")
		require.NoError(t, w.RunFor(time.Second))
		second := w.Ensemble().Leader()
		require.NotEqual(t, -1, second)
		require.ErrorIs(t, call(create(1, "/x")), zksim.ErrConnectionLoss)
		tr := w.TraceString()
		require.Equal(t, 1, strings.Count(tr, "the leader failed on this write"), tr)
		require.Equal(t, -1, w.Ensemble().Leader())
		require.NoError(t, w.Faults().Restart(first))
		require.NoError(t, w.RunFor(2*time.Second))
		require.NotEqual(t, -1, w.Ensemble().Leader())
		for i, path := range []string{"/y0", "/y1"} {
			require.NoError(t, call(create(i, path)), "c%d\n%s", i, w.TraceString())
		}
	})
}

// TestEnsembleConnectThroughALaggingMember: a session opened through a
// lagging member reads every write committed before it (the member
// applied them, then the createSession, before it answered), and a call
// of another client that waited for that member is answered then.
func TestEnsembleConnectThroughALaggingMember(t *testing.T) {
	tried := 0
	for seed := range uint64(20) {
		cfg := sim.Config{Seed: seed, Clients: 1, Members: 3, Server: zkmemOptions()}
		sim.Test(t, cfg, func(t *testing.T, w *sim.World) {
			e := w.Ensemble()
			m := w.Member(0)
			if m == e.Leader() {
				return // c0 must be on a follower
			}
			require.NoError(t, w.Faults().Lag(m))
			for f := range 3 {
				if f != e.Leader() && f != m {
					require.NoError(t, w.Faults().Lag(f))
				}
			}
			var done atomic.Bool
			var err error
			w.Go(func(ctx context.Context) {
				_, err = w.Conn(0).Create(ctx, "/x", nil, zksim.ModePersistent, zksim.OpenACL())
				done.Store(true)
			})
			for !strings.Contains(w.TraceString(), "c0 apply create /x -> waits for its member") {
				require.NoError(t, w.Step())
			}
			c, cerr := w.Connect()
			require.NoError(t, cerr)
			if w.Member(1) != m {
				return // c1 reached another member first
			}
			tried++
			require.Zero(t, e.Pending(m))
			require.Contains(t, w.TraceString(), fmt.Sprintf("m%d applied the 1 commits it lagged behind, then the createSession of c1", m))
			var seen bool
			var serr error
			var read atomic.Bool
			w.Go(func(ctx context.Context) {
				seen, _, serr = c.Exists(ctx, "/x")
				read.Store(true)
			})
			require.NoError(t, w.Run(func() bool { return read.Load() && done.Load() }))
			require.NoError(t, serr)
			require.True(t, seen, "c1 misses /x, created before its session")
			require.NoError(t, err)
			require.True(t, w.Lagging(m), "m%d lags on", m)
		})
	}
	require.Positive(t, tried, "no seed connected c1 through c0's lagging member")
}
