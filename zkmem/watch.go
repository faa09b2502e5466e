package zkmem

import (
	"sort"

	"github.com/zksim/zksim"
)

// watchMode is how a session watches one path (WatcherMode).
type watchMode uint8

const (
	modeStandard   watchMode = iota // one-shot
	modePersistent                  // addWatch PERSISTENT
	modeRecursive                   // addWatch PERSISTENT_RECURSIVE
)

type watchEntry struct {
	sess *Session
	mode watchMode
}

// watchTable is one of the server's two watch tables (data or child), as
// ZooKeeper's WatchManager: per path, the sessions watching it, each once,
// kept in session-id order so events fire in a deterministic order. As in
// ZooKeeper 3.8, a session has one mode per path and table: the last watch
// set decides it.
type watchTable struct {
	paths     map[string][]watchEntry
	recursive int // entries with modeRecursive, to skip the ancestor walk
}

func newWatchTable() *watchTable { return &watchTable{paths: make(map[string][]watchEntry)} }

func (t *watchTable) add(path string, s *Session, mode watchMode) {
	entries := t.paths[path]
	i := sort.Search(len(entries), func(i int) bool { return entries[i].sess.id >= s.id })
	if i < len(entries) && entries[i].sess == s {
		if entries[i].mode == modeRecursive {
			t.recursive--
		}
		entries[i].mode = mode
	} else {
		entries = append(entries, watchEntry{})
		copy(entries[i+1:], entries[i:])
		entries[i] = watchEntry{sess: s, mode: mode}
		t.paths[path] = entries
	}
	if mode == modeRecursive {
		t.recursive++
	}
}

// remove deletes s's watch on path, if any, and returns its mode.
func (t *watchTable) remove(path string, s *Session) (watchMode, bool) {
	entries := t.paths[path]
	i := sort.Search(len(entries), func(i int) bool { return entries[i].sess.id >= s.id })
	if i == len(entries) || entries[i].sess != s {
		return 0, false
	}
	mode := entries[i].mode
	if mode == modeRecursive {
		t.recursive--
	}
	entries = append(entries[:i], entries[i+1:]...)
	if len(entries) == 0 {
		delete(t.paths, path)
	} else {
		t.paths[path] = entries
	}
	return mode, true
}

func (t *watchTable) has(path string, s *Session) (watchMode, bool) {
	entries := t.paths[path]
	i := sort.Search(len(entries), func(i int) bool { return entries[i].sess.id >= s.id })
	if i == len(entries) || entries[i].sess != s {
		return 0, false
	}
	return entries[i].mode, true
}

// trigger removes the one-shot watches an event on path fires and appends
// to fired the sessions to notify (WatchManager.triggerWatch). A session is
// appended once per epoch: the server opens a new epoch per event, so a
// session watching a deleted node in both tables hears of it once. Recursive watches on path and its ancestors
// fire for every event type but NodeChildrenChanged.
func (t *watchTable) trigger(path string, typ zksim.EventType, epoch uint64, fired []*Session) []*Session {
	if len(t.paths) == 0 {
		return fired // nothing watched anywhere: no lookups
	}
	if entries, ok := t.paths[path]; ok {
		kept := entries[:0]
		for _, e := range entries {
			switch e.mode {
			case modeRecursive:
				if typ != zksim.EventNodeChildrenChanged {
					fired = appendSession(fired, e.sess, epoch)
				}
				kept = append(kept, e)
			case modePersistent:
				fired = appendSession(fired, e.sess, epoch)
				kept = append(kept, e)
			default:
				fired = appendSession(fired, e.sess, epoch)
				e.sess.forgetWatch(t, path)
			}
		}
		if len(kept) == 0 {
			delete(t.paths, path)
		} else {
			clear(entries[len(kept):])
			t.paths[path] = kept
		}
	}
	if t.recursive > 0 && typ != zksim.EventNodeChildrenChanged {
		for p := path; p != "/"; {
			p = parentPath(p)
			for _, e := range t.paths[p] {
				if e.mode == modeRecursive {
					fired = appendSession(fired, e.sess, epoch)
				}
			}
		}
	}
	return fired
}

func appendSession(list []*Session, s *Session, epoch uint64) []*Session {
	if s.firedEpoch == epoch {
		return list
	}
	s.firedEpoch = epoch
	return append(list, s)
}

// sortSessions orders sessions by id, the order events are delivered in.
func sortSessions(list []*Session) {
	sort.Slice(list, func(i, j int) bool { return list[i].id < list[j].id })
}
