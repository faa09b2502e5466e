package zkmem

import (
	"errors"
	"fmt"
	"slices"

	"github.com/zksim/zksim"
)

// Ensemble is N ZooKeeper servers (members) over one committed history, as
// a ZooKeeper 3.8 ensemble: one member leads, the others follow. A session
// is connected to one member: its reads, getChildren, exists and watches are
// served from that member's applied state, which may lag the leader's;
// its writes go to the leader, which commits them in zxid order, and every
// member applies the commits in that order. See the package documentation's
// "Ensembles" section for the rules a client sees.
//
// Every method is safe for concurrent use. The member controls (Lag,
// CatchUp, ApplyNext, Crash, Restart, Isolate, Heal, Elect,
// FailLeaderOnNextWrite) take effect at once and never block; a client
// that loses its member moves to the next one of its list before the
// control returns, when one accepts it.
type Ensemble struct {
	core    *Server // the committed state: the leader's state machine, sessions and their timeouts
	opts    EnsembleOptions
	members []*member
	leader  int // index of the leader; -1 while there is none (an election)

	// log holds, while some member has a tree of its own (see diverge),
	// the committed transactions not every member applied yet, in zxid
	// order and without gaps; guarded by core.mu.
	log []entry
	// waiting are the in-process Conns that lost their member and found no
	// other to take them; each change that may let a member accept them
	// tries them again. Guarded by core.mu.
	waiting []*Conn
	// seqs are the SetNextSequence calls the members that fell behind
	// have not reached yet, in order; guarded by core.mu.
	seqs []seqPatch
	// failNext arms a leader failure on the next write (FailLeaderOnNextWrite).
	failNext failMode
	// acceptAhead is a planted bug for tests (export_test.go): a member
	// accepts a reconnecting client that has seen a zxid it has not
	// applied. Guarded by core.mu.
	acceptAhead bool
	// syncEarly is a planted bug for tests (export_test.go): a member
	// answers a sync at once, before it applied what the leader had
	// committed. Guarded by core.mu.
	syncEarly bool
	// beforeSetWatches, for tests (export_test.go), runs when a
	// reconnecting Conn has published its new connection and is about to
	// send its setWatches, without core.mu. Guarded by core.mu.
	beforeSetWatches func()
}

type failMode uint8

const (
	failNone failMode = iota
	failCommitted
	failDropped
)

// EnsembleOptions configures NewEnsemble.
type EnsembleOptions struct {
	// Options are every member's server options.
	Options
	// ReadOnly is ZooKeeper's readonlymode.enabled: a member cut off from
	// the quorum serves clients that connect with WithCanBeReadOnly in
	// read-only mode (zksim.StateConnectedReadOnly) instead of refusing
	// them.
	ReadOnly bool
	// Observers is how many of the members, the last ones, are observers:
	// they serve clients and apply commits as followers do, but take no
	// part in the quorum and never lead.
	Observers int
}

// Role is what a member of an ensemble is doing.
type Role uint8

const (
	// RoleDown: the member crashed (Ensemble.Crash) and serves nobody.
	RoleDown Role = iota
	// RoleLooking: the member is up but there is no leader it can follow
	// (an election, or no quorum without read-only mode): it serves nobody.
	RoleLooking
	// RoleLeader: the member leads.
	RoleLeader
	// RoleFollower: the member follows the leader.
	RoleFollower
	// RoleReadOnly: the member is cut off from the quorum and serves
	// read-only clients (EnsembleOptions.ReadOnly).
	RoleReadOnly
	// RoleObserver: the member observes the leader
	// (EnsembleOptions.Observers).
	RoleObserver
)

// String returns the role's name: "down", "looking", "leader",
// "follower", "read-only" or "observer".
func (r Role) String() string {
	switch r {
	case RoleDown:
		return "down"
	case RoleLooking:
		return "looking"
	case RoleLeader:
		return "leader"
	case RoleFollower:
		return "follower"
	case RoleReadOnly:
		return "read-only"
	case RoleObserver:
		return "observer"
	}
	return fmt.Sprintf("Role(%d)", uint8(r))
}

// ErrNoQuorum is returned by Ensemble.Elect when fewer than a majority of
// the voting members are up and connected to each other.
var ErrNoQuorum = errors.New("zkmem: no quorum of members to elect a leader")

// ErrNoMember is returned by Ensemble.Connect when no member of the
// client's list serves it.
var ErrNoMember = fmt.Errorf("%w: no member accepts the client", zksim.ErrConnectionLoss)

