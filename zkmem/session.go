package zkmem

import (
	"crypto/subtle"
	"errors"
	"net/netip"
	"sort"
	"time"

	"github.com/zksim/zksim"
	"github.com/zksim/zksim/internal/digestmd5"
)

// Session is the server's side of one client session, whatever carries
// its requests: the in-process Conn, or a wire-protocol connection. Open one
// with Server.OpenSession, take it over from a new connection with
// Server.ResumeSession, and pass every request through Do. Its faults are
// decided and armed on its Control.
//
// A Session is safe for concurrent use; its requests are applied one at a
// time, in the order Do is called.
type Session struct {
	srv         *Server
	view        *Server // serves its reads and holds its watches: srv, or its ensemble member's view
	id          int64
	timeout     time.Duration
	sink        Sink
	connected   bool // a transport is attached
	dead        bool // closed or expired
	password    []byte
	addr        string              // the "ip" identity of the attached connection
	auth        []authID            // the identities of the attached connection
	sasl        *digestmd5.Server   // the SASL exchange of the attached connection (sasl.go)
	ephemerals  *ephemeralSet       // nil before the first ephemeral
	dataPaths   map[string]struct{} // paths in the server's data watch table
	childPaths  map[string]struct{} // paths in the server's child watch table
	expiryTimer *time.Timer
	paused      bool    // attached, but the server hears nothing from it
	member      *member // the ensemble member it is attached to (nil standalone)
	readOnly    bool    // attached to a member in read-only mode
	committed   bool    // on an ensemble's committed state (WithCommittedView); set once, before use
	failAuth    bool    // its in-process Conn's next reconnection fails authentication (authfail.go)
	firedEpoch  uint64

	// The fault plane (see plane.go).
	armed []armedFault
	hook  FaultHook

	// Delay: replies and notifications are held until delayUntil.
	delayUntil time.Time
	held       []heldItem
	delayTimer *time.Timer

	// Heartbeats: once the transport pings, a silence of the whole timeout
	// expires the session.
	heartbeat bool
	lastHeard time.Time
}

// ID returns the session's id.
func (sess *Session) ID() int64 { return sess.id }

// Timeout returns the negotiated session timeout.
func (sess *Session) Timeout() time.Duration { return sess.timeout }

// Paused reports whether the session is paused (Control.Pause): a wire
// transport reads none of its requests meanwhile, as the server hears
// nothing from a paused client. Do itself does not wait for Resume.
func (sess *Session) Paused() bool {
	sess.srv.mu.Lock()
	defer sess.srv.mu.Unlock()
	return sess.paused
}

// Password returns the session's 16-byte password, which a client presents
// with the id to resume the session (Server.ResumeSession). It is keyed by
// a secret of the server (see Server.SetSessionSecret): knowing the id is
// not enough to derive it.
func (sess *Session) Password() []byte { return append([]byte(nil), sess.password...) }

// negotiateTimeout clamps a requested timeout as ZooKeeperServer does.
func (s *Server) negotiateTimeout(d time.Duration) time.Duration {
	if d < s.opts.MinSessionTimeout {
		d = s.opts.MinSessionTimeout
	}
	if d > s.opts.MaxSessionTimeout {
		d = s.opts.MaxSessionTimeout
	}
	return d
}

// ErrZxidAhead is returned by ResumeSession when the client has seen a
// zxid the server has not: ZooKeeper refuses such a client, which must find
// a server at least as recent.
var ErrZxidAhead = errors.New("zkmem: client has seen a zxid ahead of the server")

