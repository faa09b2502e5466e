package sim

// What a test may ask the World about between steps, beyond what the
// client Conns tell their clients.

// Enabled waits until every goroutine of the bubble is blocked, takes in
// what happened meanwhile (requests sent; timed actions that are due run,
// each a step of its own), and returns how many events a step could take
// now without letting time pass: requests the server can admit, and FIFO
// heads that can be delivered. 0 means the next step lets virtual time
// pass (or injects a fault). Call it from the World's goroutine.
func (w *World) Enabled() int {
	if w.isClosed() {
		return 0
	}
	w.settle()
	applies := 0
	if w.busy < w.cfg.Cost.workers() {
		applies = w.applyOK.len()
	}
	return applies + w.deliver.len() + w.memberEvents()
}

// InFlight reports whether client i has something on its way: a request
// the server has not applied yet (or is serving), or something the server
// sent it (a reply, a watch event, a change of connection state) that has
// not been delivered. A client with nothing in flight has heard everything
// the server has to tell it. Call it from the World's goroutine, after a
// step or after Enabled, so that requests just sent are counted.
func (w *World) InFlight(i int) bool {
	s := w.sessions[i]
	if s.pending.len() > 0 || s.inService != nil || w.parkedFor(s) {
		return true
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(s.inbox) > 0 || s.fifo.len() > 0
}
