package property_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"testing/cryptotest"
	"time"

	"github.com/go-zookeeper/zk"
	"pgregory.net/rapid"

	"github.com/zksim/zksim/explore"
	"github.com/zksim/zksim/sim"
	"github.com/zksim/zksim/zkmem"
)

// The zk.Lock machine: go-zookeeper's own lock (v1.0.4), unchanged, on
// go-zookeeper clients (*zk.Conn) the simulator hands out, under the
// faults of the catalogue. It checks what the lock machine checks of our
// recipes, as far as zk.Lock has it (no context, no hold state, no token):
//
//   - exclusion: at most one client holds (Lock returned nil, Unlock has
//     not) on a session that is still live;
//   - no orphan: every node under the lock's directory belongs to a client
//     that is locking, holding or unlocking, never to one whose Lock
//     returned an error (zk.Lock's only way to give up) or whose Unlock
//     returned, while its session lives;
//   - progress: once faults stop and holders unlock, every client that
//     locks gets the lock within zkLiveBound of virtual time.

const (
	zkLockDir     = "/zklock"
	zkLockClients = 3
	zkLiveBound   = 30 * time.Second
)

// zkLockClient is one go-zookeeper client of the machine.
type zkLockClient struct {
	idx   int
	zc    *zk.Conn
	l     *zk.Lock
	state atomic.Int32 // zkIdle, zkLocking, zkHolding, zkUnlocking
	sid   atomic.Int64 // the session the lock was granted on
	err   atomic.Value // the last error of Lock or Unlock (string)
	locks atomic.Int64 // locks taken
}

const (
	zkIdle int32 = iota
	zkLocking
	zkHolding
	zkUnlocking
)

var zkStateNames = []string{"idle", "locking", "holding", "unlocking"}

type zkLockMachine struct {
	sw      *sim.World
	obs     *zkmem.Conn // the machine's eyes on the tree, not scheduled
	cs      []*zkLockClient
	t       *rapid.T
	drawing bool

	violation string // the violation the check failed with, if any
}

// zkLockProp is the property: one run of the machine.
func zkLockProp(parent *testing.T) func(*rapid.T) {
	return func(t *rapid.T) {
		cryptotest.SetGlobalRandom(parent, 1)
		m := &zkLockMachine{t: t}
		sw, err := sim.New(sim.Config{
			Seed:           rapid.Uint64().Draw(t, "seed"),
			SessionTimeout: 4 * time.Second,
			Server:         zkmem.Options{TickTime: time.Second},
			Policy:         m,
			Choose:         m.choose,
			MaxSteps:       1_000_000,
		})
		if err != nil {
			t.Fatalf("sim.New: %v", err)
		}
		m.sw = sw
		defer sw.Close()
		// The trace of the check, and its violation (with the server's
		// names, which the trace normalizes), for the replay and
		// determinism checks.
		defer func() { reportZKTrace(sw.TraceString() + m.violation) }()
		if m.obs, err = sw.Server().Connect(zkmem.WithSessionTimeout(time.Hour)); err != nil {
			t.Fatalf("observer: %v", err)
		}
		for i := range zkLockClients {
			zc, events, err := sw.ConnectZK()
			if err != nil {
				t.Fatalf("connect: %v", err)
			}
			go func() {
				for range events {
				}
			}()
			m.cs = append(m.cs, &zkLockClient{idx: i, zc: zc})
		}
		t.Repeat(map[string]func(*rapid.T){
			"lock":       m.lock,
			"unlock":     m.unlock,
			"step":       m.step,
			"settle":     m.settle,
			"advance":    m.advance,
			"expire":     m.fault("expire"),
			"disconnect": m.fault("disconnect"),
			"pause":      m.fault("pause"),
			"delay":      m.fault("delay"),
			"":           func(t *rapid.T) { m.check(t) },
		})
		m.liveness(t)
	}
}

