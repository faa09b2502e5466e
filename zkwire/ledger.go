package zkwire

import (
	"fmt"
	"sort"
	"sync"
	"time"

	"github.com/zksim/zksim/zkmem"
)

// SessionStatus is what the server can tell of one session (GET /sessions
// and Server.Sessions): who holds it, in which state, under which faults.
type SessionStatus struct {
	ID  int64  `json:"id"`  // decimal in JSON
	Hex string `json:"hex"` // the id as ZooKeeper logs it: "0x100000000000000"
	// Client is the address of the session's latest connection; "" for a
	// session opened in-process on the zkmem server.
	Client string `json:"client"`
	// State is "connected", "disconnected" (no connection: the session
	// lives until its timeout unless a client resumes it), "paused"
	// (Control.Pause), "expired" or "closed" (by its client).
	State     string `json:"state"`
	TimeoutMs int64  `json:"timeoutMs"` // negotiated
	// Armed lists the faults waiting for a request, and a Delay holding
	// the session's replies.
	Armed []ArmedFault `json:"armed"`
	// Fired lists the faults that hit the session so far, oldest first
	// (the latest 100).
	Fired []FiredFault `json:"fired"`
	// LastOp is the op name of the session's last request (pings aside);
	// "" before the first.
	LastOp string `json:"lastOp"`
}

// ArmedFault is a fault waiting to fire: "lose-next-reply" or
// "drop-next-request" for the next Count requests with Op ("" for any) on
// Path ("" for any; see Aim), or "delay": replies and notifications held
// until Until (Held of them so far).
type ArmedFault struct {
	Fault string     `json:"fault"`
	Op    string     `json:"op,omitempty"`
	Path  string     `json:"path,omitempty"`
	Count int        `json:"count,omitempty"`
	Until *time.Time `json:"until,omitempty"`
	Held  int        `json:"held,omitempty"`
}

// FiredFault is a fault that hit a session: "lose-next-reply" or
// "drop-next-request" when a request met it (its Op and Path), and
// "expire", "disconnect", "pause", "resume" and "delay" when the control
// ordered them.
type FiredFault struct {
	Fault string    `json:"fault"`
	Op    string    `json:"op,omitempty"`
	Path  string    `json:"path,omitempty"`
	At    time.Time `json:"at"`
}

// maxFired bounds the faults a record keeps; maxEnded the records of
// ended sessions the server keeps.
const (
	maxFired = 100
	maxEnded = 1000
)

// record is the wire server's account of one session, kept after it ends
// so that Sessions can say it expired or closed.
type record struct {
	id int64

	mu      sync.Mutex
	client  string
	timeout time.Duration
	closed  bool // ended by its client's closeSession
	ended   bool // its end is in the event log
	fired   []FiredFault
	lastOp  string
}

// ledger holds the records, by session id.
type ledger struct {
	mu      sync.Mutex
	records map[int64]*record
}

// record returns the record of session id, making one if needed; a
// non-empty client becomes its client address, a non-zero timeout its
// negotiated timeout.
func (l *ledger) record(id int64, client string, timeout time.Duration) *record {
	l.mu.Lock()
	r := l.records[id]
	if r == nil {
		if l.records == nil {
			l.records = make(map[int64]*record)
		}
		r = &record{id: id}
		l.records[id] = r
	}
	l.mu.Unlock()
	r.mu.Lock()
	if client != "" {
		r.client = client
	}
	if timeout != 0 {
		r.timeout = timeout
	}
	r.mu.Unlock()
	return r
}

// lookup returns the record of session id, nil if none.
func (l *ledger) lookup(id int64) *record {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.records[id]
}

func (l *ledger) reset() {
	l.mu.Lock()
	l.records = nil
	l.mu.Unlock()
}

// prune drops the records of ended sessions but the maxEnded latest.
func (l *ledger) prune(zk *zkmem.Server) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.records) <= 2*maxEnded {
		return
	}
	var ended []int64
	for id := range l.records {
		if zk.Control(id) == nil {
			ended = append(ended, id)
		}
	}
	sort.Slice(ended, func(i, j int) bool { return ended[i] < ended[j] })
	for len(ended) > maxEnded {
		delete(l.records, ended[0])
		ended = ended[1:]
	}
}

func (r *record) fire(fault, op, path string, at time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.fired) == maxFired {
		r.fired = append(r.fired[:0], r.fired[1:]...)
	}
	r.fired = append(r.fired, FiredFault{Fault: fault, Op: op, Path: path, At: at})
}

func (r *record) setLastOp(op string) {
	r.mu.Lock()
	r.lastOp = op
	r.mu.Unlock()
}

func (r *record) setClosed() {
	r.mu.Lock()
	r.closed, r.ended = true, true
	r.mu.Unlock()
}

// noteEnded logs the expiry of session id, which zkmem no longer has,
// once, unless its client closed it.
func (s *Server) noteEnded(id int64) {
	r := s.ledger.lookup(id)
	if r == nil {
		return
	}
	r.mu.Lock()
	first := !r.ended
	r.ended = true
	r.mu.Unlock()
	if first {
		s.note(r, "expired", "", "")
	}
}

// faultName is the control endpoint's name of a fault zkmem decided.
func faultName(f zkmem.ConnFault) string {
	switch f {
	case zkmem.LoseReply:
		return "lose-next-reply"
	case zkmem.DropRequest:
		return "drop-next-request"
	}
	return f.String()
}

// Sessions reports every session the server served or its zkmem server
// holds, by id: the live ones, and the latest ended ones (up to 1,000)
// with how they ended.
func (s *Server) Sessions() []SessionStatus {
	s.ledger.mu.Lock()
	recs := make(map[int64]*record, len(s.ledger.records))
	for id, r := range s.ledger.records {
		recs[id] = r
	}
	s.ledger.mu.Unlock()
	for _, id := range s.zk.SessionIDs() {
		if recs[id] == nil {
			recs[id] = &record{id: id}
		}
	}
	ids := make([]int64, 0, len(recs))
	for id := range recs {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	out := make([]SessionStatus, 0, len(ids))
	for _, id := range ids {
		out = append(out, s.status(recs[id]))
	}
	return out
}

// status reports one session.
func (s *Server) status(r *record) SessionStatus {
	r.mu.Lock()
	st := SessionStatus{
		ID:        r.id,
		Hex:       fmt.Sprintf("0x%x", uint64(r.id)),
		Client:    r.client,
		TimeoutMs: r.timeout.Milliseconds(),
		Armed:     []ArmedFault{},
		Fired:     append([]FiredFault{}, r.fired...),
		LastOp:    r.lastOp,
	}
	closed := r.closed
	r.mu.Unlock()
	zc := s.zk.Control(r.id)
	var info zkmem.SessionInfo
	if zc != nil {
		info = zc.Info()
	}
	switch {
	case zc == nil || info.Ended:
		st.State = "expired"
		if closed {
			st.State = "closed"
		}
		return st
	case info.Paused:
		st.State = "paused"
	case info.Connected:
		st.State = "connected"
	default:
		st.State = "disconnected"
	}
	st.TimeoutMs = info.Timeout.Milliseconds()
	for _, a := range info.Armed {
		f := ArmedFault{Fault: faultName(a.Fault), Path: a.Path, Count: a.Count}
		if a.Op != zkmem.OpAny {
			f.Op = a.Op.String()
		}
		st.Armed = append(st.Armed, f)
	}
	if !info.DelayedUntil.IsZero() {
		until := info.DelayedUntil
		st.Armed = append(st.Armed, ArmedFault{Fault: "delay", Until: &until, Held: info.Held})
	}
	return st
}
