package lock

import (
	"github.com/zksim/zksim"
	"github.com/zksim/zksim/recipes/internal/contend"
)

// RWMutex is a distributed read-write lock: ZooKeeper's shared-locks
// recipe, laid out as Curator's InterProcessReadWriteLock. Readers and
// writers queue in one directory in sequence order. A reader holds once no
// writer is ahead of it, and otherwise watches the last writer ahead of it;
// a writer holds once nobody is ahead of it, and otherwise watches the node
// just before it. So readers share the lock, writers have it alone, and a
// waiting writer is not starved by readers that come after it.
//
// An RWMutex hands out two Mutexes, one per half; each behaves as a Mutex
// (Lock, TryLock, Unlock, Token, State, ...). To hold both halves at once
// (say, to read while writing), use two RWMutex values: one Mutex holds one
// node.
type RWMutex struct {
	read, write *Mutex
}

// NewRWMutex returns a read-write lock on the directory dir.
func NewRWMutex(conn zksim.Conn, dir string, opts ...Option) *RWMutex {
	cfg := newConfig(opts)
	markers := []string{readName, writeName}
	return &RWMutex{
		read:  newMutex(conn, dir, readName, markers, contend.Shared(writeName), cfg),
		write: newMutex(conn, dir, writeName, markers, contend.Exclusive, cfg),
	}
}

// ReadLock returns the read (shared) half: its Lock blocks while a writer
// holds the lock or waits ahead of us.
func (rw *RWMutex) ReadLock() *Mutex { return rw.read }

// WriteLock returns the write (exclusive) half: its Lock blocks while
// anyone holds the lock or waits ahead of us.
func (rw *RWMutex) WriteLock() *Mutex { return rw.write }
