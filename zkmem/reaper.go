package zkmem

import (
	"time"
)

// The reaper deletes empty containers and expired TTL nodes, as ZooKeeper's
// ContainerManager does, every ContainerCheckInterval. Its timer runs only
// while such nodes exist, so an idle server has no timers.

// armReaper starts the reaper's timer if it is not running. Called with
// s.mu held.
func (s *Server) armReaper() {
	if s.reapTimer != nil || s.closed {
		return
	}
	s.reapTimer = time.AfterFunc(s.opts.ContainerCheckInterval, s.reap)
}

func (s *Server) reap() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.reapTimer = nil
	if s.closed {
		return
	}
	if s.ens != nil && s.ens.leader < 0 {
		s.armReaper() // the leader reaps; there is none during an election
		return
	}
	var doomed []*node
	now := time.Now().UnixMilli()
	s.reapable.Ascend(func(n *node) bool {
		if n.numChildren() > 0 {
			return true
		}
		switch n.kind {
		case kindContainer:
			// cversion > 0: the container has had a child.
			if n.cversion > 0 {
				doomed = append(doomed, n)
			}
		case kindTTL:
			if now-n.mtime > n.owner {
				doomed = append(doomed, n)
			}
		}
		return true
	})
	for _, n := range doomed {
		// Each deletion is its own deleteContainer transaction.
		t := s.begin()
		s.deleteNode(t, n)
		s.commit(t)
	}
	if s.reapable.Len() > 0 {
		s.armReaper()
	}
}