// NewEnsemble returns a running ensemble of n members (ZooKeeper
// ensembles have 3 or 5 voting members) over a fresh tree, the voting
// member with the highest index leading, as the highest server id wins a
// first election. It panics unless 0 ≤ opts.Observers < n, or if
// opts.Validate reports an error.
func NewEnsemble(n int, opts EnsembleOptions) *Ensemble {
	if opts.Observers < 0 || opts.Observers >= n {
		panic(fmt.Sprintf("zkmem: NewEnsemble: %d members of which %d observers", n, opts.Observers))
	}
	core := NewServer(opts.Options)
	e := &Ensemble{core: core, opts: opts, leader: n - 1 - opts.Observers}
	core.ens = e
	for i := range n {
		e.members = append(e.members, &member{id: i, view: newView(core), up: true, observer: i >= n-opts.Observers})
	}
	return e
}

// newView returns the state a member serves from: its own watch tables,
// and the committed tree while it keeps up (see diverge); its watch
// triggers count epochs on the core's counter, shared by every member. It
// is guarded by core.mu.
func newView(core *Server) *Server {
	return &Server{
		opts:         core.opts,
		tree:         core.tree,
		zxid:         core.zxid,
		dataWatches:  newWatchTable(),
		childWatches: newWatchTable(),
		epochs:       &core.epoch,
	}
}

// Server returns the server that holds the ensemble's committed state and
// its sessions: use it for Control (a session's fault plane), SessionIDs,
// SetSessionSecret and the like. Its Connect connects through the
// ensemble (Ensemble.Connect).
func (e *Ensemble) Server() *Server { return e.core }

// Size returns the number of members.
func (e *Ensemble) Size() int { return len(e.members) }

// Leader returns the index of the leading member, or -1 while there is
// none (after the leader crashed or lost its quorum, until Elect).
func (e *Ensemble) Leader() int {
	e.core.mu.Lock()
	defer e.core.mu.Unlock()
	return e.leader
}

// LastZxid returns the zxid of the last committed transaction.
func (e *Ensemble) LastZxid() int64 { return e.core.LastZxid() }

// Applied returns the zxid of the last transaction member i applied: the
// state its clients read. It panics for a member that does not exist, as
// every method taking a member index does.
func (e *Ensemble) Applied(i int) int64 {
	e.core.mu.Lock()
	defer e.core.mu.Unlock()
	return e.member(i).view.zxid
}

// Role returns what member i is doing.
func (e *Ensemble) Role(i int) Role {
	e.core.mu.Lock()
	defer e.core.mu.Unlock()
	m := e.member(i)
	switch {
	case !m.up:
		return RoleDown
	case e.servesRW(m) && i == e.leader:
		return RoleLeader
	case e.servesRW(m) && m.observer:
		return RoleObserver
	case e.servesRW(m):
		return RoleFollower
	case e.servesRO(m):
		return RoleReadOnly
	}
	return RoleLooking
}

