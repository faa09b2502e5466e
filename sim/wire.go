package sim

import (
	"fmt"
	"io"
	"log"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/zksim/zksim/zkmem"
	"github.com/zksim/zksim/zkwire"
)

// go-zookeeper clients in a World: a real *zk.Conn, dialling in-memory
// connections (pipes, wirepipe.go) into zkwire's server logic, served frame
// by frame (zkwire.FrameConn). What the client writes is cut into frames;
// each is a request of the client's session, applied by the scheduler as a
// step; what the server sends (replies, notifications, the handshake's
// answer, the close of the connection) goes into the session's FIFO and
// reaches the client's reads when the scheduler delivers it.

// wireAddr is the one server address every go-zookeeper client is given
// on a standalone server (an ensemble's members have theirs: memberAddr).
const wireAddr = "zksim:2181"

// wireClient is the scheduler's record of a go-zookeeper client.
type wireClient struct {
	zc *zk.Conn

	// Owned by the scheduler.
	cur      *pipe         // the connection the session is attached to
	sid      int64         // the current session's id, 0 before the first
	timeout  time.Duration // its negotiated timeout
	heardAt  time.Duration // when the server last heard from the client
	checking bool          // an expiry check is on the timeline
	serving  *request      // the frame being applied (or waiting for its member)
	parked   *parked       // the frame waiting for its member, on an ensemble
	addrs    []string      // the server list it was given, in its order
	// spare is the record of a frame whose reply was delivered, for the
	// client's next frame; guarded by w.mu.
	spare *wireFrame

	// Guarded by w.mu: set by the scheduler, read by the client's dialer.
	dials       int           // connections dialled so far
	dialDown    bool          // the next dial reaches a crashed member: refused
	refuse      bool          // dials fail until Reconnect
	refuseUntil time.Duration // dials fail until then
	pipes       []*pipe       // connections the client may still use
}

// wireReq is what a frame adds to a request.
type wireReq struct {
	pipe    *pipe
	body    []byte        // without its length prefix
	frame   zkwire.Frame  // body parsed (not for the handshake and a hangup), served as is
	connect bool          // the handshake's ConnectRequest
	hangup  bool          // not a frame: the client closed the connection
	gate    chan struct{} // not a frame: the client is about to dial
	sid     int64         // the handshake: the session asked for
	seen    int64         // the handshake: the last zxid the client saw
	dialTo  string        // a dial: the member it reaches ("m2"), on an ensemble
	replied bool
	resp    zkmem.Response // the reply, as the reply hook saw it
	rec     *wireFrame     // the record it is part of, nil for what is not a frame
	replies int            // FIFO items that refer to it (guarded by w.mu)
}

// wireItem is a frame the server sent, or the close of its connection.
type wireItem struct {
	pipe  *pipe
	frame []byte // nil for the close
	label string // what the trace says when it is delivered
}

// Kinds of FIFO items of a go-zookeeper client.
const (
	itemFrame itemKind = 100 + iota // a frame from the server
	itemClose                       // the server closed the connection
)

