package explore

import (
	"context"
	"errors"
	"slices"
	"sync"
	"time"

	"pgregory.net/rapid"

	"github.com/zksim/zksim/faults"
	"github.com/zksim/zksim/harness"
	"github.com/zksim/zksim/sim"
	"github.com/zksim/zksim/zkmem"
)

// The recipe machines run on package harness, through its public API: the
// harness makes each check's simulated world from rapid's draws, takes
// the scheduler's choices and the faults of the catalogue as actions,
// gives a process whose session ended a new one, runs the liveness phase,
// shrinks a failure by a budget of checks and replays it from its seed.
// A recipe family (lock_machine.go, queue_machine.go, ...) is the
// machine's part: its client operations and actions, its invariants and
// its liveness goal. world adapts the harness's World to the families
// (the methods they call), and Machine.harness makes the
// harness.Machine of a family.

// family is one recipe family's part of a machine: its client operations,
// its invariants and its liveness goal. The harness adds the faults, the
// scheduling and the passing of time.
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
	faults  bool // the whole catalogue; false: scheduling and time only
	// authFail adds the FailAuth action (authfail.go): the recipe
	// machines draw it; the flawed recipes' machines do not.
	authFail bool
	// members, if 2 or more, runs the machine on an ensemble of that many
	// members (harness.Machine.Members, ensemble.go).
	members int
}

// sessionTimeout is the session timeout of the machines' clients (the
// harness's default).
const sessionTimeout = time.Second

// world is one check of a machine as its family sees it: the harness's
// World, the clients, and the state the family's invariants share.
type world struct {
	hw       *harness.World[*client]
	cfg      worldConfig
	sw       *sim.World
	ctx      context.Context
	observer *zkmem.Conn // not scheduled: the machine's own eyes on the tree
	clients  []*client
	spinCounters
	fam family
	res *resource
	// onApply are told of every request the server applies, as the
	// family is (applyObserver), by parts of a family that watch.
	onApply []func(c *client, r *zkmem.Request)
	mu      sync.Mutex // guards res, and what families keep under it
	seen    seenTree   // the observer's reads of the server's last zxid
}

// client is one client process of the machine, the harness's Process.
// Its session is a sim client; when the session ends, the harness gives
// the process a new one, as an application would. The trace calls the
// processes p0, p1, ... and the simulator's sessions c0, c1, ...
type client struct {
	w           *world
	p           *harness.Process[*client]
	idx         int
	conn        *sim.Conn
	partitioned bool // cut off by a Partition (the harness's, as of its last look)
	// acquisitions counts the holds the test-code recipes made for this
	// client (their GUIDs use it); touched by the machine goroutine only.
	acquisitions int
	// timed, if set, is the Conn the machine's recipes use for conn: it
	// checks their retry timing (retrycheck.go).
	timed *timedConn
	// renewing, if set, is the client library of the process: a
	// sim.Renewing that replaces an expired session at once (the harness
	// follows it: Process.SetRenewing).
	renewing *sim.Renewing
	// renewedFrom: the sessions its Renewing ran on before conn, whose
	// requests may still be on their way.
	renewedFrom []*sim.Conn
	// startedOn: the session (client index) each running operation began
	// on, by name.
	startedOn map[string]int
	// lateWatchEnd: its Renewing's watches learn that they ended with an
	// expired session only once it renewed the session (timedConn.lateEnd).
	lateWatchEnd bool

	mu      sync.Mutex
	running map[string]context.CancelFunc // operations in flight, by name
	// authStruck: operations under way when their client was armed to
	// fail authentication (authfail.go), with that client's index.
	authStruck map[string]int
}

func newWorld(hw *harness.World[*client], cfg worldConfig) *world {
	w := &world{hw: hw, cfg: cfg, sw: hw.Sim(), ctx: hw.Context(), observer: hw.Observer()}
	for _, p := range hw.Processes() {
		w.clients = append(w.clients, &client{w: w, p: p, idx: p.Index(), conn: w.sw.Conn(p.Session()), running: map[string]context.CancelFunc{}})
	}
	return w
}

