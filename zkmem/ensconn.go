package zkmem

import (
	"fmt"
	"net/netip"
	"time"

	"github.com/zksim/zksim"
)

// The client's side of an ensemble: a request's path through the session's
// member (ensDo), and a Conn choosing, losing and changing members.

// WithMembers sets the members an ensemble Conn tries, in order, as a
// connect string lists servers (by default, or with no index, every
// member from 0). It connects to the first that accepts it and, each time
// it loses its connection, tries the members after the one it had,
// wrapping around. A standalone Server's Connect ignores it.
func WithMembers(order ...int) ConnOption {
	return func(c *connConfig) { c.members = append([]int(nil), order...) }
}

// WithCanBeReadOnly lets an ensemble Conn reconnect to a member in
// read-only mode (ZooKeeper's canBeReadOnly; see
// EnsembleOptions.ReadOnly): its state is then
// zksim.StateConnectedReadOnly, reads are served from that member's state,
// and writes fail with zksim.ErrNotReadOnly. A standalone Server's Connect
// ignores it.
func WithCanBeReadOnly() ConnOption {
	return func(c *connConfig) { c.canBeReadOnly = true }
}

// WithCommittedView makes an ensemble's Connect open a session that
// bypasses the members, as a test's eyes on the ensemble (a simulator's
// observer, a third party acting on the tree): its reads are served from
// the committed state (the leader's, whoever leads, election or not), its
// writes commit at once and reach the members as commits do, and no member
// fault (a lag, a crash, an isolation, a failover) moves it or drops it.
// Its watches never fire. A real ZooKeeper has no such session. A
// standalone Server's Connect ignores it.
func WithCommittedView() ConnOption {
	return func(c *connConfig) { c.committed = true }
}

// committedView reports whether opts include WithCommittedView.
func committedView(opts []ConnOption) bool {
	var cfg connConfig
	for _, o := range opts {
		o(&cfg)
	}
	return cfg.committed
}

// isWrite reports whether op is a transaction: it goes to the leader.
func isWrite(op OpCode) bool {
	switch op {
	case OpCreate, OpDelete, OpSetData, OpSetACL, OpMulti, OpReconfig, OpCloseSession:
		return true
	}
	return false
}

// Connect opens a session through the first member of the client's list
// (WithMembers) that serves clients: a createSession transaction the
// leader commits, which the member applies before it answers, as a
// ZooKeeper member does (a lagging member applies the commits it lags
// behind up to it first, and still lags after it): the client never reads
// a state older than its session. It fails with ErrNoMember when none does (an election,
// every member down), with zksim.ErrClosing once the ensemble is closed,
// and as Server.Connect does for bad options. A client that allows
// read-only mode (WithCanBeReadOnly) also takes a member in read-only mode:
// its session opens there read-only (zksim.StateConnectedReadOnly), with
// the member's applied state as its last zxid. Unlike ZooKeeper, where such
// a session is local to the member (localSessionsEnabled), it is a session
// of the ensemble: its createSession is a transaction of the ensemble's
// server, as every session's is.
// A member index out of range in WithMembers is an error.
func (e *Ensemble) Connect(opts ...ConnOption) (*Conn, error) {
	s := e.core
	c, err := newConn(s, opts)
	if err != nil {
		return nil, err
	}
	c.ens = e
	if c.cfg.members == nil {
		for i := range e.members {
			c.cfg.members = append(c.cfg.members, i)
		}
	}
	for _, i := range c.cfg.members {
		if i < 0 || i >= len(e.members) {
			return nil, fmt.Errorf("zkmem: WithMembers: no member %d in an ensemble of %d", i, len(e.members))
		}
	}
	redial := false
	defer func() {
		if redial { // after the unlock below
			e.redialWaiting()
		}
	}()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, zksim.ErrClosing
	}
	for k, i := range c.cfg.members {
		m := e.members[i]
		ro := false
		switch {
		case e.servesRW(m):
		case c.cfg.canBeReadOnly && e.servesRO(m):
			ro = true
		default:
			continue
		}
		sess := s.openSession(c.cfg.sessionTimeout, c.cfg.addr, (*connSink)(c))
		sess.view, sess.member, sess.readOnly = m.view, m, ro
		if !ro {
			redial = e.applyCreateSession(m)
		}
		c.sess, c.at = sess, k
		c.lastZxid = m.view.zxid
		if ro {
			// As on reconnection: the leader does not hear of it.
			sess.startExpiry(sess.timeout)
			c.state = zksim.StateConnectedReadOnly
		}
		s.conns[c] = struct{}{}
		return c, nil
	}
	return nil, ErrNoMember
}

