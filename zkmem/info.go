package zkmem

import (
	"sort"
	"time"

	"github.com/zksim/zksim"
)

// SessionInfo is what Control.Info reports of a session.
type SessionInfo struct {
	ID      int64
	Timeout time.Duration // negotiated
	// Connected: a transport is attached. Paused: Control.Pause holds it
	// (the server hears nothing from the client). Ended: closed or expired.
	Connected, Paused, Ended bool
	// Armed lists the faults armed with Arm, LoseNextReply and DropNextRequest
	// and not fired yet, in the order they were armed.
	Armed []ArmedFault
	// DelayedUntil is when the Delay holding the session ends; zero if
	// none does. Held counts the replies and notifications it holds.
	DelayedUntil time.Time
	Held         int
}

// ArmedFault is a fault armed for the next request with Op (OpAny: any
// client request), on Path ("": any; see Aim.Path), for Count more such
// requests.
type ArmedFault struct {
	Op    OpCode
	Path  string
	Count int
	Fault ConnFault
}

// Info reports the session's state and the faults armed for it.
func (c *Control) Info() SessionInfo {
	s := c.srv
	s.mu.Lock()
	defer s.mu.Unlock()
	info := SessionInfo{
		ID:        c.id,
		Timeout:   c.timeout,
		Connected: c.connected,
		Paused:    c.paused,
		Ended:     c.dead,
		Held:      len(c.held),
	}
	if c.sess().delayed() {
		info.DelayedUntil = c.delayUntil
	}
	for _, a := range c.armed {
		info.Armed = append(info.Armed, ArmedFault{Op: a.aim.Op, Path: a.aim.Path, Count: a.aim.Count, Fault: a.fault})
	}
	return info
}

// Reset makes s a clean server, as a fresh one from NewServer with the same
// options: every session ends as if it expired, without a transaction (an
// attached transport hears Sink.Closed with zksim.ErrSessionExpired, so an
// in-process Conn sees StateExpired; a paused or detached client learns it
// when it resumes), and the tree is emptied back to the /zookeeper system
// nodes, every watch, held reply and container check gone. What stays:
// the options, SetSequenceStart's hook, and the counters of zxids and
// session ids, which go on from where they were, so that a client of
// before the reset is never refused for having seen a later zxid nor
// given the id of a session it held. Reset on a closed server does
// nothing.
func (s *Server) Reset() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return
	}
	ids := make([]int64, 0, len(s.sessions))
	for id := range s.sessions {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	for _, id := range ids {
		sess := s.sessions[id]
		tell := sess.connected && !sess.paused
		sess.dead, sess.connected = true, false
		sess.dropHeld()
		for _, t := range []**time.Timer{&sess.expiryTimer, &sess.delayTimer} {
			if *t != nil {
				(*t).Stop()
				*t = nil
			}
		}
		sess.delayUntil = time.Time{}
		sess.ephemerals = nil
		sess.dropWatches()
		delete(s.sessions, id)
		if tell {
			sess.sink.Closed(zksim.ErrSessionExpired)
		}
	}
	if s.reapTimer != nil {
		s.reapTimer.Stop()
		s.reapTimer = nil
	}
	s.reapable.Clear(false)
	s.dataWatches, s.childWatches = newWatchTable(), newWatchTable()
	s.tree = newTree(s.acls.intern(zksim.OpenACL()), s.acls.intern(zksim.ReadACL()))
	s.tree.sorted = s.opts.SortedChildren
	if s.ens != nil {
		s.ens.reset()
	}
}
