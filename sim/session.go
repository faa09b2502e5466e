package sim

import (
	"time"

	"github.com/zksim/zksim"
	"github.com/zksim/zksim/zkmem"
)

// itemKind is the kind of an entry of a session's outgoing FIFO.
type itemKind uint8

const (
	itemReply     itemKind = iota // the reply to a request
	itemEvent                     // a watch notification, held back from zkmem
	itemState                     // a session state change
	itemReconnect                 // the client reconnects when it gets here
)

// item is one entry of a session's outgoing FIFO.
type item struct {
	kind  itemKind
	req   *request
	ev    zksim.Event
	state zksim.State
	wire  *wireItem // a frame or a close on a go-zookeeper client's connection
}

// session is the scheduler's record of one client.
type session struct {
	w    *World
	idx  int
	name string
	zc   *zkmem.Conn
	ctl  *zkmem.Control // its session's fault plane
	conn *Conn
	wire *wireClient // a go-zookeeper client (zc and conn are nil)
	rand clientRand  // the client's random stream (rand.go)
	prio int64       // its PCT priority (pct.go)
	// renew is the Renewing client running on this session, if any.
	renew *Renewing

	// deliver hands zc a watch event held in the FIFO.
	deliver func(zksim.Event)
	// applying is the request being applied, while it is.
	applying *request

	// Guarded by w.mu: touched by client goroutines and server callbacks.
	inbox []*request // requests sent since the last step
	// spareInbox is the inbox the last collect emptied, to be the next
	// (owned by the World's goroutine: not guarded by w.mu).
	spareInbox []*request
	// inboxes are the arrays of inbox and spareInbox while they hold at
	// most one request: in the session's record, not one more cache miss
	// a request (deque.go says why).
	inboxes [2][1]*request
	// spare is a request record the client is done with, for its next
	// call (see Conn.call).
	spare *request
	fifo  deque[item] // what the server sent, not yet delivered
	dirty bool        // in w.dirty

	// Owned by the scheduler.
	pending   deque[*request] // requests the server has not taken yet
	inService *request        // the request being served (cost model)

	paused       bool
	delayedUntil time.Duration // deliveries wait until then
	down         bool          // the server side of the connection is down
	downSince    time.Duration
	gen          int  // bumped when the connection comes back or a pause ends
	hiddenDrop   bool // dropped while paused: the client has not been told
	stayDown     bool // disconnected until Reconnect
	gone         bool // expired or closed, as the server sees it
	failAuth     bool // its next reconnection fails authentication (authfail.go)
	authFailed   bool // its authentication failed: the client is dead
}

// newSession makes the record of client idx.
func newSession(w *World, idx int) *session {
	s := &session{w: w, idx: idx}
	s.inbox, s.spareInbox = s.inboxes[0][:0], s.inboxes[1][:0]
	return s
}

// decide is the session's fault hook in zkmem's fault plane, installed
// once: the request being applied gets the fault armed for it, else the one
// the policy gave it when the server admitted it; the trace notes which.
// Other requests (a reconnection's setWatches) keep the armed fault. It is
// called with the server's lock held, on the World's goroutine.
func (s *session) decide(r zkmem.Request, armed zkmem.ConnFault) zkmem.ConnFault {
	req := s.applying
	if req == nil || r.Op != req.desc.Op {
		return armed
	}
	s.applying = nil
	f := armed
	if f == zkmem.NoFault {
		f = req.fate.Fault
	}
	req.hit = f
	return f
}

// deliverEvent hands the client a watch event from the FIFO.
func (s *session) deliverEvent(ev zksim.Event) { s.deliver(ev) }

// hold receives the watch events zkmem would deliver to this session. It is
// called with the server's lock held, from whichever goroutine made the
// server act.
func (s *session) hold(ev zksim.Event, deliver func(zksim.Event)) {
	w := s.w
	w.mu.Lock()
	s.deliver = deliver
	s.fifo.push(item{kind: itemEvent, ev: ev})
	if !s.dirty {
		s.dirty = true
		w.dirty = append(w.dirty, s)
	}
	w.mu.Unlock()
	w.signal()
}

// push appends an item to the FIFO (at must be -1) or inserts it at
// position at. Called by the scheduler.
func (s *session) push(at int, it item) {
	s.w.mu.Lock()
	if at < 0 || at >= s.fifo.len() {
		s.fifo.push(it)
	} else {
		s.fifo.insert(at, it)
	}
	s.w.mu.Unlock()
}

func (s *session) fifoLen() int {
	s.w.mu.Lock()
	defer s.w.mu.Unlock()
	return s.fifo.len()
}

// refresh recomputes whether the session has an enabled event.
func (w *World) refresh(s *session) {
	if s.wire != nil {
		w.purgeWire(s)
	}
	n := s.fifoLen()
	w.deliver.set(s.idx, n > 0 && !s.paused && w.now >= s.delayedUntil)
	w.applyOK.set(s.idx, s.pending.len() > 0 && !s.paused && s.inService == nil && !s.wireHeld())
}

// knownState is the state of the zkmem connection of s as the scheduler
// last followed it (Connected, Disconnected, or AuthFailed for good), to
// compare with what zkmem did in an action since.
func (s *session) knownState() zksim.State {
	switch {
	case s.authFailed:
		return zksim.StateAuthFailed
	case s.down:
		return zksim.StateDisconnected
	}
	return zksim.StateConnected
}
