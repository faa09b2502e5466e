package explore

import (
	"fmt"
	"slices"
	"strings"

	"pgregory.net/rapid"
)

// How a machine records what its invariants find, and the protected
// resource that lock holders and leaders write to.

// violate records a violation of an invariant: its kind (a short, stable
// name such as "two holders") and what exactly happened.
func (w *world) violate(kind, format string, args ...any) {
	w.mu.Lock()
	defer w.mu.Unlock()
	v := violation{kind, fmt.Sprintf(format, args...)}
	if !slices.Contains(w.violations, v) { // the invariants are checked after every step
		w.violations = append(w.violations, v)
	}
}

type violation struct{ kind, detail string }

// violated reports whether a violation has been recorded.
func (w *world) violated() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.violations) > 0
}

// failOnViolations fails the check if a violation was found: it logs the
// details and the trace of the run, and fails with the kinds only. rapid
// tells two failures apart by their message, so the message must not
// carry what differs between runs of the same schedule (random GUIDs in
// paths, say).
func (w *world) failOnViolations(t *rapid.T) {
	w.mu.Lock()
	v := slices.Clone(w.violations)
	w.mu.Unlock()
	if len(v) == 0 {
		return
	}
	var kinds []string
	for _, x := range v {
		t.Logf("VIOLATION: %s: %s", x.kind, x.detail)
		kinds = append(kinds, x.kind)
	}
	w.fail(t, kinds...)
}

// fail logs the trace of the run and fails with the given violation kinds.
func (w *world) fail(t *rapid.T, kinds ...string) {
	w.flushNotes()
	t.Logf("clients: %s", w.describeClients())
	t.Logf("trace of the run (simulator steps, virtual time):\n  %s", strings.Join(w.sw.Trace(), "\n  "))
	slices.Sort(kinds)
	t.Fatalf("VIOLATION: %s", strings.Join(slices.Compact(kinds), ", "))
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
		w.violate("two writers", "the resource accepted p%d's write with token %#x after p%d's with token %#x", client, token, by, old)
	}
}