// reconnect is Conn.reconnect on an ensemble: the Conn tries the members
// of its list after the one it had, in order, and attaches its session to
// the first that accepts it. A member accepts a client if it serves (or
// serves read-only clients, and the client allows that) and has applied
// the last zxid the client saw (ZooKeeper 3.8 refuses a client that has
// seen a newer state). If none does, the Conn waits, disconnected, until a
// change of the ensemble lets one accept it, and reconnect returns
// zksim.ErrConnectionLoss. A member that accepts it refuses its
// authentication if Control.FailNextAuth armed that (the Conn ends in
// zksim.StateAuthFailed; reconnect returns zksim.ErrAuthFailed).
func (e *Ensemble) reconnect(c *Conn, wait bool) error {
	s := e.core
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return zksim.ErrConnectionLoss
	}
	sess := c.sess
	order := c.cfg.members
	var m *member
	ro := false
	for k := 1; k <= len(order); k++ {
		pos := (c.at + k) % len(order)
		cand := e.members[order[pos]]
		switch {
		case e.servesRW(cand):
			ro = false
		case c.cfg.canBeReadOnly && e.servesRO(cand):
			ro = true
		default:
			continue
		}
		if cand.view.zxid < c.lastZxid && !e.acceptAhead {
			continue // it would refuse a client that has seen a newer state
		}
		m, c.at = cand, pos
		break
	}
	if m == nil {
		if !containsConn(e.waiting, c) {
			e.waiting = append(e.waiting, c)
		}
		s.mu.Unlock()
		return zksim.ErrConnectionLoss
	}
	if sess.dead {
		s.mu.Unlock()
		c.learnExpired(false)
		return zksim.ErrSessionExpired
	}
	c.mu.Lock()
	if c.state != zksim.StateDisconnected { // closed meanwhile
		c.mu.Unlock()
		s.mu.Unlock()
		return stateErr(c.State())
	}
	if c.refuseAuth(sess, !ro) {
		c.mu.Unlock()
		s.mu.Unlock()
		return zksim.ErrAuthFailed
	}
	sess.attach((*connSink)(c))
	sess.view, sess.member, sess.readOnly = m.view, m, ro
	if ro {
		// The leader does not hear of a read-only connection: the
		// session's clock runs on.
		sess.startExpiry(sess.timeout)
	}
	sess.resetAuth(c.cfg.addr)
	for _, cr := range c.creds {
		if id, ok := authenticate(cr.scheme, cr.auth, sess.addr); ok {
			sess.addAuth(id)
		}
	}
	if ro {
		c.publish(zksim.StateConnectedReadOnly)
	} else {
		c.publish(zksim.StateConnected)
	}
	w := &SetWatches{RelativeZxid: c.lastZxid}
	w.Data, w.Exist, w.Child, w.Persistent, w.Recursive = c.watchPaths()
	c.sendSetWatches(w, wait) // unlocks c.mu and s.mu
	return nil
}

func containsConn(list []*Conn, c *Conn) bool {
	for _, x := range list {
		if x == c {
			return true
		}
	}
	return false
}

// redialWaiting has every waiting Conn try the members again. Called
// without core.mu.
func (e *Ensemble) redialWaiting() {
	e.core.mu.Lock()
	w := e.waiting
	e.waiting = nil
	e.core.mu.Unlock()
	for _, c := range w {
		_ = c.resume(false)
	}
}

// ensDo is Session.do on an ensemble. A write is applied by the leader at
// once; its reply, a sync's, and a read behind either of them wait until
// the session's member applied what they wait for (Do blocks meanwhile); a
// read is served from the member's state. While a Control.Delay holds the
// session, a reply waits with its notifications, in order, as on a
// standalone server, and Do blocks until it leaves.
func (sess *Session) ensDo(req *Request, resp *Response) {
	if p := sess.ensStart(req, resp); p != nil {
		<-p.done
		*resp = p.resp
	}
}

