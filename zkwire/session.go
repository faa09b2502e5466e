package zkwire

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/zksim/zksim"
	"github.com/zksim/zksim/zkmem"
	"github.com/zksim/zksim/zkwire/jute"
)

// session is the wire server's side of one zkmem session: the connection
// it is attached to, if any, and its armed faults.
type session struct {
	srv     *Server
	rs      *zkmem.RemoteSession
	id      int64
	timeout time.Duration
	delay   atomic.Int64 // time.Duration: replies and notifications held this long

	mu         sync.Mutex // never held while calling zkmem
	conn       *conn      // the attached connection, nil when detached
	armed      []armedFault
	paused     bool
	resume     chan struct{} // closed when a pause ends
	pauseTimer *time.Timer
	sweep      *time.Timer
}

// anyOp arms a fault for whatever op comes next (but ping).
const anyOp int32 = -1 << 31

type armedFault struct {
	op   int32
	lose bool // else drop
}

type fault uint8

const (
	noFault fault = iota
	dropRequest
	loseReply
)

// event is the zkmem event sink: called with zkmem's lock held, in the
// server's order, it queues the notification on the attached connection.
func (ws *session) event(ev zksim.Event) {
	ws.mu.Lock()
	c := ws.conn
	ws.mu.Unlock()
	if c == nil {
		return
	}
	b := jute.AppendFrame(nil,
		&jute.ReplyHeader{Xid: jute.XidNotification, Zxid: -1},
		&jute.WatcherEvent{Type: int32(ev.Type), State: jute.StateSyncConnected, Path: ev.Path})
	c.enqueue(b, false)
}

// attach makes c the session's connection and returns the one it replaces.
func (ws *session) attach(c *conn) *conn {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	old := ws.conn
	ws.conn = c
	if ws.sweep != nil {
		ws.sweep.Stop()
		ws.sweep = nil
	}
	return old
}

// detach is called when c closes; it reports whether c was the session's
// connection.
func (ws *session) detach(c *conn) bool {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	if ws.conn != c {
		return false
	}
	ws.conn = nil
	// zkmem expires the session unless a connection comes back in time;
	// then the wire server forgets it too.
	if ws.sweep != nil {
		ws.sweep.Stop()
	}
	ws.sweep = time.AfterFunc(ws.timeout+ws.timeout/2, ws.sweepIfGone)
	return true
}

// release unhooks c from the session without starting the expiry sweep:
// the session is ending.
func (ws *session) release(c *conn) {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	if ws.conn == c {
		ws.conn = nil
	}
}

func (ws *session) sweepIfGone() {
	if !ws.rs.Alive() {
		ws.srv.dropSession(ws)
	}
}

func (ws *session) current() *conn {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	return ws.conn
}

// takeFault consumes the first fault armed for op.
func (ws *session) takeFault(op int32) fault {
	if op == jute.OpPing {
		return noFault
	}
	ws.mu.Lock()
	defer ws.mu.Unlock()
	for i, a := range ws.armed {
		if a.op == anyOp || a.op == op {
			ws.armed = append(ws.armed[:i], ws.armed[i+1:]...)
			if a.lose {
				return loseReply
			}
			return dropRequest
		}
	}
	return noFault
}

func (ws *session) arm(op int32, lose bool) {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	ws.armed = append(ws.armed, armedFault{op: op, lose: lose})
}

// pause makes the server stop hearing the client: its connection is not
// read, so no ping is answered, and the session expires after its timeout
// unless resumed.
func (ws *session) pause() {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	if ws.paused {
		return
	}
	ws.paused = true
	ws.resume = make(chan struct{})
	ws.pauseTimer = time.AfterFunc(ws.timeout, ws.expireIfPaused)
}

func (ws *session) expireIfPaused() {
	ws.mu.Lock()
	paused := ws.paused
	ws.mu.Unlock()
	if paused {
		ws.expire()
	}
}

func (ws *session) unpause() {
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

// expire makes zkmem expire the session and closes its connection; the
// client learns when it reconnects.
func (ws *session) expire() bool {
	ok := ws.rs.Expire()
	ws.end()
	return ok
}

// end forgets a session that is closed or expired and closes its
// connection.
func (ws *session) end() {
	ws.mu.Lock()
	c := ws.conn
	ws.conn = nil
	if ws.paused {
		ws.paused = false
		close(ws.resume)
	}
	ws.mu.Unlock()
	ws.stopTimers()
	ws.srv.dropSession(ws)
	if c != nil {
		c.close()
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
