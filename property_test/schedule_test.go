package property_test

import (
	"testing/synctest"
	"time"

	"pgregory.net/rapid"

	"github.com/zksim/zksim"
	"github.com/zksim/zksim/property_test/internal/sched"
	"github.com/zksim/zksim/zkmem"
)

// The scheduling, fault and time actions every machine has, and how
// waiting requests are let through.

// release lets s through with fault f, and traces it.
func (w *world) release(s *sched.Step, f zkmem.Fault) {
	if f == zkmem.NoFault {
		w.trace("%v", s)
	} else {
		w.trace("%v: %v", s, f)
	}
	w.lastServed = s.Client
	w.gate.Release(s, f)
}

// eligible returns the steps waiting at the gate whose client is not
// paused, in the gate's canonical order.
func (w *world) eligible() []*sched.Step {
	var out []*sched.Step
	for _, s := range w.gate.Waiting() {
		if !w.clients[s.Client].paused {
			out = append(out, s)
		}
	}
	return out
}

// settle waits until every goroutine of the bubble is blocked, then gives
// clients whose session ended a new one.
func (w *world) settle(t *rapid.T) {
	synctest.Wait()
	for _, c := range w.clients {
		st := c.conn.State()
		if (st == zksim.StateExpired || st == zksim.StateClosed) && !c.busy("") && !c.paused {
			_ = c.conn.Close()
			c.conn = w.connect(t, c.idx)
			w.trace("c%d new session", c.idx)
			w.fam.renew(c)
		}
	}
	synctest.Wait()
}

// settleSteps lets every eligible request through, without faults, until
// nothing waits (or settleLimit requests went through).
func (w *world) settleSteps() {
	for range settleLimit {
		synctest.Wait()
		s := w.nextFair()
		if s == nil {
			return
		}
		w.release(s, zkmem.NoFault)
	}
}

// nextFair returns the eligible step to let through when the machine does
// not choose: the first one of the client after the last client served
// (round robin), so that clients interleave as they would on a real
// server, and no client runs alone to the end of its operation.
func (w *world) nextFair() *sched.Step {
	steps := w.eligible()
	if len(steps) == 0 {
		return nil
	}
	for _, s := range steps {
		if s.Client > w.lastServed {
			return s
		}
	}
	return steps[0]
}

// drawClient draws one of cs, skipping the action when cs is empty.
func drawClient(t *rapid.T, cs []*client, what string) *client {
	if len(cs) == 0 {
		t.SkipNow() // no client can do what
	}
	return cs[rapid.IntRange(0, len(cs)-1).Draw(t, "client")]
}

// faultNames are the fault draws of a Step, most often none.
var stepFaults = []zkmem.Fault{zkmem.NoFault, zkmem.NoFault, zkmem.NoFault, zkmem.LoseReply, zkmem.DropRequest}

// worldActions are the scheduling, fault and time actions every machine
// has.
func (w *world) worldActions() map[string]func(*rapid.T) {
	a := map[string]func(*rapid.T){
		// Step lets one waiting request through, perhaps with a fault.
		"Step": func(t *rapid.T) {
			steps := w.eligible()
			if len(steps) == 0 {
				t.SkipNow() // nothing waits
			}
			s := steps[rapid.IntRange(0, len(steps)-1).Draw(t, "step")]
			f := zkmem.NoFault
			if w.cfg.faults {
				f = rapid.SampledFrom(stepFaults).Draw(t, "fault")
			}
			w.release(s, f)
		},
		// Settle lets every waiting request through, in order, without
		// faults, until nothing waits: a stretch of calm.
		"Settle": func(t *rapid.T) {
			if len(w.eligible()) == 0 {
				t.SkipNow() // nothing waits
			}
			w.settleSteps()
		},
		// Advance lets virtual time pass: timers fire (session expiry,
		// reconnects, backoffs). The server stays prompt meanwhile: every
		// request of a running client is answered within advanceTick (only
		// a paused client's requests stay where they are). A request held
		// across a whole session timeout while its connection stays up is
		// not in this catalogue: a real client would time out and see a
		// connection loss long before.
		"Advance": func(t *rapid.T) {
			d := rapid.SampledFrom([]time.Duration{50 * time.Millisecond, 400 * time.Millisecond, sessionTimeout + 200*time.Millisecond}).Draw(t, "duration")
			w.trace("advance %v", d)
			for d > 0 {
				w.settleSteps()
				tick := min(d, advanceTick)
				time.Sleep(tick)
				d -= tick
			}
		},
	}
	if !w.cfg.faults {
		return a
	}
	// Partition drops a client's connection, or brings a dropped one back
	// (the session lives on server-side until its timeout). A paused
	// process cannot reconnect.
	a["Partition"] = func(t *rapid.T) {
		c := drawClient(t, w.clients, "partition")
		if c.conn.State() == zksim.StateDisconnected {
			if c.paused {
				t.SkipNow()
			}
			w.trace("c%d reconnect: %v", c.idx, c.conn.Reconnect())
			return
		}
		w.trace("c%d disconnect", c.idx)
		c.conn.Disconnect()
	}
	// Expire makes the server expire a client's session now.
	a["Expire"] = func(t *rapid.T) {
		c := drawClient(t, w.clients, "expire")
		w.trace("c%d expire", c.idx)
		c.conn.Expire()
	}
	// Pause stops a client process (it sends nothing, not even
	// heartbeats, and none of its requests go through), or resumes a
	// paused one.
	a["Pause"] = func(t *rapid.T) {
		c := drawClient(t, w.clients, "pause")
		if c.paused {
			c.paused = false
			w.trace("c%d resume: %v", c.idx, c.conn.Resume())
			return
		}
		w.trace("c%d pause", c.idx)
		c.conn.Pause()
		c.paused = true
	}
	return a
}
