package harness_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"

	"github.com/zksim/zksim"
	"github.com/zksim/zksim/harness"
	"github.com/zksim/zksim/sim"
)

// The locker machine on a 3-member ensemble: the recipes' Mutex keeps its
// users apart while members lag, crash, are cut off and the leader fails,
// and every user locks once the liveness phase brought the members back.
// The checks draw the ensemble's faults as actions, a member each, and the
// coverage table counts the requests they struck.
func TestLockerOnAnEnsemble(t *testing.T) {
	m := lockerMachine(false)
	m.Members = 3
	m.Faults = harness.AllFaults // Slow too (sim's TestEnsembleSlowWriteAcrossAnElection)
	var traces []string
	res := harness.Explore(t, m, harness.ExploreOptions{Traces: func(tr string) { traces = append(traces, tr) }})
	if !res.Passed {
		t.Fatalf("%s\n%s", res.Report, strings.Join(res.Logs, "\n"))
	}
	require.Greater(t, res.Checks, 0)
	all := strings.Join(traces, "\n")
	require.Contains(t, all, "an ensemble of 3 members")
	for _, f := range []string{"Lag(m", "CatchUp(m", "Crash(m", "Restart(m", "Isolate(m", "Heal(m", "FailLeader("} {
		require.Contains(t, all, f, "no check injected %s", f)
	}
	for _, col := range sim.EnsembleCoverage {
		n := 0
		for k, c := range res.Coverage {
			if k.Fault == col {
				n += c
			}
		}
		require.Positive(t, n, "no request met %s", col)
	}
}

// A standalone machine neither draws nor takes the ensemble's faults: its
// checks, and so its committed fail files, are what they were before
// Machine.Members existed.
func TestStandaloneDrawsNoMemberFault(t *testing.T) {
	var traces []string
	res := harness.Explore(t, lockerMachine(false), harness.ExploreOptions{Traces: func(tr string) { traces = append(traces, tr) }})
	require.True(t, res.Passed, res.Report)
	all := strings.Join(traces, "\n")
	require.Contains(t, all, "faults LoseReply") // the note of a check that drew a mix
	for _, f := range []string{"Lag(", "Crash(", "Isolate(", "FailLeader(", "ensemble"} {
		require.NotContains(t, all, f)
	}
}

// reader reads and writes one node, /v; with sync it syncs before it
// reads.
type reader struct {
	conn zksim.Conn
	sync bool
}

// readerMachine: processes write /v and read it; a read that began after a
// write had returned must see that write's version or a later one, else
// the invariant "stale read" is broken. ZooKeeper's reads are served by
// the client's member, which may lag: only a sync before the read makes
// it see every write that returned before (the machine with sync).
func readerMachine(withSync bool) harness.Machine[*reader] {
	var (
		w    *harness.World[*reader]
		mu   sync.Mutex
		done int32 // the highest version of /v a write of which has returned
	)
	return harness.Machine[*reader]{
		Name: "reader",
		Setup: func(ctx context.Context, c zksim.Conn) error {
			_, err := c.Create(ctx, "/v", nil, zksim.ModePersistent, zksim.OpenACL())
			return err
		},
		Init: func(_ *rapid.T, hw *harness.World[*reader]) {
			w, done = hw, 0
		},
		New: func(p *harness.Process[*reader]) *reader { return &reader{conn: p.Conn(), sync: withSync} },
		Ops: map[string]func(*rapid.T, *harness.Process[*reader]){
			"Write": func(t *rapid.T, p *harness.Process[*reader]) {
				conn := p.Obj().conn
				if p.Busy("") || !p.Go("write", func(ctx context.Context) error {
					st, err := conn.Set(ctx, "/v", nil, -1)
					if err == nil {
						mu.Lock()
						done = max(done, st.Version)
						mu.Unlock()
					}
					return err
				}) {
					t.SkipNow()
				}
			},
			"Read": func(t *rapid.T, p *harness.Process[*reader]) {
				r := p.Obj()
				// A few reads, a while apart, each checked against the
				// writes that returned before it began.
				if p.Busy("") || !p.Go("read", func(ctx context.Context) error {
					for range 4 {
						mu.Lock()
						floor := done
						mu.Unlock()
						if r.sync {
							if _, err := r.conn.Sync(ctx, "/v"); err != nil {
								return err
							}
						}
						_, st, err := r.conn.Get(ctx, "/v")
						if err != nil {
							return err
						}
						if st.Version < floor {
							w.Violate("stale read", "p%d read version %d after a write of version %d returned", p.Index(), st.Version, floor)
						}
						time.Sleep(50 * time.Millisecond)
					}
					return nil
				}) {
					t.SkipNow()
				}
			},
		},
	}
}

// A read that began after a write returned never sees an older version
// on a standalone server, nor, with a sync before it, on an ensemble.
// (Without the sync it may on an ensemble: a read served by a lagging
// member. Random schedules rarely keep a member behind long enough for it
// at this budget; the recipe flaws of package explore arrange it.)
func TestReadAfterWriteOnAnEnsembleWithSync(t *testing.T) {
	t.Run("standalone", func(t *testing.T) {
		c := harness.Catch(t, readerMachine(false), harness.CatchOptions{Checks: 300, Shrinks: 1}, "stale read")
		require.False(t, c.Caught, c.Report)
	})
	t.Run("ensemble, sync", func(t *testing.T) {
		m := readerMachine(true)
		m.Members = 3
		harness.Check(t, m)
	})
}

// ExploreOptions.Checks caps the checks that run below -rapid.checks.
func TestExploreChecksCap(t *testing.T) {
	res := harness.Explore(t, readerMachine(true), harness.ExploreOptions{Checks: 7})
	require.True(t, res.Passed, res.Report)
	require.Equal(t, 7, res.Checks)
}

// The README's go-zookeeper Elector on a 3-member ensemble: its clients
// get every member's address, move at once when their member crashes or
// is cut off, and are refused by a member behind what they saw. This is
// what found that an Elector whose campaign failed after creating its
// node left it for a new one to queue behind, on a session that lives on
// (on a standalone server go-zookeeper waits a second before it dials the
// same server again, so the 1s sessions of the machine always expired
// first and hid it).
func TestGoZKElectorOnAnEnsemble(t *testing.T) {
	m := electionMachine(false)
	m.Members = 3
	m.Faults = harness.AllFaults
	var traces []string
	res := harness.Explore(t, m, harness.ExploreOptions{Traces: func(tr string) { traces = append(traces, tr) }})
	if !res.Passed {
		t.Fatalf("%s\n%s", res.Report, strings.Join(res.Logs, "\n"))
	}
	require.Positive(t, res.Checks)
	all := strings.Join(traces, "\n")
	require.Contains(t, all, "an ensemble of 3 members")
	for _, f := range []string{"Lag(m", "Crash(m", "Isolate(m", "FailLeader("} {
		require.Contains(t, all, f, "no check injected %s", f)
	}
	require.Contains(t, all, "dial m", "no go-zookeeper client dialled a member")
}