// ConnectZK connects a go-zookeeper client to the World: a real *zk.Conn
// from zk.Connect, whose connections are in-memory pipes into zkwire's
// server logic inside the bubble. Its goroutines, timers and pings run on
// virtual time; every frame it sends is a request the scheduler applies as
// a step, every frame the server sends it (replies, watch notifications)
// a delivery step, so the fault catalogue, the seeded schedule and the
// trace cover it as they cover a native Conn. The client is named after
// its index, as native clients are, and shares the World with them.
//
// The client is given one server address (on an ensemble, every member's,
// in an order drawn from the seed as for a native client: see
// ensembleZK) and asks for Config.SessionTimeout; it connects (and, after
// a fault, reconnects) by itself, as go-zookeeper does: its requests wait
// until then. opts are go-zookeeper's options (zk.WithEventCallback,
// zk.WithLogger, ...), applied after the World's own: a dialer, a host
// provider with DNSHostProvider's behaviour for its list (so a
// reconnection to a one-server list waits a second, as it would), and a
// logger that discards. Call it from the World's goroutine. Close closes
// the client (World.Close does for every client still open).
func (w *World) ConnectZK(opts ...func(*zk.Conn)) (*zk.Conn, <-chan zk.Event, error) {
	if w.isClosed() {
		return nil, nil, ErrClosed
	}
	if w.wsrv == nil {
		if w.ens != nil {
			w.wsrv = zkwire.NewEnsemble(w.ens.e, zkwire.Options{})
		} else {
			w.wsrv = zkwire.New(w.srv, zkwire.Options{})
		}
	}
	s := newSession(w, len(w.sessions))
	s.wire = &wireClient{addrs: []string{wireAddr}}
	s.name = fmt.Sprintf("c%d", s.idx)
	s.rand.init(w.cfg.Seed, s.idx)
	s.prio = w.pct.priority()
	if w.ens != nil {
		s.wire.addrs = w.memberAddrs(s.idx)
	}
	all := []func(*zk.Conn){
		func(c *zk.Conn) { zk.WithDialer(s.wire.dialer(s))(c) },
		func(c *zk.Conn) { zk.WithHostProvider(&hostList{s: s, addrs: s.wire.addrs})(c) },
		func(c *zk.Conn) { zk.WithLogger(log.New(io.Discard, "", 0))(c) },
	}
	all = append(all, opts...)
	w.sessions = append(w.sessions, s)
	w.applyOK.grow(len(w.sessions))
	w.deliver.grow(len(w.sessions))
	zc, events, err := zk.Connect(s.wire.addrs, w.cfg.SessionTimeout, zkOptions(zk.WithDialer, all)...)
	if err != nil {
		return nil, nil, err
	}
	s.wire.zc = zc
	w.notef("%s go-zookeeper client, session timeout %v", s.name, w.cfg.SessionTimeout)
	return zc, events, nil
}

// ZK returns client i's go-zookeeper connection, nil for a native client.
func (w *World) ZK(i int) *zk.Conn {
	if wc := w.sessions[i].wire; wc != nil {
		return wc.zc
	}
	return nil
}

// zkOptions turns functions into go-zookeeper's (unexported) option type,
// which one of its option constructors, with, names.
func zkOptions[O ~func(*zk.Conn), A any](with func(A) O, fs []func(*zk.Conn)) []O {
	out := make([]O, len(fs))
	for i, f := range fs {
		out[i] = O(f)
	}
	return out
}

// fateable reports whether the policy decides the fate of req: a client
// request on the connection the session is attached to (not the
// handshake, a ping, setWatches or closeSession).
func (wc *wireClient) fateable(req *request) bool {
	r := req.wire
	if r.connect || r.pipe == nil || r.pipe != wc.cur {
		return false
	}
	switch req.desc.Op {
	case zkmem.OpPing, zkmem.OpSetWatches, zkmem.OpCloseSession, zkmem.OpAny:
		return false
	}
	return true
}

// executeWire applies a frame of a go-zookeeper client: the server reads
// and runs it.
func (w *World) executeWire(s *session, req *request) {
	wc, r := s.wire, req.wire
	p := r.pipe
	if p.srvClosed {
		// Served after the server closed the connection (it was in
		// service): the server reads no more of it.
		w.stepf("%s discard %s %s: connection %d closed", s.name, req.name, req.desc.Path, p.n)
		return
	}
	if p.fc == nil && !w.newFrameConn(s, p, r) {
		return
	}
	wc.heardAt = w.now
	wc.serving = req
	s.applying = req
	if w.wireMayWait(req) {
		w.serveWaiting(s, req)
		return
	}
	var lag *lagSnap
	if r.connect {
		lag = w.lagSnapshot()
	}
	p.fc.ServeFrame(r.body, &r.frame)
	w.servedWire(s, req, false)
	w.afterSessionOpened(s, lag)
}

// servedWire follows a frame the server has run: its connection, its
// fault, the session it opened, its outcome in the trace (a note for a
// frame that waited for its member).
func (w *World) servedWire(s *session, req *request, waited bool) {
	wc, r := s.wire, req.wire
	p := r.pipe
	s.applying, wc.serving = nil, nil
	if p.fc.Over() && wc.cur == p {
		wc.cur = nil
	}
	if req.hit != zkmem.NoFault {
		req.note = " [" + req.hit.String() + "]"
		wc.refuseDials(w, w.cfg.ReconnectDelay)
	}
	if r.connect {
		w.connectedWire(s, req)
		return
	}
	if req.desc.Op == zkmem.OpCloseSession && r.replied {
		s.gone = true
	}
	switch req.desc.Op { // the requests of the client's calls, not its session's upkeep
	case zkmem.OpPing, zkmem.OpSetWatches, zkmem.OpCloseSession:
	default:
		w.coverApplied(req)
	}
	switch {
	case waited:
		w.notef("%s answer %s %s%s -> %s%s", s.name, req.name, req.desc.Path, req.watchMark(), wireSummary(req), req.note)
	case w.trace.on:
		w.stepf("%s apply %s %s%s -> %s%s", s.name, req.name, req.desc.Path, req.watchMark(), wireSummary(req), req.note)
	default:
		w.step++
	}
}

