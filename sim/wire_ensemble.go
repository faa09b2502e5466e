package sim

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing/synctest"

	"github.com/zksim/zksim/zkmem"
)

// go-zookeeper clients on an ensemble (Config.Members > 1). A client is
// given every member's address, in its order drawn from the seed (its
// connect string); each connection it dials reaches one member, which
// takes it as a ZooKeeper 3.8 server does: a crashed member refuses the
// dial; a member that serves no one (an election, cut off from the
// quorum) or has not applied the last zxid the client saw closes the
// connection without answering the handshake, and the client tries its
// next address; a member that takes it serves its session. The member
// decides as zkwire's member ports do: the connection is zkwire's
// (FrameConn at the member), whose handshake zkmem.Ensemble.OpenSessionAt
// or ResumeSessionAt admits or refuses, and attaches to the member. A frame that must wait for the member (a write or a sync while
// a member lags, any write while FailLeader is armed) is served in a
// goroutine of its own and, if it waits, parked as a native call is; the
// connection's later frames wait behind it, as a server's request
// pipeline holds a session's requests behind its pending ones.

// memberAddr is member m's address in go-zookeeper clients' server lists.
func memberAddr(m int) string { return "m" + strconv.Itoa(m) + ".zksim:2181" }

// addrMember is the member an address of memberAddr names, -1 for another.
func addrMember(addr string) int {
	name, ok := strings.CutSuffix(addr, ".zksim:2181")
	if !ok || !strings.HasPrefix(name, "m") {
		return -1
	}
	m, err := strconv.Atoi(name[1:])
	if err != nil {
		return -1
	}
	return m
}

// memberAddrs returns the server list of go-zookeeper client idx: the
// members' addresses in its order (memberOrder).
func (w *World) memberAddrs(idx int) []string {
	order := memberOrder(w.cfg.Seed, idx, len(w.ens.lagging))
	w.notef("c%d members %v", idx, order)
	addrs := make([]string, len(order))
	for i, m := range order {
		addrs[i] = memberAddr(m)
	}
	return addrs
}

// dialMember decides, at a dial step, whether the member the dial
// reaches refuses it: a crashed one does, at once.
func (w *World) dialMember(s *session, r *wireReq) {
	m, _ := strconv.Atoi(r.dialTo[1:])
	if w.ens.e.Role(m) != zkmem.RoleDown {
		return
	}
	w.mu.Lock()
	s.wire.dialDown = true
	w.mu.Unlock()
	r.dialTo += " -> refused: down"
}

// newFrameConn makes the server's end of connection p, at its first
// frame r: on an ensemble, a connection to the member p's address names,
// whose handshake zkmem admits or refuses (Ensemble.OpenSessionAt,
// ResumeSessionAt). An address that names no member is hung up on, and
// newFrameConn reports false.
func (w *World) newFrameConn(s *session, p *pipe, r *wireReq) bool {
	out := (*pipeOut)(p)
	if w.ens == nil {
		p.fc = w.wsrv.NewFrameConn(out)
	} else {
		fc, err := w.wsrv.NewFrameConnAt(p.member, out)
		if err != nil {
			p.fc = w.wsrv.NewFrameConn(out)
			p.fc.Hangup()
			w.stepf("%s apply frame #%d %s -> refused: %v", s.name, p.n, p.addr, err)
			return false
		}
		p.fc = fc
	}
	p.fc.SetReplyHook(func(q *zkmem.Request, resp *zkmem.Response) { w.onWireReply(s, q, resp) })
	return true
}

// refusal describes for the trace why the member a connection reached
// refused its handshake (zkmem decided, with err): it serves no one, or
// has not applied the last zxid the client saw.
func (w *World) refusal(p *pipe, r *wireReq, err error) string {
	e := w.ens.e
	switch {
	case errors.Is(err, zkmem.ErrZxidAhead):
		return fmt.Sprintf("m%d applied zxid %d, the client saw %d", p.member, e.Applied(p.member), r.seen)
	case errors.Is(err, zkmem.ErrNoMember):
		return fmt.Sprintf("m%d is %v", p.member, e.Role(p.member))
	}
	return err.Error()
}