// OpenSession opens a new session (a createSession transaction) for a
// client connected from addr, whose transport hears from the server through
// sink. The session's only identity is ip:addr (see Server.ResumeSession
// for how the id is written). The requested timeout is negotiated: clamped
// to [Options.MinSessionTimeout, Options.MaxSessionTimeout]. It fails with
// zksim.ErrClosing once the server is closed, and with an error for the
// zero netip.Addr.
func (s *Server) OpenSession(timeout time.Duration, addr netip.Addr, sink Sink) (*Session, error) {
	if !addr.IsValid() {
		return nil, errNoClientAddr
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, zksim.ErrClosing
	}
	if s.ens != nil {
		return s.ens.openOnLeader(timeout, addr, sink)
	}
	return s.openSession(timeout, addr, sink), nil
}

// ResumeSession attaches a new connection, from a client at addr, to
// session id, as a client that lost its connection does: password must be
// the session's, and lastZxid the last zxid the client saw. An unknown or
// expired session, or a wrong password, fails with
// zksim.ErrSessionExpired; a lastZxid ahead of the server with
// ErrZxidAhead; a closed server with zksim.ErrClosing; the zero netip.Addr
// with an error.
//
// As on a ZooKeeper server, a connection that asks for a live session
// closes the session's current connection first, whether its password is
// right or not (its Sink hears Closed with zksim.ErrConnectionLoss, so an
// in-process Conn stays down until Control.Reconnect; the session lives
// on and its expiry clock starts). On success the session's
// expiry clock stops and sink replaces the old transport's; watches are not
// restored (send OpSetWatches). The identities the old connection added
// with addAuth stay with it: the session comes back with only ip:addr, as
// the server writes it (an IPv4 address in dotted decimal, an IPv6 one as
// eight hex groups, "0:0:0:0:0:0:0:1" for ::1), until the client sends
// addAuth again, as go-zookeeper and kazoo do on reconnecting.
func (s *Server) ResumeSession(id int64, password []byte, lastZxid int64, addr netip.Addr, sink Sink) (*Session, error) {
	if !addr.IsValid() {
		return nil, errNoClientAddr
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, zksim.ErrClosing
	}
	if lastZxid > s.zxid {
		// Refused before the session is looked at: its connection stays.
		return nil, ErrZxidAhead
	}
	if s.ens != nil && s.ens.leader < 0 {
		return nil, ErrNoMember // an election: nobody serves
	}
	sess := s.sessions[id]
	if sess == nil || sess.dead {
		return nil, zksim.ErrSessionExpired
	}
	if sess.connected {
		// ZooKeeperServer.processConnectRequest closes the session's
		// connection before it checks the password.
		s.disconnect(sess)
		sess.sink.Closed(zksim.ErrConnectionLoss)
	}
	if subtle.ConstantTimeCompare(password, sess.password) != 1 {
		return nil, zksim.ErrSessionExpired
	}
	sess.attach(sink)
	sess.resetAuth(addr)
	if s.ens != nil {
		sess.readOnly = false
		sess.member = s.ens.members[s.ens.leader]
		sess.view = sess.member.view
	}
	return sess, nil
}

// attach makes sink the session's transport. Called with srv.mu held.
func (sess *Session) attach(sink Sink) {
	if sess.expiryTimer != nil {
		sess.expiryTimer.Stop()
		sess.expiryTimer = nil
	}
	sess.sink = sink
	sess.resetSASL()
	sess.connected = true
	sess.lastHeard = time.Now()
}

// openSession creates a session (a createSession transaction) for a
// client at addr.
func (s *Server) openSession(timeout time.Duration, addr netip.Addr, sink Sink) *Session {
	t := s.begin()
	sess := &Session{
		srv:        s,
		view:       s,
		id:         s.nextSession,
		timeout:    s.negotiateTimeout(timeout),
		sink:       sink,
		connected:  true,
		dataPaths:  make(map[string]struct{}),
		childPaths: make(map[string]struct{}),
	}
	sess.password = s.secret.password(sess.id)
	sess.resetAuth(addr)
	s.nextSession++
	s.sessions[sess.id] = sess
	s.commit(t) // no events; an ensemble replicates the transaction
	return sess
}