// onWireReply is the reply hook of every pipe: the canonical order of a
// getChildren reply's names (or a shuffle), and the outcome for the trace.
func (w *World) onWireReply(s *session, q *zkmem.Request, resp *zkmem.Response) {
	req := s.wire.serving
	if q.Op == zkmem.OpGetChildren && len(resp.Children) > 0 {
		sortChildren(resp.Children)
		if req != nil && req.fate.Shuffle {
			w.frng.Shuffle(len(resp.Children), func(i, j int) {
				resp.Children[i], resp.Children[j] = resp.Children[j], resp.Children[i]
			})
			req.note += " [shuffled]"
		}
	}
	if req != nil {
		req.wire.replied = true
		req.wire.resp = *resp
	}
}

// connectedWire follows a handshake: a new session, the session resumed,
// or refused.
func (w *World) connectedWire(s *session, req *request) {
	wc, p := s.wire, req.wire.pipe
	zs := p.fc.Session()
	if zs == nil || p.fc.Over() {
		if refused := p.fc.Refused(); refused != nil && w.ens != nil {
			// Closed without an answer, the session untouched: the
			// client tries its next server.
			w.stepf("%s apply connect #%d session %#x -> refused: %s", s.name, p.n, req.wire.sid, w.refusal(p, req.wire, refused))
			return
		}
		if req.wire.sid != 0 && wc.sid == req.wire.sid {
			s.gone = true
		}
		w.stepf("%s apply connect #%d session %#x -> refused", s.name, p.n, req.wire.sid)
		return
	}
	if zs.ID() != wc.sid {
		wc.sid, wc.timeout = zs.ID(), zs.Timeout()
		s.ctl = w.srv.Control(zs.ID())
		s.ctl.SetFaultHook(s.decide)
		s.gone = false
	}
	wc.cur = p
	on := ""
	if w.ens != nil {
		on = fmt.Sprintf(" on m%d", p.member)
	}
	w.stepf("%s apply connect #%d session %#x -> session %#x timeout %v%s", s.name, p.n, req.wire.sid, zs.ID(), zs.Timeout(), on)
	if !wc.checking {
		wc.checking = true
		w.schedule(wc.heardAt+wc.timeout-time.Nanosecond, &timed{kind: tExpire, s: s})
	}
}

// checkWire is a go-zookeeper client's expiry check: the server expires a
// session it has not heard from for its timeout (one nanosecond before
// zkmem's own clock would).
func (w *World) checkWire(s *session) {
	wc := s.wire
	wc.checking = false
	if s.gone || wc.sid == 0 {
		return
	}
	if w.ens != nil && (wc.parked != nil || w.ens.e.Leader() < 0) {
		// Heard of, as far as the server's clock goes: its frames queue
		// behind the call that waits for its member (a real server reads
		// them, and touches the session); or no leader tracks sessions.
		wc.heardAt = w.now
	}
	if due := wc.heardAt + wc.timeout - time.Nanosecond; due > w.now {
		wc.checking = true
		w.schedule(due, &timed{kind: tExpire, s: s})
		return
	}
	w.expireWire(s)
	w.stepf("%s session expired by the server (silent for %v)", s.name, wc.timeout)
}

// expireWire makes the server expire a go-zookeeper client's session: its
// connection closes; the client finds out when it reconnects.
func (w *World) expireWire(s *session) {
	s.ctl.Expire()
	w.settleParked()
	s.gone = true
	s.wire.cur = nil
	s.wire.refuseDials(w, w.cfg.ReconnectDelay)
}

