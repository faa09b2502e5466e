package property_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"testing/cryptotest"
	"testing/synctest"
	"time"

	"pgregory.net/rapid"

	"github.com/zksim/zksim/property_test/internal/sched"
	"github.com/zksim/zksim/zkmem"
)

// The recipe machines run on zkmem inside a testing/synctest bubble (so time
// is virtual), with every client request held at a sched.Gate: only the
// machine lets a request reach the server, one at a time, with a fault or
// without. The schedule is therefore made of rapid draws only, which is what
// makes a failure replayable from its seed and its shrunk form meaningful.

// family is one recipe family's part of a machine: its client operations,
// its invariants and its liveness goal. The world (below) adds the faults,
// the scheduling and the passing of time.
type family interface {
	// actions returns the family's client operations, keyed by name.
	actions() map[string]func(*rapid.T)
	// renew is called when client c got a new session (its old one
	// expired or was closed); the family makes new recipe values for it.
	renew(c *client)
	// check records in w the violations of the family's invariants.
	check()
	// live starts what the clients must still do in the liveness phase
	// and reports whether every one of them has made the progress the
	// family promises.
	live() bool
	// stuck describes, for a liveness failure, who did not progress.
	stuck() string
}

// worldConfig sets a machine's size and fault catalogue.
type worldConfig struct {
	clients int
	faults  bool // lost replies, dropped requests, disconnects, expiry, pauses
}

const (
	sessionTimeout = time.Second
	// liveBound is the virtual time the clients have, once faults stop,
	// to make the progress their family promises.
	liveBound = 20 * time.Second
	// liveTick is how far virtual time moves when nothing can run.
	liveTick = 250 * time.Millisecond
	// advanceTick is the longest a running client's request waits while
	// virtual time passes.
	advanceTick = 50 * time.Millisecond
	// settleLimit bounds the steps one Settle action releases.
	settleLimit = 200
	// liveStepLimit bounds the steps released in the liveness phase.
	liveStepLimit = 5000
)

// world is one run of a machine: a zkmem server, the clients, the gate
// their requests wait at, and what the invariants found.
type world struct {
	cfg      worldConfig
	srv      *zkmem.Server
	gate     sched.Gate
	ctx      context.Context
	cancel   context.CancelFunc
	observer *zkmem.Conn // not gated: the machine's own eyes on the tree
	clients  []*client
	wg       sync.WaitGroup
	fam      family
	res      *resource
	start    time.Time // virtual
	// lastServed is the client whose step went through last.
	lastServed int

	mu         sync.Mutex
	violations []violation
	known      int      // known issues met (see knownIssue)
	events     []string // the trace of the run, printed with a violation
	live       bool     // in the liveness phase
}

// client is one client process: a session and the recipe operations it
// runs, each in its own goroutine.
type client struct {
	w      *world
	idx    int
	conn   *zkmem.Conn
	paused bool
	// acquisitions counts the holds the test-code recipes made for this
	// client (their GUIDs use it); touched by the machine goroutine only.
	acquisitions int

	mu      sync.Mutex
	running map[string]context.CancelFunc // operations in flight, by name
}

func newWorld(t *rapid.T, cfg worldConfig) *world {
	w := &world{cfg: cfg, srv: zkmem.NewServer(zkmem.Options{TickTime: 100 * time.Millisecond}), start: time.Now()}
	w.ctx, w.cancel = context.WithCancel(context.Background())
	var err error
	if w.observer, err = w.srv.Connect(zkmem.WithSessionTimeout(time.Hour)); err != nil {
		t.Fatalf("connect observer: %v", err)
	}
	for i := range cfg.clients {
		c := &client{w: w, idx: i, running: map[string]context.CancelFunc{}}
		c.conn = w.connect(t, i)
		w.clients = append(w.clients, c)
	}
	return w
}

func (w *world) connect(t *rapid.T, idx int) *zkmem.Conn {
	c, err := w.srv.Connect(zkmem.WithSessionTimeout(sessionTimeout))
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	c.SetFaultHook(w.gate.Hook(idx))
	return c
}

// shutdown ends the run: the gate opens, every operation is cancelled,
// every session closed, and it waits for every goroutine it started.
func (w *world) shutdown() {
	w.gate.Open()
	w.cancel()
	for _, c := range w.clients {
		_ = c.conn.Resume()
		_ = c.conn.Close()
	}
	_ = w.observer.Close()
	w.srv.Close()
	w.wg.Wait()
}

// isLive reports whether the liveness phase has begun.
func (w *world) isLive() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.live
}

// trace records an event of the run.
func (w *world) trace(format string, args ...any) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.events = append(w.events, fmt.Sprintf("[%8v] ", time.Since(w.start).Round(time.Millisecond))+fmt.Sprintf(format, args...))
}

