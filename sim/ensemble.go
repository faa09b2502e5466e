package sim

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"testing/synctest"
	"time"

	"github.com/zksim/zksim"
	"github.com/zksim/zksim/zkmem"
)

// A World over a zkmem ensemble (Config.Members > 1): the clients spread
// over the members, each member applying a commit it lags behind is an
// event of the scheduler, and a request that must wait for its member (a
// write or a sync on a lagging member, and what its session sent after)
// waits in a goroutine of its own until the member applies what it waits
// for.

// electionDelay is how long an election takes: the time from the loss of
// the leader to the step at which a new one is elected.
const electionDelay = 500 * time.Millisecond

// ErrNotEnsemble is returned by the ensemble faults on a World that is a
// standalone server (Config.Members below 2).
var ErrNotEnsemble = errors.New("sim: the World is not an ensemble (Config.Members < 2)")

// ensState is the scheduler's record of the ensemble.
type ensState struct {
	e        *zkmem.Ensemble
	lagging  []bool // members a Lag fault stopped (their commits are apply events)
	nLag     int
	gen      []int // per member, bumped by every crash, restart, isolation and heal
	parked   []*parked
	electing bool // an election is scheduled
	failing  bool // FailLeader armed: the next write fails the leader
	events   []int
	choice   int // a member's event Config.Choose picked in lagWait; -2: it left the choice to the seed; else -1
	// electedAt is when the last election ended (elected: there was
	// one): every session's timeout started afresh then.
	electedAt time.Duration
	elected   bool
}

// endLag records that member m no longer lags (a CatchUp, a restart, a
// heal), if it did.
func (es *ensState) endLag(m int) {
	if es.lagging[m] {
		es.lagging[m] = false
		es.nLag--
	}
}

// parked is a request whose call waits in zkmem for its member.
type parked struct {
	s      *session
	req    *request
	before zksim.State
	done   chan struct{}
}

// newServer returns the World's server: a standalone one, or the server
// holding the committed state of an ensemble of cfg.Members.
func newServer(cfg Config) (*zkmem.Server, *ensState) {
	if cfg.Members < 2 {
		return zkmem.NewServer(cfg.Server), nil
	}
	e := zkmem.NewEnsemble(cfg.Members, zkmem.EnsembleOptions{Options: cfg.Server})
	return e.Server(), &ensState{
		e:       e,
		lagging: make([]bool, cfg.Members),
		gen:     make([]int, cfg.Members),
		choice:  -1,
	}
}

// memberOrder returns client idx's list of members: an order drawn from
// the seed and the index, as a shuffled connect string.
func memberOrder(seed uint64, idx, members int) []int {
	return rand.New(rand.NewPCG(seed, 0xe45e_3b1e^uint64(idx))).Perm(members)
}

// memberOpts returns the options that connect client idx (none for a
// standalone server).
func (w *World) memberOpts(idx int) []zkmem.ConnOption {
	if w.ens == nil {
		return nil
	}
	order := memberOrder(w.cfg.Seed, idx, len(w.ens.lagging))
	w.notef("c%d members %v", idx, order)
	return []zkmem.ConnOption{zkmem.WithMembers(order...)}
}

// Members returns the number of members of the World's ensemble, 0 for a
// standalone server.
func (w *World) Members() int {
	if w.ens == nil {
		return 0
	}
	return len(w.ens.lagging)
}

// Ensemble returns the World's ensemble (nil for a standalone server), for
// checks that bypass the scheduler. Calls on it are not scheduled and not
// traced: use the World's faults to change it.
func (w *World) Ensemble() *zkmem.Ensemble {
	if w.ens == nil {
		return nil
	}
	return w.ens.e
}

// Lagging reports whether member m is lagging (a Lag fault stopped it and
// no CatchUp, restart or election has caught it up since).
func (w *World) Lagging(m int) bool { return w.ens != nil && w.ens.lagging[m] }

