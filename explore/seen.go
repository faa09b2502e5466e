package explore

import (
	"slices"
	"sync"
)

// seenTree keeps what the observer read of a standalone server (the
// children of a directory, the ephemeral owner of a node, the live
// sessions) for as long as the server's last zxid stays the same: the
// invariants read them after every scheduler step, and most steps change
// nothing on the server (a reply or an event delivered, a request
// refused or lost before it reached the server). Each of them changes only
// with a transaction, which moves the zxid on (a create, a delete, a
// session opened or closed, expired or reaped). On an ensemble the
// observer reads the committed state, which is not tied to the zxid of
// the server the simulator holds, so nothing is kept there.
type seenTree struct {
	mu       sync.Mutex
	zxid     int64 // of what is kept; -1: nothing
	kids     map[string][]string
	owners   map[string]int64
	sessions []int64
}

// current reports whether what s keeps is of the server's last zxid, and
// forgets it if not. Called with s.mu held.
func (s *seenTree) current(w *world) bool {
	if w.sw.Ensemble() != nil {
		return false
	}
	zxid := w.sw.Server().LastZxid()
	if s.kids == nil || s.zxid != zxid {
		if s.kids == nil {
			s.kids, s.owners = map[string][]string{}, map[string]int64{}
		}
		clear(s.kids)
		clear(s.owners)
		s.zxid, s.sessions = zxid, nil
	}
	return true
}

// children returns dir's children as last read, if they are current.
func (s *seenTree) children(w *world, dir string) ([]string, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.current(w) {
		return nil, false
	}
	names, ok := s.kids[dir]
	return slices.Clone(names), ok
}

// keepChildren keeps dir's children, read at the zxid current() saw.
func (s *seenTree) keepChildren(dir string, names []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.kids != nil {
		s.kids[dir] = names
	}
}

// owner returns the ephemeral owner of p as last read, if current.
func (s *seenTree) owner(w *world, p string) (int64, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.current(w) {
		return 0, false
	}
	id, ok := s.owners[p]
	return id, ok
}

// keepOwner keeps the ephemeral owner of p.
func (s *seenTree) keepOwner(p string, id int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.owners != nil {
		s.owners[p] = id
	}
}

// liveSessions returns the ids of the server's sessions, in order.
func (w *world) liveSessions() []int64 {
	s := &w.seen
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.current(w) {
		return w.sw.Server().SessionIDs()
	}
	if s.sessions == nil {
		s.sessions = w.sw.Server().SessionIDs()
	}
	return s.sessions
}
