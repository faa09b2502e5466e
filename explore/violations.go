package explore

// How a machine records what its invariants find, and the protected
// resource that lock holders and leaders write to.

// violate records a violation of an invariant: its kind (a short, stable
// name such as "two holders") and what exactly happened. The check fails
// with the kinds only (harness.World.Violate).
func (w *world) violate(k kind, format string, args ...any) {
	w.hw.Violate(string(k), format, args...)
}

// resource is a protected resource written by lock holders and leaders.
// A fenced resource refuses a write whose token is lower than the highest
// it has accepted; an unfenced one accepts everything. Either way an
// accepted stale write is a violation: two holders wrote.
type resource struct {
	fenced   bool
	max      int64
	maxBy    int
	accepted int
	refused  int
}

// write is the write of client with token, as the resource receives it.
func (w *world) write(client int, token int64) {
	w.mu.Lock()
	r := w.res
	stale := token < r.max
	if stale && r.fenced {
		r.refused++
		w.mu.Unlock()
		return
	}
	by := r.maxBy
	old := r.max
	r.accepted++
	if token > r.max {
		r.max, r.maxBy = token, client
	}
	w.mu.Unlock()
	if stale {
		w.violate(kindTwoWriters, "the resource accepted p%d's write with token %#x after p%d's with token %#x", client, token, by, old)
	}
}
