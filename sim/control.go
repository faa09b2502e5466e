package sim

import (
	"errors"
	"time"

	"github.com/zksim/zksim"
	"github.com/zksim/zksim/zkmem"
)

// Faults is the World's role as a fault injector: the fault primitives.
// Package faults wraps them in printable Fault values; they may also be
// called directly from the World's goroutine between steps (a fault called
// this way is not a step of its own and is not traced unless through
// World.Inject). Faults that strike the server's side of a session (a lost
// reply, a dropped request, a disconnect, an expiry) go through the
// session's zkmem.Control, the one fault plane; the World schedules what
// the client hears and when.
type Faults struct{ w *World }

// Faults returns the World's fault primitives.
func (w *World) Faults() *Faults { return &w.faults }

// ErrGone is returned by a fault primitive aimed at a client whose session
// has already expired or been closed.
var ErrGone = errors.New("sim: session already expired or closed")

// Disconnect breaks client i's connection while its session lives on at
// the server (whose expiry clock starts). The client hears
// StateDisconnected; its calls fail with zksim.ErrConnectionLoss. With
// reconnectAfter >= 0 it starts reconnecting that much later; with a
// negative value it stays down until Reconnect. If the session expires
// meanwhile, the client learns it when it reconnects.
func (f *Faults) Disconnect(i int, reconnectAfter time.Duration) error {
	w := f.w
	s := w.sessions[i]
	if s.wire != nil {
		return w.disconnectWire(s, reconnectAfter)
	}
	if s.gone {
		return ErrGone
	}
	w.coverStrike(s, "Disconnect")
	before := s.zc.State()
	s.ctl.Disconnect()
	w.stateChange(s, before, s.zc.State(), -1, false)
	s.stayDown = reconnectAfter < 0
	if s.down && !s.stayDown {
		w.schedule(w.now+reconnectAfter, &timed{kind: tReconnect, s: s, gen: s.gen})
	}
	w.refresh(s)
	return nil
}

// Reconnect makes a disconnected client reconnect to its session once its
// FIFO has been delivered up to here. Reconnecting restores its watches by
// the setWatches rules; if the session expired, the client learns it now
// (StateExpired, watches end with EventNotWatching).
func (f *Faults) Reconnect(i int) error {
	w := f.w
	s := w.sessions[i]
	if s.wire != nil {
		s.wire.allowDials(w)
		return nil
	}
	s.stayDown = false
	if !s.down {
		return nil
	}
	s.push(-1, item{kind: itemReconnect})
	w.refresh(s)
	return nil
}

// Expire makes the server expire client i's session now: its ephemeral
// nodes are deleted and other sessions' watches fire. The server closes the
// connection, so the client hears StateDisconnected, and learns of the
// expiry when it reconnects (after Config.ReconnectDelay), or, if paused,
// when it resumes.
func (f *Faults) Expire(i int) error {
	w := f.w
	s := w.sessions[i]
	if s.gone || (s.wire != nil && s.ctl == nil) {
		return ErrGone
	}
	w.coverStrike(s, "Expire")
	w.expireNow(s)
	w.refresh(s)
	return nil
}

func (w *World) expireNow(s *session) {
	if s.wire != nil {
		w.expireWire(s)
		return
	}
	if !s.down {
		before := s.zc.State()
		s.hiddenDrop = s.paused
		s.ctl.Disconnect()
		w.stateChange(s, before, s.zc.State(), -1, !s.paused)
	}
	s.ctl.Expire()
	s.gone = true
}

// Pause stops client i as a process pause (a long GC, a stopped VM) would:
// the scheduler applies none of its requests and delivers nothing to it,
// and the server, hearing no heartbeat, expires its session after the
// session timeout. With d >= 0 the client resumes after d; with a negative
// d, at Resume. Its goroutines are not stopped: timers they set still fire,
// but whatever they send waits.
func (f *Faults) Pause(i int, d time.Duration) error {
	w := f.w
	s := w.sessions[i]
	if s.paused {
		return nil
	}
	w.coverStrike(s, "Pause")
	s.paused = true
	if !s.down && !s.gone && s.wire == nil { // a go-zookeeper client's silence is timed by checkWire
		w.schedule(w.now+s.zc.SessionTimeout()-time.Nanosecond, &timed{kind: tExpire, s: s, gen: s.gen})
	}
	if d >= 0 {
		w.schedule(w.now+d, &timed{kind: tResume, s: s, gen: s.gen})
	}
	w.refresh(s)
	return nil
}

// Resume ends a pause of client i. It gets what was queued for it
// meanwhile; if its session expired, it hears StateDisconnected then
// StateExpired.
func (f *Faults) Resume(i int) error {
	w := f.w
	s := w.sessions[i]
	if s.paused {
		w.resume(s)
	}
	return nil
}

func (w *World) resume(s *session) {
	s.paused = false
	s.gen++
	if s.wire != nil {
		w.refresh(s)
		return
	}
	if s.down {
		if s.hiddenDrop {
			// Its connection broke while it was paused and is still
			// down: it finds its socket dead now (a real client's read
			// fails), rather than go on saying Connected while no
			// member has its session.
			s.hiddenDrop = false
			s.push(-1, item{kind: itemState, state: zksim.StateDisconnected})
		}
		if !s.gone {
			w.schedule(s.downSince+s.zc.SessionTimeout()-time.Nanosecond, &timed{kind: tExpire, s: s, gen: s.gen})
		}
		if !s.stayDown {
			s.push(-1, item{kind: itemReconnect})
		}
	}
	w.refresh(s)
}

// Delay holds back every delivery to client i for d (or until an earlier
// delay ends, if that is later): replies and events queue in its FIFO,
// whose order is kept, while other clients go on.
func (f *Faults) Delay(i int, d time.Duration) error {
	w := f.w
	s := w.sessions[i]
	if w.now+d <= s.delayedUntil {
		return nil // already held back longer
	}
	w.coverStrike(s, "Delay")
	s.delayedUntil = w.now + d
	w.schedule(s.delayedUntil, &timed{kind: tUndelay, s: s})
	w.refresh(s)
	return nil
}

// LoseNextReply arms, in client i's session's fault plane, a lost reply
// for its next request with op (zkmem.OpAny for any): it is applied by the server while its reply is lost: the caller gets
// zksim.ErrConnectionLoss, and the client reconnects after
// Config.ReconnectDelay.
func (f *Faults) LoseNextReply(i int, op zkmem.OpCode) {
	if f.w.sessions[i].ctl == nil {
		return // a go-zookeeper client before its first session
	}
	f.w.sessions[i].ctl.LoseNextReply(op)
}

// DropNextRequest arms, in client i's session's fault plane, a dropped
// request for its next request with op (zkmem.OpAny for any): it is lost before the server sees it: the caller gets
// zksim.ErrConnectionLoss, and the client reconnects after
// Config.ReconnectDelay.
func (f *Faults) DropNextRequest(i int, op zkmem.OpCode) {
	if f.w.sessions[i].ctl == nil {
		return // a go-zookeeper client before its first session
	}
	f.w.sessions[i].ctl.DropNextRequest(op)
}

// SlowServer adds extra to the service time of every request admitted
// during the next d (for good if d <= 0; extra 0 ends it).
func (f *Faults) SlowServer(extra, d time.Duration) {
	w := f.w
	w.slowExtra = extra
	w.slowGen++
	if d > 0 && extra > 0 {
		w.schedule(w.now+d, &timed{kind: tSlowEnd, gen: w.slowGen})
	}
}
