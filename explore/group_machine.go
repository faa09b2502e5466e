package explore

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"pgregory.net/rapid"

	"github.com/zksim/zksim"
	"github.com/zksim/zksim/recipes/barrier"
)

// The machines of the double barrier and the start barrier: every client
// is a member of one group of all the clients; a process whose session
// ended goes on as a new member. Their invariants: group_invariants.go;
// the races arranged on purpose (LateJoin, LateDelete, LateJoinEmpty,
// ExpireWaiting): group_races.go.
//
// With faults, each process's client library is drawn: a plain Conn, or a
// sim.Renewing (Curator's), which renews an expired session at once while
// the call under way goes on (ExpireMidCall expires it with a request on
// its way). A Renewing's watches may also learn that they ended with the
// expired session only after it renewed (drawn: lateWatchEnd; zksim.Conn
// orders no watch channel against the session events). Liveness: once
// faults stop every member enters and (double barrier) leaves.

// groupFamily is the machine of the double barrier (leave true) and of the
// start barrier (leave false): every client is a member of one group of
// size len(clients).
type groupFamily struct {
	w     *world
	leave bool
	size  int
	dir   string
	// earlyLeave makes members leave as the flawed earlyLeave does
	// (flawed_barrier_test.go) instead of with the recipe's Leave.
	earlyLeave bool

	mu      sync.Mutex
	ms      []*member
	arrived int // members whose Enter (Wait) began, ever
	// count is the member nodes by owner session when the directory's
	// pzxid was pzxid (see owners).
	count map[int64]int
	pzxid int64
	// gateMzxid is the gate's Mzxid as of the last request applied to its
	// path (0: no gate): a setData that leaves it so did not apply.
	gateMzxid int64
	// lister holds the sessions whose listing of the directory lateJoin
	// waits for; listedAlone, the first of them that listed it and found
	// no member node but its own (-1: none yet).
	lister      map[int]bool
	listedAlone int
	// cut holds the rounds (the czxids of their ready nodes) whose ready
	// node a third party deleted (LateDelete): that ends the round, so its
	// members may leave before the others began to.
	cut map[int64]bool
}

type member struct {
	conn    *timedConn
	double  *barrier.DoubleBarrier
	start   *barrier.StartBarrier
	entered bool  // passed Enter (Wait)
	leaving bool  // began Leave
	left    bool  // Leave returned nil
	round   int64 // the czxid of the gate when Enter (Wait) returned nil
	// cancelled is when the Cancel action cancelled the member's Enter
	// (-1: not cancelled); quiet, when since then its client
	// last began to wait with nothing in flight, its process awake and
	// its Conn connected or its session known ended (-1: not now; see
	// checkCleanup).
	cancelled, quiet time.Duration
}

// newGroupFamily makes the machine of a group of size members (0: all the
// clients). With fewer members than clients, the others arrive late: a
// start barrier lets them pass at once, a double barrier lets them join
// the round while it is open, else they wait for the next.
//
// With faults, each client's library is drawn from t: a plain Conn (the
// process makes a new member with a new session once its session ended),
// or a sim.Renewing (Curator's: it renews an expired session at once, and
// the call under way goes on with the new one; see checkSession).
func newGroupFamily(w *world, t *rapid.T, leave bool, size int) *groupFamily {
	if size == 0 {
		size = len(w.clients)
	}
	f := &groupFamily{w: w, leave: leave, size: size, dir: "/group", cut: map[int64]bool{}}
	for _, c := range w.clients {
		if w.cfg.faults && rapid.Bool().Draw(t, fmt.Sprintf("p%d renewing", c.idx)) {
			c.renewing = w.sw.Renewing(c.conn.Index())
			c.lateWatchEnd = rapid.Bool().Draw(t, fmt.Sprintf("p%d late watch end", c.idx))
		}
		f.ms = append(f.ms, f.newMember(c))
	}
	return f
}

func (f *groupFamily) newMember(c *client) *member {
	tc := newTimedConn(f.w, c)
	if f.leave {
		b, err := barrier.NewDouble(tc, f.dir, f.size)
		if err != nil {
			panic(err) // the family's size is at least 1
		}
		return &member{conn: tc, double: b, cancelled: -1, quiet: -1}
	}
	b, err := barrier.NewStart(tc, f.dir, f.size)
	if err != nil {
		panic(err) // the family's size is at least 1
	}
	return &member{conn: tc, start: b, cancelled: -1, quiet: -1}
}

func (f *groupFamily) renew(c *client) {
	f.mu.Lock()
	defer f.mu.Unlock()
	old := f.ms[c.idx]
	m := f.newMember(c)
	switch {
	case old.left:
		m.entered, m.leaving, m.left = true, true, true // its round is over for it
	}
	// A member that lost its session is gone; the process goes on as a new
	// member, which may Enter: a start barrier lets it pass at once once
	// open (the start node stays); a double barrier lets it join the round
	// if it is still open (the others' Leave then waits for it too), else
	// it waits for the next round.
	f.ms[c.idx] = m
}