// notify sends a watch event to the session's transport, if attached.
// Called with srv.mu held.
func (sess *Session) notify(ev zksim.Event, zxid int64) {
	if !sess.connected {
		return
	}
	if sess.delayed() {
		sess.held = append(sess.held, heldItem{ev: ev, zxid: zxid})
		return
	}
	sess.sink.Event(ev, zxid)
}

func (sess *Session) watchSet(t *watchTable) map[string]struct{} {
	if t == sess.view.dataWatches {
		return sess.dataPaths
	}
	return sess.childPaths
}

func (sess *Session) addWatch(t *watchTable, path string, mode watchMode) {
	t.add(path, sess, mode)
	sess.watchSet(t)[path] = struct{}{}
}

func (sess *Session) removeWatch(t *watchTable, path string) (watchMode, bool) {
	mode, ok := t.remove(path, sess)
	if ok {
		delete(sess.watchSet(t), path)
	}
	return mode, ok
}

// forgetWatch is called by a watch table that removed a fired watch.
func (sess *Session) forgetWatch(t *watchTable, path string) {
	delete(sess.watchSet(t), path)
}

// dropWatches removes every server-side watch of the session, as the server
// does when the session's connection closes.
func (sess *Session) dropWatches() {
	for _, t := range []*watchTable{sess.view.dataWatches, sess.view.childWatches} {
		set := sess.watchSet(t)
		paths := make([]string, 0, len(set))
		for p := range set {
			paths = append(paths, p)
		}
		sort.Strings(paths)
		for _, p := range paths {
			t.remove(p, sess)
		}
		clear(set)
	}
}

// addEphemeral records n, an ephemeral of the session. With keep it
// returns how to undo that exactly (for a multi); otherwise nil.
func (sess *Session) addEphemeral(n *node, keep bool) (undo func()) {
	if sess.ephemerals == nil {
		sess.ephemerals = newEphemeralSet()
	}
	if t := sess.srv.tree.rec; t != nil {
		t.eph = append(t.eph, ephEffect{sess: sess.id, n: n, add: true})
	}
	return sess.ephemerals.add(n, &sess.srv.tree.sets, keep)
}

// removeEphemeral forgets n, an ephemeral of the session. With keep it
// returns how to undo that exactly (for a multi); otherwise nil.
func (sess *Session) removeEphemeral(n *node, keep bool) (undo func()) {
	if sess.ephemerals == nil {
		if keep {
			return func() {}
		}
		return nil
	}
	if t := sess.srv.tree.rec; t != nil {
		t.eph = append(t.eph, ephEffect{sess: sess.id, n: n})
	}
	return sess.ephemerals.remove(n, &sess.srv.tree.sets, keep)
}

// ephemeralsAt returns the session's set of ephemerals as its member has
// applied it: the committed set, or on a member that fell behind the
// member's own copy. Called with srv.mu held.
func (sess *Session) ephemeralsAt() *ephemeralSet {
	if m := sess.member; m != nil && m.view.tree != sess.srv.tree {
		return m.eph[sess.id]
	}
	return sess.ephemerals
}

// disconnect records that the session's connection closed: its watches go,
// and it expires unless a connection is heard from within its timeout.
// Called with s.mu held.
func (s *Server) disconnect(sess *Session) {
	if !sess.connected || sess.dead {
		return
	}
	sess.connected = false
	sess.dropWatches()
	sess.dropHeld()
	if sess.member != nil {
		sess.member.failSession(sess) // requests waiting for the member
	}
	sess.startExpiry(sess.timeout)
}

// startExpiry (re)starts the session's expiry clock. Called with s.mu held.
func (sess *Session) startExpiry(d time.Duration) {
	if sess.expiryTimer != nil {
		sess.expiryTimer.Stop()
	}
	sess.expiryTimer = time.AfterFunc(d, func() { sess.srv.expireIfSilent(sess) })
}

