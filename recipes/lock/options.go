package lock

import (
	"errors"

	"github.com/zksim/zksim"
	"github.com/zksim/zksim/recipes/internal/seqnode"
)

// Errors returned by the recipes of this package, matched with errors.Is.
// ZooKeeper errors come through wrapped or as they are: a call made with a
// session that expired returns an error matching zksim.ErrSessionExpired.
var (
	// ErrLocked is what TryLock returns when another client holds the lock.
	ErrLocked = errors.New("lock: held by another client")
	// ErrNoLease is what TryAcquire returns when every lease is taken.
	ErrNoLease = errors.New("lock: no lease available")
	// ErrNotHeld is what Unlock (and RUnlock) returns when there is
	// nothing to release, and what Guard returns when there is no current
	// hold.
	ErrNotHeld = errors.New("lock: not held")
	// ErrAlreadyHeld is what Lock and TryLock return when this Mutex
	// already holds the lock or is acquiring it. A Mutex is not reentrant.
	ErrAlreadyHeld = errors.New("lock: already held or being acquired by this Mutex")
)

// Option configures a Mutex, an RWMutex or a Semaphore.
type Option func(*config)

type config struct {
	acl    []zksim.ACL
	data   []byte
	layout Layout
}

func newConfig(opts []Option) config {
	c := config{acl: zksim.OpenACL()}
	for _, o := range opts {
		o(&c)
	}
	return c
}

// WithACL sets the ACL of the nodes the recipe creates, including missing
// directories. The default is zksim.OpenACL().
func WithACL(acl []zksim.ACL) Option { return func(c *config) { c.acl = acl } }

// WithData sets the data of our contender node, for example an identity
// that lets operators see who holds the lock.
func WithData(data []byte) Option { return func(c *config) { c.data = data } }

// Layout is whose znode names and order a lock follows, so that it can
// share its directory with that library's locks (see the package doc,
// "Sharing a lock with Curator and kazoo").
type Layout int

const (
	// Zksim is the recipes' own layout, the default.
	Zksim Layout = iota
	// Curator is Apache Curator 5's: a Mutex takes part with
	// InterProcessMutex (and LeaderSelector), an RWMutex with
	// InterProcessReadWriteLock, a Semaphore with InterProcessSemaphoreV2.
	Curator
	// Kazoo is kazoo 2.8's: a Mutex takes part with Lock (and Election),
	// an RWMutex with ReadLock and WriteLock, a Semaphore with Semaphore.
	Kazoo
)

// String names the layout.
func (l Layout) String() string { return l.seq().String() }

// seq is the layout of the shared core.
func (l Layout) seq() seqnode.Layout {
	switch l {
	case Curator:
		return seqnode.Curator
	case Kazoo:
		return seqnode.Kazoo
	}
	return seqnode.Zksim
}

// WithLayout makes the recipe name and order its nodes as another
// library's recipe of the same kind does, so that both exclude each other
// on one directory. Every client of a directory, whatever its library,
// must use the same layout. A recipe refuses (with an error matching
// recipes.ErrForeignNodes) a directory that holds contender nodes of a
// layout it cannot order. A layout other than Zksim, Curator and Kazoo
// counts as Zksim.
func WithLayout(l Layout) Option { return func(c *config) { c.layout = l } }
