package sim

import (
	"context"
	"errors"
	"time"

	"github.com/zksim/zksim"
	"github.com/zksim/zksim/zkmem"
)

// The scheduler's actions: applying a request, delivering the head of a
// FIFO, following the connection's state, and the timed actions.

// admit hands the head request of s to the server: it is applied now, or
// after its service time under the cost model.
func (w *World) admit(s *session) {
	req := s.pending.pop()
	if req.wire != nil && req.wire.pipe == nil {
		w.dialWire(s, req)
		w.refresh(s)
		return
	}
	if w.discardHeld(s, req) {
		w.refresh(s)
		return
	}
	if req.wire != nil && req.wire.hangup {
		w.hangupWire(s, req)
		w.refresh(s)
		return
	}
	if s.authFailed && req.name != opExternal {
		w.refuseAuthFailed(s, req)
		w.refresh(s)
		return
	}
	req.fate = w.fate(s, req)
	cost := w.cfg.Cost.Cost(req.size) + req.fate.Slow + w.slowExtra
	if cost <= 0 {
		w.execute(s, req)
		w.refresh(s)
		return
	}
	s.inService = req
	w.busy++
	w.schedule(w.now+cost, &timed{kind: tComplete, s: s, req: req})
	w.stepf("%s admit %s %s%s (service %v)", s.name, req.name, req.desc.Path, req.watchMark(), cost)
	w.refresh(s)
}

// fate asks the policy what happens to a request reaching the server. A
// request sent on a broken connection fails at once, so the policy is not
// asked about it. The fault it decides reaches the request through the
// session's fault plane (see session.decide), where faults armed with
// Faults.LoseNextReply and Faults.DropNextRequest come first.
func (w *World) fate(s *session, req *request) Fate {
	if w.policy == nil || req.name == opExternal {
		return Fate{}
	}
	if s.wire != nil {
		if !s.wire.fateable(req) {
			return Fate{}
		}
	} else if s.zc.State() != zksim.StateConnected {
		return Fate{}
	}
	return w.policy.Request(w, s.idx, &req.desc, w.frng)
}

// execute applies req on the server and queues its reply.
func (w *World) execute(s *session, req *request) {
	if req.ended {
		return // Close ended it: its caller has its result
	}
	if req.wire != nil {
		w.executeWire(s, req)
		return
	}
	if s.authFailed && req.name != opExternal {
		w.refuseAuthFailed(s, req)
		return
	}
	if w.executeEnsemble(s, req) {
		return
	}
	before := s.zc.State()
	s.applying = req
	req.res = req.do(context.Background(), s.zc)
	s.applying = nil
	if req.hit != zkmem.NoFault {
		req.note = " [" + req.hit.String() + "]"
	}
	if req.res.names != nil && req.desc.Op == zkmem.OpGetChildren {
		sortChildren(req.res.names)
		if req.fate.Shuffle {
			w.frng.Shuffle(len(req.res.names), func(i, j int) {
				req.res.names[i], req.res.names[j] = req.res.names[j], req.res.names[i]
			})
			req.note += " [shuffled]"
		}
	}
	w.coverApplied(req)
	if w.cfg.OnApply != nil && before == zksim.StateConnected && req.hit != zkmem.DropRequest && req.name != opExternal {
		w.cfg.OnApply(s.idx, &req.desc)
	}
	w.stateChange(s, before, s.zc.State(), -1, true)
	s.push(-1, item{kind: itemReply, req: req})
	if w.trace.on {
		w.stepf("%s apply %s %s%s -> %s%s", s.name, req.name, req.desc.Path, req.watchMark(), req.summary(), req.note)
	} else {
		w.step++
	}
}