// Sessions returns the ids of the sessions connected to member i, in order.
func (e *Ensemble) Sessions(i int) []int64 {
	e.core.mu.Lock()
	defer e.core.mu.Unlock()
	m := e.member(i)
	var ids []int64
	for id, sess := range e.core.sessions {
		if sess.member == m && sess.connected && !sess.dead {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	return ids
}

// Close closes the ensemble as Server.Close closes a server: every Conn is
// closed, every waiting call fails with zksim.ErrClosing.
func (e *Ensemble) Close() {
	e.core.mu.Lock()
	for _, m := range e.members {
		m.failAll(zksim.ErrClosing)
	}
	e.waiting = nil
	e.core.mu.Unlock()
	e.core.Close()
}

func (e *Ensemble) member(i int) *member {
	if i < 0 || i >= len(e.members) {
		panic(fmt.Sprintf("zkmem: ensemble member %d of %d", i, len(e.members)))
	}
	return e.members[i]
}

// quorum reports whether a majority of the voting members are up and not
// isolated. Called with core.mu held.
func (e *Ensemble) quorum() bool {
	n := 0
	for _, m := range e.members {
		if m.up && !m.isolated && !m.observer {
			n++
		}
	}
	return 2*n > len(e.members)-e.opts.Observers
}

// servesRW reports whether m serves clients normally. Called with core.mu
// held.
func (e *Ensemble) servesRW(m *member) bool { return m.up && !m.isolated && e.leader >= 0 }

// servesRO reports whether m serves read-only clients: it is cut off from
// the quorum, or no quorum exists, and read-only mode is on. Called with
// core.mu held.
func (e *Ensemble) servesRO(m *member) bool {
	return e.opts.ReadOnly && m.up && (m.isolated || (e.leader < 0 && !e.quorum()))
}

// Lag makes member i stop applying commits: they queue until CatchUp, or
// ApplyNext applies them one by one. Its clients keep reading its state,
// and a write of theirs is answered once the member applied it. A session
// that opens through it makes it apply the queued commits up to the
// session's createSession first (see Connect).
func (e *Ensemble) Lag(i int) {
	e.core.mu.Lock()
	defer e.core.mu.Unlock()
	m := e.member(i)
	m.lagging = true
	e.diverge(m)
}

// CatchUp makes member i apply every commit it has not applied (if it is
// up and in the quorum), and apply commits as they come from now on.
func (e *Ensemble) CatchUp(i int) {
	e.core.mu.Lock()
	m := e.member(i)
	m.lagging = false
	if m.up && !m.isolated {
		e.applyAll(m)
		e.settle(m)
	}
	e.core.mu.Unlock()
	e.redialWaiting()
}

// ApplyNext makes member i apply the next commit it has not applied, and
// reports whether there was one (a crashed or isolated member applies
// nothing). Its clients' events and replies that waited for it leave.
func (e *Ensemble) ApplyNext(i int) bool {
	e.core.mu.Lock()
	m := e.member(i)
	ok := m.up && !m.isolated && e.applyNext(m)
	e.settle(m)
	e.trim()
	again := ok && len(e.waiting) > 0
	e.core.mu.Unlock()
	if again {
		e.redialWaiting()
	}
	return ok
}

// Pending returns how many committed transactions member i has not applied.
func (e *Ensemble) Pending(i int) int {
	e.core.mu.Lock()
	defer e.core.mu.Unlock()
	return int(e.core.zxid - e.member(i).view.zxid)
}

// Crash stops member i: its clients lose their connection and move to the
// next member of their list; its calls waiting for it fail with
// zksim.ErrConnectionLoss. Its applied state survives, as a server's
// snapshot and log do. A crashed leader, or a crash that leaves no quorum,
// starts an election: no member serves until Elect.
func (e *Ensemble) Crash(i int) {
	e.core.mu.Lock()
	m := e.member(i)
	if m.up {
		m.up = false
		e.diverge(m)
		e.dropClients(m)
		if i == e.leader || !e.quorum() {
			e.startElection()
		}
	}
	e.core.mu.Unlock()
	e.redialWaiting()
}

// Restart starts a crashed member i again: it catches up from the leader,
// if there is one, and serves.
func (e *Ensemble) Restart(i int) {
	e.core.mu.Lock()
	m := e.member(i)
	if !m.up {
		m.up = true
		m.lagging = false
		if e.leader >= 0 && !m.isolated {
			e.applyAll(m)
			e.settle(m)
		}
	}
	e.core.mu.Unlock()
	e.redialWaiting()
}

// Isolate cuts member i off from the others (a network partition with i in
// the minority): it stops applying and stops serving its clients, which
// move on, but with EnsembleOptions.ReadOnly it serves in read-only mode
// the clients that allow it. Isolating the leader, or leaving no quorum,
// starts an election.
func (e *Ensemble) Isolate(i int) {
	e.core.mu.Lock()
	m := e.member(i)
	if !m.isolated {
		m.isolated = true
		e.diverge(m)
		e.dropClients(m)
		if i == e.leader || !e.quorum() {
			e.startElection()
		}
	}
	e.core.mu.Unlock()
	e.redialWaiting()
}

// Heal ends Isolate: member i rejoins the ensemble, drops its read-only
// clients (they reconnect, as a real server leaving read-only mode closes
// its connections) and catches up from the leader, if there is one.
func (e *Ensemble) Heal(i int) {
	e.core.mu.Lock()
	m := e.member(i)
	if m.isolated {
		m.isolated = false
		e.dropClients(m)
		if e.leader >= 0 && m.up {
			m.lagging = false
			e.applyAll(m)
			e.settle(m)
		}
	}
	e.core.mu.Unlock()
	e.redialWaiting()
}

// Elect ends an election: of the voting members that are up and not
// isolated, the one with the highest index leads (all of them logged every commit, so
// ZooKeeper's vote goes to the highest server id), every one of them
// catches up (synchronising with the new leader), read-only clients of
// those members are dropped, and every session's timeout starts afresh.
// It returns the leader, and does nothing if one already leads. It fails
// with ErrNoQuorum if fewer than a majority of the members can take part.
func (e *Ensemble) Elect() (int, error) {
	e.core.mu.Lock()
	if e.leader >= 0 {
		defer e.core.mu.Unlock()
		return e.leader, nil
	}
	if !e.quorum() {
		e.core.mu.Unlock()
		return -1, ErrNoQuorum
	}
	for i := len(e.members) - 1; i >= 0; i-- {
		if m := e.members[i]; m.up && !m.isolated && !m.observer {
			e.leader = i
			break
		}
	}
	for _, m := range e.members {
		if m.up && !m.isolated {
			e.dropClients(m) // read-only ones, if any
			m.lagging = false
			e.applyAll(m)
			e.settle(m)
		}
	}
	for _, sess := range e.sessionsInOrder() {
		if !sess.dead && (!sess.connected || sess.readOnly) {
			sess.startExpiry(sess.timeout) // a new leader's fresh timeout
		}
	}
	leader := e.leader
	e.core.mu.Unlock()
	e.redialWaiting()
	return leader, nil
}

// FailLeaderOnNextWrite makes the leader fail as the next write reaches
// it: with committed, the write commits first; without, it is lost. Its
// client gets zksim.ErrConnectionLoss either way, as every client does,
// and an election starts (see Elect). A simulator decides committed from
// its seed, so that a run replays.
func (e *Ensemble) FailLeaderOnNextWrite(committed bool) {
	e.core.mu.Lock()
	defer e.core.mu.Unlock()
	e.failNext = failDropped
	if committed {
		e.failNext = failCommitted
	}
}

// failLeader crashes the leader. Called with core.mu held.
func (e *Ensemble) failLeader() {
	m := e.members[e.leader]
	m.up = false
	e.diverge(m)
	e.dropClients(m)
	e.startElection()
}

// startElection: the ensemble has no leader. Every member in the quorum
// drops its clients (read-only members keep theirs); no session expires
// until a leader is elected. Called with core.mu held.
func (e *Ensemble) startElection() {
	e.leader = -1
	for _, m := range e.members {
		if e.servesRO(m) {
			e.diverge(m) // it serves its state as it is now
		}
		if !m.isolated {
			e.dropClients(m)
		}
	}
	for _, sess := range e.core.sessions {
		if sess.expiryTimer != nil {
			sess.expiryTimer.Stop()
			sess.expiryTimer = nil
		}
	}
}

// dropClients closes the connection of every session attached to m: their
// waiting calls fail with zksim.ErrConnectionLoss and in-process Conns move
// on (see redialWaiting). Called with core.mu held.
func (e *Ensemble) dropClients(m *member) {
	m.failAll(zksim.ErrConnectionLoss)
	for _, sess := range e.sessionsInOrder() {
		if sess.member != m || !sess.connected {
			continue
		}
		if sess.readOnly {
			// The leader never heard of this connection: the session's
			// clock already runs.
			sess.connected, sess.readOnly = false, false
			sess.dropWatches()
		} else {
			e.core.disconnect(sess)
		}
		if _, ok := sess.sink.(*connSink); ok {
			sess.sink.Closed(errMemberGone)
		} else {
			sess.sink.Closed(zksim.ErrConnectionLoss)
		}
	}
}

// sessionsInOrder returns the live sessions by id, so that what is done
// to each (timers started, clients told) happens in one order. Called
// with core.mu held.
func (e *Ensemble) sessionsInOrder() []*Session {
	list := make([]*Session, 0, len(e.core.sessions))
	for _, sess := range e.core.sessions {
		list = append(list, sess)
	}
	sortSessions(list)
	return list
}

// errMemberGone tells an in-process Conn's sink that its member dropped it:
// it reconnects to another member by itself.
var errMemberGone = errors.New("zkmem: the ensemble member dropped the connection")

// reset follows Server.Reset of the ensemble's server: every member serves
// the fresh tree (an isolated one a copy of it), with no watches, nothing
// waiting and no lag. Called with core.mu held.
func (e *Ensemble) reset() {
	s := e.core
	for i := range e.log {
		clear(e.log[i].snaps)
		clear(e.log[i].eph)
	}
	e.log = e.log[:0]
	e.seqs = nil
	for _, m := range e.members {
		m.failAll(zksim.ErrSessionExpired)
		m.lagging = false
		m.view.tree, m.view.zxid = s.tree, s.zxid
		m.eph = nil
		m.view.dataWatches, m.view.childWatches = newWatchTable(), newWatchTable()
		if m.isolated || !m.up {
			e.diverge(m)
		}
	}
}
