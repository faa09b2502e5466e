package zkmem

import "github.com/zksim/zksim"

// MoveSession makes member i serve session id, attached to a transport
// that opened or resumed it with Server.OpenSession or ResumeSession
// (which attach it to the leader): a transport that knows which member
// its client's connection reached (a simulated connection to one member's
// address) moves the session there right after the handshake, and from
// then on the session's reads, watches and the replies that wait for a
// member are that member's, as for an in-process Conn. It fails with
// ErrNoMember if member i does not serve clients (crashed, looking, or in
// read-only mode), with zksim.ErrSessionExpired if the session is not
// live, and with zksim.ErrConnectionLoss if it is not attached.
//
// The transport refuses a client that has seen a zxid the member has not
// applied (Ensemble.Applied) before it resumes the session, as a member
// does before it looks at the session.
func (e *Ensemble) MoveSession(id int64, i int) error {
	s := e.core
	s.mu.Lock()
	defer s.mu.Unlock()
	m := e.member(i)
	sess := s.sessions[id]
	switch {
	case sess == nil || sess.dead:
		return zksim.ErrSessionExpired
	case !sess.connected:
		return zksim.ErrConnectionLoss
	case !e.servesRW(m):
		return ErrNoMember
	case sess.member == m:
		return nil
	}
	if old := sess.member; old != nil {
		// Nothing waits there: the handshake just attached the session.
		old.failSession(sess)
	}
	sess.dropWatches()
	sess.member, sess.view, sess.readOnly = m, m.view, false
	return nil
}