// Step and Request make the machine the World's fault policy: a step
// action draws the fate of each request it admits.
func (m *zkLockMachine) String() string                        { return "rapid" }
func (m *zkLockMachine) Step(*sim.World, *rand.Rand) sim.Fault { return nil }
func (m *zkLockMachine) Request(_ *sim.World, _ int, r *zkmem.Request, _ *rand.Rand) sim.Fate {
	if !m.drawing {
		return sim.Fate{}
	}
	return explore.DrawFate(m.t, r)
}

func (m *zkLockMachine) choose(n int) int {
	if !m.drawing {
		return -1
	}
	return rapid.IntRange(0, n-1).Draw(m.t, "event")
}

func (m *zkLockMachine) pick(t *rapid.T, state int32) *zkLockClient {
	var in []*zkLockClient
	for _, c := range m.cs {
		if c.state.Load() == state {
			in = append(in, c)
		}
	}
	if len(in) == 0 {
		t.Skip("no client " + zkStateNames[state])
	}
	return in[rapid.IntRange(0, len(in)-1).Draw(t, "which")]
}

// lock starts zk.Lock on an idle client.
func (m *zkLockMachine) lock(t *rapid.T) {
	m.lockClient(m.pick(t, zkIdle))
}

// unlock starts Unlock on a holder.
func (m *zkLockMachine) unlock(t *rapid.T) {
	m.unlockClient(m.pick(t, zkHolding))
}

// unlockClient starts Unlock on c (which holds).
func (m *zkLockMachine) unlockClient(c *zkLockClient) {
	c.state.Store(zkUnlocking)
	l := c.l
	m.sw.Note("p%d Unlock", c.idx)
	m.sw.Go(func(context.Context) {
		switch err := l.Unlock(); {
		case errors.Is(err, zk.ErrNoNode):
			// Its node is gone (its session expired): the lock is not
			// held, but this Lock stays "locked" (Lock would say
			// ErrDeadlock): the client drops it and makes a new one.
			c.err.Store(err.Error())
			c.state.Store(zkIdle)
		case err != nil:
			c.err.Store(err.Error())
			c.state.Store(zkHolding) // it still holds, as far as it knows
		default:
			c.state.Store(zkIdle)
		}
		m.sw.Wake()
	})
}

// step takes one step of the World, rapid choosing the event and the fate
// of the request it admits.
func (m *zkLockMachine) step(t *rapid.T) {
	m.t, m.drawing = t, true
	defer func() { m.drawing = false }()
	if err := m.sw.Step(); err != nil {
		t.Fatalf("sim: %v", err)
	}
	m.check(t)
}

// settle takes steps with the seed's choices, and no fault, until nothing
// is enabled.
func (m *zkLockMachine) settle(t *rapid.T) {
	for i := 0; i < 200 && m.sw.Enabled() > 0; i++ {
		if err := m.sw.Step(); err != nil {
			t.Fatalf("sim: %v", err)
		}
		m.check(t)
	}
}

// advance lets virtual time pass, with the seed's choices and no fault.
func (m *zkLockMachine) advance(t *rapid.T) {
	d := time.Duration(rapid.IntRange(1, 60).Draw(t, "tenths")) * 100 * time.Millisecond
	m.runFor(t, d)
}

func (m *zkLockMachine) runFor(t *rapid.T, d time.Duration) {
	end := m.sw.Now() + d
	err := m.sw.Run(func() bool {
		m.check(t)
		return m.sw.Now() >= end
	})
	if err != nil {
		t.Fatalf("sim: %v", err)
	}
}

// fault injects one of the catalogue's client faults.
func (m *zkLockMachine) fault(kind string) func(*rapid.T) {
	return func(t *rapid.T) {
		i := rapid.IntRange(0, zkLockClients-1).Draw(t, "client")
		f := m.sw.Faults()
		var err error
		switch kind {
		case "expire":
			err = f.Expire(i)
		case "disconnect":
			err = f.Disconnect(i, time.Duration(rapid.IntRange(0, 30).Draw(t, "tenths"))*100*time.Millisecond)
		case "pause":
			err = f.Pause(i, time.Duration(rapid.IntRange(1, 60).Draw(t, "tenths"))*100*time.Millisecond)
		case "delay":
			err = f.Delay(i, time.Duration(rapid.IntRange(1, 30).Draw(t, "tenths"))*100*time.Millisecond)
		}
		m.sw.Note("fault %s c%d: %v", kind, i, err)
		m.check(t)
	}
}