// wireMayWait reports whether a frame may wait in zkmem for its member, or
// fail the leader: it is then served by serveWaiting.
func (w *World) wireMayWait(req *request) bool {
	es := w.ens
	if es == nil || req.wire.connect {
		return false
	}
	return es.failing || es.nLag > 0 && mayWait(req.desc.Op)
}

// serveWaiting serves a frame that may wait for its member (see
// executeEnsemble for native calls): in a goroutine of its own, until
// every goroutine is blocked; a frame still waiting is parked, and
// answered (its reply is in the FIFO already) in the step that makes its
// member apply what it waits for.
func (w *World) serveWaiting(s *session, req *request) {
	es := w.ens
	var snap ensSnap
	if es.failing {
		snap = w.ensSnapshot() // the leader's failure drops every client
	}
	p := &parked{s: s, req: req, done: make(chan struct{})}
	fc, body := req.wire.pipe.fc, req.wire.body
	go func() {
		fc.Serve(body)
		close(p.done)
	}()
	synctest.Wait()
	s.applying = nil
	select {
	case <-p.done:
		w.servedWire(s, req, false)
	default:
		s.wire.parked = p
		es.parked = append(es.parked, p)
		w.stepf("%s apply %s %s%s -> waits for its member", s.name, req.name, req.desc.Path, req.watchMark())
	}
	w.afterFailing(snap)
}

// settleParked answers the parked calls a control of the fault plane
// released (a disconnection, an expiry), before anything else touches
// their connections.
func (w *World) settleParked() {
	if w.ens != nil && len(w.ens.parked) > 0 {
		synctest.Wait()
		w.collectParked()
	}
}

// hangupWaiting: the client closed connection p while a frame of it waits
// for its member. The server detaches the session (the frame's reply is
// lost; a write stays committed) before it reads the close.
func (w *World) hangupWaiting(s *session, p *pipe) {
	wc := s.wire
	if wc.parked == nil || wc.parked.req.wire.pipe != p {
		return
	}
	if zs := p.fc.Session(); zs != nil {
		zs.Detach()
	}
	w.settleParked()
}

// wireHeld reports whether the head request of s waits: a frame on the
// connection whose frame waits for its member, unless the client closed
// that connection since (then its frames are dropped and the close goes
// first: see discardHeld).
func (s *session) wireHeld() bool {
	wc := s.wire
	if wc == nil || wc.parked == nil || s.pending.len() == 0 {
		return false
	}
	pp := wc.parked.req.wire.pipe
	if head := s.pending.at(0); head.wire == nil || head.wire.pipe != pp || head.wire.hangup {
		return false
	}
	for i := 1; i < s.pending.len(); i++ {
		if r := s.pending.at(i); r.wire != nil && r.wire.hangup && r.wire.pipe == pp {
			return false
		}
	}
	return true
}

// discardHeld drops req, the head request of s, if it is a frame held
// behind a frame that waits for its member on a connection the client has
// closed since (wireHeld): the server would not answer it on the closed
// connection. It reports whether it did.
func (w *World) discardHeld(s *session, req *request) bool {
	wc := s.wire
	if wc == nil || wc.parked == nil || req.wire == nil || req.wire.hangup || req.wire.pipe != wc.parked.req.wire.pipe {
		return false
	}
	w.stepf("%s discard %s %s: connection %d closed behind a call waiting for its member", s.name, req.name, req.desc.Path, req.wire.pipe.n)
	return true
}

// unparkWire follows a parked frame that returned.
func (w *World) unparkWire(p *parked) {
	s := p.s
	s.wire.parked = nil
	s.wire.serving = p.req
	w.servedWire(s, p.req, true)
	w.refresh(s)
}

// afterFailing follows a call that may have failed the leader (FailLeader
// armed): the clients it dropped, the election. Only a write that reached
// the leader fails it: a call made while there was none (an election)
// leaves the failure armed.
func (w *World) afterFailing(snap ensSnap) {
	es := w.ens
	if !es.failing {
		return
	}
	if snap.leader >= 0 && es.e.Leader() < 0 {
		es.failing = false
		w.notef("the leader failed on this write")
		w.strikeAll("Failover")
	}
	w.ensReconcile(snap)
}

// sid returns the id of the session of s (0 for a go-zookeeper client
// before its first).
func (s *session) sid() int64 {
	if s.wire != nil {
		return s.wire.sid
	}
	return s.zc.SessionID()
}
