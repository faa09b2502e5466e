package zkmem

import (
	"crypto/subtle"
	"net/netip"
	"time"

	"github.com/zksim/zksim"
)

// A transport's sessions on an ensemble's members: a wire server that
// listens on one port per member opens and resumes each connection's
// session on the member whose port it came to, by ZooKeeper 3.8's rules
// (ZooKeeperServer.processConnectRequest).

// OpenSessionAt opens a new session, as Server.OpenSession does, attached
// to member i: its reads and watches are served from i's applied state
// (see Ensemble). A member that does not serve (crashed, or without a
// leader to follow) fails with ErrNoMember; so does a member in read-only
// mode when the client did not allow it (canBeReadOnly false: ZooKeeper's
// "Refusing session request for not-read-only client"); a member that has
// not applied lastZxid, the last zxid the client saw (0 for a client that
// saw none), fails with ErrZxidAhead. The session is
// read-only, which readOnly reports, when i serves read-only clients only:
// writes and sync then fail with zksim.ErrNotReadOnly. It panics for a
// member that does not exist. As Ensemble.Connect, the member applies the
// session's createSession before it answers.
func (e *Ensemble) OpenSessionAt(i int, timeout time.Duration, lastZxid int64, addr netip.Addr, sink Sink, canBeReadOnly bool) (sess *Session, readOnly bool, err error) {
	if !addr.IsValid() {
		return nil, false, errNoClientAddr
	}
	s := e.core
	redial := false
	defer func() {
		if redial { // after the unlock below
			e.redialWaiting()
		}
	}()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, false, zksim.ErrClosing
	}
	m := e.member(i)
	ro, err := e.admits(m, lastZxid, canBeReadOnly)
	if err != nil {
		return nil, false, err
	}
	sess = s.openSession(timeout, addr, sink)
	sess.view, sess.member, sess.readOnly = m.view, m, ro
	if !ro {
		redial = e.applyCreateSession(m)
	}
	if ro {
		// The leader does not hear of a read-only connection: the
		// session's clock runs.
		sess.startExpiry(sess.timeout)
	}
	return sess, ro, nil
}

// ResumeSessionAt attaches a new connection to session id, as
// Server.ResumeSession does, on member i: the session moves there, keeping
// its ephemerals (its watches come back with the client's setWatches).
// The member refuses, before looking at the session, as OpenSessionAt
// does, and with ErrZxidAhead a client that has seen a zxid the member has
// not applied ("client must try another server"): the session's current
// connection stays. An unknown or expired session, or a wrong password,
// fails with zksim.ErrSessionExpired, after closing the session's current
// connection, as ResumeSession does.
func (e *Ensemble) ResumeSessionAt(i int, id int64, password []byte, lastZxid int64, addr netip.Addr, sink Sink, canBeReadOnly bool) (sess *Session, readOnly bool, err error) {
	if !addr.IsValid() {
		return nil, false, errNoClientAddr
	}
	s := e.core
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, false, zksim.ErrClosing
	}
	m := e.member(i)
	ro, err := e.admits(m, lastZxid, canBeReadOnly)
	if err != nil {
		return nil, false, err
	}
	sess = s.sessions[id]
	if sess == nil || sess.dead {
		return nil, false, zksim.ErrSessionExpired
	}
	if sess.connected {
		s.disconnect(sess)
		sess.sink.Closed(zksim.ErrConnectionLoss)
	}
	if subtle.ConstantTimeCompare(password, sess.password) != 1 {
		return nil, false, zksim.ErrSessionExpired
	}
	sess.attach(sink)
	sess.resetAuth(addr)
	sess.view, sess.member, sess.readOnly = m.view, m, ro
	if ro {
		sess.startExpiry(sess.timeout)
	}
	return sess, ro, nil
}

// admits is member m's side of a handshake, before it looks at the
// session (ZooKeeperServer.processConnectRequest): it takes a client that
// saw lastZxid, and allows read-only mode or not, in read-only mode or
// not (ro), or refuses it with ErrNoMember (it does not serve, or only
// read-only clients and this is not one) or ErrZxidAhead (it has not
// applied lastZxid: the client must try another server). Every transport
// that attaches sessions to members goes through it. Called with core.mu
// held.
func (e *Ensemble) admits(m *member, lastZxid int64, canBeReadOnly bool) (ro bool, err error) {
	switch {
	case e.servesRW(m):
	case e.servesRO(m) && canBeReadOnly:
		ro = true
	default:
		return false, ErrNoMember
	}
	if lastZxid > m.view.zxid && !e.acceptAhead {
		return false, ErrZxidAhead
	}
	return ro, nil
}

// MemberStats returns member i's figures, as Server.Stats returns a
// server's: its node count, data size and watches are those of the state
// it applied, LastZxid the last zxid it applied; Sessions and Ephemerals
// are the ensemble's (the leader's session tracker).
func (e *Ensemble) MemberStats(i int) ServerStats {
	s := e.core
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.statsOf(e.member(i).view)
}

// Lagging reports whether member i is lagging (Lag): it applies no
// commits until CatchUp.
func (e *Ensemble) Lagging(i int) bool {
	e.core.mu.Lock()
	defer e.core.mu.Unlock()
	return e.member(i).lagging
}

// Observers returns how many of the members, the last ones, are observers
// (EnsembleOptions.Observers).
func (e *Ensemble) Observers() int { return e.opts.Observers }