// Member returns the member client i's session is connected to, or -1
// (disconnected, or a standalone server).
func (w *World) Member(i int) int {
	s := w.sessions[i]
	if w.ens == nil || s.zc == nil && (s.wire == nil || s.wire.sid == 0) {
		return -1
	}
	if m, ok := w.memberOf()[s.sid()]; ok {
		return m
	}
	return -1
}

// memberOf maps the connected sessions to their member.
func (w *World) memberOf() map[int64]int {
	out := map[int64]int{}
	for m := range w.ens.lagging {
		for _, id := range w.ens.e.Sessions(m) {
			out[id] = m
		}
	}
	return out
}

// serving reports whether member m serves clients (and so applies).
func serving(r zkmem.Role) bool {
	return r == zkmem.RoleLeader || r == zkmem.RoleFollower || r == zkmem.RoleObserver
}

// memberEvents lists the members whose next commit is an enabled event:
// the lagging ones that serve and have commits to apply. It returns how
// many there are (0 on a standalone server).
func (w *World) memberEvents() int {
	if w.ens == nil || w.ens.nLag == 0 {
		return 0
	}
	es := w.ens
	es.events = es.events[:0]
	for m, lag := range es.lagging {
		if lag && es.e.Pending(m) > 0 && serving(es.e.Role(m)) {
			es.events = append(es.events, m)
		}
	}
	return len(es.events)
}

// applyMember takes the k-th member event: the member applies its next
// commit; the calls waiting for it return.
func (w *World) applyMember(k int) {
	es := w.ens
	m := es.events[k]
	// A member that applies may let a disconnected client in: follow the
	// sessions then (rarely), else only the calls it released.
	down := false
	for _, s := range w.sessions {
		if s.down && !s.gone {
			down = true
			break
		}
	}
	var snap ensSnap
	if down {
		snap = w.ensSnapshot()
	}
	es.e.ApplyNext(m)
	w.stepf("m%d apply commit (%d pending)", m, es.e.Pending(m))
	switch {
	case down:
		synctest.Wait()
		w.ensReconcile(snap)
	case len(es.parked) > 0:
		synctest.Wait()
		w.collectParked()
	}
}

// mayWait reports whether a call of op may wait for its member: a write
// (committed by the leader, answered once the member applied it) or a
// sync.
func mayWait(op zkmem.OpCode) bool {
	switch op {
	case zkmem.OpCreate, zkmem.OpDelete, zkmem.OpSetData, zkmem.OpSetACL, zkmem.OpMulti,
		zkmem.OpReconfig, zkmem.OpCloseSession, zkmem.OpSync:
		return true
	}
	return false
}

// executeEnsemble applies req as execute does when its call may wait in
// zkmem (a member lags) or fail the leader (FailLeader armed): in a
// goroutine of its own, until every goroutine is blocked; a call still
// waiting for its member is parked, and answered in the step that makes
// its member apply what it waits for. It reports whether it took req.
func (w *World) executeEnsemble(s *session, req *request) bool {
	es := w.ens
	if es == nil || req.wire != nil || req.name == opExternal {
		return false
	}
	if !es.failing && (es.nLag == 0 || !mayWait(req.desc.Op) && !w.parkedFor(s)) {
		return false // it cannot wait: a read behind nothing of its session
	}
	var snap ensSnap
	if es.failing {
		snap = w.ensSnapshot() // the leader's failure drops every client
	}
	p := &parked{s: s, req: req, before: s.zc.State(), done: make(chan struct{})}
	s.applying = req
	go func() {
		req.res = req.do(context.Background(), s.zc)
		close(p.done)
	}()
	synctest.Wait()
	s.applying = nil
	if w.cfg.OnApply != nil && p.before == zksim.StateConnected && req.hit != zkmem.DropRequest {
		w.cfg.OnApply(s.idx, &req.desc)
	}
	select {
	case <-p.done:
		w.answer(p, false)
	default:
		es.parked = append(es.parked, p)
		w.stepf("%s apply %s %s%s -> waits for its member", s.name, req.name, req.desc.Path, req.watchMark())
	}
	w.afterFailing(snap)
	return true
}

