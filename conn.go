package zksim

import (
	"context"
	"crypto/rand"
	"io"
	"time"
)

// Conn is a client connection to a ZooKeeper service, owning one session.
//
// Every method that talks to the server takes a context first. A call blocks
// until the server answers, the connection is lost, or ctx is done. When ctx
// ends first the call returns ctx.Err(); the request may still be applied by
// the server, exactly as if its reply had been lost.
//
// Methods are safe for concurrent use. Requests issued one after another by
// one goroutine are applied in that order.
type Conn interface {
	// Create creates a znode at path and returns its actual path, which for
	// the sequential modes ends in the ten-digit sequence number the server
	// chose. acl must not be empty. Container and TTL nodes use
	// ModeContainer and CreateTTL respectively.
	Create(ctx context.Context, path string, data []byte, mode CreateMode, acl []ACL) (string, error)

	// CreateTTL creates a persistent node (ModePersistentWithTTL or
	// ModePersistentSequentialWithTTL) that the server deletes once it has
	// had no children and no modification for ttl. Servers without extended
	// types answer ErrUnimplemented.
	CreateTTL(ctx context.Context, path string, data []byte, mode CreateMode, acl []ACL, ttl time.Duration) (string, error)

	// Delete deletes the znode at path if its version matches; version -1
	// matches any version.
	Delete(ctx context.Context, path string, version int32) error

	// Exists reports whether a znode exists at path, with its Stat if so.
	Exists(ctx context.Context, path string) (bool, *Stat, error)

	// ExistsW is Exists that also sets a watch, whether or not the node
	// exists: NodeCreated, NodeDataChanged or NodeDeleted fires it.
	ExistsW(ctx context.Context, path string) (bool, *Stat, <-chan Event, error)

	// Get returns the data and Stat of the znode at path. As on a real
	// server, null and empty data stay apart: a node created or set with
	// nil data reads back nil, one given empty data reads back a non-nil
	// empty slice, and the system nodes (/, /zookeeper, ...) read back empty.
	Get(ctx context.Context, path string) ([]byte, *Stat, error)

	// GetW is Get that also sets a data watch (NodeDataChanged or
	// NodeDeleted). No watch is set when the node does not exist.
	GetW(ctx context.Context, path string) ([]byte, *Stat, <-chan Event, error)

	// Set replaces the data of the znode at path if its version matches
	// (-1 matches any) and returns the new Stat.
	Set(ctx context.Context, path string, data []byte, version int32) (*Stat, error)

	// Children returns the names (not paths) of the children of path, in no
	// defined order, and the Stat of path. Callers that need an order sort.
	Children(ctx context.Context, path string) ([]string, *Stat, error)

	// ChildrenW is Children that also sets a child watch
	// (NodeChildrenChanged, or NodeDeleted for path itself). No watch is
	// set when the node does not exist.
	ChildrenW(ctx context.Context, path string) ([]string, *Stat, <-chan Event, error)

	// Multi applies ops atomically: all of them, or none. It returns one
	// result per op. When an op fails, the error returned is that op's error
	// (the first failure), ops before it report no error, the failing op its
	// own, and ops after it ErrRuntimeInconsistency.
	Multi(ctx context.Context, ops ...Op) ([]OpResult, error)

	// Sync waits until the server this Conn talks to has applied every write
	// the leader had committed when the sync was issued. It returns path.
	Sync(ctx context.Context, path string) (string, error)

	// GetACL returns the ACL and Stat of the znode at path.
	GetACL(ctx context.Context, path string) ([]ACL, *Stat, error)

	// SetACL replaces the ACL of the znode at path if its ACL version
	// (Stat.Aversion) matches; -1 matches any.
	SetACL(ctx context.Context, path string, acl []ACL, version int32) (*Stat, error)

	// AddAuth adds credentials to the session, such as scheme "digest" with
	// auth "user:password".
	AddAuth(ctx context.Context, scheme string, auth []byte) error

	// SessionID returns the id of this Conn's session; it is the
	// EphemeralOwner of every ephemeral node the session creates.
	SessionID() int64

	// SessionTimeout returns the timeout the server negotiated.
	SessionTimeout() time.Duration

	// State returns the current session state.
	State() State

	// SessionEvents returns a new channel that receives every session state
	// change from now on, in order, as events of type EventSession. The
	// channel is buffered without bound, so a slow reader never blocks the
	// connection; it is closed when ctx is done or the Conn is closed.
	SessionEvents(ctx context.Context) <-chan Event

	// Close closes the session: its ephemeral nodes are deleted and pending
	// watches receive EventNotWatching with ErrClosing. Close is idempotent.
	Close() error
}

