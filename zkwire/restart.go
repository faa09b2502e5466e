package zkwire

import "time"

// Reset makes the server a clean one for the next test, on the same
// listeners: every connection closes, every session ends as if it expired
// (a client that reconnects learns it), the zkmem server's tree is emptied
// back to the /zookeeper system nodes (zkmem.Server.Reset: zxids and
// session ids go on counting), and what Sessions reports is forgotten.
// Armed faults, pauses and delays go with their sessions. With WithZK, the
// caller's zkmem server is reset too. Reset on a closed server does
// nothing. It returns once the connections are closed; their goroutines
// end by themselves.
func (s *Server) Reset() {
	conns, notes, ok := s.takeConns(0, true)
	if !ok {
		return
	}
	for _, ws := range notes {
		ws.stopTimers()
	}
	for _, c := range conns {
		c.close()
	}
	s.zk.Reset() // drops the replies a Delay held, which releases their readers
	s.ledger.reset()
	s.note(nil, "reset", "", "")
}

// Restart makes the server behave as a real one restarted from its
// snapshot: every connection drops, connections are refused for down
// (accepted and closed at once, before the handshake), then the server
// serves again with the same tree and sessions. The sessions are detached
// meanwhile, so each expires unless a client resumes it within its timeout
// of the drop: a down longer than a session's timeout expires it. A
// pause ends (the restarted server hears the client again); replies a
// Delay held are lost with their connection; faults armed for a next
// request stay armed. The control endpoint keeps answering. Restart
// returns at once, once the connections are dropped; Restart again before
// the server is back extends the down time if it ends later.
//
// A real server gives the sessions it reloads a fresh timeout from the
// moment it is back; here their clocks run from the drop, so that a
// restart longer than a session's timeout expires it.
func (s *Server) Restart(down time.Duration) {
	conns, notes, ok := s.takeConns(down, false)
	if !ok {
		return
	}
	s.logf("restart: connections refused for %v", down)
	s.note(nil, "restart", "", "")
	for _, c := range conns {
		c.close()
		if ws := c.sess.Load(); ws != nil {
			ws.detach(c) // zkmem's expiry clock starts now
		}
	}
	for _, ws := range notes {
		if zc := s.zk.Control(ws.id); zc != nil {
			ws.unpause(zc)
		}
	}
}

// takeConns lists the connections and session notes, refusing connections
// for down from now; forget also drops the notes. ok is false on a closed
// server.
func (s *Server) takeConns(down time.Duration, forget bool) (conns []*conn, notes []*session, ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, nil, false
	}
	if until := time.Now().Add(down); down > 0 && until.After(s.downUntil) {
		s.downUntil = until
	}
	for c := range s.conns {
		conns = append(conns, c)
	}
	for _, ws := range s.sessions {
		notes = append(notes, ws)
	}
	if forget {
		s.sessions = make(map[int64]*session)
	}
	return conns, notes, true
}