// answer queues the reply of a call that returned, as execute does, after
// what the call did to its connection. wasParked says it waited for its
// member.
func (w *World) answer(p *parked, wasParked bool) {
	s, req := p.s, p.req
	if req.ended {
		return
	}
	if req.hit != zkmem.NoFault {
		req.note = " [" + req.hit.String() + "]"
	}
	if req.res.names != nil && req.desc.Op == zkmem.OpGetChildren {
		sortChildren(req.res.names)
		if req.fate.Shuffle {
			w.frng.Shuffle(len(req.res.names), func(i, j int) {
				req.res.names[i], req.res.names[j] = req.res.names[j], req.res.names[i]
			})
			req.note += " [shuffled]"
		}
	}
	w.coverApplied(req)
	if !s.gone {
		known := s.knownState()
		if cur := s.zc.State(); cur != known {
			if cur == zksim.StateDisconnected {
				s.hiddenDrop = s.paused
			}
			w.stateChange(s, known, cur, -1, true)
		}
	}
	s.push(-1, item{kind: itemReply, req: req})
	if wasParked {
		w.notef("%s answer %s %s%s -> %s%s", s.name, req.name, req.desc.Path, req.watchMark(), req.summary(), req.note)
	} else {
		w.stepf("%s apply %s %s%s -> %s%s", s.name, req.name, req.desc.Path, req.watchMark(), req.summary(), req.note)
	}
	w.refresh(s)
}

// collectParked answers the parked calls that returned, in the order they
// were parked. Call it after synctest.Wait.
func (w *World) collectParked() {
	if w.ens == nil || len(w.ens.parked) == 0 {
		return
	}
	es := w.ens
	kept := es.parked[:0]
	for _, p := range es.parked {
		select {
		case <-p.done:
			if p.req.wire != nil {
				w.unparkWire(p)
			} else {
				w.answer(p, true)
			}
		default:
			kept = append(kept, p)
		}
	}
	clear(es.parked[len(kept):])
	es.parked = kept
}

// parkedFor reports whether s has a parked call.
func (w *World) parkedFor(s *session) bool {
	if w.ens == nil {
		return false
	}
	for _, p := range w.ens.parked {
		if p.s == s {
			return true
		}
	}
	return false
}

// endParked ends the parked calls when the World closes.
func (w *World) endParked() {
	if w.ens == nil {
		return
	}
	w.ens.e.Close()
	synctest.Wait()
	for _, p := range w.ens.parked {
		<-p.done
		if p.req.wire == nil && !p.req.ended {
			p.req.res = result{err: zksim.ErrClosing}
			p.req.finish()
		}
	}
	w.ens.parked = nil
}

// ensSnap is what ensReconcile compares against: each native session's
// member and FIFO length before an ensemble action.
type ensSnap struct {
	member map[int64]int
	fifo   []int
	leader int // the leader when the snapshot was taken (-1: none)
}

func (w *World) ensSnapshot() ensSnap {
	snap := ensSnap{member: w.memberOf(), fifo: make([]int, len(w.sessions)), leader: w.ens.e.Leader()}
	for i, s := range w.sessions {
		snap.fifo[i] = s.fifoLen()
	}
	return snap
}

