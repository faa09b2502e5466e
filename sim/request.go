package sim

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/zksim/zksim"
	"github.com/zksim/zksim/zkmem"
)

// request is one call of a client, from the moment it is sent until its
// reply is delivered.
type request struct {
	desc zkmem.Request // what it asks, as the fault policies see it
	name string        // its op's name in the trace
	size int
	do   func(ctx context.Context, zc *zkmem.Conn) result
	res  result
	fate Fate            // decided when the server admits it
	hit  zkmem.ConnFault // the fault the plane gave it when applied
	note string          // a fault that struck it, for the trace
	// abandoned: its caller stopped waiting (ctx done); guarded by w.mu.
	abandoned bool
	// done receives one value from finish (its buffer holds it): a
	// channel kept with the record, where a closed one could serve once.
	done  chan struct{}
	ended bool     // finish was called (owned by the World's goroutine)
	wire  *wireReq // a frame of a go-zookeeper client (do is nil)
}

// finish tells the caller, waiting on done, that res is ready. Called on
// the World's goroutine, once.
func (req *request) finish() {
	req.ended = true
	req.done <- struct{}{}
}

// result is everything a call can return.
type result struct {
	path  string
	ok    bool
	data  []byte
	stat  *zksim.Stat
	names []string
	ch    <-chan zksim.Event
	acl   []zksim.ACL
	ops   []zksim.OpResult
	count int32
	err   error
}

// watchMark marks the requests that set a watch in the trace.
func (req *request) watchMark() string {
	if req.desc.Watch {
		return " +watch"
	}
	return ""
}

// summary renders the outcome of req for the trace.
func (req *request) summary() string {
	r := &req.res
	if r.err != nil {
		return errName(r.err)
	}
	switch req.desc.Op {
	case zkmem.OpCreate:
		return r.path
	case zkmem.OpExists:
		if !r.ok {
			return "absent"
		}
		return "v" + strconv.Itoa(int(r.stat.Version)) + " czxid=" + strconv.FormatInt(r.stat.Czxid, 10)
	case zkmem.OpGetData:
		return fmt.Sprintf("%d bytes v%d", len(r.data), r.stat.Version)
	case zkmem.OpSetData, zkmem.OpSetACL:
		return "v" + strconv.Itoa(int(r.stat.Version))
	case zkmem.OpGetChildren:
		return listNames(r.names)
	case zkmem.OpGetEphemerals:
		return listNames(r.names)
	case zkmem.OpGetAllChildrenNumber:
		return strconv.Itoa(int(r.count))
	case zkmem.OpMulti:
		return fmt.Sprintf("ok (%d ops)", len(r.ops))
	}
	return "ok"
}

func listNames(names []string) string {
	const most = 8
	if len(names) <= most {
		return "[" + strings.Join(names, " ") + "]"
	}
	return "[" + strings.Join(names[:most], " ") + fmt.Sprintf(" …+%d]", len(names)-most)
}

// errName is a short name for an error in the trace.
func errName(err error) string {
	var e *zksim.Error
	switch {
	case errors.As(err, &e):
		if n, ok := codeNames[e.Code]; ok {
			return n
		}
		return "Err(" + strconv.Itoa(int(e.Code)) + ")"
	case errors.Is(err, zksim.ErrClosing):
		return "ErrClosing"
	case errors.Is(err, context.Canceled):
		return "Canceled"
	case errors.Is(err, context.DeadlineExceeded):
		return "DeadlineExceeded"
	}
	return err.Error()
}

var codeNames = map[zksim.Code]string{
	zksim.ErrSystemError.Code:             "ErrSystemError",
	zksim.ErrRuntimeInconsistency.Code:    "ErrRuntimeInconsistency",
	zksim.ErrConnectionLoss.Code:          "ErrConnectionLoss",
	zksim.ErrUnimplemented.Code:           "ErrUnimplemented",
	zksim.ErrBadArguments.Code:            "ErrBadArguments",
	zksim.ErrNoNode.Code:                  "ErrNoNode",
	zksim.ErrNoAuth.Code:                  "ErrNoAuth",
	zksim.ErrBadVersion.Code:              "ErrBadVersion",
	zksim.ErrNoChildrenForEphemerals.Code: "ErrNoChildrenForEphemerals",
	zksim.ErrNodeExists.Code:              "ErrNodeExists",
	zksim.ErrNotEmpty.Code:                "ErrNotEmpty",
	zksim.ErrSessionExpired.Code:          "ErrSessionExpired",
	zksim.ErrInvalidACL.Code:              "ErrInvalidACL",
	zksim.ErrAuthFailed.Code:              "ErrAuthFailed",
	zksim.ErrNoWatcher.Code:               "ErrNoWatcher",
}

// sortChildren puts names in the simulator's canonical order: by the
// sequence number their last ten characters carry, then by name. zkmem
// sorts by name, which for protected names means by a random GUID; the
// sequence is the same from run to run.
func sortChildren(names []string) {
	// Parse each sequence number once, not once per comparison.
	type keyed struct {
		seq  int64
		name string
	}
	keys := make([]keyed, len(names))
	for i, n := range names {
		keys[i] = keyed{seqOf(n), n}
	}
	slices.SortFunc(keys, func(a, b keyed) int {
		if a.seq != b.seq {
			if a.seq < b.seq {
				return -1
			}
			return 1
		}
		return strings.Compare(a.name, b.name)
	})
	for i, k := range keys {
		names[i] = k.name
	}
}

// seqOf returns the value of the last ten characters of name if they are
// digits, else -1.
func seqOf(name string) int64 {
	if len(name) < 10 {
		return -1
	}
	var v int64
	for _, c := range []byte(name[len(name)-10:]) {
		if c < '0' || c > '9' {
			return -1
		}
		v = v*10 + int64(c-'0')
	}
	return v
}
