package sim

import (
	"bytes"
	"cmp"
	"slices"
	"testing/synctest"
	"time"
)

// Step takes one step: it waits until every goroutine of the bubble is
// blocked, runs the timed actions that are due (each a step of its own),
// then injects the fault the policy asks for, or applies or
// delivers one enabled event picked from the seed, or (with nothing
// enabled) lets virtual time pass until something happens. It returns
// ErrIdle when nothing happened for Config.IdleTimeout, ErrClosed after
// Close.
func (w *World) Step() error {
	if w.isClosed() {
		return ErrClosed
	}
	w.settle()
	return w.stepSettled(0)
}

// Run takes steps until until (called after every step, with every client
// blocked) reports true, or Step fails, or Config.MaxSteps steps were taken.
// A nil until runs until the World is idle (ErrIdle) or closed.
func (w *World) Run(until func() bool) error {
	if w.isClosed() {
		return ErrClosed
	}
	w.settle()
	for {
		if until != nil && until() {
			return nil
		}
		if w.step >= w.cfg.MaxSteps {
			return ErrMaxSteps
		}
		if err := w.stepSettled(0); err != nil {
			return err
		}
		if w.isClosed() {
			return ErrClosed
		}
		w.settle()
	}
}

// RunFor takes steps until d of virtual time has passed (it returns nil
// then), or Step fails, or Config.MaxSteps steps were taken.
func (w *World) RunFor(d time.Duration) error {
	if w.isClosed() {
		return ErrClosed
	}
	w.settle()
	deadline := w.now + d
	for w.now < deadline {
		if w.step >= w.cfg.MaxSteps {
			return ErrMaxSteps
		}
		if err := w.stepSettled(deadline); err != nil {
			return err
		}
		if w.isClosed() {
			return ErrClosed
		}
		w.settle()
	}
	return nil
}

// Inject injects f now, as a step of its own.
func (w *World) Inject(f StepFault) error {
	if w.isClosed() {
		return ErrClosed
	}
	w.settle()
	return w.inject(f)
}

func (w *World) inject(f StepFault) error {
	if r, ok := f.(Resolver); ok {
		if f = r.Resolve(w); f == nil {
			return nil
		}
	}
	err := f.Inject(w)
	if err != nil {
		w.stepf("fault %v: %v", f, err)
	} else {
		w.stepf("fault %v", f)
	}
	w.afterAction()
	return err
}

// settle waits for quiescence and takes in what happened meanwhile.
func (w *World) settle() {
	synctest.Wait()
	w.now = time.Since(w.start)
	w.collect()
}

// collect takes in the requests that arrived and the FIFOs that grew, and
// runs the timed actions whose time has come.
func (w *World) collect() {
	w.mu.Lock()
	arrived, dirty := w.arrived, w.dirty
	w.arrived, w.dirty = w.spare.arrived, w.spare.dirty
	w.spare.arrived, w.spare.dirty = nil, nil
	inboxes := w.spare.inboxes[:0]
	w.spare.inboxes = nil
	if len(arrived) > 0 {
		// Arrivals are ordered by session, then by content: two goroutines
		// of one client racing is the only source of disorder left. A
		// request whose caller has already given up on it goes first: it
		// was sent before anything that goroutine sent next (a cleanup,
		// say), and is unordered with what other goroutines sent.
		slices.SortFunc(arrived, func(a, b *session) int { return cmp.Compare(a.idx, b.idx) })
		for _, s := range arrived {
			inboxes = append(inboxes, s.inbox)
			s.inbox, s.spareInbox = s.spareInbox, nil
		}
	}
	for _, s := range dirty {
		s.dirty = false
	}
	w.mu.Unlock()
	for i, s := range arrived {
		in := inboxes[i]
		if len(in) > 1 {
			slices.SortStableFunc(in, func(a, b *request) int {
				return cmp.Or(-compareBool(a.abandoned, b.abandoned), cmp.Compare(a.name, b.name), cmp.Compare(a.desc.Path, b.desc.Path),
					cmp.Compare(a.size, b.size), compareBool(a.desc.Watch, b.desc.Watch), cmp.Compare(a.desc.Version, b.desc.Version), bytes.Compare(a.desc.Data, b.desc.Data))
			})
		}
		for _, r := range in {
			s.pending.push(r)
		}
		clear(in)
		s.spareInbox = in[:0]
		w.refresh(s)
	}
	clear(inboxes)
	clear(arrived)
	w.spare.inboxes, w.spare.arrived = inboxes[:0], arrived[:0]
	for _, s := range dirty {
		w.refresh(s)
	}
	w.spare.dirty = release(dirty)
	w.collectParked()
	for {
		a := w.timeline.next()
		if a == nil || a.at > w.now {
			break
		}
		w.timeline.pop()
		w.runTimed(a)
	}
}