// check checks exclusion and no orphan.
func (m *zkLockMachine) check(t *rapid.T) {
	m.sw.Enabled() // every client has taken in what the last step told it
	live := m.sw.Server().SessionIDs()
	var holders []string
	for _, c := range m.cs {
		if c.state.Load() == zkHolding && slices.Contains(live, c.sid.Load()) {
			holders = append(holders, fmt.Sprintf("p%d", c.idx))
		}
	}
	if len(holders) > 1 {
		m.fail(t, "two holders", "processes %s hold the lock at once, on live sessions", strings.Join(holders, ", "))
	}
	names, _, err := m.obs.Children(context.Background(), zkLockDir)
	if err != nil {
		return
	}
	slices.Sort(names)
	for _, name := range names {
		ok, st, err := m.obs.Exists(context.Background(), zkLockDir+"/"+name)
		if err != nil || !ok || !slices.Contains(live, st.EphemeralOwner) {
			continue
		}
		for _, c := range m.cs {
			if c.zc.SessionID() == st.EphemeralOwner && c.state.Load() == zkIdle {
				last, _ := c.err.Load().(string)
				m.fail(t, "orphan", "%s/%s belongs to p%d, whose session lives and which neither locks nor holds (its last Lock or Unlock failed with %q)", zkLockDir, name, c.idx, last)
			}
		}
	}
}

// liveness: faults stop; holders unlock; every client that locks gets the
// lock (and unlocks) within zkLiveBound.
func (m *zkLockMachine) liveness(t *rapid.T) {
	m.sw.Note("liveness: no more faults")
	for _, i := range []int{0, 1, 2} {
		_ = m.sw.Faults().Resume(i)
		_ = m.sw.Faults().Reconnect(i)
	}
	before := make([]int64, len(m.cs))
	for i, c := range m.cs {
		before[i] = c.locks.Load()
	}
	deadline := m.sw.Now() + zkLiveBound
	for m.sw.Now() < deadline {
		done := true
		for i, c := range m.cs {
			switch c.state.Load() {
			case zkHolding:
				m.unlockClient(c)
				done = false
			case zkIdle:
				if c.locks.Load() == before[i] {
					m.lockClient(c)
					done = false
				}
			default:
				done = false
			}
		}
		if done {
			return
		}
		m.runFor(t, time.Second)
	}
	var stuck []string
	for i, c := range m.cs {
		if c.locks.Load() == before[i] || c.state.Load() != zkIdle {
			last, _ := c.err.Load().(string)
			stuck = append(stuck, fmt.Sprintf("p%d %s (last error %q)", c.idx, zkStateNames[c.state.Load()], last))
		}
	}
	m.fail(t, "no progress", "faults stopped %v ago and %s", zkLiveBound, strings.Join(stuck, ", "))
}

// lockClient starts Lock on c (which is idle).
func (m *zkLockMachine) lockClient(c *zkLockClient) {
	c.state.Store(zkLocking)
	l := zk.NewLock(c.zc, zkLockDir, zk.WorldACL(zk.PermAll))
	c.l = l
	m.sw.Note("p%d Lock", c.idx)
	m.sw.Go(func(context.Context) {
		if err := l.Lock(); err != nil {
			c.err.Store(err.Error())
			c.state.Store(zkIdle)
		} else {
			c.sid.Store(c.zc.SessionID())
			c.locks.Add(1)
			c.state.Store(zkHolding)
		}
		m.sw.Wake()
	})
}