// ensReconcile follows what an ensemble action did to the sessions: the
// calls it released are answered, and each client whose connection broke,
// came back, or moved to another member hears of it (before whatever the
// action queued for it). Call it after synctest.Wait.
func (w *World) ensReconcile(snap ensSnap) {
	now := w.memberOf()
	for i, s := range w.sessions {
		// A session the server expired while its client waited for a
		// member (gone, still down) is followed: the client learns of the
		// expiry when a member takes it again.
		if s.zc == nil || (s.gone && !s.down) || i >= len(snap.fifo) {
			continue
		}
		id := s.zc.SessionID()
		known := s.knownState()
		cur := s.zc.State()
		m0, was := snap.member[id]
		m1, is := now[id]
		switch {
		case cur == zksim.StateConnected && known == zksim.StateDisconnected && s.paused:
			// A paused client hears nothing until it resumes; its timers
			// (the pause's end, the expiry) stand.
			s.down = false
			if s.hiddenDrop {
				s.hiddenDrop = false
			} else {
				s.push(snap.fifo[i], item{kind: itemState, state: zksim.StateConnected})
			}
		case cur != known:
			if cur == zksim.StateDisconnected {
				s.hiddenDrop = s.paused
			}
			w.stateChange(s, known, cur, snap.fifo[i], true)
		case cur == zksim.StateConnected && was && is && m0 != m1:
			s.push(snap.fifo[i], item{kind: itemState, state: zksim.StateDisconnected})
			s.push(snap.fifo[i]+1, item{kind: itemState, state: zksim.StateConnected})
		default:
			continue
		}
		switch {
		case cur == zksim.StateAuthFailed:
			w.notef("%s reconnect: authentication failed -> %v", s.name, cur)
		case is:
			w.notef("%s %v on m%d", s.name, cur, m1)
		default:
			w.notef("%s %v", s.name, cur)
		}
		w.refresh(s)
	}
	w.collectParked()
	w.maybeElect()
}

// strikeAll counts the requests in flight of every client as meeting
// fault.
func (w *World) strikeAll(fault string) {
	for _, s := range w.sessions {
		w.coverStrike(s, fault)
	}
}

// strikeMember counts the requests in flight of member m's clients.
func (w *World) strikeMember(m int, fault string) {
	ids := w.ens.e.Sessions(m)
	for _, s := range w.sessions {
		if s.zc == nil && s.wire == nil {
			continue
		}
		for _, id := range ids {
			if id == s.sid() {
				w.coverStrike(s, fault)
			}
		}
	}
}

// maybeElect schedules an election when the ensemble has no leader.
func (w *World) maybeElect() {
	es := w.ens
	if es.electing || es.e.Leader() >= 0 {
		return
	}
	es.electing = true
	w.schedule(w.now+electionDelay, &timed{kind: tEnsemble, fn: w.elect})
}

// elect is the election's timed action.
func (w *World) elect() {
	es := w.ens
	es.electing = false
	if es.e.Leader() >= 0 {
		return
	}
	snap := w.ensSnapshot()
	leader, err := es.e.Elect()
	synctest.Wait()
	if err != nil {
		// A Restart or Heal that brings the quorum back starts another.
		w.stepf("election: no quorum")
		return
	}
	w.syncLag(-1)
	for _, s := range w.sessions {
		if s.wire != nil {
			s.wire.heardAt = w.now // a new leader's fresh timeout
		}
	}
	w.stepf("m%d elected leader", leader)
	w.ensReconcile(snap)
	// The new leader gives every session a fresh timeout: a silent one
	// expires a session timeout from now, not before (ensMayExpire).
	es.electedAt, es.elected = w.now, true
	for _, s := range w.sessions {
		if s.wire == nil && s.zc != nil && !s.gone && (s.down || s.paused) {
			w.schedule(w.now+s.zc.SessionTimeout()-time.Nanosecond, &timed{kind: tExpire, s: s, gen: s.gen})
		}
	}
}

// ensMayExpire reports whether a silent session's expiry, due now, may
// happen: on an ensemble, only the leader expires sessions, none while
// there is none, and a new leader gives every session a fresh timeout
// (elect schedules the expiries again).
func (w *World) ensMayExpire(s *session) bool {
	es := w.ens
	if es == nil {
		return true
	}
	return es.e.Leader() >= 0 && (!es.elected || w.now >= es.electedAt+s.zc.SessionTimeout()-time.Nanosecond)
}

// syncLag forgets the lag of member only (all of them for -1) if it
// caught up: a heal or an election catches up the members that serve.
func (w *World) syncLag(only int) {
	es := w.ens
	for m, lag := range es.lagging {
		if lag && (only < 0 || m == only) && serving(es.e.Role(m)) {
			es.lagging[m] = false
			es.nLag--
		}
	}
}

