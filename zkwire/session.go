package zkwire

import (
	"sync"
	"time"

	"github.com/zksim/zksim/zkmem"
)

// session is the wire server's note of one zkmem session: the connection
// attached to it, if any, and whether the server has stopped reading it
// (Control.Pause). The session itself, its faults and its expiry live in
// zkmem.
//
// Lock order: session.mu may be held while calling zkmem, and is never
// taken from a zkmem Sink callback.
type session struct {
	srv     *Server
	id      int64
	timeout time.Duration

	mu         sync.Mutex
	zs         *zkmem.Session
	conn       *conn // the attached connection, nil when detached
	paused     bool
	resume     chan struct{} // closed when a pause ends
	pauseTimer *time.Timer
	sweep      *time.Timer // forgets the note once zkmem expired the detached session
}

// sessionFor returns the note of session id, making one if needed.
func (s *Server) sessionFor(id int64, timeout time.Duration) *session {
	s.mu.Lock()
	defer s.mu.Unlock()
	ws := s.sessions[id]
	if ws == nil {
		ws = &session{srv: s, id: id, timeout: timeout}
		s.sessions[id] = ws
	}
	return ws
}

func (s *Server) session(id int64) *session {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.sessions[id]
}

// dropSession drops the note ws, reporting whether it was there.
func (s *Server) dropSession(ws *session) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.sessions[ws.id] == ws {
		delete(s.sessions, ws.id)
		return true
	}
	return false
}

func (ws *session) current() *conn {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	return ws.conn
}

// detach runs when c closes: if c is still the session's connection, zkmem
// is told (the session lives until its timeout). Holding ws.mu orders it
// with a resume from a new connection.
func (ws *session) detach(c *conn) {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	if ws.conn != c {
		return
	}
	ws.conn = nil
	if ws.zs != nil {
		ws.zs.Detach()
	}
	if !ws.paused {
		ws.srv.forgetIfGone(ws)
	}
	// zkmem expires the session unless a connection resumes it in time;
	// then its note goes too.
	if ws.sweep != nil {
		ws.sweep.Stop()
	}
	ws.sweep = time.AfterFunc(ws.timeout+time.Second, func() { ws.srv.forgetIfGone(ws) })
}

// forgetIfGone drops the note of a session zkmem no longer has, and logs
// its expiry unless its client closed it.
func (s *Server) forgetIfGone(ws *session) {
	if s.zk.Control(ws.id) == nil && s.dropSession(ws) {
		s.noteEnded(ws.id)
	}
}

// pause stops the server reading the session's connection; the session
// expires after its timeout unless resume comes first, and then its
// connection closes.
func (ws *session) pause(ctl *zkmem.Control) {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	if ws.paused {
		return
	}
	ctl.Pause()
	ws.paused = true
	ws.resume = make(chan struct{})
	ws.pauseTimer = time.AfterFunc(ws.timeout, func() { ws.expirePaused(ctl) })
}

func (ws *session) expirePaused(ctl *zkmem.Control) {
	ws.mu.Lock()
	if !ws.paused {
		ws.mu.Unlock()
		return
	}
	ws.paused = false
	close(ws.resume)
	ws.pauseTimer = nil
	c := ws.conn
	ctl.Expire() // zkmem's own clock may have done it already
	ws.mu.Unlock()
	if c != nil {
		c.close()
	}
	ws.srv.forgetIfGone(ws)
}

// unpause ends a pause; zkmem's Resume tells the connection if the
// session expired meanwhile.
func (ws *session) unpause(ctl *zkmem.Control) {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	if !ws.paused {
		return
	}
	ws.paused = false
	close(ws.resume)
	if ws.pauseTimer != nil {
		ws.pauseTimer.Stop()
		ws.pauseTimer = nil
	}
	ctl.Resume()
}

// waitIfPaused blocks while the session is paused; false if done closed
// first.
func (ws *session) waitIfPaused(done <-chan struct{}) bool {
	ws.mu.Lock()
	if !ws.paused {
		ws.mu.Unlock()
		return true
	}
	ch := ws.resume
	ws.mu.Unlock()
	select {
	case <-ch:
		return true
	case <-done:
		return false
	}
}

func (ws *session) stopTimers() {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	if ws.pauseTimer != nil {
		ws.pauseTimer.Stop()
		ws.pauseTimer = nil
	}
	if ws.sweep != nil {
		ws.sweep.Stop()
		ws.sweep = nil
	}
}