// start runs op for c in a goroutine under name, unless an operation of
// that name is running. It reports whether it started.
func (c *client) start(name string, op func(ctx context.Context) error) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.running[name]; ok {
		return false
	}
	ctx, cancel := context.WithCancel(c.w.ctx)
	c.running[name] = cancel
	c.w.wg.Add(1)
	c.w.trace("c%d %s", c.idx, name)
	go func() {
		defer c.w.wg.Done()
		defer cancel()
		err := op(ctx)
		c.w.trace("c%d %s returned %v", c.idx, name, err)
		c.mu.Lock()
		delete(c.running, name)
		c.mu.Unlock()
	}()
	return true
}

// busy reports whether c runs an operation called name ("" for any).
func (c *client) busy(name string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if name == "" {
		return len(c.running) > 0
	}
	_, ok := c.running[name]
	return ok
}

// stop cancels c's operation called name.
func (c *client) stop(name string) {
	c.w.trace("c%d cancel %s", c.idx, name)
	c.mu.Lock()
	defer c.mu.Unlock()
	if cancel, ok := c.running[name]; ok {
		cancel()
	}
}

// sessionLive reports whether the server still has c's session.
func (w *world) sessionLive(c *client) bool {
	return slices.Contains(w.srv.SessionIDs(), c.conn.SessionID())
}

// owners maps the session ids of live sessions to their clients.
func (w *world) owners() map[int64]*client {
	live := w.srv.SessionIDs()
	out := map[int64]*client{}
	for _, c := range w.clients {
		if slices.Contains(live, c.conn.SessionID()) {
			out[c.conn.SessionID()] = c
		}
	}
	return out
}

// children lists dir with the observer; a missing dir has none.
func (w *world) children(dir string) []string {
	names, _, err := w.observer.Children(w.ctx, dir)
	if err != nil {
		return nil
	}
	slices.Sort(names)
	return names
}

// owner returns the EphemeralOwner of p, 0 if p is missing.
func (w *world) owner(p string) int64 {
	ok, st, err := w.observer.Exists(w.ctx, p)
	if err != nil || !ok {
		return 0
	}
	return st.EphemeralOwner
}

// awake returns the clients that are not paused; a paused process runs
// nothing.
func (w *world) awake() []*client {
	var out []*client
	for _, c := range w.clients {
		if !c.paused {
			out = append(out, c)
		}
	}
	return out
}

// inFlight reports whether a request of c waits at the gate.
func (w *world) inFlight(c *client) bool {
	for _, s := range w.gate.Waiting() {
		if s.Client == c.idx {
			return true
		}
	}
	return false
}

// run is a whole machine run: random actions with the invariants checked
// after each, then the liveness phase.
func (w *world) run(t *rapid.T, fam family) {
	w.fam = fam
	actions := w.worldActions()
	for name, a := range fam.actions() {
		actions[name] = a
	}
	actions[""] = func(t *rapid.T) {
		w.settle(t)
		w.fam.check()
		w.failOnViolations(t)
	}
	t.Repeat(actions)
	w.liveness(t)
}

// liveness stops the faults (paused clients resume, disconnected ones
// reconnect), lets every request through and time pass, and fails unless
// the family's clients all progress within liveBound of virtual time.
func (w *world) liveness(t *rapid.T) {
	w.mu.Lock()
	w.live = true
	w.mu.Unlock()
	for _, c := range w.clients {
		if c.paused {
			c.paused = false
			_ = c.conn.Resume()
		}
		_ = c.conn.Reconnect()
	}
	w.trace("faults stop")
	begin := time.Now()
	for released := 0; ; {
		w.settle(t)
		w.fam.check()
		w.failOnViolations(t)
		if w.fam.live() {
			return
		}
		synctest.Wait()
		if s := w.nextFair(); s != nil {
			w.release(s, zkmem.NoFault)
			if released++; released > liveStepLimit {
				t.Logf("VIOLATION: liveness: no end after %d requests once faults stopped: %s", released, w.fam.stuck())
				w.fail(t, "liveness")
			}
			continue
		}
		if time.Since(begin) > liveBound {
			t.Logf("VIOLATION: liveness: no progress within %v of virtual time once faults stopped: %s", liveBound, w.fam.stuck())
			w.fail(t, "liveness")
		}
		time.Sleep(liveTick)
	}
}

// machine returns the property of one machine: a world of cfg with the
// family newFamily makes. It must run inside a testing/synctest bubble, so
// that time is virtual: checkMachine gives each check its own bubble with
// rapid.SyncTest, expectCaught with inBubble.
//
// Each check starts with the same crypto/rand stream (the recipes draw
// their GUIDs from it), so that a schedule replays with the same names,
// hence the same order of requests at the gate.
func machine(parent *testing.T, cfg worldConfig, newFamily func(*world, *rapid.T) family) func(*rapid.T) {
	return func(t *rapid.T) {
		cryptotest.SetGlobalRandom(parent, 1)
		w := newWorld(t, cfg)
		defer w.shutdown()
		w.run(t, newFamily(w, t))
	}
}

// checkMachine checks a machine with rapid, each check in its own synctest
// bubble.
func checkMachine(parent *testing.T, cfg worldConfig, newFamily func(*world, *rapid.T) family) {
	parent.Helper()
	rapid.Check(parent, func(t *rapid.T) {
		rapid.SyncTest(t, machine(parent, cfg, newFamily))
	})
}