// harness returns the harness.Machine of m: each check makes a world and
// m's family, whose actions, invariants and liveness goal the harness
// runs. The checks of one exploration run one at a time, so the machine
// keeps the check under way.
func (m Machine) harness() harness.Machine[*client] {
	var w *world
	fs := harness.NoFaults
	if m.cfg.faults {
		// FailAuth is the machines' own action (authfail.go), drawn while
		// a call waits out a connection loss.
		fs = harness.AllFaults &^ harness.FailAuth
	}
	name := m.Name
	if name == "" {
		name = "flawed"
	}
	return harness.Machine[*client]{
		Name:           name,
		Processes:      m.cfg.clients,
		Members:        m.cfg.members,
		SessionTimeout: sessionTimeout,
		Faults:         fs,
		Parallel:       true, // the recipes draw from their Conn's stream (zksim.RandReader), never crypto/rand
		ShrinkBudget:   m.shrinkBudget,
		DrawsInOrder:   m.DrawsInOrder,
		Init: func(t *rapid.T, hw *harness.World[*client]) {
			w = newWorld(hw, m.cfg)
			w.fam = m.newFamily(w, t)
			for _, c := range w.clients {
				if c.renewing != nil {
					c.p.SetRenewing(c.renewing)
				}
			}
		},
		New: func(p *harness.Process[*client]) *client {
			c := w.clients[p.Index()]
			if p.Generation() > 0 && c.conn.Index() != p.Session() { // a new session
				c.conn, c.renewing, c.partitioned = w.sw.Conn(p.Session()), nil, false
				w.fam.renew(c)
			}
			return c
		},
		Renewed: func(p *harness.Process[*client]) {
			c := w.clients[p.Index()]
			c.mu.Lock()
			c.renewedFrom = append(c.renewedFrom, c.conn)
			c.conn = w.sw.Conn(p.Session())
			c.mu.Unlock()
			c.partitioned = false
			w.fam.renew(c)
		},
		OnApply: func(_ *harness.World[*client], session int, r *zkmem.Request) { w.applied(session, r) },
		Actions: func(*harness.World[*client]) map[string]func(*rapid.T) {
			a := w.fam.actions()
			out := map[string]func(*rapid.T){}
			for name, act := range a {
				if harnessActions[name] {
					name += "Call" // the election API's Resume is not the end of a Pause
				}
				out[name] = func(t *rapid.T) {
					w.look()
					act(t)
				}
			}
			if m.cfg.authFail {
				out["FailAuth"] = w.failAuthMidCall
			}
			return out
		},
		Invariants: []harness.Invariant[*client]{{Name: "family", Check: func(*harness.World[*client]) error {
			w.look()
			w.fam.check()
			return nil
		}}},
		Eventually: []harness.Invariant[*client]{{Name: "progress", Check: func(*harness.World[*client]) error {
			w.look()
			if w.fam.live() {
				return nil
			}
			return errors.New(w.fam.stuck())
		}}},
	}
}

// harnessActions are the names of the harness's own actions: its
// scheduling and time actions, and the faults of the catalogue and their
// ends.
var harnessActions = func() map[string]bool {
	names := map[string]bool{"Step": true, "Settle": true, "Advance": true}
	for _, e := range faults.Catalog() {
		names[e.Explore.Name] = e.Explore.Name != ""
		names[e.Explore.End.Name] = e.Explore.End.Name != ""
	}
	return names
}()

// look takes in what the harness changed since: which clients are cut
// off (its Partition and Heal actions, and the liveness phase).
func (w *world) look() {
	for _, c := range w.clients {
		c.partitioned = c.p.Partitioned()
	}
}

// partition cuts c off until heal (or the liveness phase).
func (w *world) partition(t *rapid.T, c *client) {
	c.partitioned = true
	c.p.Partition(t)
}

// heal reconnects c if partition cut it off and it is not paused.
func (w *world) heal(t *rapid.T, c *client) {
	c.p.Heal(t)
	c.partitioned = c.p.Partitioned()
}

// applyObserver is a family that wants to know of every request the server
// applies (see sim.Config.OnApply).
type applyObserver interface {
	applied(c *client, r *zkmem.Request)
}

// applied passes a request the server applied to the family, with the
// process whose session sent it.
func (w *world) applied(session int, r *zkmem.Request) {
	for _, c := range w.clients {
		if c.conn.Index() == session {
			w.checkNames(c, r)
			for _, h := range w.onApply {
				h(c, r)
			}
			if o, ok := w.fam.(applyObserver); ok {
				o.applied(c, r)
			}
			return
		}
	}
}

// isLive reports whether the liveness phase has begun.
func (w *world) isLive() bool { return w.hw.Live() }

// trace records a line of the machine's own in the simulator's trace. Call
// it from the machine goroutine; client goroutines use client.note.
func (w *world) trace(format string, args ...any) { w.hw.Trace(format, args...) }

// note records a line from c's goroutine, for the trace.
func (c *client) note(format string, args ...any) { c.p.Note(format, args...) }