func (f *groupFamily) enter(c *client) {
	f.mu.Lock()
	m := f.ms[c.idx]
	m.cancelled, m.quiet = -1, -1
	m.conn.reset()
	f.arrived++
	f.mu.Unlock()
	conn := c.conn
	c.start("enter", func(ctx context.Context) error {
		var err error
		if f.leave {
			err = m.double.Enter(ctx)
		} else {
			err = m.start.Wait(ctx)
		}
		f.w.explainError(c, conn, ctx, "Enter", err)
		f.w.checkSession(c, conn, ctx, "Enter", err)
		alive := f.w.sessionAlive(conn)
		mine := f.w.ownedUnder(f.dir, conn.SessionID())
		if err != nil {
			f.checkGaveUp(c, conn, mine)
			// On error our member node is deleted.
			if alive && conn.State() == zksim.StateConnected && len(mine) > 0 {
				f.w.violate(kindMemberLeftBehind, "p%d's Enter returned %v but its member node %s is still there", c.idx, err, mine[0])
			}
			return err
		}
		var round int64
		if alive {
			// Our node is there, so the gate (which a round deletes only
			// once no member of it is left) is too.
			ok, st, gerr := f.w.observer.Exists(f.w.ctx, f.gate())
			switch {
			case len(mine) == 0:
				f.w.violate(kindEnteredWithoutANode, "p%d passed the barrier but has no member node", c.idx)
			case gerr != nil || !ok:
				f.w.violate(kindEnteredAClosedBarrier, "p%d passed the barrier but its gate is not there", c.idx)
			default:
				round = st.Czxid
			}
		}
		f.mu.Lock()
		m.entered = true
		m.round = round
		arrived := f.arrived
		f.mu.Unlock()
		if arrived < f.size {
			f.w.violate(kindPassedEarly, "p%d passed the barrier when only %d of %d members had arrived", c.idx, arrived, f.size)
		}
		return nil
	})
}

// cancel cancels c's Enter and Leave, noting when, for the cleanup checks.
func (f *groupFamily) cancel(c *client) {
	if c.busy("enter") && f.ms[c.idx].cancelled < 0 {
		f.mu.Lock()
		f.ms[c.idx].cancelled = f.w.sw.Now()
		f.mu.Unlock()
	}
	c.stop("enter")
	c.stop("leave")
}

// gate is the path of the group's gate node.
func (f *groupFamily) gate() string {
	if f.leave {
		return f.dir + "/ready"
	}
	return f.dir + "/start"
}

func (f *groupFamily) leaveGroup(c *client) {
	f.mu.Lock()
	m := f.ms[c.idx]
	m.leaving = true
	m.conn.reset()
	f.mu.Unlock()
	conn := c.conn
	c.start("leave", func(ctx context.Context) error {
		leave := m.double.Leave
		if f.earlyLeave {
			leave = func(ctx context.Context) error { return earlyLeave(ctx, conn, f.dir) }
		}
		err := leave(ctx)
		f.w.explainError(c, conn, ctx, "Leave", err)
		f.w.checkSession(c, conn, ctx, "Leave", err)
		if err != nil {
			return err
		}
		if mine := f.w.ownedUnder(f.dir, conn.SessionID()); len(mine) > 0 {
			f.w.violate(kindLeftWithANode, "p%d's Leave returned nil but its member node %s is still there", c.idx, mine[0])
		}
		f.mu.Lock()
		m.left = true
		round := m.round
		var early []string
		for i, o := range f.ms {
			if f.cut[round] {
				break
			}
			// A member of another round (one that opened after ours
			// ended) is not waited for.
			sameRound := round == 0 || o.round == 0 || o.round == round
			if o.entered && !o.leaving && sameRound && f.w.sessionLive(f.w.clients[i]) {
				early = append(early, fmt.Sprintf("p%d", i))
			}
		}
		f.mu.Unlock()
		if len(early) > 0 {
			f.w.violate(kindLeftEarly, "p%d left the double barrier while members %s had not begun to leave", c.idx, strings.Join(early, ", "))
		}
		if ok, st, gerr := f.w.observer.Exists(f.w.ctx, f.gate()); round != 0 && gerr == nil && ok && st.Czxid == round {
			f.w.violate(kindLeftAnOpenRound, "p%d's Leave returned nil while the ready node of its round is still there", c.idx)
		}
		return nil
	})
}

// can lists the awake idle clients whose member satisfies ok.
func (f *groupFamily) can(ok func(*member) bool) []*client {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []*client
	for _, c := range f.w.awake() {
		if !c.busy("") && ok(f.ms[c.idx]) {
			out = append(out, c)
		}
	}
	return out
}