// fail reports a violation, with the tail of the World's trace.
func (m *zkLockMachine) fail(t *rapid.T, name, format string, args ...any) {
	tr := m.sw.Trace()
	t.Logf("trace (last %d lines):\n%s", min(len(tr), 80), strings.Join(tr[max(0, len(tr)-80):], "\n"))
	msg := fmt.Sprintf(name+": "+format, args...)
	m.violation = "violation: " + msg + "\n"
	t.Fatal(msg)
}

// TestZKLockExplore runs the zk.Lock machine as a plain property, for
// exploration (it is expected to fail: see TestZKLock).
func TestZKLockExplore(t *testing.T) {
	if !*exploring {
		t.Skip("exploration only: -explore")
	}
	useSeed(t)
	rapid.Check(t, func(rt *rapid.T) { rapid.SyncTest(rt, zkLockProp(t)) })
}

// TestZKLock runs the zk.Lock machine on go-zookeeper's own Lock (v1.0.4)
// and asserts what it finds: an orphan. zk.Lock.Lock creates its node,
// then lists the children and watches its predecessor; when one of those
// requests fails (the connection was lost, or the request was queued while
// go-zookeeper was reconnecting and failed with ErrNoServer) Lock returns
// the error and leaves its node behind, in a session that lives on: the
// caller, told that it does not hold the lock, holds a place in the queue
// that nobody will ever delete, and every later contender waits behind it
// until that session ends. The test logs the shrunk schedule.
func TestZKLock(t *testing.T) {
	explore.ExpectCaught(t, "orphan", zkLockProp(t))
}

// TestZKLockOrphanAfterLostChildrenReply is the finding's simplest form,
// scheduled by hand: the reply to the getChildren zk.Lock sends after its
// create is lost; Lock returns ErrConnectionClosed and leaves its node, in
// a session that lives on, and a second client's Lock waits behind it.
func TestZKLockOrphanAfterLostChildrenReply(t *testing.T) {
	sim.Test(t, sim.Config{Seed: 1, SessionTimeout: 4 * time.Second, Server: zkmem.Options{TickTime: time.Second}}, func(t *testing.T, w *sim.World) {
		var zcs []*zk.Conn
		for range 2 {
			zc, events, err := w.ConnectZK()
			if err != nil {
				t.Fatal(err)
			}
			go func() {
				for range events {
				}
			}()
			zcs = append(zcs, zc)
		}
		if err := w.Run(func() bool { return zcs[0].State() == zk.StateHasSession && zcs[1].State() == zk.StateHasSession }); err != nil {
			t.Fatal(err)
		}
		w.Faults().LoseNextReply(0, zkmem.OpGetChildren)
		var first error
		var done atomic.Bool
		go func() {
			first = zk.NewLock(zcs[0], zkLockDir, zk.WorldACL(zk.PermAll)).Lock()
			done.Store(true)
			w.Wake()
		}()
		if err := w.Run(done.Load); err != nil {
			t.Fatal(err)
		}
		if !errors.Is(first, zk.ErrConnectionClosed) {
			t.Fatalf("Lock with its getChildren reply lost: %v", first)
		}
		var second atomic.Bool
		go func() {
			if zk.NewLock(zcs[1], zkLockDir, zk.WorldACL(zk.PermAll)).Lock() == nil {
				second.Store(true)
			}
		}()
		if err := w.RunFor(time.Minute); err != nil {
			t.Fatal(err)
		}
		if second.Load() {
			t.Fatal("the second client got the lock: no orphan")
		}
		obs, err := w.Server().Connect() // not scheduled
		if err != nil {
			t.Fatal(err)
		}
		defer obs.Close()
		names, _, err := obs.Children(context.Background(), zkLockDir)
		for _, n := range names {
			_, st, serr := obs.Exists(context.Background(), zkLockDir+"/"+n)
			if serr == nil && st != nil && st.EphemeralOwner == zcs[0].SessionID() && w.Live(0) {
				t.Logf("after a minute: %s/%s is c0's, whose session lives, and c1 still waits behind it", zkLockDir, n)
				return
			}
		}
		t.Fatalf("live=%v children=%v err=%v", w.Live(0), names, err)
	})
}
