package lock

import (
	"errors"

	"github.com/zksim/zksim"
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
	acl  []zksim.ACL
	data []byte
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
