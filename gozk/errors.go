package gozk

import (
	"errors"
	"fmt"

	"github.com/go-zookeeper/zk"

	"github.com/zksim/zksim"
)

// errorTable maps every error value go-zookeeper v1.0.4 returns to the
// zksim sentinel for the same ZooKeeper code (or, for go-zookeeper's own
// client-side errors, for the same meaning). It is the one place errors are
// translated.
var errorTable = map[error]error{
	// Server error codes go-zookeeper knows by name.
	zk.ErrAPIError:                zksim.ErrAPIError,
	zk.ErrNoNode:                  zksim.ErrNoNode,
	zk.ErrNoAuth:                  zksim.ErrNoAuth,
	zk.ErrBadVersion:              zksim.ErrBadVersion,
	zk.ErrNoChildrenForEphemerals: zksim.ErrNoChildrenForEphemerals,
	zk.ErrNodeExists:              zksim.ErrNodeExists,
	zk.ErrNotEmpty:                zksim.ErrNotEmpty,
	zk.ErrSessionExpired:          zksim.ErrSessionExpired,
	zk.ErrInvalidACL:              zksim.ErrInvalidACL,
	zk.ErrAuthFailed:              zksim.ErrAuthFailed,
	zk.ErrSessionMoved:            zksim.ErrSessionMoved,
	zk.ErrReconfigDisabled:        zksim.ErrReconfigDisabled,
	zk.ErrBadArguments:            zksim.ErrBadArguments,
	zk.ErrNothing:                 zksim.ErrorForCode(-117), // no sentinel in zksim: ZooKeeper 3.8 never sends it

	// Client-side conditions.
	zk.ErrConnectionClosed: zksim.ErrConnectionLoss, // the connection broke with the request outstanding
	zk.ErrNoServer:         zksim.ErrConnectionLoss, // queued while no server could be reached
	zk.ErrClosing:          zksim.ErrClosing,        // the Conn was closed
	zk.ErrUnknown:          zksim.ErrSystemError,

	// Requests go-zookeeper refuses before sending them.
	zk.ErrInvalidPath:        zksim.ErrBadArguments, // its own path check; see the package doc
	zk.ErrInvalidFlags:       zksim.ErrBadArguments, // a TTL mode to Create, or a non-TTL mode to CreateTTL
	zk.ErrShortBuffer:        zksim.ErrMarshallingError,
	zk.ErrUnhandledFieldType: zksim.ErrMarshallingError,
	zk.ErrPtrExpected:        zksim.ErrMarshallingError,
}

// mapError translates an error from go-zookeeper into the zksim sentinel
// for it. The result matches its sentinel with errors.Is; when go-zookeeper's
// own wording says more than the sentinel (a client-side path check, a
// connection failure), it is kept in the message.
//
//   - Every error in errorTable maps to its entry.
//   - go-zookeeper reports the codes it has no name for (-2 runtime
//     inconsistency, -6 unimplemented, -5 marshalling error, -7, -13, -14,
//     -119 to -127, ...) as "unknown error: <code>"; the code is parsed back
//     and mapped with zksim.ErrorForCode.
//   - Anything else comes from the network (a failed write, a read error
//     that ended the connection): connection loss, the ambiguous outcome.
func mapError(err error) error {
	if err == nil {
		return nil
	}
	if mapped, ok := errorTable[err]; ok {
		switch err {
		case zk.ErrInvalidPath:
			return fmt.Errorf("%w: go-zookeeper rejected the path before sending it (%v)", mapped, err)
		case zk.ErrShortBuffer:
			return fmt.Errorf("%w: the request does not fit go-zookeeper's 1.5 MiB buffer and was not sent (%v)", mapped, err)
		}
		return mapped
	}
	for zkErr, mapped := range errorTable {
		if errors.Is(err, zkErr) {
			return fmt.Errorf("%w (%v)", mapped, err)
		}
	}
	var code int32
	if n, scanErr := fmt.Sscanf(err.Error(), "unknown error: %d", &code); scanErr == nil && n == 1 {
		return zksim.ErrorForCode(zksim.Code(code))
	}
	return fmt.Errorf("%w (%v)", zksim.ErrConnectionLoss, err)
}