// ensStart is ensDo up to the wait: it returns the queued request, whose
// done closes when it leaves the member's queue with p.resp filled in, or
// nil when *resp is the outcome already. It takes and releases core.mu.
func (sess *Session) ensStart(req *Request, resp *Response) *pendingReply {
	s := sess.srv
	e := s.ens
	s.mu.Lock()
	fault := NoFault
	if len(sess.armed) > 0 || sess.hook != nil {
		fault = sess.decide(req)
	}
	if fault == DropRequest {
		s.disconnect(sess)
		s.mu.Unlock()
		*resp = Response{Err: zksim.ErrConnectionLoss, Fault: DropRequest, Closed: true}
		return nil
	}
	if s.closed || !sess.connected || sess.dead {
		s.mu.Unlock()
		resp.Err = zksim.ErrConnectionLoss
		return nil
	}
	if sess.heartbeat && !sess.paused {
		sess.lastHeard = time.Now() // a wire client's request is a heartbeat too
	}
	if req.Size > 0 && requestHeaderSize+req.Size > s.opts.MaxRequestBytes {
		s.disconnect(sess)
		s.mu.Unlock()
		*resp = Response{Err: zksim.ErrConnectionLoss, Closed: true}
		return nil
	}
	m := sess.member
	write := isWrite(req.Op)
	if sess.readOnly && (write || req.Op == OpSync) {
		// ReadOnlyRequestProcessor: refused, with the member's zxid. A
		// closeSession cannot reach the leader: the connection just goes.
		if req.Op == OpCloseSession {
			sess.connected, sess.readOnly = false, false
			sess.dropWatches()
		} else {
			resp.Err, resp.Zxid = zksim.ErrNotReadOnly, m.view.zxid
			sess.sendReply(req, resp)
		}
		s.mu.Unlock()
		return nil
	}
	var wait int64
	switch {
	case write && e.failNext != failNone:
		if e.failNext == failCommitted {
			sess.apply(req, resp)
		}
		e.failNext = failNone
		e.failLeader()
		s.mu.Unlock()
		*resp = Response{Err: zksim.ErrConnectionLoss, Closed: true}
		e.redialWaiting()
		return nil
	case write:
		sess.apply(req, resp) // on the leader; the members apply it as it commits
		wait = s.zxid
		resp.Zxid = wait
		if fault == LoseReply || resp.unanswered {
			sess.finish(m, req, resp, fault)
			s.mu.Unlock()
			return nil
		}
	case req.Op == OpSync && !e.syncEarly:
		wait = s.zxid // what the leader committed when the sync reached it
	}
	if m.view.zxid >= wait && !m.queued(sess) {
		if !write {
			sess.apply(req, resp)
		}
		if sess.finish(m, req, resp, fault) {
			*resp = sess.holdReply(req, *resp) // unlocks
			return nil
		}
		s.mu.Unlock()
		return nil
	}
	p := &pendingReply{sess: sess, req: *req, resp: *resp, wait: wait, write: write, fault: fault, done: make(chan struct{})}
	m.queue = append(m.queue, p)
	s.mu.Unlock()
	return p
}

// finish sends the reply of a request the session's member answers, or
// closes the connection if the request's fault or outcome says so. It
// reports held, sending nothing, when a Control.Delay holds the session's
// output: the caller queues the reply behind it (holdReply, or a held item
// for a queued request). Called with core.mu held.
func (sess *Session) finish(m *member, req *Request, resp *Response, fault ConnFault) (held bool) {
	s := sess.srv
	switch {
	case resp.unanswered:
		*resp = Response{Err: zksim.ErrConnectionLoss, Closed: true}
	case fault == LoseReply:
		*resp = Response{Err: zksim.ErrConnectionLoss, Fault: LoseReply, Closed: true}
	default:
		if resp.Zxid == 0 {
			resp.Zxid = m.view.zxid
		}
		if sess.delayed() {
			return true
		}
		sess.sendReply(req, resp)
	}
	if resp.Closed {
		s.disconnect(sess)
		m.failSession(sess)
	}
	return false
}

// openOnLeader is Server.OpenSession on an ensemble's server: a transport
// that is not an in-process Conn (a wire connection) talks to the leader.
// Called with core.mu held.
func (e *Ensemble) openOnLeader(timeout time.Duration, addr netip.Addr, sink Sink) (*Session, error) {
	if e.leader < 0 {
		return nil, ErrNoMember
	}
	m := e.members[e.leader]
	sess := e.core.openSession(timeout, addr, sink)
	sess.view, sess.member = m.view, m
	return sess, nil
}
