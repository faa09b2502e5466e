package zksim

import "fmt"

// EventType is the kind of an Event. The values are ZooKeeper's, with
// go-zookeeper's EventNotWatching added.
type EventType int32

const (
	EventSession                EventType = -1 // a session state change
	EventNodeCreated            EventType = 1
	EventNodeDeleted            EventType = 2
	EventNodeDataChanged        EventType = 3
	EventNodeChildrenChanged    EventType = 4
	EventDataWatchRemoved       EventType = 5
	EventChildWatchRemoved      EventType = 6
	EventPersistentWatchRemoved EventType = 7
	// EventNotWatching tells a watcher its watch will never fire; Event.Err
	// says why (ErrSessionExpired, ErrClosing).
	EventNotWatching EventType = -2
)

func (t EventType) String() string {
	switch t {
	case EventSession:
		return "EventSession"
	case EventNodeCreated:
		return "EventNodeCreated"
	case EventNodeDeleted:
		return "EventNodeDeleted"
	case EventNodeDataChanged:
		return "EventNodeDataChanged"
	case EventNodeChildrenChanged:
		return "EventNodeChildrenChanged"
	case EventDataWatchRemoved:
		return "EventDataWatchRemoved"
	case EventChildWatchRemoved:
		return "EventChildWatchRemoved"
	case EventPersistentWatchRemoved:
		return "EventPersistentWatchRemoved"
	case EventNotWatching:
		return "EventNotWatching"
	}
	return fmt.Sprintf("EventType(%d)", int32(t))
}

// Event is a watch notification or a session state change. Like
// ZooKeeper's WatchedEvent it carries a type, a state and a path, never data.
type Event struct {
	Type  EventType
	State State
	Path  string // the znode, empty for session events
	Err   error  // set for EventNotWatching
}

func (e Event) String() string {
	if e.Err != nil {
		return fmt.Sprintf("%v %v %q (%v)", e.Type, e.State, e.Path, e.Err)
	}
	return fmt.Sprintf("%v %v %q", e.Type, e.State, e.Path)
}

// State is the state of a Conn's session.
type State int32

const (
	// StateDisconnected: the connection is lost, the session may live on.
	// A lock holder or leader must assume it no longer holds (Curator's
	// SUSPENDED) until it is connected again.
	StateDisconnected State = 0
	// StateConnecting: trying to (re)connect.
	StateConnecting State = 1
	// StateConnected: connected, with a live session (ZooKeeper's
	// SyncConnected).
	StateConnected State = 3
	// StateAuthFailed: authentication failed.
	StateAuthFailed State = 4
	// StateConnectedReadOnly: connected to a server in read-only mode
	// (ZooKeeper's ConnectedReadOnly), which a client that allows it gets
	// from a server cut off from its ensemble's quorum: reads are served
	// from the server's possibly stale state, writes fail with
	// ErrNotReadOnly.
	StateConnectedReadOnly State = 5
	// StateExpired: the server expired the session. Its ephemerals are
	// gone and the Conn is finished.
	StateExpired State = -112
	// StateClosed: Close was called.
	StateClosed State = -1000
)

func (s State) String() string {
	switch s {
	case StateDisconnected:
		return "StateDisconnected"
	case StateConnecting:
		return "StateConnecting"
	case StateConnected:
		return "StateConnected"
	case StateAuthFailed:
		return "StateAuthFailed"
	case StateConnectedReadOnly:
		return "StateConnectedReadOnly"
	case StateExpired:
		return "StateExpired"
	case StateClosed:
		return "StateClosed"
	}
	return fmt.Sprintf("State(%d)", int32(s))
}
