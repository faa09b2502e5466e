package zksim

import (
	"errors"
	"strconv"
)

// Code is a ZooKeeper error code (KeeperException.Code).
type Code int32

// Error is the type of the sentinel errors: one value per ZooKeeper error
// code. Compare with errors.Is, never by message.
type Error struct {
	Code Code
	msg  string
}

func (e *Error) Error() string { return "zk: " + e.msg }

func newError(code Code, msg string) *Error {
	e := &Error{Code: code, msg: msg}
	byCode[code] = e
	return e
}

var byCode = map[Code]*Error{}

// The sentinel errors, one per ZooKeeper error code.
var (
	ErrSystemError          = newError(-1, "system error")
	ErrRuntimeInconsistency = newError(-2, "runtime inconsistency (an earlier op of the multi failed)")
	ErrDataInconsistency    = newError(-3, "data inconsistency")
	// ErrConnectionLoss is the ambiguous outcome: the connection was lost
	// while the request was outstanding, so the request may or may not have
	// been applied by the server. Find out before acting twice.
	ErrConnectionLoss           = newError(-4, "connection lost: the request may or may not have been applied")
	ErrMarshallingError         = newError(-5, "marshalling error")
	ErrUnimplemented            = newError(-6, "unimplemented")
	ErrOperationTimeout         = newError(-7, "operation timeout")
	ErrBadArguments             = newError(-8, "bad arguments")
	ErrUnknownSession           = newError(-12, "unknown session")
	ErrNewConfigNoQuorum        = newError(-13, "new config has no quorum")
	ErrReconfigInProgress       = newError(-14, "reconfig in progress")
	ErrAPIError                 = newError(-100, "api error")
	ErrNoNode                   = newError(-101, "node does not exist")
	ErrNoAuth                   = newError(-102, "not authorized")
	ErrBadVersion               = newError(-103, "version conflict")
	ErrNoChildrenForEphemerals  = newError(-108, "ephemeral nodes may not have children")
	ErrNodeExists               = newError(-110, "node already exists")
	ErrNotEmpty                 = newError(-111, "node has children")
	ErrSessionExpired           = newError(-112, "session has expired")
	ErrInvalidCallback          = newError(-113, "invalid callback")
	ErrInvalidACL               = newError(-114, "invalid ACL")
	ErrAuthFailed               = newError(-115, "authentication failed")
	ErrSessionMoved             = newError(-118, "session moved to another server")
	ErrNotReadOnly              = newError(-119, "state-changing request sent to a read-only server")
	ErrEphemeralOnLocalSession  = newError(-120, "ephemeral node on a local session")
	ErrNoWatcher                = newError(-121, "no such watcher")
	ErrRequestTimeout           = newError(-122, "request timeout")
	ErrReconfigDisabled         = newError(-123, "reconfig disabled")
	ErrSessionClosedRequireSASL = newError(-124, "session closed: SASL authentication required")
	ErrQuotaExceeded            = newError(-125, "quota exceeded")
	ErrThrottled                = newError(-127, "request throttled")
)

// ErrClosing is returned by calls on a Conn that was closed, and carried by
// the EventNotWatching events that Close delivers. It has no ZooKeeper code.
var ErrClosing = errors.New("zk: connection closed")

// ErrorForCode returns the sentinel error for a ZooKeeper error code, nil for
// code 0, and a new *Error for a code without a sentinel.
func ErrorForCode(code Code) error {
	if code == 0 {
		return nil
	}
	if e, ok := byCode[code]; ok {
		return e
	}
	return &Error{Code: code, msg: "unknown error code " + strconv.Itoa(int(code))}
}

// CodeOf returns the ZooKeeper error code of err: 0 for nil, the code of the
// first *Error in err's chain, or ErrSystemError's code for any other error.
func CodeOf(err error) Code {
	if err == nil {
		return 0
	}
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return ErrSystemError.Code
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
