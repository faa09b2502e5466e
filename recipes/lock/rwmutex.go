package lock

import (
	"context"
	"sync"

	"github.com/zksim/zksim"
	"github.com/zksim/zksim/recipes/internal/contend"
)

// RWMutex is a distributed read-write lock: ZooKeeper's shared-locks
// recipe. By default its nodes are named read- and write-, which Curator's
// InterProcessReadWriteLock and kazoo's ReadLock and WriteLock do not
// see: with WithLayout(Curator) or WithLayout(Kazoo) it shares a directory
// with them (see the package doc). It reads like
// [sync.RWMutex], with a context first: RLock and RUnlock take and give
// back a read (shared) hold, Lock and Unlock a write (exclusive) hold.
//
// Readers and writers queue in one directory in sequence order. A reader
// holds once no writer is ahead of it, and otherwise watches the last
// writer ahead of it; a writer holds once nobody is ahead of it, and
// otherwise watches the node just before it. So readers share the lock,
// writers have it alone, and a waiting writer is not starved by readers
// that come after it (as with sync.RWMutex, a blocked Lock call keeps new
// readers out).
//
// One RWMutex holds at most one read hold and one write hold, each with
// its own node. As with sync.RWMutex, neither upgrades nor downgrades:
// Lock while this RWMutex holds the read lock waits for its own reader and
// never returns (RLock while it holds the write lock likewise), until ctx
// is done. The read and write halves are Mutexes (Reader, Writer), which
// give each hold's Key, Token, Guard, State, Watch and Done. An RWMutex
// may be used by two goroutines at once, one reading and one writing, but
// two RLock (or two Lock) calls must not run concurrently on one RWMutex:
// make one RWMutex per goroutine that contends.
type RWMutex struct {
	read, write *Mutex
}

// NewRWMutex returns a read-write lock on the directory dir, in the
// layout WithLayout sets (Zksim by default). Nothing is sent to the server
// until a call.
func NewRWMutex(conn zksim.Conn, dir string, opts ...Option) *RWMutex {
	cfg := newConfig(opts)
	read, write := readName, writeName
	switch cfg.layout {
	case Curator:
		read, write = curatorReadName, curatorWriteName
	case Kazoo:
		read, write = kazooReadName, kazooLockName
	}
	// The order of the markers matters to the Curator layout, which cuts
	// a name after the read marker, then after the write marker.
	markers := []string{read, write}
	return &RWMutex{
		read:  newMutex(conn, dir, read, markers, contend.Shared(write), cfg),
		write: newMutex(conn, dir, write, markers, contend.Exclusive, cfg),
	}
}

// RLock blocks until this RWMutex holds the lock for reading: no writer
// holds it or waits ahead of us. It returns as Mutex.Lock does.
func (rw *RWMutex) RLock(ctx context.Context) error { return rw.read.Lock(ctx) }

// TryRLock takes the read lock if no writer holds it or waits ahead of us,
// and returns ErrLocked otherwise, as Mutex.TryLock.
func (rw *RWMutex) TryRLock(ctx context.Context) error { return rw.read.TryLock(ctx) }

// RUnlock gives the read hold back, as Mutex.Unlock. It returns ErrNotHeld
// when this RWMutex holds no read lock.
func (rw *RWMutex) RUnlock(ctx context.Context) error { return rw.read.Unlock(ctx) }

// Lock blocks until this RWMutex holds the lock for writing: nobody else
// holds it or waits ahead of us. It returns as Mutex.Lock does.
func (rw *RWMutex) Lock(ctx context.Context) error { return rw.write.Lock(ctx) }

// TryLock takes the write lock if nobody holds it or waits ahead of us,
// and returns ErrLocked otherwise, as Mutex.TryLock.
func (rw *RWMutex) TryLock(ctx context.Context) error { return rw.write.TryLock(ctx) }

// Unlock gives the write hold back, as Mutex.Unlock. It returns ErrNotHeld
// when this RWMutex holds no write lock.
func (rw *RWMutex) Unlock(ctx context.Context) error { return rw.write.Unlock(ctx) }

// Reader returns the read half, for what it tells of the read hold (Key,
// Token, Guard, State, Watch, Done). Its Lock, TryLock and Unlock are
// RLock, TryRLock and RUnlock.
func (rw *RWMutex) Reader() *Mutex { return rw.read }

// Writer returns the write half, for what it tells of the write hold. Its
// Lock, TryLock and Unlock are those of the RWMutex.
func (rw *RWMutex) Writer() *Mutex { return rw.write }

// RLocker returns a [sync.Locker] whose Lock and Unlock are RLock and
// RUnlock, as sync.RWMutex.RLocker; see NewLocker for what it can and
// cannot promise.
func (rw *RWMutex) RLocker() sync.Locker { return NewLocker(rw.read) }
