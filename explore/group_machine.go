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
	"github.com/zksim/zksim/faults"
	"github.com/zksim/zksim/recipes/barrier"
	"github.com/zksim/zksim/sim"
	"github.com/zksim/zksim/zkmem"
)

// The machines of the double barrier and the start barrier (see
// barrier_machine.go for what they check).

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
	// downSince is, by client, when its Conn last went from connected to
	// any other state (-1 while connected): see checkCleanup.
	downSince []time.Duration
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
	// (-1: not cancelled); owned, whether its member node existed then
	// (so its cleanup must delete it); quiet, when since then its Conn
	// was first down with nothing in flight (-1: not yet, or connected
	// again).
	cancelled, quiet time.Duration
	owned            bool
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
		f.downSince = append(f.downSince, -1)
	}
	return f
}

func (f *groupFamily) newMember(c *client) *member {
	tc := newTimedConn(f.w, c)
	// The last process's client library reports no session timeout.
	tc.noTimeout = c.idx == len(f.w.clients)-1
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
	m.cancelled, m.quiet, m.owned = -1, -1, false
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
			f.checkGaveUp(c, m, conn)
			// On error our member node is deleted (checked while connected:
			// a cleanup cut by a long downtime presumes the session expired).
			if alive && conn.State() == zksim.StateConnected && len(mine) > 0 {
				f.w.violate("member left behind", "p%d's Enter returned %v but its member node %s is still there", c.idx, err, mine[0])
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
				f.w.violate("entered without a node", "p%d passed the barrier but has no member node", c.idx)
			case gerr != nil || !ok:
				f.w.violate("entered a closed barrier", "p%d passed the barrier but its gate is not there", c.idx)
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
			f.w.violate("passed early", "p%d passed the barrier when only %d of %d members had arrived", c.idx, arrived, f.size)
		}
		return nil
	})
}