// disconnectWire closes a go-zookeeper client's connection on the server's
// side; it may dial again after reconnectAfter (at Reconnect if negative).
func (w *World) disconnectWire(s *session, reconnectAfter time.Duration) error {
	wc := s.wire
	if s.gone {
		return ErrGone
	}
	if wc.cur != nil && s.ctl != nil {
		s.ctl.Disconnect()
		w.settleParked() // before the connection's frames are touched
		wc.cur = nil
	}
	// A connection still in its handshake goes too.
	w.mu.Lock()
	pipes := append([]*pipe(nil), wc.pipes...)
	w.mu.Unlock()
	for _, p := range pipes {
		(*pipeOut)(p).Close()
		if p.fc != nil {
			p.fc.Hangup()
		}
	}
	wc.refuseDials(w, reconnectAfter)
	w.refresh(s)
	return nil
}

// dialWire lets a go-zookeeper client go on to its next connection
// attempt.
func (w *World) dialWire(s *session, req *request) {
	if req.wire.dialTo != "" {
		w.dialMember(s, req.wire)
	}
	close(req.wire.gate)
	if req.wire.dialTo != "" {
		w.stepf("%s dial %s%s", s.name, req.wire.dialTo, req.note)
		return
	}
	w.stepf("%s dial", s.name)
}

// hangupWire runs when the server reads the client's close of a
// connection: the session, if attached to it, is detached.
func (w *World) hangupWire(s *session, req *request) {
	p := req.wire.pipe
	w.hangupWaiting(s, p)
	if p.fc != nil {
		p.fc.Hangup()
	}
	if s.wire.cur == p {
		s.wire.cur = nil
	}
	w.stepf("%s hangup #%d", s.name, p.n)
}

// deliverWire delivers a frame, or the close of a connection, to a
// go-zookeeper client.
func (w *World) deliverWire(s *session, it item) {
	wi := it.wire
	p := wi.pipe
	w.mu.Lock()
	if it.kind == itemClose {
		p.eof = true
	} else {
		if len(p.rbuf) == 0 {
			// The frame is the item's alone: read from it, no copy
			// (capped, so that a later append copies).
			p.rbuf = wi.frame[:len(wi.frame):len(wi.frame)]
		} else {
			p.rbuf = append(p.rbuf, wi.frame...)
		}
	}
	w.mu.Unlock()
	p.signal()
	switch {
	case !w.trace.on:
		w.step++
	case it.kind == itemClose:
		w.stepf("%s deliver close #%d", s.name, p.n)
	case it.req != nil:
		w.stepf("%s deliver reply %s %s%s -> %s%s", s.name, it.req.name, it.req.desc.Path, it.req.watchMark(), wireSummary(it.req), it.req.note)
	default:
		w.stepf("%s deliver %s", s.name, wi.label)
	}
	if it.kind == itemFrame && it.req != nil {
		s.wire.recycle(w, it.req)
	}
}

// wireFrame is the record of a frame a go-zookeeper client sent: its
// request, what the frame adds to it, and the FIFO item of its reply, one
// allocation for the three; buf holds the frame's body, and is kept when
// the record is recycled (the server copies what it keeps of a body).
type wireFrame struct {
	req   request
	r     wireReq
	reply wireItem
	buf   []byte
}

// recycle keeps the record of a frame whose reply was delivered as the
// client's spare, for its next frame (see pipe.request), once no FIFO item
// refers to it any more: nothing else does after its reply is delivered.
// Called on the World's goroutine.
func (wc *wireClient) recycle(w *World, req *request) {
	f := req.wire.rec
	if f == nil || &f.req != req {
		return
	}
	w.mu.Lock()
	if f.r.replies--; f.r.replies == 0 && wc.spare == nil {
		*f = wireFrame{buf: f.buf[:0]}
		wc.spare = f
	}
	w.mu.Unlock()
}

// purgeWire drops what nobody will read: frames a closed client connection
// would get, and frames the client sent on a connection the server has
// closed.
func (w *World) purgeWire(s *session) {
	w.mu.Lock()
	for s.fifo.len() > 0 {
		it := s.fifo.at(0)
		if it.wire == nil || !it.wire.pipe.cliClosed {
			break
		}
		s.fifo.pop()
	}
	for s.pending.len() > 0 {
		req := s.pending.at(0)
		if req.wire == nil || req.wire.pipe == nil || !req.wire.pipe.srvClosed {
			break
		}
		s.pending.pop()
	}
	w.mu.Unlock()
}