// ensAction runs a member control as a fault: it checks the World and the
// member, and follows what the control did to the sessions.
func (f *Faults) ensAction(m int, do func(es *ensState)) error {
	w := f.w
	es := w.ens
	if es == nil {
		return ErrNotEnsemble
	}
	if m < 0 || m >= len(es.lagging) {
		return fmt.Errorf("sim: no member %d in an ensemble of %d", m, len(es.lagging))
	}
	snap := w.ensSnapshot()
	do(es)
	synctest.Wait()
	w.ensReconcile(snap)
	return nil
}

// chooseWithMembers picks the event of a step among the n events of the
// clients and, after them in the canonical order, the members' events:
// Config.Choose picks among them all; else the seed does (under PCT, a
// member's event is drawn uniformly, the clients' by priority).
func (w *World) chooseWithMembers(applies, n, members int) int {
	total := n + members
	asked := w.ens.choice
	w.ens.choice = -1
	if asked >= 0 {
		return n + asked // picked in lagWait
	}
	if w.cfg.Choose != nil && asked == -1 {
		if k := w.ask(w.memberChoices(w.clientChoices(applies), members)); k >= 0 {
			return k
		}
	}
	k := w.rng.IntN(total)
	if w.pct.on && k < n {
		k = w.pctPick(applies, w.step+1)
	}
	return k
}

// EnsembleCoverage are the coverage columns of the ensemble's faults: the
// requests in flight of the clients of a member that lagged, crashed or
// was isolated, and of every client when the leader failed. Coverage's
// String prints them after the others, when a run met them.
var EnsembleCoverage = []string{"Lag", "Crash", "Isolate", "Failover"}

// lagTick is how long a lagging member may stay behind, each time only
// its applies are enabled, before the scheduler looks again.
const lagTick = 100 * time.Millisecond

// lagWait decides, when only members' applies are enabled, whether the
// lagging members stay behind while time passes (up to lagTick) instead:
// else a member behind would always catch up before a client's next timer,
// and a lag would never outlast an instant. Config.Choose decides among
// the members' events and, last, waiting; else the seed, even odds.
func (w *World) lagWait(members int) bool {
	if w.cfg.Choose != nil {
		k := w.ask(append(w.memberChoices(w.choiceBuf[:0], members), Choice{Kind: ChoiceLetTimePass}))
		if k == members {
			return true // the step lets time pass: nothing picked for the next
		}
		if k >= 0 {
			w.ens.choice = k
			return false
		}
		w.ens.choice = -2 // left to the seed: not asked again
	}
	return w.rng.IntN(2) == 0
}

// lagHorizon caps horizon (0: none) at lagTick from now.
func (w *World) lagHorizon(horizon time.Duration) time.Duration {
	if h := w.now + lagTick; horizon == 0 || h < horizon {
		return h
	}
	return horizon
}

// lagSnap is what afterSessionOpened compares against: the commits each
// member had not applied before a session opened, and the sessions.
type lagSnap struct {
	pending []int
	snap    ensSnap
}

// lagSnapshot records, before a session opens, what the members lag
// behind (nil when none lags: nothing can change).
func (w *World) lagSnapshot() *lagSnap {
	if w.ens == nil || w.ens.nLag == 0 {
		return nil
	}
	l := &lagSnap{pending: make([]int, len(w.ens.lagging)), snap: w.ensSnapshot()}
	for m := range l.pending {
		l.pending[m] = w.ens.e.Pending(m)
	}
	return l
}

// afterSessionOpened follows a session that opened through a lagging
// member (s's, by Connect or a go-zookeeper client's handshake): the
// member applied the commits it lagged behind up to the session's
// createSession before it answered (zkmem's Ensemble.Connect and
// OpenSessionAt), which may answer calls waiting for it and let clients
// waiting for a member in.
func (w *World) afterSessionOpened(s *session, l *lagSnap) {
	if l == nil {
		return
	}
	synctest.Wait()
	for m, before := range l.pending {
		if after := w.ens.e.Pending(m); after < before {
			w.notef("m%d applied the %d commits it lagged behind, then the createSession of %s", m, before-after, s.name)
		}
	}
	w.ensReconcile(l.snap)
}
