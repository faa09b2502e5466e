package zkmem

import "strconv"

// OpCode is the kind of a request, as ZooKeeper's OpCode names it. Its
// String is ZooKeeper's op name ("create", "getData", "getChildren",
// "multi", ...), the name traces and fault predicates print.
type OpCode uint8

// The request kinds a Session executes. The zero OpCode, OpAny, is no request:
// as the op of an armed fault it matches any client request.
const (
	OpAny                  OpCode = iota // no request; "any" in an armed fault
	OpCreate                             // create, create2, createContainer, createTTL
	OpDelete                             // delete, deleteContainer
	OpExists                             // exists
	OpGetData                            // getData
	OpSetData                            // setData
	OpGetChildren                        // getChildren, getChildren2
	OpMulti                              // multi
	OpSync                               // sync
	OpGetACL                             // getACL
	OpSetACL                             // setACL
	OpAddAuth                            // auth
	OpAddWatch                           // addWatch
	OpRemoveWatches                      // removeWatches
	OpGetEphemerals                      // getEphemerals
	OpGetAllChildrenNumber               // getAllChildrenNumber
	OpCheck                              // check (a version check outside a multi)
	OpMultiRead                          // multiRead
	OpPing                               // ping: the client is alive
	OpSetWatches                         // setWatches, setWatches2: a reconnect re-registers watches
	OpCheckWatches                       // checkWatches
	OpWhoAmI                             // whoAmI
	OpCloseSession                       // closeSession
	OpReconfig                           // reconfig
	OpSASL                               // sasl: one step of a SASL exchange
	numOps
)

var opNames = [numOps]string{
	OpAny:                  "any",
	OpCreate:               "create",
	OpDelete:               "delete",
	OpExists:               "exists",
	OpGetData:              "getData",
	OpSetData:              "setData",
	OpGetChildren:          "getChildren",
	OpMulti:                "multi",
	OpSync:                 "sync",
	OpGetACL:               "getACL",
	OpSetACL:               "setACL",
	OpAddAuth:              "addAuth",
	OpAddWatch:             "addWatch",
	OpRemoveWatches:        "removeWatches",
	OpGetEphemerals:        "getEphemerals",
	OpGetAllChildrenNumber: "getAllChildrenNumber",
	OpCheck:                "check",
	OpMultiRead:            "multiRead",
	OpPing:                 "ping",
	OpSetWatches:           "setWatches",
	OpCheckWatches:         "checkWatches",
	OpWhoAmI:               "whoAmI",
	OpCloseSession:         "closeSession",
	OpReconfig:             "reconfig",
	OpSASL:                 "sasl",
}

// String returns ZooKeeper's name of the op ("any" for OpAny).
func (o OpCode) String() string {
	if o < numOps {
		return opNames[o]
	}
	return "Op(" + strconv.Itoa(int(o)) + ")"
}

// session reports whether o keeps the session going rather than being a
// client's call: ping, setWatches and closeSession. An armed fault for
// OpAny passes them by.
func (o OpCode) session() bool {
	return o == OpPing || o == OpSetWatches || o == OpCloseSession
}

// ConnFault is what happens to the connection around one request on its
// way to the server and back. A Session decides it (see Control) and its
// transport realises it.
type ConnFault uint8

const (
	// NoFault: the request is applied and answered.
	NoFault ConnFault = iota
	// DropRequest: the request never reaches the server; the connection
	// closes. It is not applied; the caller gets ErrConnectionLoss.
	DropRequest
	// LoseReply: the server applies the request, then the connection
	// closes before the reply leaves; the caller gets ErrConnectionLoss
	// although the request took effect.
	LoseReply
)

// String returns the fault's name: "NoFault", "DropRequest", "LoseReply".
func (f ConnFault) String() string {
	switch f {
	case NoFault:
		return "NoFault"
	case DropRequest:
		return "DropRequest"
	case LoseReply:
		return "LoseReply"
	}
	return "Fault(" + strconv.Itoa(int(f)) + ")"
}