// afterAction takes in the FIFOs an action made grow.
func (w *World) afterAction() {
	w.mu.Lock()
	dirty := w.dirty
	w.dirty, w.spare.dirty = w.spare.dirty, nil
	for _, s := range dirty {
		s.dirty = false
	}
	w.mu.Unlock()
	for _, s := range dirty {
		w.refresh(s)
	}
	w.spare.dirty = release(dirty)
}

// release empties a list taken from the World for reuse.
func release(l []*session) []*session {
	clear(l)
	return l[:0]
}

// stepSettled takes one step with every client blocked. horizon, if not 0,
// caps how far virtual time may advance.
func (w *World) stepSettled(horizon time.Duration) error {
	if w.policy != nil {
		if f := w.policy.Step(w, w.frng); f != nil {
			before := w.step
			w.inject(f)
			if w.step != before {
				return nil
			}
		}
	}
	applies := 0
	if w.busy < w.cfg.Cost.workers() {
		applies = w.applyOK.len()
	}
	n := applies + w.deliver.len()
	members := w.memberEvents() // after the others: none on a standalone server
	if n+members == 0 {
		return w.advance(horizon)
	}
	if members > 0 {
		if n == 0 && w.lagWait(members) {
			return w.advance(w.lagHorizon(horizon))
		}
		if k := w.chooseWithMembers(applies, n, members); k >= n {
			w.applyMember(k - n)
		} else if k < applies {
			w.admit(w.sessions[w.applyOK.nth(k)])
		} else {
			w.deliverHead(w.sessions[w.deliver.nth(k-applies)])
		}
		w.afterAction()
		return nil
	}
	k := -1
	if w.cfg.Choose != nil {
		k = w.ask(w.clientChoices(applies))
	}
	if k < 0 {
		if w.pct.on {
			k = w.pctPick(applies, w.step+1)
		} else {
			k = w.rng.IntN(n)
		}
	}
	if k < applies {
		w.admit(w.sessions[w.applyOK.nth(k)])
	} else {
		w.deliverHead(w.sessions[w.deliver.nth(k-applies)])
	}
	w.afterAction()
	return nil
}

// advance lets virtual time pass until a client or server timer makes
// something happen, the next timed action is due, the horizon is reached,
// or the idle timeout passes.
func (w *World) advance(horizon time.Duration) error {
	// With a timed action ahead, time runs to it (or to a client's timer);
	// with none, for at most the idle timeout.
	idle := w.now + w.cfg.IdleTimeout
	next := idle
	if a := w.timeline.next(); a != nil {
		next, idle = a.at, -1
	}
	if horizon > 0 && horizon < next {
		next = horizon
	}
	select { // a wake-up from before the last settle is stale
	case <-w.wake:
	default:
	}
	if w.timer == nil {
		w.timer = time.NewTimer(next - w.now)
	} else {
		w.timer.Reset(next - w.now)
	}
	from := w.now
	fired := false
	select {
	case <-w.wake:
		w.timer.Stop()
	case <-w.timer.C:
		fired = true
	case <-w.done:
		return ErrClosed
	}
	now := time.Since(w.start)
	if now == from {
		return nil
	}
	w.now = now
	w.stepf("advance +%v", now-from)
	if fired && next == idle && next != horizon {
		w.settle()
		if w.applyOK.len()+w.deliver.len()+w.memberEvents() == 0 && w.timeline.Len() == 0 {
			w.stepf("idle: nothing happened for %v", w.cfg.IdleTimeout)
			return ErrIdle
		}
	}
	return nil
}

// compareBool orders false before true.
func compareBool(a, b bool) int {
	switch {
	case a == b:
		return 0
	case a:
		return 1
	}
	return -1
}