// start runs op for c in a goroutine under name (Process.Go), unless an
// operation of that name is running. It reports whether it started.
func (c *client) start(name string, op func(ctx context.Context) error) bool {
	c.mu.Lock()
	if _, ok := c.running[name]; ok {
		c.mu.Unlock()
		return false
	}
	if c.startedOn == nil {
		c.startedOn = map[string]int{}
	}
	c.startedOn[name] = c.conn.Index()
	c.mu.Unlock()
	return c.p.Go(name, func(ctx context.Context) error {
		ctx, cancel := context.WithCancel(ctx)
		defer cancel()
		c.mu.Lock()
		c.running[name] = cancel
		c.mu.Unlock()
		err := op(ctx)
		c.mu.Lock()
		delete(c.running, name)
		session, struck := c.authStruck[name]
		delete(c.authStruck, name)
		c.mu.Unlock()
		if struck {
			c.w.checkAuthOutcome(c, name, session, err)
		}
		return err
	})
}

// busy reports whether c runs an operation called name ("" for any).
func (c *client) busy(name string) bool { return c.p.Busy(name) }

// stop cancels c's operation called name and lets it take the
// cancellation in.
func (c *client) stop(name string) { c.p.Cancel(name) }

// paused reports whether c's process is paused (a Pause action, not yet
// resumed). Call it from the machine goroutine.
func (c *client) paused() bool { return c.p.Paused() }

// session returns c's conn; goroutines of c's operations call it, since
// the harness may renew it while they run.
func (c *client) session() *sim.Conn {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.conn
}

// sessionLive reports whether the server still has c's session.
func (w *world) sessionLive(c *client) bool { return w.hw.SessionLive(c.conn.SessionID()) }

// owners maps the session ids of live sessions to their clients.
func (w *world) owners() map[int64]*client {
	live := w.liveSessions()
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
	if names, ok := w.seen.children(w, dir); ok {
		return names
	}
	names, _, err := w.observer.Children(w.ctx, dir)
	if err != nil {
		names = nil
	}
	slices.Sort(names)
	w.seen.keepChildren(dir, names)
	return slices.Clone(names)
}

// owner returns the EphemeralOwner of p, 0 if p is missing.
func (w *world) owner(p string) int64 {
	if id, ok := w.seen.owner(w, p); ok {
		return id
	}
	var id int64
	if ok, st, err := w.observer.Exists(w.ctx, p); err == nil && ok {
		id = st.EphemeralOwner
	}
	w.seen.keepOwner(p, id)
	return id
}

// awake returns the clients that are not paused; a paused process runs
// nothing.
func (w *world) awake() []*client {
	var out []*client
	for _, c := range w.clients {
		if !c.paused() {
			out = append(out, c)
		}
	}
	return out
}

// inFlight reports whether c has something on its way: a request the
// server has not applied, or news from the server not yet delivered. A
// client with nothing in flight has heard all the server has to say. On an
// ensemble, what its member has not applied yet is news on its way too
// (memberBehind).
func (w *world) inFlight(c *client) bool { return w.inFlightAt(c.conn.Index()) }

// inFlightAt is inFlight for session i of the simulator.
func (w *world) inFlightAt(i int) bool { return w.sw.InFlight(i) || w.memberBehind(i) }

// inFlightAny reports whether a request of c's process is on its way on any
// session: its current one, or one its Renewing ran on before (a call that
// began there may still wait for a request it sent on it).
func (w *world) inFlightAny(c *client) bool {
	if w.inFlight(c) {
		return true
	}
	for _, old := range c.renewedFrom {
		if w.inFlightAt(old.Index()) {
			return true
		}
	}
	return false
}

// inject injects f as a step of the simulator.
func (w *world) inject(t *rapid.T, f sim.StepFault) { w.hw.Inject(t, f) }

// step takes one step of the simulator with the seed's choices and checks
// the invariants; it returns how many events are enabled then.
func (w *world) step(t *rapid.T) int { return w.hw.Step(t) }

// runFor lets d of virtual time pass, checking the invariants after every
// step (harness.World.RunFor).
func (w *world) runFor(t *rapid.T, d time.Duration) { w.hw.RunFor(t, d) }

// violated reports whether a violation has been recorded.
func (w *world) violated() bool { return w.hw.Violated() }

// drawClient draws one of cs, skipping the action when cs is empty.
func drawClient(t *rapid.T, cs []*client, what string) *client {
	if len(cs) == 0 {
		t.SkipNow() // no client can do what
	}
	return cs[rapid.IntRange(0, len(cs)-1).Draw(t, "client")]
}

// expireMidCall expires the session of a Renewing client, drawn among
// those running the operation called name ("": any) with a request on its
// way, skipping the action when there is none.
func (w *world) expireMidCall(t *rapid.T, name string) {
	var calling []*client
	for _, c := range w.awake() {
		if c.renewing != nil && c.busy(name) && w.inFlight(c) {
			calling = append(calling, c)
		}
	}
	c := drawClient(t, calling, "expire")
	w.inject(t, faults.Expire(c.conn.Index()))
}