// cancel cancels c's Enter and Leave, noting when, for the cleanup checks.
func (f *groupFamily) cancel(c *client) {
	if c.busy("enter") && f.ms[c.idx].cancelled < 0 {
		owned := len(f.w.ownedUnder(f.dir, c.conn.SessionID())) > 0
		f.mu.Lock()
		f.ms[c.idx].cancelled, f.ms[c.idx].owned = f.w.sw.Now(), owned
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
			f.w.violate("left with a node", "p%d's Leave returned nil but its member node %s is still there", c.idx, mine[0])
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
			f.w.violate("left early", "p%d left the double barrier while members %s had not begun to leave", c.idx, strings.Join(early, ", "))
		}
		if ok, st, gerr := f.w.observer.Exists(f.w.ctx, f.gate()); round != 0 && gerr == nil && ok && st.Czxid == round {
			f.w.violate("left an open round", "p%d's Leave returned nil while the ready node of its round is still there", c.idx)
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
				f.w.violate("bad arguments", "New(%q, %d) returned %v (a barrier: %v); want ErrBadArguments: %v", dir, size, err, made, bad)
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
		// connection stays down past the presumed expiry of its cleanup
		// (which checkCleanup and checkGaveUp time), then comes back.
		"Outage": func(t *rapid.T) {
			var entering []*client
			for _, c := range f.w.awake() {
				if c.busy("enter") && !c.partitioned {
					entering = append(entering, c)
				}
			}
			c := drawClient(t, entering, "outage")
			f.mu.Lock()
			m := f.ms[c.idx]
			f.mu.Unlock()
			f.w.partition(t, c)
			f.w.runFor(t, 50*time.Millisecond)
			f.cancel(c)
			f.w.runFor(t, m.conn.presumedExpiry()+time.Second)
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

// expireWaiting: see ExpireWaiting in actions.
func (f *groupFamily) expireWaiting(t *rapid.T) {
	if !f.w.cfg.faults {
		t.SkipNow()
	}
	var renewing []*client
	for _, c := range f.w.awake() {
		if c.renewing != nil {
			renewing = append(renewing, c)
		}
	}
	c := drawClient(t, renewing, "expire")
	if f.leave && !c.busy("") {
		if len(f.can(func(m *member) bool { return m.entered && !m.left })) == 0 && !f.anyBusy("leave") {
			for _, o := range f.can(func(m *member) bool { return !m.entered }) {
				f.enter(o)
			}
			f.w.runFor(t, 200*time.Millisecond)
		}
		if len(f.can(func(m *member) bool { return m.entered && !m.left && !m.leaving })) > 1 && c.renewing != nil && !c.busy("") {
			f.mu.Lock()
			m := f.ms[c.idx]
			ok := m.entered && !m.leaving
			f.mu.Unlock()
			if ok {
				f.leaveGroup(c)
				f.w.runFor(t, 50*time.Millisecond)
			}
		}
	}
	if c.renewing == nil || !c.busy("") || f.w.inFlight(c) {
		return
	}
	f.w.inject(t, faults.Expire(c.conn.Index()))
}

// lateJoin: a member joins the open round late, just after the last
// member of the round listed the members and found no other: the others
// enter (if no round is open) and leave, the last one's replies are held back once it has
// listed, while the newcomer enters and writes the ready node, so its
// versioned delete of the ready node fails and its Leave must look again
// (and wait for the newcomer), not fail nor return.
func (f *groupFamily) lateJoin(t *rapid.T) {
	j := drawClient(t, f.can(func(m *member) bool { return !m.entered }), "joiner")
	f.whenListedAlone(t, j, func(alone int) {
		f.w.inject(t, faults.Delay(alone, time.Second))
		f.enter(j)
	})
}

// lateDelete: as in lateJoin, the members of an open round leave; once
// the last of them has listed the members and found no other, a third
// party deletes the ready node, or that member's own node, before its
// multi deletes both. The multi then fails, and that member's Leave must
// still end its round and return nil (Leave's guarantee: it returns nil
// only once its round's ready node is deleted), not fail.
//
// With lose, that multi's request is also lost on its way: the member
// must then look (at once: a first loss) whether it took effect, and not
// take its own node gone for its round over.
func (f *groupFamily) lateDelete(t *rapid.T) {
	node := rapid.SampledFrom([]string{"ready", "member", "none"}).Draw(t, "node")
	lose := rapid.Bool().Draw(t, "lose")
	f.whenListedAlone(t, nil, func(alone int) {
		if lose {
			f.w.inject(t, faults.DropNextRequest(alone, zkmem.OpMulti))
		}
		p := f.gate()
		if ok, st, err := f.w.observer.Exists(f.w.ctx, p); node == "ready" && err == nil && ok {
			f.mu.Lock()
			f.cut[st.Czxid] = true
			f.mu.Unlock()
		}
		if node == "member" {
			for _, c := range f.w.clients {
				if c.conn.Index() == alone {
					if mine := f.w.ownedUnder(f.dir, c.conn.SessionID()); len(mine) > 0 {
						p = f.dir + "/" + mine[0]
					}
				}
			}
		}
		f.w.inject(t, faults.Delay(alone, 100*time.Millisecond))
		if node != "none" {
			f.w.inject(t, faults.DeleteNode(p))
		}
	})
}

// lateJoinEmpty: as in lateDelete, a third party deletes the member node
// of the last member of an open round once it has listed the members and
// found no other; its Leave then finds no member node at all, and deletes
// the ready node of its round itself. Once it has listed the members
// again, a newcomer joins the round (writing the ready node) before that
// delete, which fails: the Leave must look again and wait for the
// newcomer, not return nor fail (Leave's guarantee: it returns nil only
// once its round's ready node is deleted).
func (f *groupFamily) lateJoinEmpty(t *rapid.T) {
	j := drawClient(t, f.can(func(m *member) bool { return !m.entered }), "joiner")
	f.whenListedAlone(t, j, func(alone int) {
		p := ""
		for _, c := range f.w.clients {
			if c.conn.Index() == alone {
				if mine := f.w.ownedUnder(f.dir, c.conn.SessionID()); len(mine) > 0 {
					p = f.dir + "/" + mine[0]
				}
			}
		}
		if p == "" {
			return
		}
		f.w.inject(t, faults.Delay(alone, 100*time.Millisecond))
		f.w.inject(t, faults.DeleteNode(p))
		f.mu.Lock()
		f.lister, f.listedAlone = map[int]bool{alone: true}, -1
		f.mu.Unlock()
		// Its deliveries wait out the delay (the ready node's multi fails,
		// it looks again), one step at a time from then on.
		f.w.runFor(t, 100*time.Millisecond)
		for i := 0; i < 2*lateJoinSteps && f.w.sw.Enabled() > 0 && !f.w.violated(); i++ {
			f.w.step(t)
			f.mu.Lock()
			again := f.listedAlone
			f.mu.Unlock()
			if again >= 0 {
				f.w.inject(t, faults.Delay(alone, 300*time.Millisecond))
				if !j.busy("") {
					f.enter(j)
				}
				return
			}
		}
	})
}

// whenListedAlone opens a round if none is open (without j), has its
// members leave, and calls then with the index of the first of their
// sessions that lists the members and finds no member node but its own.
//
// The calm stretches meet no fault meanwhile (the scheduler's quiet): the
// interleaving is the action's, with the faults then injects.
func (f *groupFamily) whenListedAlone(t *rapid.T, j *client, then func(alone int)) {
	defer f.w.hw.Quiet()()
	open := func() bool {
		return len(f.can(func(m *member) bool { return m.entered && !m.left })) > 0 || f.anyBusy("leave")
	}
	if !open() {
		// Open a round without the newcomer.
		for _, c := range f.can(func(m *member) bool { return !m.entered }) {
			if c != j {
				f.enter(c)
			}
		}
		f.w.runFor(t, 200*time.Millisecond)
		if !open() {
			return
		}
	}
	for _, c := range f.can(func(m *member) bool { return m.entered && !m.leaving && !m.left }) {
		if !c.partitioned {
			f.leaveGroup(c)
		}
	}
	f.mu.Lock()
	f.lister, f.listedAlone = map[int]bool{}, -1
	for _, c := range f.w.awake() {
		if c != j && c.busy("leave") && !c.partitioned {
			f.lister[c.conn.Index()] = true
		}
	}
	f.mu.Unlock()
	defer func() {
		f.mu.Lock()
		f.lister = nil
		f.mu.Unlock()
	}()
	for i := 0; i < lateJoinSteps && f.w.sw.Enabled() > 0 && !f.w.violated(); i++ {
		f.w.step(t)
		f.mu.Lock()
		alone := f.listedAlone
		f.mu.Unlock()
		if alone >= 0 {
			then(alone)
			f.w.runFor(t, 200*time.Millisecond)
			return
		}
	}
}

// anyBusy reports whether an awake client runs the call name.
func (f *groupFamily) anyBusy(name string) bool {
	for _, c := range f.w.awake() {
		if c.busy(name) {
			return true
		}
	}
	return false
}

// lateJoinSteps bounds the steps lateJoin takes waiting for the leaver to
// list the members.
const lateJoinSteps = 30

// noteListing records (for lateJoin) that a client of lister listed the
// group's directory and found no member node but its own.
func (f *groupFamily) noteListing(c *client, r *zkmem.Request) {
	if r.Op != zkmem.OpGetChildren || r.Path != f.dir {
		return
	}
	f.mu.Lock()
	lister := f.lister[c.conn.Index()]
	f.mu.Unlock()
	if !lister {
		return
	}
	sid := c.conn.SessionID()
	for _, n := range f.w.children(f.dir) {
		if f.dir+"/"+n != f.gate() && f.w.owner(f.dir+"/"+n) != sid {
			return
		}
	}
	f.mu.Lock()
	if f.listedAlone < 0 {
		f.listedAlone = c.conn.Index()
	}
	f.mu.Unlock()
}

// owners counts the member nodes by owner session. It lists them again
// only when the directory's children changed (its pzxid), since check runs
// after every step.
func (f *groupFamily) owners() map[int64]int {
	_, st, err := f.w.observer.Exists(f.w.ctx, f.dir)
	if err != nil || st == nil {
		return nil
	}
	if f.count != nil && st.Pzxid == f.pzxid {
		return f.count
	}
	count := map[int64]int{}
	for _, n := range f.w.children(f.dir) {
		if o := f.w.owner(f.dir + "/" + n); o != 0 {
			count[o]++
		}
	}
	f.count, f.pzxid = count, st.Pzxid
	return count
}

// applied checks the writes to the gate: only a double-barrier member
// whose node was created after the gate (it joins the open round late)
// writes to it; nobody writes to a start barrier's, nor tries to. A write
// that failed (the gate gone, or at another version) wrote nothing.
func (f *groupFamily) applied(c *client, r *zkmem.Request) {
	f.noteListing(c, r)
	if r.Path != f.gate() {
		return
	}
	ok, gst, err := f.w.observer.Exists(f.w.ctx, f.gate())
	if err != nil {
		return
	}
	before := f.gateMzxid
	f.gateMzxid = 0
	if ok {
		f.gateMzxid = gst.Mzxid
	}
	if r.Op != zkmem.OpSetData {
		return
	}
	if !f.leave {
		f.w.violate("gate written", "p%d wrote to the start node", c.idx)
		return
	}
	if !ok || gst.Mzxid == before {
		return
	}
	for _, n := range f.w.ownedUnder(f.dir, c.conn.SessionID()) {
		if ok, st, err := f.w.observer.Exists(f.w.ctx, f.dir+"/"+n); err == nil && ok && st.Czxid < gst.Czxid {
			f.w.violate("gate written", "p%d wrote to the ready node although its member node was there before it", c.idx)
		}
	}
}

// check: a member that passed and has not begun to leave keeps its member
// node while its session lives (the start barrier's stays until the
// session ends), and no session has two member nodes.
func (f *groupFamily) check() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.checkCleanup()
	count := f.owners()
	for i, m := range f.ms {
		c := f.w.clients[i]
		id := c.conn.SessionID()
		if count[id] > 1 {
			f.w.violate("two member nodes", "p%d's session has %d member nodes", i, count[id])
		}
		if m.entered && !m.leaving && m.round != 0 && count[id] == 0 && f.w.sessionLive(c) {
			f.w.violate("member node gone", "p%d passed the barrier and has not left, but its member node is gone", i)
		}
	}
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

// The cleanup of a cancelled Enter (deleting our member node) runs under
// retry.CleanupContext: it goes on for as long as the session may be
// alive, and gives up once the connection has been down, without a break,
// for one and a half session timeouts (the server has expired the session
// by then), of 10 s if the Conn reports none (the last process's
// timedConn does not: timedConn.presumedExpiry). Both halves are timings of the virtual clock: the cleanup's
// downtime clock starts when it finds the connection down, which is no
// earlier than the later of the cancel and the last change away from
// connected.
//
// cleanupSlack is how long past the presumed expiry a cleanup may still
// run, counted from when the client has heard every reply (the failure of
// a request in flight when the connection broke may reach it late).
const cleanupSlack = 50 * time.Millisecond

// checkCleanup tracks when each client's connection went down, and records
// a violation when the cleanup of a cancelled Enter runs on past
// its presumed expiry (plus cleanupSlack) of continuous downtime with nothing
// in flight. Call it with f.mu held.
func (f *groupFamily) checkCleanup() {
	now := f.w.sw.Now()
	for i, c := range f.w.clients {
		st := c.conn.State()
		m := f.ms[i]
		if st == zksim.StateConnected {
			f.downSince[i], m.quiet = -1, -1
			continue
		}
		if f.downSince[i] < 0 {
			f.downSince[i] = now
		}
		if st == zksim.StateExpired || st == zksim.StateClosed || st == zksim.StateAuthFailed || m.cancelled < 0 || !c.busy("enter") {
			continue
		}
		// A request in flight (sent in a connected instant) ends with a
		// reply the cleanup waits for: the quiet starts after the last.
		if f.w.inFlight(c) {
			m.quiet = -1
		} else if m.quiet < 0 {
			m.quiet = now
		}
		// The cleanup's clock starts over when the client hears of a
		// connection, which a delayed delivery may tell after the fact.
		if start := max(m.quiet, m.conn.heardUp()); m.quiet >= 0 && now-start > m.conn.presumedExpiry()+cleanupSlack {
			f.w.violate("cleanup past presumed expiry", "p%d's cancelled Enter still cleans up after %v of continuous downtime", i, now-start)
		}
	}
}

// checkGaveUp records a violation when a cancelled Enter whose member node
// existed returns while the connection is down, before its presumed expiry of
// continuous downtime: its cleanup gave up too early.
func (f *groupFamily) checkGaveUp(c *client, m *member, conn *sim.Conn) {
	f.mu.Lock()
	defer f.mu.Unlock()
	st := conn.State()
	if m.cancelled < 0 || !m.owned || conn != c.session() || st == zksim.StateConnected || st == zksim.StateExpired || st == zksim.StateClosed || st == zksim.StateAuthFailed {
		return
	}
	down := f.downSince[c.idx]
	if down < 0 {
		down = f.w.sw.Now() // went down at this instant: not yet seen by check
	}
	if d := f.w.sw.Now() - max(down, m.cancelled); d < m.conn.presumedExpiry() {
		f.w.violate("cleanup gave up early", "p%d's cancelled Enter gave up its cleanup after %v of continuous downtime", c.idx, d)
	}
}