func (f *groupFamily) actions() map[string]func(*rapid.T) {
	a := map[string]func(*rapid.T){
		// Args: the constructors refuse a size below 1 and an invalid
		// directory with an error matching zksim.ErrBadArguments, and
		// accept every other.
		"Args": func(t *rapid.T) {
			size := rapid.IntRange(-1, 3).Draw(t, "size")
			dir := rapid.SampledFrom([]string{f.dir, "/other/group", "", "group", "/group/", "/a//b"}).Draw(t, "dir")
			bad := size < 1 || zksim.ValidatePath(dir, false) != nil
			var err error
			var made bool
			if f.leave {
				b, e := barrier.NewDouble(f.w.observer, dir, size)
				err, made = e, b != nil
			} else {
				b, e := barrier.NewStart(f.w.observer, dir, size)
				err, made = e, b != nil
			}
			if bad != errors.Is(err, zksim.ErrBadArguments) || made == (err != nil) {
				f.w.violate(kindBadArguments, "New(%q, %d) returned %v (a barrier: %v); want ErrBadArguments: %v", dir, size, err, made, bad)
			}
		},
		"Enter": func(t *rapid.T) {
			f.enter(drawClient(t, f.can(func(m *member) bool { return !m.entered }), "enter"))
		},
		"Cancel": func(t *rapid.T) {
			var busy []*client
			for _, c := range f.w.awake() {
				if c.busy("") {
					busy = append(busy, c)
				}
			}
			f.cancel(drawClient(t, busy, "cancel"))
		},
		// CancelMidCall cancels a member while one of its requests is on
		// its way: the recipe's error paths after a failed call.
		"CancelMidCall": func(t *rapid.T) {
			var calling []*client
			for _, c := range f.w.awake() {
				if c.busy("") && f.w.inFlight(c) {
					calling = append(calling, c)
				}
			}
			f.cancel(drawClient(t, calling, "cancel"))
		},
		// ExpireMidCall expires the session of a Renewing client while one
		// of its requests is on its way: the Renewing renews it as the
		// reply (the session's error) comes, and the call must end with
		// ErrSessionExpired, not go on with the new session (checkSession).
		"ExpireMidCall": func(t *rapid.T) {
			if !f.w.cfg.faults {
				t.SkipNow()
			}
			f.w.expireMidCall(t, "")
		},
		// ExpireWaiting expires the session of a Renewing member while its
		// Enter or Leave waits on a watch (nothing in flight): the watch
		// ends with the old session, and the call must return
		// ErrSessionExpired, not go on with the new session
		// (checkSession). With a double barrier, the member first enters
		// (with the others, if no round is open) and begins to leave while
		// the others stay: its Leave waits for them.
		"ExpireWaiting": f.expireWaiting,
		// Outage: a member whose Enter waits is cut off and cancelled; the
		// connection stays down for twice the session timeout, then comes
		// back: the cleanup waits all along (checkGaveUp) and ends soon
		// after (checkCleanup), having deleted the member node or heard
		// the session expired.
		"Outage": func(t *rapid.T) {
			var entering []*client
			for _, c := range f.w.awake() {
				if c.busy("enter") && !c.partitioned {
					entering = append(entering, c)
				}
			}
			c := drawClient(t, entering, "outage")
			f.w.partition(t, c)
			f.w.runFor(t, 50*time.Millisecond)
			f.cancel(c)
			f.w.runFor(t, 2*sessionTimeout)
			f.w.heal(t, c)
		},
	}
	if f.leave {
		// Leave: a member that entered leaves, or, its Leave having
		// failed or been cancelled, calls Leave again on the same
		// DoubleBarrier (a process keeps its member for its session).
		a["Leave"] = func(t *rapid.T) {
			f.leaveGroup(drawClient(t, f.can(func(m *member) bool { return m.entered && !m.left }), "leave"))
		}
		a["LateJoin"] = f.lateJoin
		a["LateDelete"] = f.lateDelete
		a["LateJoinEmpty"] = f.lateJoinEmpty
	}
	return a
}

// live: before the group opens, every member enters; once it is open,
// every member that passed leaves (double barrier). A member that arrives
// at a double barrier after its round is over waits for a next round that
// nobody else joins: it is cancelled once nothing else can happen.
func (f *groupFamily) live() bool {
	f.mu.Lock()
	opened, pending := false, false
	for i, m := range f.ms {
		opened = opened || m.entered
		if m.entered && !m.left && f.leave {
			pending = pending || f.w.sessionLive(f.w.clients[i])
		}
	}
	f.mu.Unlock()
	done := true
	for _, c := range f.w.clients {
		f.mu.Lock()
		m := f.ms[c.idx]
		needEnter := !m.entered && (!opened || !f.leave)
		needLeave := f.leave && m.entered && !m.left
		f.mu.Unlock()
		switch {
		case c.busy("enter") && f.leave && opened && !pending && !f.w.inFlight(c):
			c.stop("enter") // arrived after the round: no group will form
			done = false
		case c.busy(""):
			done = false
		case needEnter:
			f.enter(c)
			done = false
		case needLeave:
			f.leaveGroup(c)
			done = false
		}
	}
	return done
}

func (f *groupFamily) stuck() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []string
	for i, m := range f.ms {
		out = append(out, fmt.Sprintf("p%d: entered %v, leaving %v, left %v", i, m.entered, m.leaving, m.left))
	}
	return strings.Join(out, "; ") + "; children: " + strings.Join(f.w.children(f.dir), " ")
}