// expireIfSilent runs when a session's expiry clock runs out: a detached or
// paused session expires, and so does an attached one whose transport pings
// but has not been heard from for the whole timeout.
func (s *Server) expireIfSilent(sess *Session) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if sess.dead || s.closed {
		return
	}
	if s.ens != nil && s.ens.leader < 0 {
		return // no leader: nobody expires sessions; the next one restarts every clock
	}
	if sess.connected && !sess.paused && !sess.readOnly {
		if !sess.heartbeat {
			return
		}
		if left := sess.timeout - time.Since(sess.lastHeard); left > 0 {
			sess.startExpiry(left)
			return
		}
		sess.connected = false
		s.endSession(sess)
		sess.sink.Closed(zksim.ErrSessionExpired)
		return
	}
	// A paused client's connection is closed by the server at expiry; the
	// client finds out when it resumes.
	sess.connected = false
	s.endSession(sess)
}

// endSession closes or expires a session in one closeSession transaction:
// every ephemeral goes, with its watch events, in the order of a clone of
// the server's set (see ephemerals.go).
func (s *Server) endSession(sess *Session) {
	if sess.dead {
		return
	}
	sess.dead = true
	sess.dropHeld()
	if sess.expiryTimer != nil {
		sess.expiryTimer.Stop()
		sess.expiryTimer = nil
	}
	t := s.begin()
	if sess.ephemerals != nil {
		doomed := sess.ephemerals.paths("")
		sess.ephemerals = nil
		for _, p := range doomed {
			if n := s.tree.get(p); n != nil { // deleteNodes skips NoNode
				s.deleteNode(t, n)
			}
		}
	}
	// The session's own watches fire too (a closing client hears of its
	// ephemerals' deletion before the close completes); then they go.
	s.commit(t)
	sess.dropWatches()
	delete(s.sessions, sess.id)
}

// expire makes the server expire the session now, as if its client had
// gone silent for the whole timeout. An attached, unpaused transport hears
// at once (Sink.Closed with ErrSessionExpired); a paused one when it
// resumes; a detached one when it tries to resume. Called with s.mu held.
func (s *Server) expire(sess *Session) {
	if sess.dead || s.closed {
		return
	}
	tell := sess.connected && !sess.paused
	sess.connected = false
	if sess.member != nil {
		sess.member.failSession(sess) // requests waiting for the member
	}
	s.endSession(sess)
	if tell {
		sess.sink.Closed(zksim.ErrSessionExpired)
	}
}

// SessionIDs returns the ids of the live sessions, in order.
func (s *Server) SessionIDs() []int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	ids := make([]int64, 0, len(s.sessions))
	for id := range s.sessions {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	return ids
}

// SetSequenceStart makes every node created from now on (but containers,
// whose reaper reads the counter) start its sequential children at the
// number start returns for its path, as SetNextSequence would at once.
// start is called under the server's lock and must not call the server;
// nil turns it off. Simulations start sequences just below the int32 wrap
// this way (sim.Config.NearWrap), so that code ordering sequential nodes
// meets 2147483647 followed by -2147483648.
func (s *Server) SetSequenceStart(start func(path string) int32) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.seqStart = start
}

// SetNextSequence makes the next sequential child created under path get
// sequence number next, as if that many child creates had happened: it sets
// the parent's internal child-create counter, so Stat.Cversion changes to
// match. It exists to test code against the int32 wrap of sequence numbers
// (after 2147483647 comes -2147483648) without two billion creates. On an
// ensemble's server it sets the committed node's counter, which the
// members that keep up read; a member that fell behind sets its own once
// it has applied the state the call was made on.
func (s *Server) SetNextSequence(path string, next int32) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := s.tree.get(path)
	if n == nil {
		return zksim.ErrNoNode
	}
	n.cversion = next
	if s.ens != nil {
		s.ens.setNextSequence(path, next)
	}
	return nil
}