// deliverHead delivers the head of the FIFO of s to its client.
func (w *World) deliverHead(s *session) {
	w.mu.Lock()
	it := s.fifo.pop()
	w.mu.Unlock()
	switch it.kind {
	case itemReply:
		req := it.req
		if w.trace.on {
			w.stepf("%s deliver reply %s %s%s -> %s", s.name, req.name, req.desc.Path, req.watchMark(), req.summary())
		} else {
			w.step++
		}
		if req.name == opClose {
			s.conn.finish()
		}
		req.finish()
	case itemEvent:
		w.stepf("%s deliver event %v %s", s.name, it.ev.Type, it.ev.Path)
		s.deliverEvent(it.ev)
	case itemState:
		w.stepf("%s deliver state %v", s.name, it.state)
		r := s.renew
		if r != nil && r.Current() != s.conn {
			r = nil // an old session of the Renewing: it has moved on
		}
		var next *Conn
		if r != nil && it.state == zksim.StateExpired {
			// The Renewing moves to its new session before anyone hears
			// of the expiry: a goroutine the event wakes sees the new
			// session whenever it runs, so the trace does not depend on
			// Go's scheduling.
			next = w.renewTo(s)
		}
		s.conn.publish(it.state)
		if r != nil {
			r.forward(zksim.Event{Type: zksim.EventSession, State: it.state})
			if next != nil {
				w.announceRenewal(s, next)
			}
		}
	case itemReconnect:
		if s.stayDown {
			// Cut off again (Disconnect with no end) after the reconnection
			// was asked for: the client stays down until Reconnect.
			w.stepf("%s stays disconnected", s.name)
			break
		}
		if s.authFailed {
			// A client whose authentication failed never reconnects.
			w.stepf("%s stays down: authentication failed", s.name)
			break
		}
		before := s.zc.State()
		at := s.fifoLen()
		err := s.ctl.Reconnect()
		after := s.zc.State()
		switch {
		case errors.Is(err, zksim.ErrAuthFailed):
			w.stepf("%s reconnect: authentication failed -> %v", s.name, after)
		case err != nil:
			w.stepf("%s reconnect: %s", s.name, errName(err))
		default:
			w.stepf("%s reconnect -> %v", s.name, after)
		}
		w.stateChange(s, before, after, at, false)
	default:
		w.deliverWire(s, it)
	}
	w.refresh(s)
}

// stateChange records a change of the zkmem connection's state from before
// to after: the client will hear of it (at FIFO position at, -1 for the
// end), and a broken connection is scheduled to expire on the server and,
// with autoReconnect, to reconnect.
func (w *World) stateChange(s *session, before, after zksim.State, at int, autoReconnect bool) {
	if before == after {
		return
	}
	var tell []zksim.State
	switch after {
	case zksim.StateDisconnected:
		s.down, s.downSince = true, w.now
		w.schedule(w.now+s.zc.SessionTimeout()-time.Nanosecond, &timed{kind: tExpire, s: s, gen: s.gen})
		if !s.hiddenDrop { // a paused client is not told until it resumes
			tell = append(tell, zksim.StateDisconnected)
		}
		if autoReconnect {
			w.schedule(w.now+w.cfg.ReconnectDelay, &timed{kind: tReconnect, s: s, gen: s.gen})
		}
	case zksim.StateConnected:
		s.down = false
		s.gen++
		if s.hiddenDrop {
			s.hiddenDrop = false
		} else {
			tell = append(tell, zksim.StateConnected)
		}
	case zksim.StateExpired:
		s.down, s.gone = false, true
		if before == zksim.StateConnected || s.hiddenDrop {
			tell = append(tell, zksim.StateDisconnected)
		}
		s.hiddenDrop = false
		tell = append(tell, zksim.StateExpired)
	case zksim.StateClosed:
		s.down, s.gone = false, true
	case zksim.StateAuthFailed:
		tell = w.authFailedInZkmem(s, before)
	}
	for i, st := range tell {
		pos := at
		if at >= 0 {
			pos = at + i
		}
		s.push(pos, item{kind: itemState, state: st})
	}
}

// runTimed runs a timed action whose time has come.
func (w *World) runTimed(a *timed) {
	s := a.s
	switch a.kind {
	case tExpire:
		if s.wire != nil {
			w.checkWire(s)
			break
		}
		if s.gen != a.gen || s.gone || !(s.down || s.paused) || !w.ensMayExpire(s) || !w.authExpiryDue(s) {
			return
		}
		w.coverStrike(s, "Expire")
		w.expireNow(s)
		w.stepf("%s session expired by the server (silent for %v)", s.name, s.zc.SessionTimeout())
	case tReconnect:
		if s.gen != a.gen || !s.down || s.authFailed {
			return
		}
		s.push(-1, item{kind: itemReconnect})
		w.stepf("%s starts reconnecting", s.name)
	case tResume:
		if !s.paused || s.gen != a.gen {
			return
		}
		w.resume(s)
		w.stepf("%s resumes", s.name)
	case tUndelay:
		if s.delayedUntil != a.at {
			return
		}
		w.stepf("%s delivery delay ends", s.name)
	case tComplete:
		s.inService = nil
		w.busy--
		w.execute(s, a.req)
	case tEnsemble:
		a.fn()
	case tSlowEnd:
		if w.slowGen != a.gen {
			return
		}
		w.slowExtra = 0
		w.stepf("server no longer slow")
	}
	w.afterAction()
	if s != nil {
		w.refresh(s)
	}
}
