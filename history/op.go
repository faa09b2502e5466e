package history

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"

	"github.com/zksim/zksim"
)

// Kind is the kind of a recorded operation.
type Kind uint8

// The kinds of operation a history holds. Create, Set and Delete are the
// writes; Get, Exists and Children the reads; Sync is a barrier.
// Unsupported stands for a call the checker has no model for (Multi, TTL,
// ephemeral or sequential creates): the recorder keeps it so that Check
// can refuse the history rather than judge it without the call's effect.
const (
	Create Kind = iota + 1
	Set
	Delete
	Get
	Exists
	Children
	Sync
	Unsupported
)

var kindNames = [...]string{Create: "create", Set: "set", Delete: "delete", Get: "get", Exists: "exists", Children: "children", Sync: "sync", Unsupported: "unsupported"}

func (k Kind) String() string {
	if int(k) < len(kindNames) && kindNames[k] != "" {
		return kindNames[k]
	}
	return fmt.Sprintf("Kind(%d)", k)
}

// IsWrite reports whether k changes the tree.
func (k Kind) IsWrite() bool { return k == Create || k == Set || k == Delete }

// IsRead reports whether k reads the tree.
func (k Kind) IsRead() bool { return k == Get || k == Exists || k == Children }

// Pending is the Returned time of an operation that never returned (its
// client was still waiting when the history was taken).
const Pending int64 = math.MaxInt64

// Result is what an operation returned.
type Result struct {
	// Data is what a Get read.
	Data []byte
	// Stat is the Stat a Set, Get or Exists returned (nil if none), and for
	// Children the Stat of the parent.
	Stat *zksim.Stat
	// Exists is what Exists answered.
	Exists bool
	// Children are the names Children returned.
	Children []string
	// Err is the call's error, nil on success.
	Err error
}

// Op is one recorded operation: who called what, with which arguments,
// what came back, and when (in ticks of the recorder's Clock: see Clock).
type Op struct {
	// ID is the operation's index in its history.
	ID int
	// Client names the client that called it (a session, or a user's
	// handle: the checker holds each client to sequential consistency).
	Client int
	// Session is the id of the session the call was made on (0: not
	// known). ZooKeeper's guarantees hold per session: when a client's
	// session changes (a client library replaced an expired one), what the
	// client saw before no longer binds its reads.
	Session int64
	Kind    Kind
	Path    string
	// Data is the data a Create or Set writes.
	Data []byte
	// Version is the version a Set or Delete expects (-1: any).
	Version int32
	// What is a short description of an Unsupported call.
	What   string
	Result Result
	// Invoked and Returned are the times of the call and of its return.
	// Returned is Pending if the call never returned.
	Invoked, Returned int64
}

// Outcome classifies an operation's result.
type Outcome uint8

// The outcomes of an operation.
const (
	// OK: the call succeeded.
	OK Outcome = iota
	// Failed: the server answered with an error, so the call had no
	// effect (NoNode, NodeExists, BadVersion, NotEmpty, NoAuth, ...).
	Failed
	// Unknown: the call may or may not have taken effect (connection
	// loss, a context that ended, a closed or expired session, or a call
	// that never returned).
	Unknown
)

func (o Outcome) String() string {
	switch o {
	case OK:
		return "ok"
	case Failed:
		return "failed"
	default:
		return "unknown"
	}
}

// definite are the error codes with which the server refuses a request
// without applying it.
var definite = []error{
	zksim.ErrNoNode, zksim.ErrNodeExists, zksim.ErrBadVersion, zksim.ErrNotEmpty,
	zksim.ErrNoAuth, zksim.ErrBadArguments, zksim.ErrInvalidACL,
	zksim.ErrNoChildrenForEphemerals, zksim.ErrUnimplemented, zksim.ErrAPIError,
	zksim.ErrNotReadOnly,
}

// Outcome says whether op took effect: OK, Failed (a definite error) or
// Unknown (every other error, and a call that never returned).
func (op *Op) Outcome() Outcome {
	if op.Returned == Pending {
		return Unknown
	}
	err := op.Result.Err
	if err == nil {
		return OK
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return Unknown
	}
	for _, d := range definite {
		if errors.Is(err, d) {
			return Failed
		}
	}
	return Unknown
}

// is reports whether op failed with err.
func (op *Op) is(err error) bool { return errors.Is(op.Result.Err, err) }

func (op *Op) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "#%d c%d %s %s", op.ID, op.Client, op.Kind, op.Path)
	switch op.Kind {
	case Create:
		fmt.Fprintf(&b, " %s", quote(op.Data))
	case Set:
		fmt.Fprintf(&b, " %s v%d", quote(op.Data), op.Version)
	case Delete:
		fmt.Fprintf(&b, " v%d", op.Version)
	case Unsupported:
		fmt.Fprintf(&b, " (%s)", op.What)
	}
	b.WriteString(" -> ")
	r := op.Result
	switch {
	case op.Returned == Pending:
		b.WriteString("never returned")
	case r.Err != nil:
		b.WriteString(r.Err.Error())
	case op.Kind == Get:
		fmt.Fprintf(&b, "%s %s", quote(r.Data), statString(r.Stat))
	case op.Kind == Exists && !r.Exists:
		b.WriteString("false")
	case op.Kind == Exists:
		fmt.Fprintf(&b, "true %s", statString(r.Stat))
	case op.Kind == Children:
		fmt.Fprintf(&b, "%v %s", r.Children, statString(r.Stat))
	case op.Kind == Set:
		b.WriteString(statString(r.Stat))
	default:
		b.WriteString("ok")
	}
	fmt.Fprintf(&b, " [%s, %s]", tick(op.Invoked), tick(op.Returned))
	return b.String()
}

func tick(t int64) string {
	if t == Pending {
		return "-"
	}
	return fmt.Sprint(t)
}

func quote(data []byte) string {
	if data == nil {
		return "nil"
	}
	return fmt.Sprintf("%q", data)
}

func statString(s *zksim.Stat) string {
	if s == nil {
		return "(no stat)"
	}
	return fmt.Sprintf("{czxid:%#x mzxid:%#x pzxid:%#x version:%d}", s.Czxid, s.Mzxid, s.Pzxid, s.Version)
}