// PersistentWatcher is the optional capability of ZooKeeper 3.6's addWatch
// and removeWatches. Find it with a type assertion on a Conn.
type PersistentWatcher interface {
	// AddWatch sets a watch on path that is not removed by firing.
	// WatchPersistent fires NodeCreated, NodeDeleted, NodeDataChanged and
	// NodeChildrenChanged for path; WatchPersistentRecursive fires
	// NodeCreated, NodeDeleted and NodeDataChanged for path and every
	// descendant, never NodeChildrenChanged. The node need not exist.
	//
	// The channel is buffered without bound. It is closed after an
	// EventNotWatching when the watch is removed or the session expires.
	// When the Conn is closed, events not yet received are dropped; the
	// channel gets EventNotWatching with ErrClosing if its reader had taken
	// every earlier event, and is closed.
	AddWatch(ctx context.Context, path string, mode AddWatchMode) (<-chan Event, error)

	// RemoveWatches removes this session's watches of the given kind on
	// path. It returns ErrNoWatcher when there was none to remove. Removed
	// one-shot watches receive EventDataWatchRemoved or
	// EventChildWatchRemoved; removed persistent watches receive
	// EventPersistentWatchRemoved. Each removed channel is then closed.
	RemoveWatches(ctx context.Context, path string, kind WatcherKind) error
}

// EphemeralsLister is the optional capability of ZooKeeper 3.6's
// getEphemerals.
type EphemeralsLister interface {
	// GetEphemerals returns the paths of this session's ephemeral nodes
	// whose path starts with prefix (a plain string prefix, not a path
	// component), in sorted order. Prefix "/" lists them all.
	GetEphemerals(ctx context.Context, prefix string) ([]string, error)
}

// ChildCounter is the optional capability of ZooKeeper 3.6's
// getAllChildrenNumber.
type ChildCounter interface {
	// GetAllChildrenNumber returns the number of descendants of path
	// (children, their children, and so on), not counting path itself.
	GetAllChildrenNumber(ctx context.Context, path string) (int32, error)
}

// RandSource is the optional capability of a Conn that supplies the
// randomness client code draws unique names from (the GUIDs of protected
// creates, lock and queue tokens). A simulated Conn (sim.Conn) returns a
// stream seeded from its World's seed and its client's index, so that a
// seed replays the same names whatever order the Go scheduler runs client
// goroutines in; a Conn over a real server does not implement it, and code
// falls back to crypto/rand. Recipes draw through RandReader.
type RandSource interface {
	// RandReader returns a reader of random bytes, safe for concurrent
	// use, that never fails.
	RandReader() io.Reader
}

// RandReader returns conn's RandSource reader if it has one, else
// crypto/rand.Reader.
func RandReader(conn Conn) io.Reader {
	if rs, ok := conn.(RandSource); ok {
		if r := rs.RandReader(); r != nil {
			return r
		}
	}
	return rand.Reader
}

// AddWatchMode selects the kind of watch AddWatch sets. The values are
// ZooKeeper's AddWatchMode codes.
type AddWatchMode int32

const (
	WatchPersistent          AddWatchMode = 0
	WatchPersistentRecursive AddWatchMode = 1
)

func (m AddWatchMode) String() string {
	switch m {
	case WatchPersistent:
		return "PERSISTENT"
	case WatchPersistentRecursive:
		return "PERSISTENT_RECURSIVE"
	}
	return "AddWatchMode(" + itoa(int64(m)) + ")"
}

// WatcherKind selects the watches RemoveWatches removes. The values are
// ZooKeeper's WatcherType codes.
type WatcherKind int32

const (
	WatcherChildren            WatcherKind = 1
	WatcherData                WatcherKind = 2
	WatcherAny                 WatcherKind = 3
	WatcherPersistent          WatcherKind = 4
	WatcherPersistentRecursive WatcherKind = 5
)

func (k WatcherKind) String() string {
	switch k {
	case WatcherChildren:
		return "Children"
	case WatcherData:
		return "Data"
	case WatcherAny:
		return "Any"
	case WatcherPersistent:
		return "Persistent"
	case WatcherPersistentRecursive:
		return "PersistentRecursive"
	}
	return "WatcherKind(" + itoa(int64(k)) + ")"
}
